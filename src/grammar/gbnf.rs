//! The internal form printed as GBNF, the grammar format of llama.cpp's `llama-grammar`.
//!
//! - Rule names are the internal names (`[a-z0-9-]`, llama.cpp's identifier characters); the
//!   root rule is `root`.
//! - Literals are double-quoted; `"`, `\`, and control characters are escaped (`\n`, `\r`,
//!   `\t`, `\xHH`); every other character, multi-byte ones included, is written as itself
//!   (llama.cpp reads literals as UTF-8 and matches code points).
//! - Character classes list ranges; `]`, `[`, `\`, `^`, `-` and control characters are
//!   written as `\xHH` / `\uHHHH` / `\UHHHHHHHH` escapes; a class holding more than half of all
//!   characters is written negated; every character is `.`.
//! - Text containing none of some delimiters (`until`) has no GBNF operator: it becomes one
//!   rule per state of the automaton that finds the delimiters (the states are the delimiters'
//!   proper prefixes), each right-recursive — text ends in any state, and a character that
//!   would complete a delimiter has no alternative.
//! - Schema rules are printed expanded (their internal rules included).

use std::collections::HashMap;
use std::fmt::Write;

use super::ir::{CharSet, Expr, Rules};

/// Prints `rules` as GBNF.
pub fn print(rules: &Rules) -> String {
    let mut p = Printer {
        rules,
        excluding: HashMap::new(),
        extra: Vec::new(),
        used: rules.rules().iter().map(|r| r.name.clone()).collect(),
    };
    let mut out = String::new();
    for rule in rules.rules() {
        let body = p.expr(&rule.body, Prec::Alt);
        let _ = writeln!(out, "{} ::= {}", rule.name, body);
    }
    for (name, body) in &p.extra {
        let _ = writeln!(out, "{name} ::= {body}");
    }
    out
}

/// Binding strength of the context an expression is printed in.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    Alt,
    Seq,
    Atom,
}

struct Printer<'r> {
    rules: &'r Rules,
    /// Delimiter sets already expanded, to the name of their start rule.
    excluding: HashMap<Vec<String>, String>,
    /// Rules added by the printer (automaton states).
    extra: Vec<(String, String)>,
    used: Vec<String>,
}

impl Printer<'_> {
    fn fresh(&mut self, base: &str) -> String {
        let mut n = self.used.len();
        loop {
            let name = format!("{base}-{n}");
            if !self.used.contains(&name) {
                self.used.push(name.clone());
                return name;
            }
            n += 1;
        }
    }

    fn expr(&mut self, e: &Expr, ctx: Prec) -> String {
        match e {
            Expr::Empty | Expr::Never => "\"\"".to_owned(),
            Expr::Literal(text) => literal(text),
            Expr::Class(set) => class(set),
            Expr::Ref(r) => self.rules.rule(*r).name.clone(),
            Expr::Excluding(ds) => self.excluding(ds),
            Expr::Seq(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.expr(i, Prec::Seq)).collect();
                wrap(parts.join(" "), ctx > Prec::Seq)
            }
            Expr::Alt(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.expr(i, Prec::Alt)).collect();
                wrap(parts.join(" | "), ctx > Prec::Alt)
            }
            Expr::Repeat { expr, min, max } => {
                let inner = self.expr(expr, Prec::Atom);
                let inner = wrap(inner, matches!(**expr, Expr::Repeat { .. }));
                let op = match (min, max) {
                    (0, None) => "*".to_owned(),
                    (1, None) => "+".to_owned(),
                    (0, Some(1)) => "?".to_owned(),
                    (m, None) => format!("{{{m},}}"),
                    (m, Some(n)) if m == n => format!("{{{m}}}"),
                    (m, Some(n)) => format!("{{{m},{n}}}"),
                };
                format!("{inner}{op}")
            }
        }
    }

    /// The start rule of the automaton for text excluding `ds`.
    fn excluding(&mut self, ds: &[String]) -> String {
        if let Some(name) = self.excluding.get(ds) {
            return name.clone();
        }
        let automaton = Automaton::new(ds);
        let names: Vec<String> = (0..automaton.states.len())
            .map(|_| self.fresh("until"))
            .collect();
        self.excluding.insert(ds.to_vec(), names[0].clone());
        for (i, _) in automaton.states.iter().enumerate() {
            let mut alts = Vec::new();
            // Characters that do not occur in any delimiter go back to the start state.
            let alphabet = CharSet::new(automaton.alphabet.iter().map(|&c| (c, c)));
            let others = match &alphabet {
                Some(a) => a.complement(),
                None => Some(CharSet::any()),
            };
            let mut back_to_start: Vec<char> = Vec::new();
            let mut moves: Vec<(char, usize)> = Vec::new();
            for &c in &automaton.alphabet {
                match automaton.step(i, c) {
                    Some(0) => back_to_start.push(c),
                    Some(j) => moves.push((c, j)),
                    None => {}
                }
            }
            let start_set = match others {
                Some(o) => CharSet::new(
                    o.ranges()
                        .iter()
                        .copied()
                        .chain(back_to_start.iter().map(|&c| (c, c))),
                ),
                None => CharSet::new(back_to_start.iter().map(|&c| (c, c))),
            };
            if let Some(set) = start_set {
                alts.push(format!("{} {}", class(&set), names[0]));
            }
            for (c, j) in moves {
                alts.push(format!("{} {}", literal(&c.to_string()), names[j]));
            }
            let body = if alts.is_empty() {
                "\"\"".to_owned()
            } else {
                format!("( {} )?", alts.join(" | "))
            };
            self.extra.push((names[i].clone(), body));
        }
        names[0].clone()
    }
}

fn wrap(s: String, yes: bool) -> String {
    if yes {
        format!("( {s} )")
    } else {
        s
    }
}

/// A GBNF string literal.
pub fn literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&hex_escape(c)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn hex_escape(c: char) -> String {
    let n = u32::from(c);
    if n < 0x100 {
        format!("\\x{n:02X}")
    } else if n < 0x10000 {
        format!("\\u{n:04X}")
    } else {
        format!("\\U{n:08X}")
    }
}

/// A character in a class: itself, unless it is special there (`[`, `]`, `\`, `^`, `-`), a
/// control or a whitespace character other than space (then a hex escape).
fn class_char(c: char) -> String {
    let plain = c == ' '
        || (c.is_ascii_graphic() && !matches!(c, '[' | ']' | '\\' | '^' | '-'))
        || (!c.is_ascii() && !c.is_control() && !c.is_whitespace());
    if plain {
        c.to_string()
    } else {
        hex_escape(c)
    }
}

/// A GBNF character class (or `.` for every character).
pub fn class(set: &CharSet) -> String {
    if set.is_any() {
        return ".".to_owned();
    }
    let (negated, shown) = match set.complement() {
        Some(comp) if comp.len() < set.len() => (true, comp),
        _ => (false, set.clone()),
    };
    let mut out = String::from(if negated { "[^" } else { "[" });
    for &(lo, hi) in shown.ranges() {
        out.push_str(&class_char(lo));
        if hi != lo {
            out.push('-');
            out.push_str(&class_char(hi));
        }
    }
    out.push(']');
    out
}

/// The automaton that finds any of some delimiters: states are the delimiters' proper
/// prefixes (state 0 the empty one).
pub(crate) struct Automaton {
    pub(crate) states: Vec<Vec<char>>,
    delimiters: Vec<Vec<char>>,
    pub(crate) alphabet: Vec<char>,
}

impl Automaton {
    pub(crate) fn new(ds: &[String]) -> Automaton {
        let delimiters: Vec<Vec<char>> = ds.iter().map(|d| d.chars().collect()).collect();
        let mut states: Vec<Vec<char>> = vec![Vec::new()];
        for d in &delimiters {
            for n in 1..d.len() {
                let p = d[..n].to_vec();
                if !states.contains(&p) {
                    states.push(p);
                }
            }
        }
        let mut alphabet: Vec<char> = delimiters.iter().flatten().copied().collect();
        alphabet.sort_unstable();
        alphabet.dedup();
        Automaton {
            states,
            delimiters,
            alphabet,
        }
    }

    /// The state after reading `c` in state `i`; `None` when `c` completes a delimiter.
    pub(crate) fn step(&self, i: usize, c: char) -> Option<usize> {
        let mut text = self.states[i].clone();
        text.push(c);
        if self.delimiters.iter().any(|d| text.ends_with(d)) {
            return None;
        }
        // The longest suffix of the text that is a state.
        for start in 0..=text.len() {
            let suffix = &text[start..];
            if let Some(j) = self.states.iter().position(|s| s == suffix) {
                return Some(j);
            }
        }
        Some(0)
    }
}
