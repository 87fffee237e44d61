//! The commit rule: a tool call whose name is complete is kept, whatever follows.
//!
//! A stream announces a call as soon as its name (and id) is complete and streams its
//! arguments; deltas cannot be retracted. So the one-shot parse (and the parse of every prefix)
//! keeps such a call too, even when the output then ends inside it or turns malformed, where
//! the grammar alone would fall back to content:
//! - the output ends inside the call (a full parse): the call keeps its arguments, healed
//!   (open strings, arrays and objects closed), and the parse reports "output ended inside a
//!   tool call" at the end of the output;
//! - the call turns malformed at offset `e` (the longest prefix whose partial parse still shows
//!   it ends at `e`): the call keeps the arguments read up to `e` (healed in a full parse, raw in
//!   a partial one, as streams show them), the text from `e` on becomes content (appended to the
//!   content before the call), and the parse reports a problem at `e`.
//!
//! A finished output that may have ended inside a call no trigger marks (text after its calls,
//! where the next call of a list or section starts bare; or any output, where calls open it bare
//! or are messages of their own) is compared with its partial parse, what a stream showed just
//! before the end: a call or argument text shown there is kept (see `may_end_in_call`).
//!
//! Otherwise detection is only run when the grammar's parse leaves a call trigger (the first
//! marker of a call) in a content node: then, from that trigger on, the prefixes of the text
//! are parsed one character further at a time (an incremental [`Session`], O(text) parse work plus the mapping
//! of the changed trees) until the call is announced and then vanishes, or the trigger turns
//! into content without a call being announced (nothing is committed: `<tool_call> tag` in
//! prose). One session ([`CommitCursor`]) serves every trigger of a text in order (and a
//! stream's checks as its text grows), so k triggers cost one pass, not k re-parses of the
//! text before them. Outputs that follow the format never pay for it.

use crate::message::PartialMessage;
use std::ops::Range;

use crate::peg::{Ast, Change, Session};

use super::grammar::tags;
use super::mapper::{cut_literal, Mapper};
use super::parser::{located, ChatParser, ParseProblem};

/// The spans of the content nodes of `ast`, in text order.
pub(crate) fn content_nodes<'a>(
    grammar: &crate::peg::Grammar,
    ast: &'a Ast<'_>,
) -> impl Iterator<Item = Range<usize>> + 'a {
    let content = grammar.tag_id(tags::CONTENT);
    ast.nodes()
        .iter()
        .filter(move |n| Some(n.tag_id()) == content)
        .map(|n| n.span())
}

/// [`content_nodes`], collected.
pub(crate) fn content_spans(grammar: &crate::peg::Grammar, ast: &Ast<'_>) -> Vec<Range<usize>> {
    content_nodes(grammar, ast).collect()
}

/// Where the commit rule's scans stand: an incremental session and its mapper over a prefix of
/// the text, kept from one trigger to the next (and, in a stream, from one check to the next),
/// so that scanning k triggers costs one pass over the text, not k re-parses of its prefix.
#[derive(Debug)]
pub(crate) struct CommitCursor<'p> {
    session: Session<'p>,
    mapper: Mapper<'p>,
    /// Session-text offset before which triggers were found to be content (decided, so
    /// they are not looked at again).
    from: usize,
}

impl<'p> CommitCursor<'p> {
    pub(crate) fn new(parser: &'p ChatParser) -> Self {
        CommitCursor {
            session: parser.grammar.session(),
            mapper: parser.mapper(),
            from: 0,
        }
    }

    /// Work units of the scans so far: (parse, mapping).
    pub(crate) fn work(&self) -> (u64, u64) {
        (self.session.work(), self.mapper.work())
    }

    /// Feeds `piece` (the text that follows the session's) and maps what changed.
    fn feed(&mut self, piece: &str) {
        self.session.feed_str(piece);
        match self.session.last_change() {
            Change::Frontier(frontier) => {
                self.mapper.grow(frontier, self.session.text());
            }
            Change::None => {}
            Change::Tree => self.mapper.follow(&self.session),
        }
    }
}

/// What the character-wise scan of a call found.
enum Scan {
    /// No call was announced: the trigger is content.
    NotCall,
    /// The call was announced and is still open at the end of the text.
    Open,
    /// The call was announced and stops being viable after the first offset (session text);
    /// the second is where the text that broke it starts (the same offset, or before a
    /// marker's unfinished start, see [`ChatParser::before_marker_piece`]).
    Broke(usize, usize),
}

/// A parse with a committed call (see the module docs).
pub(crate) struct Committed {
    /// The message: calls up to the break, then content.
    pub(crate) message: PartialMessage,
    /// Where parsing stopped, in the output.
    pub(crate) problem: ParseProblem,
    /// In the session text: where the content tail starts (the end of the text when the
    /// output ended inside the call).
    pub(crate) tail_from: usize,
}

/// The number of calls a stream may already show.
fn announced(message: &PartialMessage) -> usize {
    message
        .tool_calls
        .iter()
        .take_while(|c| c.is_announceable())
        .count()
}

impl ChatParser {
    /// Whether `content` holds a call start (the cheap gate of [`commit`](Self::commit)): one
    /// `memchr` pass over the call starts' first bytes, checking the starts where one occurs
    /// (or, with more than three first bytes, a `memchr` then a `memmem` per call start).
    pub(crate) fn has_trigger(&self, content: &[u8]) -> bool {
        if let Some(scan) = &self.call_start_scan {
            return scan.has_marker(content);
        }
        self.call_starts.iter().any(|start| {
            start.as_bytes().first().is_some_and(|&first| {
                memchr::memchr(first, content).is_some()
                    && memchr::memmem::find(content, start.as_bytes()).is_some()
            })
        })
    }

    /// Applies the commit rule to the parse of `text` (the session text: prefill and output)
    /// whose content nodes span `content` (in text order) and whose mapped message is
    /// `message`; `partial`: `text` is a prefix of the output. `cursor` holds the scan state
    /// over a prefix of `text` (a stream passes the same cursor on every check, as its text
    /// grows): triggers it found to be content are not looked at again. `None`: the rule
    /// changes nothing.
    pub(crate) fn commit<'p>(
        &'p self,
        text: &str,
        content: &[Range<usize>],
        message: &PartialMessage,
        partial: bool,
        cursor: &mut CommitCursor<'p>,
    ) -> Option<Committed> {
        // A call a stream showed and that broke (or is open) at a trigger in the content comes
        // first: what follows its break is content, whatever the full parse made of it.
        if self.has_trigger(message.content.as_bytes()) {
            if let Some(committed) = self.commit_at_triggers(text, content, partial, cursor) {
                return Some(committed);
            }
        }
        // A finished output that ends in content after its calls (or that is all content,
        // where a call may open the output with no marker): the next call of a list or
        // section may have started there with no trigger of its own, and the output ended
        // inside it. What a stream showed before the end (the partial parse) is kept where
        // the full parse drops a call it announced or arguments it showed.
        if !partial && self.may_end_in_call(text, content.last().cloned(), message.tool_calls.len())
        {
            return self.keep_what_was_shown(text, message);
        }
        None
    }

    /// The commit rule at the call triggers found in the content nodes `content` of the parse
    /// of `text` (see [`commit`](Self::commit)): the first trigger whose call a stream showed
    /// and that broke, or that is still open at the end.
    fn commit_at_triggers<'p>(
        &'p self,
        text: &str,
        content: &[Range<usize>],
        partial: bool,
        cursor: &mut CommitCursor<'p>,
    ) -> Option<Committed> {
        let start = cursor.from.max(self.prefill_text.len());
        let mut candidates: Vec<usize> = Vec::new();
        let first = content.partition_point(|span| span.end <= start);
        for span in content.get(first..).unwrap_or_default() {
            let lo = span.start.max(start);
            let Some(hay) = text.get(lo..span.end) else {
                continue;
            };
            for trigger in &self.call_starts {
                candidates.extend(
                    memchr::memmem::find_iter(hay.as_bytes(), trigger.as_bytes()).map(|i| lo + i),
                );
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        let output_start = self.prefill_text.len().min(text.len());
        let output = text.get(output_start..).unwrap_or_default();
        for t in candidates {
            match self.scan_call(cursor, text, t) {
                Scan::NotCall => {
                    cursor.from = t + 1;
                    continue;
                }
                Scan::Open => {
                    if partial {
                        // The partial parse shows an open call itself; nothing to commit.
                        return None;
                    }
                    return Some(self.ended_inside_call(text, self.partial_of(text)));
                }
                Scan::Broke(viable, at) => {
                    // The calls as the stream showed them up to the break; the content from
                    // where the text that broke the call starts (no argument text lies between
                    // the two, see `scan_call`).
                    let base = self.partial_of(text.get(..viable).unwrap_or(text));
                    let tail = text.get(at..).unwrap_or_default();
                    let message = finalize(base, Some(tail), partial);
                    let problem = located(
                        &self.template,
                        output,
                        at.saturating_sub(output_start),
                        "a valid continuation of the tool call (the call is kept with the \
                         arguments read so far; the text from here on is kept as content)"
                            .to_owned(),
                    );
                    return Some(Committed {
                        message,
                        problem,
                        tail_from: at,
                    });
                }
            }
        }
        None
    }

    /// For a full parse of the session text `text` that failed: the commit of a call the
    /// partial parse shows announced (a stream showed it before the output ended), if any.
    pub(crate) fn ended_in_open_call(&self, text: &str) -> Option<Committed> {
        if self.call_starts.is_empty() {
            return None;
        }
        self.keep_what_was_shown(text, &PartialMessage::default())
    }

    /// The commit of the full parse `message` of the session text `text` when it drops a call
    /// (or argument text) that the partial parse of the same text showed: `None` when it keeps
    /// all of it.
    fn keep_what_was_shown(&self, text: &str, message: &PartialMessage) -> Option<Committed> {
        let shown = self.partial_of(text);
        (!shown_is_kept(&shown, message)).then(|| self.ended_inside_call(text, shown))
    }

    /// The commit of a full parse whose output ended inside a call: `shown` (the partial parse
    /// of the whole text) with its calls' arguments healed.
    fn ended_inside_call(&self, text: &str, shown: PartialMessage) -> Committed {
        let output = text
            .get(self.prefill_text.len().min(text.len())..)
            .unwrap_or_default();
        Committed {
            message: finalize(shown, None, false),
            problem: located(
                &self.template,
                output,
                output.len(),
                "the rest of the tool call: output ended inside a tool call (kept with its \
                 arguments healed)"
                    .to_owned(),
            ),
            tail_from: text.len(),
        }
    }

    /// Whether the session text `text`, whose message has `calls` and whose last content node
    /// spans `last_content`, may have ended inside a call no trigger marks: it ends in content
    /// after calls (the next call of a list or section may have started there with no marker
    /// of its own); or calls may open the output or be messages of their own (a cut-off one may
    /// be dropped whole).
    pub(crate) fn may_end_in_call(
        &self,
        text: &str,
        last_content: Option<Range<usize>>,
        calls: usize,
    ) -> bool {
        let output_start = self.prefill_text.len();
        if self.call_starts.is_empty() || text.len() <= output_start {
            return false;
        }
        // Where calls are messages of their own (or open the output bare), a cut-off one may
        // be dropped whole, whatever was read before it.
        self.calls_open_output
            || (calls > 0
                && last_content
                    .is_some_and(|span| span.end == text.len() && !text[span].trim().is_empty()))
    }

    /// The partial parse of the session text `text` (prefill included).
    fn partial_of(&self, text: &str) -> PartialMessage {
        let mut session = self.grammar.session();
        session.feed_str(text);
        let mut mapper = self.mapper();
        mapper.update(&session.ast(), session.text());
        mapper.finish(true)
    }

    /// Whether a content node of `ast` covers a call start at `t` (session text).
    fn is_content_at(&self, ast: &Ast<'_>, t: usize) -> bool {
        let shortest = self.call_starts.iter().map(String::len).min().unwrap_or(0);
        content_nodes(&self.grammar, ast)
            .any(|span| span.start <= t && t + shortest.max(1) <= span.end)
    }

    /// Parses `text` one character further at a time from the trigger at `t` (see the module
    /// docs), continuing the cursor's session (a fresh one when it already went past `t`).
    fn scan_call<'p>(&'p self, cursor: &mut CommitCursor<'p>, text: &str, t: usize) -> Scan {
        let Some(head) = text.get(..t) else {
            return Scan::NotCall;
        };
        let have = cursor.session.text().len();
        // The cursor's text is a prefix of `text` (the same text, or a stream's text that
        // grew since); it must not be past the trigger.
        if have > t {
            let from = cursor.from;
            *cursor = CommitCursor::new(self);
            cursor.from = from;
        }
        let have = cursor.session.text().len();
        if let Some(piece) = head.get(have..).filter(|p| !p.is_empty()) {
            cursor.feed(piece);
        }
        let before = announced(cursor.mapper.message());
        let content = cursor.mapper.message().content.len();
        let mut searched = content;
        // The call announced from `t`: its id, its name and how much argument text it showed.
        // A different call at the same index (a later call start, once the one at `t` broke
        // and turned into content) is not it.
        let mut seen: Option<(String, String, usize)> = None;
        let mut viable = t;
        // Where the call's argument text last grew: the text that breaks a call never starts
        // before it (the arguments keep what they showed, the content repeats none of it).
        let mut grown_at = t;
        for (i, ch) in text[t..].char_indices() {
            let end = t + i + ch.len_utf8();
            cursor.feed(&text[t + i..end]);
            let message = cursor.mapper.message();
            let call = message
                .tool_calls
                .get(before)
                .filter(|c| announced(message) > before && c.is_announceable());
            if let Some(call) = call {
                match &mut seen {
                    None => seen = Some((call.id.clone(), call.name.clone(), call.arguments.len())),
                    Some((id, name, shown))
                        if *id == call.id
                            && *name == call.name
                            && call.arguments.len() >= *shown =>
                    {
                        if call.arguments.len() > *shown {
                            grown_at = end;
                        }
                        *shown = call.arguments.len();
                    }
                    Some(_) => {
                        let viable = before_cut_literal(text, grown_at, viable);
                        return Scan::Broke(
                            viable,
                            self.before_marker_piece(text, grown_at, viable),
                        );
                    }
                }
                viable = end;
            } else if seen.is_some() {
                let viable = before_cut_literal(text, grown_at, viable);
                return Scan::Broke(viable, self.before_marker_piece(text, grown_at, viable));
            } else if message.content.len() > searched {
                // Content grew: the trigger is content once it shows there (text held back
                // before it, such as `<function` before `<function_call>`, may come first).
                let grown = &message.content;
                let hit = self.call_starts.iter().any(|start| {
                    let lo = content
                        .max(searched)
                        .saturating_sub(start.len().saturating_sub(1));
                    grown
                        .as_bytes()
                        .get(lo..)
                        .is_some_and(|hay| memchr::memmem::find(hay, start.as_bytes()).is_some())
                });
                // A call start in the grown content may be an earlier trigger (one whose call
                // broke only now): the trigger at `t` is content only when a content node of
                // the tree covers it. Usually the open content node does (checked in O(1));
                // otherwise the tree is built (O(nodes), only on such a hit).
                let shortest = self.call_starts.iter().map(String::len).min().unwrap_or(0);
                if hit
                    && (cursor.mapper.open_content_covers(t, t + shortest.max(1))
                        || self.is_content_at(&cursor.session.ast(), t))
                {
                    return Scan::NotCall;
                }
                searched = grown.len();
            }
        }
        if seen.is_some() {
            Scan::Open
        } else {
            Scan::NotCall
        }
    }

    /// `at` (where a call broke), moved back over the text after `floor` that only starts one
    /// of the format's markers (`<t` of `<tool_call|>` before `<turn|>`), or over a whole turn
    /// end: a marker the model did not finish there opened nothing, and a turn end with text
    /// after it ended nothing; the text from its first byte is content (never a marker's
    /// cut-off tail such as `urn|>`, never a turn end lost).
    fn before_marker_piece(&self, text: &str, floor: usize, at: usize) -> usize {
        let format = &self.format;
        let mut markers: Vec<&str> = vec![format.turn_end.as_str(), format.tool_turn_end.as_str()];
        if let Some(t) = &format.tools {
            markers.extend([
                t.section_start.as_str(),
                t.section_end.as_str(),
                t.per_call_start.as_str(),
                t.per_call_end.as_str(),
                t.function.close.as_str(),
                t.arguments.start.as_str(),
                t.arguments.end.as_str(),
                t.arguments.name_prefix.as_str(),
                t.arguments.name_suffix.as_str(),
                t.arguments.value_prefix.as_str(),
                t.arguments.value_suffix.as_str(),
                t.arguments.separator.as_str(),
            ]);
        }
        markers.extend(self.triggers.iter().map(String::as_str));
        markers.extend(self.call_starts.iter().map(String::as_str));
        let mut best = at;
        // A turn end read ahead (whitespace after it), which is no part of a call: the
        // lookahead for a turn end that ends the output read it, and more text came.
        let head = text.get(floor..at).unwrap_or_default().trim_end();
        for end in [&format.turn_end, &format.tool_turn_end].map(|e| e.trim()) {
            if !end.is_empty() && head.ends_with(end) {
                best = best.min(floor + head.len() - end.len());
            }
        }
        for marker in markers.into_iter().map(str::trim) {
            for (k, _) in marker.char_indices().skip(1) {
                let Some(from) = at.checked_sub(k).filter(|&from| from >= floor) else {
                    break;
                };
                if text.get(from..at) == Some(&marker[..k]) {
                    best = best.min(from);
                }
            }
        }
        best
    }
}

/// `viable` (where a call broke) moved back over a cut JSON literal after `floor` (`t` of a
/// word that turned out not to be `true`): the arguments held it back (see
/// [`cut_literal`]), so it is the first byte of the text that broke the call.
fn before_cut_literal(text: &str, floor: usize, viable: usize) -> usize {
    let cut = cut_literal(text.get(..viable).unwrap_or_default()).len();
    if cut > 0 && viable - cut >= floor {
        viable - cut
    } else {
        viable
    }
}

/// Whether the final message `full` keeps what the partial parse `shown` of the same text
/// showed of its calls: every announced call, with arguments that extend the ones shown.
fn shown_is_kept(shown: &PartialMessage, full: &PartialMessage) -> bool {
    let kept = announced(shown);
    full.tool_calls.len() >= kept
        && shown
            .tool_calls
            .iter()
            .zip(&full.tool_calls)
            .take(kept)
            .all(|(s, f)| s.name == f.name && f.arguments.starts_with(&s.arguments))
}

/// The committed message from the partial parse `base` of the text up to the break: only
/// announced calls; `tail` (the text from the break on) appended to the content; a full parse
/// (`partial` false) ends the calls with their arguments healed where healing only appends
/// (what a stream emitted stays a prefix), `{}` for none.
fn finalize(mut base: PartialMessage, tail: Option<&str>, partial: bool) -> PartialMessage {
    let keep = announced(&base);
    base.tool_calls.truncate(keep);
    if let Some(tail) = tail {
        base.content.push_str(tail);
        let trimmed = base.content.trim();
        if trimmed.len() != base.content.len() {
            base.content = trimmed.to_owned();
        }
    }
    if !partial {
        for call in &mut base.tool_calls {
            if !call.arguments_final {
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".to_owned();
                } else if let Some(healed) = heal_by_appending(&call.arguments) {
                    call.arguments = healed;
                }
                call.arguments_final = true;
            }
            call.healed_arguments = None;
            call.name_final = true;
            call.id_final = true;
        }
    }
    base
}

/// Heals cut JSON arguments by appending only (what a stream emitted stays a prefix): plain
/// healing when it only appends, else after completing a dangling member (a key without
/// value gets `null`, a trailing comma an empty key, a cut number a digit). `None` when no
/// such completion gives valid JSON.
fn heal_by_appending(arguments: &str) -> Option<String> {
    const COMPLETIONS: [&str; 8] = [
        "",
        "null",
        ":null",
        "\":null",
        "\"\":null",
        "0",
        "\"",
        "\"\"",
    ];
    COMPLETIONS.iter().find_map(|completion| {
        let text = format!("{arguments}{completion}");
        let healing = crate::message::heal::heal(&text)?;
        if !healing.only_appends(&text) {
            return None;
        }
        let healed = healing.apply(&text);
        serde_json::from_str::<serde_json::Value>(&healed)
            .is_ok()
            .then_some(healed)
    })
}
