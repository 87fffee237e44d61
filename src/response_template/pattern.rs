//! Python regular expressions, translated for Rust engines, and the compiled matchers.
//!
//! Patterns in templates are Python `re`/`regex` syntax compiled with `DOTALL` only. They are
//! translated to `regex-syntax` syntax ([`translate`]) and compiled twice:
//!
//! - a dense, anchored, leftmost-first DFA that the streaming scanner ([`super::scan`]) steps
//!   one byte at a time, which gives partial matching (a live state at the end of the buffer
//!   means "could still match or extend") without ever re-scanning text;
//! - a `meta::Regex` used only once a match is decided, to read its named groups.
//!
//! Translation rules: `(?P<name>...)` is kept; `\Z` becomes `\z`; `$` (end, or before a
//! final newline) becomes `(?:\n?\z)` so the match swallows that final newline instead of
//! stopping before it; `\b`/`\B` are ASCII word boundaries (a DFA cannot do Unicode ones);
//! escaped punctuation such as `\<` is a literal; `{` that does not start a repetition is a
//! literal, `{,n}` means `{0,n}`; `[` inside a class is a literal. Lookarounds,
//! backreferences, atomic groups and possessive quantifiers are rejected with a load error.
//! `tag_pattern` (content parsing, not streamed) goes through a backtracking engine instead,
//! where backreferences and lookarounds are supported.

use std::collections::HashMap;

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::meta;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};

/// Which engine a translation targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The finite-automata engines: no lookaround, no backreference.
    Automaton,
    /// `fancy-regex`: lookarounds and backreferences allowed.
    Backtracking,
}

/// Translates a Python pattern to Rust `regex` syntax. Errors name the unsupported construct.
pub(crate) fn translate(py: &str, target: Target) -> Result<String, String> {
    let chars: Vec<char> = py.chars().collect();
    let mut out = String::with_capacity(py.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    while let Some(&c) = chars.get(i) {
        if in_class {
            match c {
                '\\' => {
                    let next = chars.get(i + 1).copied();
                    match next {
                        None => return Err("pattern ends with a lone backslash".into()),
                        Some('b') => out.push_str("\\x08"),
                        Some(n) if n.is_ascii_alphanumeric() => {
                            escape_alnum(&chars, &mut i, &mut out, true, target)?;
                            continue;
                        }
                        Some(n) => push_literal(&mut out, n),
                    }
                    i += 2;
                    continue;
                }
                ']' => {
                    in_class = false;
                    out.push(']');
                }
                '[' | '&' | '~' | '-' if c != '-' || chars.get(i + 1) == Some(&'-') => {
                    out.push('\\');
                    out.push(c);
                }
                _ => out.push(c),
            }
            i += 1;
            continue;
        }
        match c {
            '\\' => {
                let Some(&n) = chars.get(i + 1) else {
                    return Err("pattern ends with a lone backslash".into());
                };
                if n.is_ascii_alphanumeric() {
                    escape_alnum(&chars, &mut i, &mut out, false, target)?;
                    continue;
                }
                push_literal(&mut out, n);
                i += 2;
            }
            '[' => {
                in_class = true;
                out.push('[');
                i += 1;
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                // A `]` right after `[` or `[^` is a literal.
                if chars.get(i) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
            }
            '(' if chars.get(i + 1) == Some(&'?') => {
                i = group_prefix(&chars, i, &mut out, target)?;
            }
            '{' => match repetition(&chars, i) {
                Some((text, end)) => {
                    out.push_str(&text);
                    i = end;
                    if matches!(chars.get(i), Some('+')) && target == Target::Automaton {
                        return Err("possessive quantifiers are not supported".into());
                    }
                }
                None => {
                    out.push_str("\\{");
                    i += 1;
                }
            },
            '}' => {
                out.push_str("\\}");
                i += 1;
            }
            '$' => {
                out.push_str("(?:\\n?\\z)");
                i += 1;
            }
            '*' | '+' | '?' => {
                out.push(c);
                i += 1;
                if chars.get(i) == Some(&'+') && target == Target::Automaton {
                    return Err("possessive quantifiers are not supported".into());
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    if in_class {
        return Err("unterminated character class".into());
    }
    Ok(out)
}

/// Pushes a character as a literal, escaping it when Rust's syntax would treat it specially.
fn push_literal(out: &mut String, c: char) {
    if regex_syntax::is_meta_character(c) {
        out.push('\\');
    }
    out.push(c);
}

/// Handles `\` followed by an ASCII letter or digit at `chars[*i]`.
fn escape_alnum(
    chars: &[char],
    i: &mut usize,
    out: &mut String,
    in_class: bool,
    target: Target,
) -> Result<(), String> {
    let n = chars.get(*i + 1).copied().unwrap_or('\\');
    *i += 2;
    match n {
        'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'n' | 't' | 'r' | 'f' | 'v' | 'a' => {
            out.push('\\');
            out.push(n);
        }
        'A' if !in_class => out.push_str("\\A"),
        'Z' | 'z' if !in_class => out.push_str("\\z"),
        'b' | 'B' if !in_class => match target {
            Target::Automaton => {
                out.push_str("(?-u:\\");
                out.push(n);
                out.push(')');
            }
            Target::Backtracking => {
                out.push('\\');
                out.push(n);
            }
        },
        'x' | 'u' | 'U' => {
            let len = match n {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            let digits: String = chars.iter().skip(*i).take(len).collect();
            if digits.len() != len || !digits.chars().all(|d| d.is_ascii_hexdigit()) {
                return Err(format!("bad escape \\{n}"));
            }
            out.push_str(&format!("\\x{{{digits}}}"));
            *i += len;
        }
        '0' => {
            // Octal escape: up to two more octal digits.
            let mut value = 0u32;
            let mut taken = 0;
            while taken < 2 {
                match chars.get(*i).and_then(|d| d.to_digit(8)) {
                    Some(d) => {
                        value = value * 8 + d;
                        *i += 1;
                        taken += 1;
                    }
                    None => break,
                }
            }
            out.push_str(&format!("\\x{{{value:x}}}"));
        }
        '1'..='9' if !in_class => {
            if target == Target::Automaton {
                return Err("backreferences are not supported".into());
            }
            out.push('\\');
            out.push(n);
        }
        other => return Err(format!("bad escape \\{other}")),
    }
    Ok(())
}

/// Translates the `(?...` group prefix at `chars[i]`; returns the index after it.
fn group_prefix(
    chars: &[char],
    i: usize,
    out: &mut String,
    target: Target,
) -> Result<usize, String> {
    let rest: String = chars.iter().skip(i + 2).take(3).collect();
    let lookaround = rest.starts_with('=')
        || rest.starts_with('!')
        || rest.starts_with("<=")
        || rest.starts_with("<!");
    if lookaround {
        if target == Target::Automaton {
            return Err(
                "lookaround assertions ((?=...), (?!...), (?<=...), (?<!...)) are \
                        not supported in open/close/anchor patterns"
                    .into(),
            );
        }
        out.push_str("(?");
        return Ok(i + 2);
    }
    if rest.starts_with("P=") {
        if target == Target::Automaton {
            return Err("named backreferences (?P=name) are not supported".into());
        }
        // fancy-regex spells a named backreference \k<name>.
        let mut j = i + 4;
        let mut name = String::new();
        while let Some(&c) = chars.get(j) {
            j += 1;
            if c == ')' {
                out.push_str(&format!("\\k<{name}>"));
                return Ok(j);
            }
            name.push(c);
        }
        return Err("unterminated (?P=name)".into());
    }
    if rest.starts_with('>') {
        if target == Target::Automaton {
            return Err("atomic groups (?>...) are not supported".into());
        }
        out.push_str("(?>");
        return Ok(i + 3);
    }
    if rest.starts_with('#') {
        // A comment group: skip it entirely.
        let mut j = i + 3;
        while let Some(&c) = chars.get(j) {
            j += 1;
            if c == ')' {
                return Ok(j);
            }
        }
        return Err("unterminated comment group".into());
    }
    out.push_str("(?");
    Ok(i + 2)
}

/// If `chars[i] == '{'` starts a Python repetition (`{m}`, `{m,}`, `{,n}`, `{m,n}`), returns
/// its Rust spelling and the index after it.
fn repetition(chars: &[char], i: usize) -> Option<(String, usize)> {
    let mut j = i + 1;
    let mut min = String::new();
    let mut max = String::new();
    let mut comma = false;
    loop {
        let c = *chars.get(j)?;
        j += 1;
        match c {
            '0'..='9' if !comma => min.push(c),
            '0'..='9' => max.push(c),
            ',' if !comma => comma = true,
            '}' => break,
            _ => return None,
        }
    }
    if min.is_empty() && (!comma || max.is_empty()) {
        return None;
    }
    let min = if min.is_empty() { "0".to_owned() } else { min };
    let text = match (comma, max.is_empty()) {
        (false, _) => format!("{{{min}}}"),
        (true, true) => format!("{{{min},}}"),
        (true, false) => format!("{{{min},{max}}}"),
    };
    let mut end = j;
    if chars.get(end) == Some(&'?') {
        end += 1;
        return Some((format!("{text}?"), end));
    }
    Some((text, end))
}

/// A compiled delimiter: literal alternatives or a Python pattern.
#[derive(Debug)]
pub(crate) struct Pattern {
    /// The anchored leftmost-first DFA stepped by the scanner.
    dfa: dense::DFA<Vec<u32>>,
    /// Used once a match is decided, to read named groups.
    regex: meta::Regex,
    /// Named groups other than internal ones, in pattern order.
    names: Vec<String>,
    /// `can_start[b]`: some start state survives byte `b`.
    can_start: [bool; 256],
    /// The bytes that can start a match, when there are at most three (for `memchr`).
    first_bytes: Option<Vec<u8>>,
    /// Start states by look-behind byte (index 256 = start of text).
    starts: Vec<StateID>,
    /// Per reachable DFA state: what is known at the end of the buffer (see [`EndInfo`]).
    end_info: IdMap<EndInfo>,
}

/// A hasher for DFA state ids (small integers): one multiplication.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        // State ids are multiples of a power of two: fold the mixed high bits down.
        self.0 ^ (self.0 >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0 ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IdMap<V> = HashMap<StateID, V, std::hash::BuildHasherDefault<IdHasher>>;

/// What a DFA state tells about a match attempt standing at the end of the buffer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct EndInfo {
    /// A match ends here whatever follows (every next byte, and the end of input, confirm it).
    pub(crate) ends_here: bool,
    /// Some continuation could still produce a match ending later.
    pub(crate) extendable: bool,
}

/// Size limit for each DFA (bytes).
const DFA_LIMIT: usize = 8 << 20;

impl Pattern {
    /// Compiles literal alternatives; the longest alternative wins at a given position.
    pub(crate) fn literals(lits: &[String]) -> Result<Pattern, String> {
        let mut sorted: Vec<&String> = lits.iter().collect();
        sorted.sort_by_key(|l| std::cmp::Reverse(l.len()));
        let alts: Vec<String> = sorted.iter().map(|l| regex_syntax::escape(l)).collect();
        Pattern::compile_rust(&alts.join("|"))
    }

    /// Compiles a Python pattern (DOTALL).
    pub(crate) fn python(py: &str) -> Result<Pattern, String> {
        let rust = translate(py, Target::Automaton)?;
        Pattern::compile_rust(&rust)
    }

    fn compile_rust(rust: &str) -> Result<Pattern, String> {
        let syntax = syntax::Config::new()
            .dot_matches_new_line(true)
            .unicode(true)
            .utf8(true);
        let dfa = dense::Builder::new()
            .syntax(syntax)
            .configure(
                dense::Config::new()
                    .match_kind(MatchKind::LeftmostFirst)
                    .start_kind(StartKind::Anchored)
                    .minimize(false)
                    .dfa_size_limit(Some(DFA_LIMIT))
                    .determinize_size_limit(Some(DFA_LIMIT)),
            )
            .build(rust)
            .map_err(|e| short_error(&e.to_string()))?;
        let regex = meta::Builder::new()
            .syntax(syntax)
            .configure(meta::Config::new().match_kind(MatchKind::LeftmostFirst))
            .build(rust)
            .map_err(|e| short_error(&e.to_string()))?;
        let names: Vec<String> = regex
            .group_info()
            .pattern_names(regex_automata::PatternID::ZERO)
            .flatten()
            .map(str::to_owned)
            .collect();
        let mut starts = Vec::with_capacity(257);
        for lb in 0..=256usize {
            let look_behind = u8::try_from(lb).ok();
            let cfg = start::Config::new()
                .anchored(Anchored::Yes)
                .look_behind(look_behind);
            let sid = dfa.start_state(&cfg).map_err(|e| e.to_string())?;
            starts.push(sid);
        }
        let mut can_start = [false; 256];
        for sid in distinct_starts(&starts) {
            for (b, slot) in can_start.iter_mut().enumerate() {
                let byte = u8::try_from(b).unwrap_or(0);
                if !dfa.is_dead_state(dfa.next_state(sid, byte)) {
                    *slot = true;
                }
            }
        }
        let end_info = end_info(&dfa, &distinct_starts(&starts));
        let bytes: Vec<u8> = (0..=255u8).filter(|b| can_start[usize::from(*b)]).collect();
        let first_bytes = (bytes.len() <= 3).then_some(bytes);
        Ok(Pattern {
            first_bytes,
            dfa,
            regex,
            names,
            can_start,
            starts,
            end_info,
        })
    }

    /// End-of-buffer knowledge about a state (unknown states count as undecided).
    pub(crate) fn end_info(&self, sid: StateID) -> EndInfo {
        self.end_info.get(&sid).copied().unwrap_or(EndInfo {
            ends_here: false,
            extendable: true,
        })
    }

    /// Named groups of the pattern.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// The offset of the first byte of `hay` that can start a match.
    pub(crate) fn next_start(&self, hay: &[u8]) -> Option<usize> {
        if hay.len() < 16 {
            return hay.iter().position(|b| self.can_start(*b));
        }
        match self.first_bytes.as_deref() {
            Some([]) => None,
            Some([a]) => memchr::memchr(*a, hay),
            Some([a, b]) => memchr::memchr2(*a, *b, hay),
            Some([a, b, c]) => memchr::memchr3(*a, *b, *c, hay),
            _ => hay.iter().position(|b| self.can_start(*b)),
        }
    }

    pub(crate) fn can_start(&self, byte: u8) -> bool {
        self.can_start
            .get(usize::from(byte))
            .copied()
            .unwrap_or(true)
    }

    /// The anchored start state for a match starting after `look_behind`.
    pub(crate) fn start(&self, look_behind: Option<u8>) -> StateID {
        let index = look_behind.map_or(256, usize::from);
        self.starts.get(index).copied().unwrap_or(StateID::ZERO)
    }

    pub(crate) fn next(&self, sid: StateID, byte: u8) -> StateID {
        self.dfa.next_state(sid, byte)
    }

    pub(crate) fn next_eoi(&self, sid: StateID) -> StateID {
        self.dfa.next_eoi_state(sid)
    }

    /// Whether a state needs attention (match, dead, quit, start or accelerated): ordinary
    /// states can be stepped through without looking.
    pub(crate) fn is_special(&self, sid: StateID) -> bool {
        self.dfa.is_special_state(sid)
    }

    pub(crate) fn is_match(&self, sid: StateID) -> bool {
        self.dfa.is_match_state(sid)
    }

    /// Dead (or quit, which the ASCII-only configuration never produces).
    pub(crate) fn is_dead(&self, sid: StateID) -> bool {
        self.dfa.is_dead_state(sid) || self.dfa.is_quit_state(sid)
    }

    /// Named captures of the decided match `[start, end)` of `hay`.
    pub(crate) fn captures(
        &self,
        hay: &str,
        start: usize,
        end: usize,
    ) -> Vec<(String, Option<String>)> {
        let mut caps = self.regex.create_captures();
        if start > end || end > hay.len() {
            return Vec::new();
        }
        let input = Input::new(hay).range(start..end).anchored(Anchored::Yes);
        self.regex.search_captures(&input, &mut caps);
        self.names
            .iter()
            .map(|name| {
                let text = caps
                    .get_group_by_name(name)
                    .and_then(|span| hay.get(span.range()));
                (name.clone(), text.map(str::to_owned))
            })
            .collect()
    }

    /// All non-overlapping matches in `hay` (for the start anchor), as `(start, end)`.
    pub(crate) fn find_iter(&self, hay: &str) -> Vec<(usize, usize)> {
        self.regex
            .find_iter(hay)
            .map(|m| (m.start(), m.end()))
            .collect()
    }
}

fn distinct_starts(starts: &[StateID]) -> Vec<StateID> {
    let mut distinct = starts.to_vec();
    distinct.sort();
    distinct.dedup();
    distinct
}

/// Computes [`EndInfo`] for every state reachable from `starts`.
fn end_info(dfa: &dense::DFA<Vec<u32>>, starts: &[StateID]) -> IdMap<EndInfo> {
    let reps: Vec<u8> = dfa
        .byte_classes()
        .representatives(..)
        .filter_map(|unit| unit.as_u8())
        .collect();
    // Discover reachable states and their successors.
    let mut index: IdMap<usize> = IdMap::default();
    let mut states: Vec<StateID> = Vec::new();
    let mut succ: Vec<Vec<StateID>> = Vec::new();
    let mut queue: Vec<StateID> = starts.to_vec();
    while let Some(sid) = queue.pop() {
        if index.contains_key(&sid) {
            continue;
        }
        index.insert(sid, states.len());
        states.push(sid);
        let next: Vec<StateID> = reps.iter().map(|b| dfa.next_state(sid, *b)).collect();
        for n in &next {
            if !dfa.is_dead_state(*n) && !dfa.is_quit_state(*n) && !index.contains_key(n) {
                queue.push(*n);
            }
        }
        succ.push(next);
    }
    // reach[i]: some path of at least one transition from state i ends in a match state.
    let mut reach: Vec<bool> = states
        .iter()
        .zip(&succ)
        .map(|(sid, next)| {
            dfa.is_match_state(dfa.next_eoi_state(*sid))
                || next.iter().any(|n| dfa.is_match_state(*n))
        })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..states.len() {
            if reach.get(i).copied().unwrap_or(true) {
                continue;
            }
            let hit = succ.get(i).into_iter().flatten().any(|n| {
                index
                    .get(n)
                    .and_then(|j| reach.get(*j))
                    .copied()
                    .unwrap_or(false)
            });
            if hit {
                if let Some(slot) = reach.get_mut(i) {
                    *slot = true;
                }
                changed = true;
            }
        }
    }
    let mut out = IdMap::default();
    out.reserve(states.len());
    for (sid, next) in states.iter().zip(&succ) {
        let ends_here = dfa.is_match_state(dfa.next_eoi_state(*sid))
            && next.iter().all(|n| dfa.is_match_state(*n));
        let extendable = next.iter().any(|n| {
            index
                .get(n)
                .and_then(|j| reach.get(*j))
                .copied()
                .unwrap_or(false)
        });
        out.insert(
            *sid,
            EndInfo {
                ends_here,
                extendable,
            },
        );
    }
    out
}

/// Keeps the first line of a regex error (the rest is an ASCII-art excerpt).
fn short_error(message: &str) -> String {
    let mut lines = message.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("invalid pattern").to_owned();
    match message
        .lines()
        .find(|l| l.trim_start().starts_with("error:"))
    {
        Some(err) => format!("{first} {}", err.trim()),
        None => first,
    }
}

/// A backtracking pattern, for `xml-inline` `tag_pattern`.
#[derive(Debug)]
pub(crate) struct TagPattern {
    regex: fancy_regex::Regex,
}

impl TagPattern {
    pub(crate) fn python(py: &str) -> Result<TagPattern, String> {
        let rust = translate(py, Target::Backtracking)?;
        let regex = fancy_regex::RegexBuilder::new(&format!("(?s){rust}"))
            .backtrack_limit(1_000_000)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(TagPattern { regex })
    }

    pub(crate) fn has_group(&self, name: &str) -> bool {
        self.regex.capture_names().flatten().any(|n| n == name)
    }

    /// `(key, value)` of each match, in order. Errors if the backtracking limit is hit.
    pub(crate) fn pairs(&self, hay: &str) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        for caps in self.regex.captures_iter(hay) {
            let caps = caps.map_err(|e| format!("tag_pattern: {e}"))?;
            let key = caps.name("key").map_or("", |m| m.as_str());
            let value = caps.name("value").map_or("", |m| m.as_str());
            out.push((key.to_owned(), value.to_owned()));
        }
        Ok(out)
    }
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
