use regex_automata::meta;
use regex_automata::{Anchored, Input};

use super::*;

/// The ASCII program the matcher must agree with (the one the pattern compiler builds).
fn engine(rust: &str) -> meta::Regex {
    crate::response_template::pattern::ascii_regex(rust).expect("test pattern compiles")
}

const PATTERNS: &[&str] = &[
    r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
    r"<tool_call>\s*<function=(?P<name>\w+)>",
    r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
    r"a(?P<x>b*)(?P<y>b*?)c",
    r"(?P<x>a{2,3}?)(?P<y>a+)b",
    r"x(?P<o>(?P<i>\d{1,2})\d*)y",
    r"(?i)ab(?P<x>[c-e]+)",
    r"(?P<e>)z",
    // Repetitions whose follow set spans optional steps, groups and the pattern's end.
    r"(?P<x>a*)(?P<y>b?)a{2}c",
    r"x.*?(?P<g>)\s*y",
    r"a+?b*c",
    r"(?P<x>\w*)",
];

const HAYS: &[&str] = &[
    "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}",
    "<|channel|>commentary to=functions.x<|message|><|message|>",
    "<|channel|>commentary to=functions.<|message|>",
    "<tool_call>\n <function=f_1>",
    "<tool_call><function=>",
    "<parameter=city>\n Paris \n</parameter> tail </parameter>",
    "<parameter=a>   </parameter>",
    "<parameter=a>x",
    "abbbc",
    "ac",
    "aaaab",
    "aab",
    "x123y",
    "xy",
    "ABcdEz",
    "z",
    "aaabaac",
    "aaaac",
    "abbbbc",
    "x  y  y",
    "x y",
    "",
];

#[test]
fn agrees_with_the_engine_at_every_start() {
    for pat in PATTERNS {
        let seq = SeqMatcher::new(pat).expect("sequence pattern");
        let re = engine(pat);
        let mut caps = re.create_captures();
        let mut slots = seq.slots();
        for hay in HAYS {
            for start in 0..=hay.len() {
                let input = Input::new(hay).range(start..).anchored(Anchored::Yes);
                re.search_captures(&input, &mut caps);
                let got = seq.exec(hay.as_bytes(), start, &mut slots);
                let want_end = caps.get_match().map(|m| m.end());
                assert_eq!(got, Ok(want_end), "{pat} on {hay:?} at {start}");
                if want_end.is_some() {
                    for (g, slot) in slots.iter().enumerate().skip(1) {
                        let want = caps.get_group(g).map(|s| (s.start, s.end));
                        assert_eq!(*slot, want, "{pat} group {g} on {hay:?} at {start}");
                    }
                }
            }
        }
    }
}

#[test]
fn rejects_other_shapes() {
    for pat in [
        r"ab|cd",
        r"(?:ab)+",
        r"(?P<x>a)?",
        r"\bx",
        r"^a",
        r"(?:a|bc)d",
    ] {
        assert!(SeqMatcher::new(pat).is_none(), "{pat}");
    }
}

#[test]
fn gives_up_past_its_budget() {
    // `\s*` against a long whitespace run before a missing literal: quadratic backtracking.
    let seq = SeqMatcher::new(r"a(?P<v>.*?)\s*b").expect("sequence pattern");
    let hay = format!("a{}", " ".repeat(2000));
    let mut slots = seq.slots();
    assert_eq!(seq.exec(hay.as_bytes(), 0, &mut slots), Err(GaveUp));
}
