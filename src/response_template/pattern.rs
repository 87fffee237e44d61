//! Compiled delimiter patterns and their partial-matching automata.
//!
//! A delimiter (literal alternatives, or a Python pattern translated by [`super::translate`])
//! is compiled twice:
//!
//! - a dense, anchored, leftmost-first DFA that the streaming scanner ([`super::scan`]) steps
//!   one byte at a time, which gives partial matching (a live state at the end of the buffer
//!   means "could still match or extend") without ever re-scanning text; for each reachable
//!   state, [`EndInfo`] records whether a match ending there is already certain and whether
//!   anything could still extend it;
//! - a `meta::Regex` used only once a match is decided, to read its named groups.
//!
//! `tag_pattern` (content parsing, not streamed) goes through a backtracking engine instead
//! ([`TagPattern`]), where backreferences and lookarounds are supported.

use std::collections::HashMap;

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::meta;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};

use super::seq::SeqMatcher;
use super::translate::{translate, Target};

/// A compiled delimiter: literal alternatives or a Python pattern.
#[derive(Debug)]
pub(crate) struct Pattern {
    /// The anchored leftmost-first DFA stepped by the scanner.
    dfa: dense::DFA<Vec<u32>>,
    /// Used once a match is decided, to read named groups.
    regex: meta::Regex,
    /// The same pattern compiled without Unicode classes, for reading the groups of a match
    /// whose text is all ASCII (see [`ascii_regex`]).
    ascii: Option<meta::Regex>,
    /// Reads the groups of a match whose text is all ASCII without an engine, when the
    /// pattern is a sequence pattern (see [`super::seq`]); the same groups as `ascii`.
    seq: Option<SeqMatcher>,
    /// Named groups other than internal ones, in pattern order.
    names: Vec<String>,
    /// Group index of each name in `names` (the same in `regex` and `ascii`).
    name_groups: Vec<usize>,
    /// `can_start[b]`: some start state survives byte `b`.
    can_start: [bool; 256],
    /// The bytes that can start a match, when there are at most three (for `memchr`).
    first_bytes: Option<Vec<u8>>,
    /// A literal of at least two bytes that every match begins with, when the pattern has
    /// one (see [`Pattern::may_start_at`]).
    prefix: Option<Prefix>,
    /// Start states by look-behind byte (index 256 = start of text).
    starts: Vec<StateID>,
    /// Per DFA state (indexed by state id >> stride2): what is known at the end of the
    /// buffer (see [`EndInfo`]); `None` for states not reachable from a start state.
    end_info: Vec<Option<EndInfo>>,
    /// See [`Pattern::edge_final`].
    edge_final: bool,
}

/// The literal every match of a pattern begins with, and its `memmem` searcher.
#[derive(Debug)]
struct Prefix {
    bytes: Vec<u8>,
    finder: memchr::memmem::Finder<'static>,
}

impl Prefix {
    /// The longest common prefix of the pattern's prefix literals (every match begins with one
    /// of them), when it is at least two bytes long.
    fn of(rust: &str) -> Option<Prefix> {
        let hir = regex_syntax::ParserBuilder::new()
            .dot_matches_new_line(true)
            .unicode(true)
            .utf8(true)
            .build()
            .parse(rust)
            .ok()?;
        let seq = regex_syntax::hir::literal::Extractor::new()
            .kind(regex_syntax::hir::literal::ExtractKind::Prefix)
            .extract(&hir);
        let lits = seq.literals()?;
        let (first, rest) = lits.split_first()?;
        let mut common = first.as_bytes();
        for lit in rest {
            let n = common
                .iter()
                .zip(lit.as_bytes())
                .take_while(|(a, b)| a == b)
                .count();
            common = common.get(..n).unwrap_or_default();
        }
        (common.len() >= 2).then(|| Prefix {
            bytes: common.to_vec(),
            finder: memchr::memmem::Finder::new(common).into_owned(),
        })
    }
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
    /// A match may end here: the end of input or some next byte confirms it (`x$` after `x`,
    /// `x\b` after `x`), though others may not.
    pub(crate) may_end_here: bool,
}

/// Size limit for each DFA (bytes).
const DFA_LIMIT: usize = 8 << 20;

impl Pattern {
    /// Compiles literal alternatives; the longest alternative wins at a given position.
    pub(crate) fn literals(lits: &[String]) -> Result<Pattern, String> {
        let mut sorted: Vec<&String> = lits.iter().collect();
        sorted.sort_by_key(|l| std::cmp::Reverse(l.len()));
        let alts: Vec<String> = sorted.iter().map(|l| regex_syntax::escape(l)).collect();
        let mut pattern = Pattern::compile_rust(&alts.join("|"))?;
        pattern.edge_final = !lits
            .iter()
            .any(|a| lits.iter().any(|b| a != b && a.starts_with(b.as_str())));
        Ok(pattern)
    }

    /// Compiles a Python pattern (DOTALL).
    pub(crate) fn python(py: &str) -> Result<Pattern, String> {
        let rust = translate(py, Target::Automaton)?;
        Pattern::compile_rust(&rust)
    }

    /// Whether a match that reaches the end of the buffer is final there, as the reference
    /// decides it: only for literals none of which begins another. A match of any other
    /// delimiter that ends at the end of the buffer waits for more text (or the end of the
    /// stream), even where nothing could change it, so that its events come with the same
    /// `feed` call as the reference's.
    pub(crate) fn edge_final(&self) -> bool {
        self.edge_final
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
                    // The scanner steps states itself: acceleration would only make states
                    // with self-loops (`.*?`) special, which stops `Scanner::glide` on them.
                    .accelerate(false)
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
        let info = regex.group_info();
        let name_groups: Vec<usize> = names
            .iter()
            .filter_map(|n| info.to_index(regex_automata::PatternID::ZERO, n))
            .collect();
        let ascii = if names.is_empty() || name_groups.len() != names.len() {
            None
        } else {
            ascii_regex(rust).filter(|a| {
                let ai = a.group_info();
                ai.all_group_len() == info.all_group_len()
                    && names
                        .iter()
                        .zip(&name_groups)
                        .all(|(n, g)| ai.to_index(regex_automata::PatternID::ZERO, n) == Some(*g))
            })
        };
        let seq = ascii.as_ref().and_then(|_| SeqMatcher::new(rust));
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
        let stride2 = dfa.stride2();
        let mut end_table: Vec<Option<EndInfo>> = Vec::new();
        for (sid, info) in end_info(&dfa, &distinct_starts(&starts)) {
            let index = sid.as_usize() >> stride2;
            if end_table.len() <= index {
                end_table.resize(index + 1, None);
            }
            if let Some(slot) = end_table.get_mut(index) {
                *slot = Some(info);
            }
        }
        let end_info = end_table;
        let bytes: Vec<u8> = (0..=255u8).filter(|b| can_start[usize::from(*b)]).collect();
        let first_bytes = (bytes.len() <= 3).then_some(bytes);
        Ok(Pattern {
            first_bytes,
            prefix: Prefix::of(rust),
            dfa,
            regex,
            ascii,
            seq,
            names,
            name_groups,
            can_start,
            starts,
            end_info,
            edge_final: false,
        })
    }

    /// End-of-buffer knowledge about a state (unknown states count as undecided).
    pub(crate) fn end_info(&self, sid: StateID) -> EndInfo {
        let index = sid.as_usize() >> self.dfa.stride2();
        self.end_info
            .get(index)
            .copied()
            .flatten()
            .unwrap_or(EndInfo {
                ends_here: false,
                extendable: true,
                may_end_here: true,
            })
    }

    /// Whether an attempt in state `sid` at the end of the buffer stays undecided there (what
    /// [`Scanner::settle`](super::scan::Scanner::settle) leaves live): it can still extend,
    /// or a match ending there depends on what follows, or it holds a match ending there that
    /// waits for more text (see [`edge_final`](Pattern::edge_final)).
    pub(crate) fn undecided_at_end(&self, sid: StateID) -> bool {
        let info = self.end_info(sid);
        info.extendable
            || (info.may_end_here && !info.ends_here)
            || (info.ends_here && !self.edge_final)
    }

    /// Named groups of the pattern.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// The first position in `from..stop` of `buf` where a match attempt can start and
    /// survive the text of `buf`: a byte that can start a match and, when the pattern has a
    /// literal prefix, where `buf` continues with that prefix (or with a piece of it up to the
    /// end of `buf`, where more text may follow). Attempts anywhere else would die within
    /// `buf` without a match, so skipping them changes nothing.
    pub(crate) fn next_start(&self, buf: &[u8], from: usize, stop: usize) -> Option<usize> {
        let stop = stop.min(buf.len());
        if from >= stop {
            return None;
        }
        match &self.prefix {
            // Long spans: one `memmem` pass. A full occurrence must begin before `stop`; one
            // that would need bytes past the end of `buf` can only be partial (checked below).
            Some(prefix) if stop - from >= 64 => {
                let lit = prefix.bytes.len();
                let end = stop.saturating_add(lit - 1).min(buf.len());
                let hay = buf.get(from..end).unwrap_or_default();
                if let Some(i) = prefix.finder.find(hay) {
                    return Some(from + i);
                }
                let tail = buf.len().saturating_sub(lit - 1).max(from);
                (tail..stop).find(|&p| self.may_start_at(buf, p))
            }
            // Short spans (streaming feeds): first bytes, then the prefix at each.
            _ => {
                let mut at = from;
                while let Some(p) = self.next_start_byte(buf.get(at..stop).unwrap_or_default()) {
                    if self.may_start_at(buf, at + p) {
                        return Some(at + p);
                    }
                    at += p + 1;
                }
                None
            }
        }
    }

    /// The offset of the first byte of `hay` that can start a match.
    fn next_start_byte(&self, hay: &[u8]) -> Option<usize> {
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

    /// Whether a match attempt at `at` (whose byte can start a match) can survive the text
    /// of `buf`: `buf` continues there with the literal prefix, or with a piece of it that
    /// reaches the end of `buf`.
    #[inline]
    pub(crate) fn may_start_at(&self, buf: &[u8], at: usize) -> bool {
        let Some(prefix) = &self.prefix else {
            return true;
        };
        let rest = buf.get(at..).unwrap_or_default();
        let n = rest.len().min(prefix.bytes.len());
        rest.get(..n) == prefix.bytes.get(..n)
    }

    /// [`may_start_at`](Pattern::may_start_at) for a short feed: a byte loop, cheaper than a
    /// `memcmp` call on the few bytes a feed holds.
    #[inline]
    pub(crate) fn may_start_in_feed(&self, feed: &[u8], at: usize) -> bool {
        let Some(prefix) = &self.prefix else {
            return true;
        };
        let rest = feed.get(at..).unwrap_or_default();
        rest.iter().zip(&prefix.bytes).all(|(a, b)| a == b)
    }

    /// The literal every match begins with (at least two bytes), or an empty slice.
    pub(crate) fn literal_prefix(&self) -> &[u8] {
        self.prefix.as_ref().map_or(&[], |p| p.bytes.as_slice())
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
        let Some(span) = hay.as_bytes().get(start..end) else {
            return Vec::new();
        };
        let is_ascii = span.is_ascii();
        if let Some(seq) = self.seq.as_ref().filter(|_| is_ascii) {
            let mut slots = seq.slots();
            let text = hay.as_bytes().get(..end).unwrap_or_default();
            if seq.exec(text, start, &mut slots) == Ok(Some(end)) {
                return self
                    .names
                    .iter()
                    .zip(&self.name_groups)
                    .map(|(name, group)| {
                        let text = slots
                            .get(*group)
                            .copied()
                            .flatten()
                            .and_then(|(s, e)| hay.get(s..e));
                        (name.clone(), text.map(str::to_owned))
                    })
                    .collect();
            }
        }
        // On ASCII text the ASCII-only program finds the same groups, with far fewer states.
        let regex = match &self.ascii {
            Some(ascii) if is_ascii => ascii,
            _ => &self.regex,
        };
        let mut caps = regex.create_captures();
        let input = Input::new(hay).range(start..end).anchored(Anchored::Yes);
        regex.search_captures(&input, &mut caps);
        self.names
            .iter()
            .zip(&self.name_groups)
            .map(|(name, group)| {
                let text = caps
                    .get_group(*group)
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

/// Compiles `rust` (a translated pattern) without Unicode: `\w`, `\d`, `\s`, `.` and
/// classes become ASCII/byte classes. On a haystack span that is all ASCII this finds the same
/// match and groups as the Unicode program (every class agrees with its Unicode form on ASCII
/// bytes, and word boundaries are ASCII in both), from an NFA a fraction of the size, which
/// is what the capture engines (backtracker, PikeVM) pay for per byte. Non-ASCII characters
/// of the pattern become bytes `\x80`-`\xFF` or their UTF-8 sequences, which never occur in
/// an ASCII span, just as the characters never do. `None` when the pattern cannot be compiled
/// that way (e.g. a negated class of non-ASCII characters).
pub(super) fn ascii_regex(rust: &str) -> Option<meta::Regex> {
    let syntax = syntax::Config::new()
        .dot_matches_new_line(true)
        .unicode(false)
        .utf8(false);
    meta::Builder::new()
        .syntax(syntax)
        .configure(meta::Config::new().match_kind(MatchKind::LeftmostFirst))
        .build(rust)
        .ok()
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
        let may_end_here = dfa.is_match_state(dfa.next_eoi_state(*sid))
            || next.iter().any(|n| dfa.is_match_state(*n));
        out.insert(
            *sid,
            EndInfo {
                ends_here,
                extendable,
                may_end_here,
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

/// The `key` and `value` groups of one `tag_pattern` match (`None`: the group did not take
/// part in the match).
pub(crate) type TagPair<'h> = (Option<&'h str>, Option<&'h str>);

/// A `tag_pattern` for `xml-inline`. Patterns the automata engines can run (the same
/// translation for both targets: no lookaround, backreference or word boundary) use a
/// `meta::Regex` searched anchored at each byte that can begin a match (known from the
/// pattern's prefix literals); the others go through a backtracking engine.
#[derive(Debug)]
pub(crate) struct TagPattern {
    regex: fancy_regex::Regex,
    auto: Option<AutoTag>,
}

/// The automata form of a tag pattern.
#[derive(Debug)]
struct AutoTag {
    regex: meta::Regex,
    /// The ASCII-only program, used when the whole haystack is ASCII (see [`ascii_regex`]).
    ascii: Option<meta::Regex>,
    /// The engine-free matcher for ASCII haystacks (sequence patterns, see [`super::seq`]).
    seq: Option<SeqMatcher>,
    key: usize,
    value: usize,
    /// Every match begins with one of these bytes (`None`: not known, search unanchored).
    first: Option<Vec<u8>>,
}

impl AutoTag {
    fn build(py: &str, backtracking: &str) -> Option<AutoTag> {
        let rust = translate(py, Target::Automaton).ok()?;
        if rust != backtracking || rust.contains("\\b") || rust.contains("\\B") {
            return None;
        }
        let syntax = syntax::Config::new()
            .dot_matches_new_line(true)
            .unicode(true)
            .utf8(true);
        let regex = meta::Builder::new()
            .syntax(syntax)
            .configure(meta::Config::new().match_kind(MatchKind::LeftmostFirst))
            .build(&rust)
            .ok()?;
        let info = regex.group_info();
        let key = info.to_index(regex_automata::PatternID::ZERO, "key")?;
        let value = info.to_index(regex_automata::PatternID::ZERO, "value")?;
        let hir = regex_syntax::ParserBuilder::new()
            .dot_matches_new_line(true)
            .unicode(true)
            .utf8(true)
            .build()
            .parse(&rust)
            .ok()?;
        let seq = regex_syntax::hir::literal::Extractor::new()
            .kind(regex_syntax::hir::literal::ExtractKind::Prefix)
            .extract(&hir);
        let first = seq.literals().and_then(|lits| {
            let mut bytes: Vec<u8> = Vec::new();
            for lit in lits {
                let b = *lit.as_bytes().first()?;
                if !bytes.contains(&b) {
                    bytes.push(b);
                }
            }
            (!bytes.is_empty() && bytes.len() <= 3).then_some(bytes)
        });
        let ascii = ascii_regex(&rust).filter(|a| {
            let ai = a.group_info();
            ai.to_index(regex_automata::PatternID::ZERO, "key") == Some(key)
                && ai.to_index(regex_automata::PatternID::ZERO, "value") == Some(value)
        });
        let seq = ascii.as_ref().and_then(|_| SeqMatcher::new(&rust));
        Some(AutoTag {
            regex,
            ascii,
            seq,
            key,
            value,
            first,
        })
    }

    /// The next position at or after `at` where a match may begin.
    fn next_candidate(first: &[u8], hay: &[u8], at: usize) -> Option<usize> {
        let rest = hay.get(at..)?;
        let off = match first {
            [a] => memchr::memchr(*a, rest),
            [a, b] => memchr::memchr2(*a, *b, rest),
            [a, b, c] => memchr::memchr3(*a, *b, *c, rest),
            _ => Some(0),
        }?;
        Some(at + off)
    }

    fn pairs<'h>(&self, hay: &'h str) -> Vec<TagPair<'h>> {
        let mut out = Vec::new();
        let regex = match &self.ascii {
            Some(ascii) if hay.is_ascii() => ascii,
            _ => &self.regex,
        };
        // Created on first use: the sequence matcher usually answers every position.
        let mut caps: Option<regex_automata::util::captures::Captures> = None;
        let group = |caps: &regex_automata::util::captures::Captures, i: usize| {
            caps.get_group(i).and_then(|span| hay.get(span.range()))
        };
        match &self.first {
            Some(first) => {
                // Leftmost-first: the first candidate position with an anchored match holds
                // the leftmost match. Matches are never empty (the prefix literals are not).
                let seq = self.seq.as_ref().filter(|_| hay.is_ascii());
                let mut slots = seq.map(SeqMatcher::slots).unwrap_or_default();
                let span = |slots: &crate::response_template::seq::Slots, i: usize| {
                    slots
                        .get(i)
                        .copied()
                        .flatten()
                        .and_then(|(s, e)| hay.get(s..e))
                };
                let mut at = 0;
                while let Some(pos) = AutoTag::next_candidate(first, hay.as_bytes(), at) {
                    match seq.map(|m| m.exec(hay.as_bytes(), pos, &mut slots)) {
                        Some(Ok(Some(end))) if end > pos => {
                            out.push((span(&slots, self.key), span(&slots, self.value)));
                            at = end;
                            continue;
                        }
                        Some(Ok(_)) => {
                            at = pos + 1;
                            continue;
                        }
                        // No matcher, or it gave up: the engine decides this position.
                        Some(Err(_)) | None => {}
                    }
                    let input = Input::new(hay).range(pos..).anchored(Anchored::Yes);
                    let caps = caps.get_or_insert_with(|| regex.create_captures());
                    regex.search_captures(&input, caps);
                    match caps.get_match() {
                        Some(m) if m.end() > pos => {
                            out.push((group(caps, self.key), group(caps, self.value)));
                            at = m.end();
                        }
                        _ => at = pos + 1,
                    }
                }
            }
            None => {
                for caps in regex.captures_iter(hay) {
                    out.push((group(&caps, self.key), group(&caps, self.value)));
                }
            }
        }
        out
    }
}

impl TagPattern {
    pub(crate) fn python(py: &str) -> Result<TagPattern, String> {
        let rust = translate(py, Target::Backtracking)?;
        let regex = fancy_regex::RegexBuilder::new(&format!("(?s){rust}"))
            .backtrack_limit(1_000_000)
            .build()
            .map_err(|e| e.to_string())?;
        let auto = AutoTag::build(py, &rust);
        Ok(TagPattern { regex, auto })
    }

    pub(crate) fn has_group(&self, name: &str) -> bool {
        self.regex.capture_names().flatten().any(|n| n == name)
    }

    /// `(key, value)` of each match, in order. Errors if the backtracking limit is hit.
    pub(crate) fn pairs<'h>(&self, hay: &'h str) -> Result<Vec<TagPair<'h>>, String> {
        match &self.auto {
            Some(auto) => Ok(auto.pairs(hay)),
            None => self.pairs_backtracking(hay),
        }
    }

    /// [`pairs`](TagPattern::pairs) on the backtracking engine.
    fn pairs_backtracking<'h>(&self, hay: &'h str) -> Result<Vec<TagPair<'h>>, String> {
        let mut out = Vec::new();
        for caps in self.regex.captures_iter(hay) {
            let caps = caps.map_err(|e| format!("tag_pattern: {e}"))?;
            let key = caps.name("key").map(|m| m.as_str());
            let value = caps.name("value").map(|m| m.as_str());
            out.push((key, value));
        }
        Ok(out)
    }
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
