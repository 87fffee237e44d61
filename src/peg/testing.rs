//! Test support shared by unit tests, proptests and the fuzz targets: a small grammar
//! description that builds into a [`Grammar`], and a checker for the engine's invariants.
//! Not part of the stable API.

use super::{BuildError, Grammar, GrammarBuilder, Parser, Status};

/// A grammar description: a root expression and an optional recursive rule `r`.
#[derive(Clone, Debug)]
pub struct GrammarDesc {
    /// The root expression.
    pub root: Desc,
    /// Body of rule `r` (referenced by [`Desc::Ref`]); `None`: `r` is `eps`.
    pub rule: Option<Desc>,
    /// Use the Python-dict JSON flavour.
    pub python: bool,
}

/// A combinator expression.
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub enum Desc {
    Eps,
    Start,
    End,
    Any,
    Space,
    Rest,
    Lit(String),
    Until(String),
    UntilOneOf(Vec<String>),
    Chars(String, u32, Option<u32>),
    Seq(Vec<Desc>),
    Choice(Vec<Desc>),
    Repeat(Box<Desc>, u32, Option<u32>),
    Peek(Box<Desc>),
    Negate(Box<Desc>),
    Tag(String, Box<Desc>),
    Atomic(Box<Desc>),
    Json,
    JsonString,
    JsonNumber,
    JsonMember(String, Box<Desc>),
    Ref,
}

fn build_desc(b: &GrammarBuilder, d: &Desc) -> Parser {
    match d {
        Desc::Eps => b.eps(),
        Desc::Start => b.start(),
        Desc::End => b.end(),
        Desc::Any => b.any(),
        Desc::Space => b.space(),
        Desc::Rest => b.rest(),
        Desc::Lit(s) => b.literal(s),
        Desc::Until(s) if s.is_empty() => b.until("\u{0}"),
        Desc::Until(s) => b.until(s),
        Desc::UntilOneOf(v) => {
            let v: Vec<&str> = v
                .iter()
                .map(|s| s.as_str())
                .filter(|s| !s.is_empty())
                .collect();
            if v.is_empty() {
                b.until_one_of(["\u{0}"])
            } else {
                b.until_one_of(v)
            }
        }
        Desc::Chars(c, min, max) => b.chars(c, *min, max.map(|m| m.max(*min))),
        Desc::Seq(v) => b.seq(v.iter().map(|d| build_desc(b, d)).collect::<Vec<_>>()),
        Desc::Choice(v) => b.choice(v.iter().map(|d| build_desc(b, d)).collect::<Vec<_>>()),
        Desc::Repeat(p, min, max) => {
            let p = build_desc(b, p);
            b.repeat(p, *min, max.map(|m| m.max(*min)))
        }
        Desc::Peek(p) => b.peek(build_desc(b, p)),
        Desc::Negate(p) => b.negate(build_desc(b, p)),
        Desc::Tag(t, p) => b.tag(t, build_desc(b, p)),
        Desc::Atomic(p) => b.atomic(build_desc(b, p)),
        Desc::Json => b.json(),
        Desc::JsonString => b.json_string(),
        Desc::JsonNumber => b.json_number(),
        Desc::JsonMember(k, p) => b.json_member(k, build_desc(b, p)),
        Desc::Ref => b.reference("r"),
    }
}

impl GrammarDesc {
    /// Builds the grammar (depth limit 256 so hostile descriptions stay cheap).
    pub fn build(&self) -> Result<Grammar, BuildError> {
        let b = GrammarBuilder::new()
            .python_dict(self.python)
            .max_depth(256)
            .name("generated");
        let body = match &self.rule {
            Some(d) => build_desc(&b, d),
            None => b.eps(),
        };
        b.rule("r", body);
        let root = build_desc(&b, &self.root);
        b.build(root)
    }
}

/// Checks the engine invariants for `input` split at `cuts` (byte offsets, any order):
///
/// 1. if the full parse succeeds, no prefix (at any byte) fails in partial mode, and a prefix
///    that succeeds in partial mode succeeds identically in full;
/// 2. a session fed the chunks has, after each feed, the same status and AST as a one-shot
///    partial parse of the bytes so far, and after `finish` the same status, error and AST as
///    the one-shot full parse.
pub fn check_invariants(g: &Grammar, input: &[u8], cuts: &[usize]) -> Result<(), String> {
    let full = g.parse_bytes(input, false);
    if full.is_success() {
        for k in 0..=input.len() {
            let prefix = input.get(..k).unwrap_or_default();
            let p = g.parse_bytes(prefix, true);
            if p.is_failure() {
                return Err(format!(
                    "prefix {k} of {input:?} fails in partial mode but the whole input parses: {:?}",
                    p.error
                ));
            }
            if let Status::Success { .. } = p.status {
                if p.status != full.status {
                    return Err(format!(
                        "prefix {k} succeeds as {:?}, full as {:?}",
                        p.status, full.status
                    ));
                }
            }
        }
    }
    let mut cuts: Vec<usize> = cuts.iter().map(|&c| c.min(input.len())).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut s = g.session();
    let mut last = 0;
    for &c in cuts.iter().chain(std::iter::once(&input.len())) {
        let chunk = input.get(last..c).unwrap_or_default();
        let status = s.feed(chunk);
        last = c;
        let one = g.parse_bytes(input.get(..c).unwrap_or_default(), true);
        if status != one.status || s.ast() != one.ast {
            return Err(format!(
                "after feeding {c} bytes of {input:?}: session {status:?} {:?} vs one-shot {:?} {:?}",
                s.ast(),
                one.status,
                one.ast
            ));
        }
    }
    let status = s.finish();
    if status != full.status || s.ast() != full.ast || s.error() != full.error.as_ref() {
        return Err(format!(
            "finished session {status:?} {:?} {:?} vs one-shot {:?} {:?} {:?}",
            s.ast(),
            s.error(),
            full.status,
            full.ast,
            full.error
        ));
    }
    Ok(())
}
