//! Drawn delimiters: literals, literal lists and regexes built together with texts that
//! match them.

use serde_json::{json, Value};

use super::rng::Rng;

/// Tag names for delimiters: several share prefixes (`tool`, `tool_call`), so delimiters
/// overlap and tie.
pub(super) const TAGS: [&str; 9] = [
    "think",
    "tool",
    "tool_call",
    "a",
    "ab",
    "x",
    "n",
    "answer",
    "é",
];

/// One drawn delimiter: its JSON (under `key` or `key_pattern`), texts that match it, and the
/// named groups it captures (with whether each always takes part in a match).
#[derive(Debug, Clone)]
pub(super) struct Delim {
    pub(super) pattern: bool,
    pub(super) value: Value,
    pub(super) samples: Vec<String>,
    pub(super) groups: Vec<(String, bool)>,
}

/// A regex under construction with a way to draw matching text.
#[derive(Debug, Default)]
pub(super) struct RegexBuilder {
    source: String,
    parts: Vec<Part>,
    groups: Vec<(String, bool)>,
}

#[derive(Debug, Clone)]
pub(super) enum Part {
    Lit(String),
    Word,
    Spaces { min: usize },
    Digits,
    Optional(Box<Part>),
    Choice(Vec<String>),
    Lazy,
    Nothing,
}

/// Escapes regex metacharacters the way Python's `re.escape` needs them escaped.
pub(super) fn py_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.^$*+?{}[]|()#&~-".contains(c) || c == ' ' || c == '\n' || c == '\t' {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                _ => {
                    out.push('\\');
                    out.push(c);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl RegexBuilder {
    pub(super) fn lit(&mut self, s: &str) {
        self.source.push_str(&py_escape(s));
        self.parts.push(Part::Lit(s.to_owned()));
    }

    pub(super) fn raw(&mut self, source: &str, part: Part) {
        self.source.push_str(source);
        self.parts.push(part);
    }

    pub(super) fn sample(&self, rng: &mut Rng) -> String {
        let mut out = String::new();
        for part in &self.parts {
            sample_part(part, rng, &mut out);
        }
        out
    }
}

pub(super) fn sample_part(part: &Part, rng: &mut Rng, out: &mut String) {
    match part {
        Part::Lit(s) => out.push_str(s),
        Part::Word => out.push_str(rng.s(&["get", "f", "search_web", "ÿes", "x1", "_"])),
        Part::Spaces { min } => {
            let n = min + rng.below(3);
            for _ in 0..n {
                out.push(*rng.pick(&[' ', '\n', ' ']));
            }
        }
        Part::Digits => out.push_str(rng.s(&["0", "7", "42", "٣"])),
        Part::Optional(inner) => {
            if rng.chance(50) {
                sample_part(inner, rng, out);
            }
        }
        Part::Choice(alts) => out.push_str(rng.pick(alts).as_str()),
        Part::Lazy => out.push_str(rng.s(&["", " to=x", "json ", "a>b"])),
        Part::Nothing => {}
    }
}

/// Draws a delimiter around the literal `mark` (`closing`: a close delimiter).
pub(super) fn delim(
    rng: &mut Rng,
    mark: &str,
    closing: bool,
    group_names: &mut Vec<String>,
) -> Delim {
    match rng.weighted(&[60, 12, 28]) {
        0 => Delim {
            pattern: false,
            value: json!(mark),
            samples: vec![mark.to_owned()],
            groups: Vec::new(),
        },
        1 => {
            // A list of literals, some prefixes of others.
            let mut list = vec![mark.to_owned()];
            let extra = match rng.below(4) {
                0 => format!("{mark}\n"),
                1 => mark.chars().take(mark.chars().count().max(2) - 1).collect(),
                2 => mark.to_uppercase(),
                _ => format!("[{}]", mark.trim_matches(['<', '>', '/', '|'])),
            };
            if !extra.is_empty() {
                list.push(extra);
            }
            if rng.chance(10) {
                list.push(mark.to_owned());
            }
            Delim {
                pattern: false,
                samples: list.clone(),
                value: json!(list),
                groups: Vec::new(),
            }
        }
        _ => regex_delim(rng, mark, closing, group_names),
    }
}

pub(super) fn regex_delim(
    rng: &mut Rng,
    mark: &str,
    closing: bool,
    group_names: &mut Vec<String>,
) -> Delim {
    let mut b = RegexBuilder::default();
    let inner = mark.trim_end_matches('>');
    let angle = inner.len() != mark.len() && !inner.is_empty();
    match rng.below(11) {
        0 if angle => {
            // `<tag=(?P<name>\w+)>`
            let name = group_name(rng, group_names);
            b.lit(&format!("{inner}="));
            b.raw(&format!("(?P<{name}>\\w+)"), Part::Word);
            b.lit(">");
            b.groups.push((name, true));
        }
        1 if angle => {
            // An optional named group: it may not take part in the match.
            let name = group_name(rng, group_names);
            b.lit(inner);
            b.raw(
                &format!("(?: (?P<{name}>\\w+))?"),
                Part::Optional(Box::new(Part::Lit(" get".into()))),
            );
            b.lit(">");
            b.groups.push((name, false));
        }
        2 => {
            b.lit(mark);
            b.raw("\\s*", Part::Spaces { min: 0 });
        }
        3 => {
            b.lit(mark);
            b.raw("(?:\\n)?", Part::Optional(Box::new(Part::Lit("\n".into()))));
        }
        4 => {
            let other = format!("<{}>", rng.pick(&TAGS));
            b.raw(
                &format!("(?:{}|{})", py_escape(mark), py_escape(&other)),
                Part::Choice(vec![mark.to_owned(), other]),
            );
        }
        5 if !closing => {
            // A lazy span between two literals (gpt-oss style headers).
            let name = group_name(rng, group_names);
            b.lit("<|c|>");
            b.raw(&format!("(?P<{name}>\\w+)"), Part::Word);
            b.raw(".*?", Part::Lazy);
            b.lit(mark);
            b.groups.push((name, true));
        }
        6 => {
            b.raw("\\s*", Part::Spaces { min: 0 });
            b.lit(mark);
        }
        7 => {
            b.lit(mark);
            b.raw("\\d+", Part::Digits);
        }
        8 if closing && rng.chance(15) => {
            // A close that can match the empty string.
            b.raw(
                &format!("(?:{})?", py_escape(mark)),
                Part::Optional(Box::new(Part::Lit(mark.to_owned()))),
            );
        }
        8 if rng.chance(30) => {
            b.raw("^", Part::Nothing);
            b.lit(mark);
        }
        9 if rng.chance(30) => {
            b.lit(mark);
            b.raw("$", Part::Nothing);
        }
        10 if rng.chance(20) => {
            // A mistake: an unbalanced or dangling construct.
            b.raw(rng.s(&["(", "[a-", "*", "(?P<1x>a)", "\\"]), Part::Nothing);
            b.lit(mark);
        }
        _ => b.lit(mark),
    }
    if b.groups.is_empty() && rng.chance(8) {
        // Named group on a literal part: needs a transform.
        let name = group_name(rng, group_names);
        b.source = format!("(?P<{name}>{})", b.source);
        b.groups.push((name, true));
    }
    let samples = (0..3).map(|_| b.sample(rng)).collect();
    Delim {
        pattern: true,
        value: json!(b.source),
        samples,
        groups: b.groups,
    }
}

pub(super) fn group_name(rng: &mut Rng, taken: &mut Vec<String>) -> String {
    let name = if rng.chance(15) && !taken.is_empty() {
        // Reuse a name of another delimiter.
        rng.pick(taken).clone()
    } else {
        (*rng.pick(&["name", "fn", "attr", "id", "content", "kind"])).to_owned()
    };
    taken.push(name.clone());
    name
}

pub(super) fn sample(rng: &mut Rng, d: &Delim) -> String {
    rng.pick(&d.samples).clone()
}
