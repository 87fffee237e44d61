//! Lazy grammars: what starts them.
//!
//! A lazy grammar constrains the output only from a trigger on: a **word** (the grammar starts
//! where the word starts, as llama.cpp does) or a **pattern** (a regular expression; the
//! grammar starts where its match starts). The triggers are derived from the tool-call block of
//! the internal form, not from the format's markers by name:
//!
//! - the block's *start literals* (every text the block can write holds, after optional
//!   whitespace and optional leading parts, one of them, from which the rest is a text of the
//!   block too: a separator that may lead the first call is no trigger, the call's opener is)
//!   are word triggers when each is distinctive: at least two
//!   characters, and a marker of the format (a preserved token) or not only letters and
//!   digits (a bare `{`, `[` or a function name also starts ordinary text);
//! - otherwise the trigger is a pattern: the block's text up to and including the tool name
//!   (`\{\s*"name"\s*:\s*"(get_weather|search)"`), so only a call to an offered tool starts it.
//!
//! Patterns use the syntax common to ECMAScript, RE2 and Rust's `regex` (no lookaround).

use super::ir::{self, expr_nullable, CharSet, Expr, Role, Rules};

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
///
/// `other_openers`: the openers of reasoning and content; a trigger word that starts one
/// (`to=` of `to=self…`) becomes a pattern that leaves it out ([`word_trigger`]).
/// `names_in_pattern`: a pattern runs through the tool name (the PEG reads only offered names
/// there, so a call to another name is not a call); otherwise it stops before the name, and
/// the grammar then allows only offered names.
pub(crate) fn triggers(
    rules: &Rules,
    block: &Expr,
    force_pattern: bool,
    names_in_pattern: bool,
    markers: &[String],
    call_starts: &[String],
    other_openers: &[&str],
) -> Vec<Trigger> {
    let info = Info {
        nullable: rules.nullable(),
        recursive: rules.recursive(),
    };
    if !force_pattern {
        if let Some(words) = start_literals(rules, &info, block, call_starts, 0) {
            let mut words: Vec<String> = words.into_iter().filter(|w| !w.is_empty()).collect();
            words.sort();
            words.dedup();
            let distinctive = |w: &String| {
                w.chars().count() >= 2
                    && (markers.contains(w) || !w.chars().all(|c| c.is_alphanumeric() || c == '_'))
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
                    .map(|word| word_trigger(word, other_openers))
                    .collect();
            }
        }
    }
    let (head, _) = head_regex(rules, &info, block, None, names_in_pattern, 0);
    let matches_empty = regex_automata::meta::Regex::new(&head).map_or(true, |re| re.is_match(""));
    if matches_empty {
        // No head to recognise (the block starts with what the head cannot follow): its first
        // literals, however plain, are all that can start it.
        let words = start_literals(rules, &info, block, call_starts, 0).unwrap_or_default();
        let mut words: Vec<String> = words.into_iter().filter(|w| !w.is_empty()).collect();
        words.sort();
        words.dedup();
        return words
            .into_iter()
            .map(|value| Trigger {
                kind: TriggerKind::Word,
                value,
            })
            .collect();
    }
    vec![Trigger {
        kind: TriggerKind::Pattern,
        value: head,
    }]
}

/// The first literals of every call rule reachable from `block` (what each call starts with,
/// after optional whitespace); `None` when one cannot be said.
pub(crate) fn call_openers(rules: &Rules, block: ir::RuleId) -> Option<Vec<String>> {
    let info = Info {
        nullable: rules.nullable(),
        recursive: rules.recursive(),
    };
    let mut out = Vec::new();
    let mut seen = vec![false; rules.rules().len()];
    let mut stack = vec![block];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id.index()], true) {
            continue;
        }
        let rule = rules.rule(id);
        if rule.schema.is_some() {
            continue;
        }
        if matches!(rule.role, Some(Role::Call { .. })) {
            out.extend(first_literals(rules, &info, &rule.body, 0)?);
            continue;
        }
        rule.body.for_each_ref(&mut |r| stack.push(r));
    }
    Some(out)
}

/// The first literals every text of the block `block` starts with (after optional
/// whitespace); `None` when one cannot be said.
pub(crate) fn block_openers(rules: &Rules, block: &Expr) -> Option<Vec<String>> {
    let info = Info {
        nullable: rules.nullable(),
        recursive: rules.recursive(),
    };
    first_literals(rules, &info, block, 0)
}

/// Per-rule facts the walks below read.
struct Info {
    nullable: Vec<bool>,
    recursive: Vec<bool>,
}

/// Every text of `e` starts, after optional whitespace, with one of the returned literals;
/// `None` when that cannot be said (text, classes or recursion first).
fn first_literals(rules: &Rules, info: &Info, e: &Expr, depth: usize) -> Option<Vec<String>> {
    literals_at_start(rules, info, e, None, depth)
}

/// Every text of `e` holds, after optional whitespace and optional leading parts, one of the
/// returned literals, and the rest of the text from there is a text of `e` too: where a
/// grammar may start. A separator that may lead the first call (a closer other blocks end
/// with too) is no trigger: the call's own opener is. Optional leading parts that start with
/// one of the parser's call-start markers (`call_starts`) are kept as starts too.
fn start_literals(
    rules: &Rules,
    info: &Info,
    e: &Expr,
    call_starts: &[String],
    depth: usize,
) -> Option<Vec<String>> {
    literals_at_start(rules, info, e, Some(call_starts), depth)
}

/// The literals texts of `e` start with; `skip_optional`: optional leading parts are passed
/// over unless they start with one of the given markers.
fn literals_at_start(
    rules: &Rules,
    info: &Info,
    e: &Expr,
    skip_optional: Option<&[String]>,
    depth: usize,
) -> Option<Vec<String>> {
    if depth > 64 {
        return None;
    }
    let next = |e: &Expr| literals_at_start(rules, info, e, skip_optional, depth + 1);
    match e {
        Expr::Literal(text) => Some(vec![text.trim_start().to_owned()]),
        Expr::Alt(items) => {
            let mut out = Vec::new();
            for i in items {
                out.extend(next(i)?);
            }
            Some(out)
        }
        Expr::Seq(items) => {
            let mut out = Vec::new();
            for item in items {
                let nullable = expr_nullable(item, &info.nullable);
                if is_space(item) {
                    continue;
                }
                if let (Some(keep), true) = (skip_optional, nullable) {
                    let starts_call = literals_at_start(rules, info, item, None, depth + 1)
                        .is_some_and(|ls| {
                            !ls.is_empty() && ls.iter().all(|l| keep.iter().any(|k| k == l.trim()))
                        });
                    if !starts_call {
                        continue;
                    }
                }
                out.extend(next(item)?);
                if !nullable {
                    return Some(out);
                }
            }
            None
        }
        Expr::Repeat { expr, .. } => next(expr),
        Expr::Ref(r) if !info.recursive[r.0] => next(&rules.rule(*r).body),
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

/// A regular expression for the start of `e` up to the end of the tool name (when `tool` is
/// known, inside a call rule) — or the whole of `e` when no name comes. Returns the regex and
/// whether the name was reached. Leading whitespace is left out.
fn head_regex(
    rules: &Rules,
    info: &Info,
    e: &Expr,
    tool: Option<&str>,
    through_name: bool,
    depth: usize,
) -> (String, bool) {
    if depth > 64 {
        return (String::new(), true);
    }
    match e {
        Expr::Empty | Expr::Never => (String::new(), false),
        Expr::Literal(text) => {
            if let Some(name) = tool {
                if let Some(at) = text.find(name) {
                    if !through_name {
                        return (escape(&text[..at]), true);
                    }
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
            for (i, item) in items.iter().enumerate() {
                if !started && is_space(item) {
                    continue;
                }
                started = true;
                let (r, done) = head_regex(rules, info, item, tool, through_name, depth + 1);
                if done && out.is_empty() && tool.is_some_and(|t| is_literal(item, t)) {
                    // A call that starts with its bare name: the name alone is a plain word
                    // that text also holds, so the head goes through it and the marker the
                    // template writes right after it (`search<|invoke|>`), where one follows.
                    if let Some(suffix) = marker_after(&items[i + 1..]) {
                        let (name, _) = head_regex(rules, info, item, tool, true, depth + 1);
                        return (format!("{name}{suffix}"), true);
                    }
                }
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
                .map(|i| head_regex(rules, info, i, tool, through_name, depth + 1))
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
            if is_space(e) {
                return (r"[\t\n\r ]*".to_owned(), false);
            }
            let (inner, done) = head_regex(rules, info, expr, tool, through_name, depth + 1);
            if done {
                // The name (or text the head cannot follow) inside: through it when the part
                // is mandatory, else the head stops before it.
                return if *min >= 1 {
                    (inner, true)
                } else {
                    (String::new(), true)
                };
            }
            let op = match (min, max) {
                (0, None) => "*".to_owned(),
                (1, None) => "+".to_owned(),
                (0, Some(1)) => "?".to_owned(),
                (m, None) => format!("{{{m},}}"),
                (m, Some(n)) => format!("{{{m},{n}}}"),
            };
            (format!("(?:{inner}){op}"), false)
        }
        Expr::Ref(r) => {
            let rule = rules.rule(*r);
            if depth > 24 || info.recursive[r.0] {
                // Recursion (JSON values): the head stops here.
                return (String::new(), true);
            }
            match &rule.role {
                Some(Role::Call { tool }) => {
                    head_regex(rules, info, &rule.body, Some(tool), through_name, depth + 1)
                }
                Some(Role::Arguments { .. }) | Some(Role::Argument { .. }) => (String::new(), true),
                None if rule.schema.is_some() => (String::new(), true),
                None => head_regex(rules, info, &rule.body, tool, through_name, depth + 1),
            }
        }
    }
}

/// Whether `e` is the literal `text`.
fn is_literal(e: &Expr, text: &str) -> bool {
    matches!(e, Expr::Literal(t) if t == text)
}

/// The regex of the first literal with more than whitespace in `items`, after optional
/// whitespace only (what the template writes right after a call's bare name).
fn marker_after(items: &[Expr]) -> Option<String> {
    let mut out = String::new();
    for item in items {
        if is_space(item) {
            out.push_str(r"[\t\n\r ]*");
            continue;
        }
        return match item {
            Expr::Literal(text) if !text.trim().is_empty() => {
                out.push_str(&escape(text));
                Some(out)
            }
            _ => None,
        };
    }
    None
}

/// The trigger for the call opener `word`: the word, or where it starts a longer opener of
/// something else (`to=` of a reasoning opener `to=self<|message|>`), a pattern that matches
/// the word followed by anything but the rest of such an opener, so a block of reasoning or
/// content does not switch the grammar on.
fn word_trigger(word: String, other_openers: &[&str]) -> Trigger {
    let mut rests: Vec<Vec<char>> = other_openers
        .iter()
        .filter_map(|o| o.strip_prefix(word.as_str()))
        .filter(|rest| !rest.trim().is_empty())
        .map(|rest| rest.chars().collect())
        .collect();
    if rests.is_empty() {
        return Trigger {
            kind: TriggerKind::Word,
            value: word,
        };
    }
    rests.sort();
    rests.dedup();
    let tail = excluding_prefixes(&rests, 0);
    Trigger {
        kind: TriggerKind::Pattern,
        value: format!("{}{tail}", escape(&word)),
    }
}

/// A regular expression for the texts of at least one character that do not start with any
/// of `rests` (each compared from character `at` on; `rests` sorted): at each position, a
/// character no remainder has there ends the match, one that some have goes on with those
/// (a remainder that ends there leaves nothing to match).
fn excluding_prefixes(rests: &[Vec<char>], at: usize) -> String {
    let mut firsts: Vec<char> = rests.iter().filter_map(|r| r.get(at).copied()).collect();
    firsts.dedup();
    let class: String = firsts
        .iter()
        .map(|&c| match c {
            '-' => "\\-".to_owned(),
            c => escape(&c.to_string()),
        })
        .collect::<Vec<_>>()
        .join("");
    let mut alternatives = vec![format!("[^{class}]")];
    for c in firsts {
        let group: Vec<Vec<char>> = rests
            .iter()
            .filter(|r| r.get(at) == Some(&c))
            .cloned()
            .collect();
        // A remainder that ends with this character: the whole opener follows the word.
        if group.iter().any(|r| r.len() == at + 1) {
            continue;
        }
        alternatives.push(format!(
            "{}{}",
            escape(&c.to_string()),
            excluding_prefixes(&group, at + 1)
        ));
    }
    format!("(?:{})", alternatives.join("|"))
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
