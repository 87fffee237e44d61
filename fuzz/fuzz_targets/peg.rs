//! Arbitrary grammar + input: no panic, and the engine invariants hold — (1) a prefix of an
//! input that parses never fails in partial mode, (2) feeding in chunks equals one shot.
#![no_main]

use arbitrary::Arbitrary;
use chatparse::peg::testing::{check_invariants, Desc, GrammarDesc};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Word {
    A,
    B,
    Ab,
    Tag,
    Close,
    Brace,
    Quote,
    Space,
    Accent,
}

impl Word {
    fn text(self) -> String {
        match self {
            Word::A => "a",
            Word::B => "b",
            Word::Ab => "ab",
            Word::Tag => "<x>",
            Word::Close => "</x>",
            Word::Brace => "{",
            Word::Quote => "\"",
            Word::Space => " ",
            Word::Accent => "é",
        }
        .to_owned()
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Class {
    Ab,
    NotA,
    Punct,
}

/// The fuzzer's grammar description; converted into the engine's [`Desc`].
#[derive(Arbitrary, Debug)]
enum FDesc {
    Eps,
    Start,
    End,
    Any,
    Space,
    Rest,
    Lit(Word),
    Until(Word),
    UntilOneOf(Word, Word),
    Chars(Class, u8, Option<u8>),
    Seq(Vec<FDesc>),
    Choice(Vec<FDesc>),
    Repeat(Box<FDesc>, u8, Option<u8>),
    Peek(Box<FDesc>),
    Negate(Box<FDesc>),
    Tag(bool, Box<FDesc>),
    Atomic(Box<FDesc>),
    Json,
    JsonString,
    JsonNumber,
    JsonMember(Box<FDesc>),
    Ref,
}

fn convert(d: &FDesc, depth: usize) -> Desc {
    if depth > 6 {
        return Desc::Eps;
    }
    let sub = |p: &FDesc| Box::new(convert(p, depth + 1));
    match d {
        FDesc::Eps => Desc::Eps,
        FDesc::Start => Desc::Start,
        FDesc::End => Desc::End,
        FDesc::Any => Desc::Any,
        FDesc::Space => Desc::Space,
        FDesc::Rest => Desc::Rest,
        FDesc::Lit(w) => Desc::Lit(w.text()),
        FDesc::Until(w) => Desc::Until(w.text()),
        FDesc::UntilOneOf(a, b) => Desc::UntilOneOf(vec![a.text(), b.text()]),
        FDesc::Chars(c, min, max) => Desc::Chars(
            match c {
                Class::Ab => "[a-b]",
                Class::NotA => "[^a]",
                Class::Punct => "[ <>{}\"]",
            }
            .to_owned(),
            u32::from(*min % 3),
            max.map(|m| u32::from(m % 4)),
        ),
        FDesc::Seq(v) => Desc::Seq(v.iter().take(5).map(|p| convert(p, depth + 1)).collect()),
        FDesc::Choice(v) => Desc::Choice(v.iter().take(5).map(|p| convert(p, depth + 1)).collect()),
        FDesc::Repeat(p, min, max) => {
            Desc::Repeat(sub(p), u32::from(*min % 3), max.map(|m| u32::from(m % 4)))
        }
        FDesc::Peek(p) => Desc::Peek(sub(p)),
        FDesc::Negate(p) => Desc::Negate(sub(p)),
        FDesc::Tag(t, p) => Desc::Tag(if *t { "t" } else { "u" }.to_owned(), sub(p)),
        FDesc::Atomic(p) => Desc::Atomic(sub(p)),
        FDesc::Json => Desc::Json,
        FDesc::JsonString => Desc::JsonString,
        FDesc::JsonNumber => Desc::JsonNumber,
        FDesc::JsonMember(p) => Desc::JsonMember("a".to_owned(), sub(p)),
        FDesc::Ref => Desc::Ref,
    }
}

#[derive(Arbitrary, Debug)]
struct Case {
    root: FDesc,
    rule: Option<FDesc>,
    python: bool,
    cuts: Vec<u8>,
    input: Vec<u8>,
}

fuzz_target!(|case: Case| {
    let desc = GrammarDesc {
        root: convert(&case.root, 0),
        rule: case.rule.as_ref().map(|r| convert(r, 0)),
        python: case.python,
    };
    let Ok(grammar) = desc.build() else {
        return;
    };
    let input = &case.input[..case.input.len().min(64)];
    let cuts: Vec<usize> = case.cuts.iter().take(8).map(|&c| usize::from(c)).collect();
    if let Err(e) = check_invariants(&grammar, input, &cuts) {
        panic!("{e}\n{}", grammar.dump());
    }
    let _ = grammar.parse_bytes(input, false).ast.dump("");
});
