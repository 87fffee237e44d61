//! Lazy grammars: what starts them.
//!
//! A lazy grammar constrains the output only from a trigger on: a **word** (the grammar starts
//! where the word starts, as llama.cpp does) or a **pattern** (a regular expression; the
//! grammar starts where its match starts). The triggers are derived from the tool-call block of
//! the internal form, not from the format's markers by name:
//!
//! - the block's *first literals* (every text the block can write starts, after optional
//!   whitespace, with one of them) are word triggers when each is distinctive: at least two
//!   characters, and not only letters and digits (a bare `{`, `[` or a function name also
//!   starts ordinary text);
//! - otherwise the trigger is a pattern: the block's text up to and including the tool name
//!   (`\{\s*"name"\s*:\s*"(get_weather|search)"`), so only a call to an offered tool starts it.
//!
//! Patterns use the syntax common to ECMAScript, RE2 and Rust's `regex` (no lookaround).

use super::ir::{CharSet, Expr, Role, Rules};

/// How a trigger is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TriggerKind {
    /// A literal word.
    Word,
    /// A regular expression.
    Pattern,
}

/// Text that switches a lazy grammar on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Trigger {
    /// Word or pattern.
    pub kind: TriggerKind,
    /// The word, or the pattern's source.
    pub value: String,
}

/// The triggers of a block (an expression over `rules`).
pub(crate) fn triggers(rules: &Rules, block: &Expr, force_pattern: bool) -> Vec<Trigger> {
    if !force_pattern {
        if let Some(words) = first_literals(rules, block, 0) {
            let mut words: Vec<String> = words.into_iter().filter(|w| !w.is_empty()).collect();
            words.sort();
            words.dedup();
            let distinctive = |w: &String| {
                w.chars().count() >= 2 && !w.chars().all(|c| c.is_alphanumeric() || c == '_')
            };
            if !words.is_empty() && words.iter().all(distinctive) {
                // A word another word starts with is covered by the shorter one.
                let kept: Vec<String> = words
                    .iter()
                    .filter(|w| !words.iter().any(|o| o != *w && w.starts_with(o.as_str())))
                    .cloned()
                    .collect();
                return kept
                    .into_iter()
                    .map(|value| Trigger {
                        kind: TriggerKind::Word,
                        value,
                    })
                    .collect();
            }
        }
    }
    let (head, _) = head_regex(rules, block, None, 0);
    vec![Trigger {
        kind: TriggerKind::Pattern,
        value: head,
    }]
}

/// Every text of `e` starts, after optional whitespace, with one of the returned literals;
/// `None` when that cannot be said (text, classes or recursion first).
fn first_literals(rules: &Rules, e: &Expr, depth: usize) -> Option<Vec<String>> {
    if depth > 64 {
        return None;
    }
    match e {
        Expr::Literal(text) => Some(vec![text.trim_start().to_owned()]),
        Expr::Alt(items) => {
            let mut out = Vec::new();
            for i in items {
                out.extend(first_literals(rules, i, depth + 1)?);
            }
            Some(out)
        }
        Expr::Seq(items) => {
            let mut out = Vec::new();
            for item in items {
                if is_space(item) {
                    continue;
                }
                out.extend(first_literals(rules, item, depth + 1)?);
                if !nullable(rules, item, 0) {
                    return Some(out);
                }
            }
            None
        }
        Expr::Repeat { expr, min, .. } if *min >= 1 => first_literals(rules, expr, depth + 1),
        Expr::Ref(r) => first_literals(rules, &rules.rule(*r).body, depth + 1),
        _ => None,
    }
}

fn is_space(e: &Expr) -> bool {
    match e {
        Expr::Repeat { expr, min: 0, .. } => {
            matches!(&**expr, Expr::Class(set) if set.ranges().iter().all(|&(lo, hi)| {
                (lo..=hi).all(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
            }))
        }
        _ => false,
    }
}

fn nullable(rules: &Rules, e: &Expr, depth: usize) -> bool {
    if depth > 64 {
        return false;
    }
    match e {
        Expr::Empty | Expr::Excluding(_) => true,
        Expr::Never | Expr::Literal(_) | Expr::Class(_) => false,
        Expr::Seq(items) => items.iter().all(|i| nullable(rules, i, depth + 1)),
        Expr::Alt(items) => items.iter().any(|i| nullable(rules, i, depth + 1)),
        Expr::Repeat { expr, min, .. } => *min == 0 || nullable(rules, expr, depth + 1),
        Expr::Ref(r) => nullable(rules, &rules.rule(*r).body, depth + 1),
    }
}

/// A regular expression for the start of `e` up to the end of the tool name (when `tool` is
/// known, inside a call rule) — or the whole of `e` when no name comes. Returns the regex and
/// whether the name was reached. Leading whitespace is left out.
fn head_regex(rules: &Rules, e: &Expr, tool: Option<&str>, depth: usize) -> (String, bool) {
    if depth > 64 {
        return (String::new(), true);
    }
    match e {
        Expr::Empty | Expr::Never => (String::new(), false),
        Expr::Literal(text) => {
            if let Some(name) = tool {
                if let Some(at) = text.find(name) {
                    let end = at + name.len();
                    // Through the closing quote of a quoted name.
                    let end = match text[end..].chars().next() {
                        Some(q @ ('"' | '\'')) if text[..at].ends_with(q) => end + 1,
                        _ => end,
                    };
                    return (escape(&text[..end]), true);
                }
            }
            (escape(text), false)
        }
        Expr::Class(set) => (class(set), false),
        Expr::Excluding(_) => (String::new(), true),
        Expr::Seq(items) => {
            let mut out = String::new();
            let mut started = false;
            for item in items {
                if !started && is_space(item) {
                    continue;
                }
                started = true;
                let (r, done) = head_regex(rules, item, tool, depth + 1);
                out.push_str(&r);
                if done {
                    return (out, true);
                }
            }
            (out, false)
        }
        Expr::Alt(items) => {
            let heads: Vec<(String, bool)> = items
                .iter()
                .map(|i| head_regex(rules, i, tool, depth + 1))
                .collect();
            let done = heads.iter().any(|(_, d)| *d);
            let mut alts: Vec<String> = heads.into_iter().map(|(r, _)| r).collect();
            alts.sort();
            alts.dedup();
            if alts.len() == 1 {
                return (alts.pop().unwrap_or_default(), done);
            }
            (format!("(?:{})", alts.join("|")), done)
        }
        Expr::Repeat { expr, min, max } => {
            let (inner, done) = head_regex(rules, expr, tool, depth + 1);
            if done && *min >= 1 {
                return (inner, true);
            }
            let (full, _) = head_regex(rules, expr, None, depth + 1);
            let op = match (min, max) {
                (0, None) => "*".to_owned(),
                (1, None) => "+".to_owned(),
                (0, Some(1)) => "?".to_owned(),
                (m, None) => format!("{{{m},}}"),
                (m, Some(n)) => format!("{{{m},{n}}}"),
            };
            (format!("(?:{full}){op}"), false)
        }
        Expr::Ref(r) => {
            let rule = rules.rule(*r);
            match &rule.role {
                Some(Role::Call { tool }) => head_regex(rules, &rule.body, Some(tool), depth + 1),
                Some(Role::Arguments { .. }) | Some(Role::Argument { .. }) => (String::new(), true),
                None if rule.schema.is_some() => (String::new(), true),
                None => head_regex(rules, &rule.body, tool, depth + 1),
            }
        }
    }
}

/// `text` escaped for a regular expression.
fn escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\\' | '^' | '$' | '.' | '|' | '?' | '*' | '+' | '(' | ')' | '[' | ']' | '{' | '}'
            | '/' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c) & 0xff)),
            c => out.push(c),
        }
    }
    out
}

fn class_char(c: char) -> String {
    match c {
        '\\' | ']' | '[' | '^' | '-' => format!("\\{c}"),
        '\n' => "\\n".to_owned(),
        '\r' => "\\r".to_owned(),
        '\t' => "\\t".to_owned(),
        c if c.is_control() && u32::from(c) < 0x100 => format!("\\x{:02x}", u32::from(c)),
        c => c.to_string(),
    }
}

fn class(set: &CharSet) -> String {
    if set.is_any() {
        return "[\\s\\S]".to_owned();
    }
    let (negated, shown) = match set.complement() {
        Some(comp) if comp.len() < set.len() => (true, comp),
        _ => (false, set.clone()),
    };
    let mut out = String::from(if negated { "[^" } else { "[" });
    for &(lo, hi) in shown.ranges() {
        if u32::from(lo) > 0xFFFF {
            continue;
        }
        out.push_str(&class_char(lo));
        if hi != lo {
            out.push('-');
            out.push_str(&class_char(
                char::from_u32(u32::from(hi).min(0xFFFF)).unwrap_or('\u{FFFF}'),
            ));
        }
    }
    out.push(']');
    out
}
