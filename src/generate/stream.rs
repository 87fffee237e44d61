//! [`ChatStream`]: running a [`ChatParser`] over output that arrives in chunks.
//!
//! Each [`feed`](ChatStream::feed) appends the chunk to an incremental PEG
//! [`Session`] (which resumes where it stopped), lets the
//! [`Mapper`] map only what changed at the frontier, and hands the
//! message to a [`DeltaTracker`] for the new delta. [`finish`](ChatStream::finish) ends the
//! input (full mode) and returns the final message.
//!
//! # Cost
//! Feeding n bytes in any chunking costs O(n) parse work (the session) plus O(n) mapping work
//! (the mapper pushes each byte once). Most feeds only advance the suspended leaf (a long text,
//! argument value or JSON string streaming in): the session reports
//! [`Change::Frontier`] and the stream neither builds an AST nor walks nodes, it lets the mapper
//! push the leaf's new text (`Mapper::grow`), and the tracker looks only at the field that grew
//! ([`DeltaTracker::update_appended`]), so such a feed costs O(chunk). Other feeds
//! read the session's AST (O(nodes)) and map what changed. [`finish`](ChatStream::finish) maps
//! the final tree once more. Both work counters are exposed ([`ChatStream::work`]) and a test
//! checks linearity with them.
//!
//! The delta tracker runs without re-comparing emitted text (mapping only appends), which
//! matters: re-comparing a 64-byte window per feed tripled the time of a 1 MB stream. When the
//! mapper restarts (an open alternative failed, or a node at an open index changed tag) and at
//! the end of input, the stream switches to a tracker primed with what was emitted that compares
//! whole fields, so a rebuilt message can never emit a wrong suffix (it reports a conflict
//! instead); once an update has no conflict (the rebuilt message extends what was emitted) it
//! goes back to not re-comparing, since staying there would be quadratic.
//!
//! # Committing to a call (the stream vs one-shot rule)
//! A call is announced as soon as its name (and id, when the format has one) is complete, and its
//! argument text streams as it arrives: that is what the partial parse of the prefix shows (a
//! cut-off output reads as an open call with its arguments so far), and deltas always equal the
//! partial parse of the same prefix. What the stream holds back is only what the prefix parse
//! itself does not show yet: a marker that may still be cut (`<tool_ca`), trailing whitespace,
//! a name still being written. Text that *was* shown as a call start but turns into content
//! (`<tool_call> tag, like HTML`) restarts the mapping and streams as content, since nothing of
//! it had been emitted.
//!
//! A call, once announced (its name complete), is *committed*: the one-shot parse keeps it too
//! (see the `commit` module), so that one shot always equals "feed everything, then
//! finish" and nothing emitted is retracted:
//! - the output ends inside the call: the message keeps the call with its arguments healed
//!   (open strings, arrays and objects closed, a dangling key completed with `null`: healing
//!   only appends to what was streamed) and [`Parsed::problem`] says "output ended inside a tool
//!   call" at the end of the output; this is what OpenAI returns for a length-truncated call
//!   (the arguments as far as generated);
//! - the call turns malformed (invalid JSON, a broken marker) at some offset: the call keeps
//!   the arguments read up to the last point where the parse of the prefix still showed it
//!   (healed at the end), the text from that point on becomes content (appended to the content
//!   before the call: no text is lost), and the problem names that offset and what was expected
//!   there. From then on the stream only appends the output to the content.
//!
//! A call that never got its name (`<tool_call> tag, like HTML`) commits nothing: it stays
//! content, as before. Holding every call back until it closes would avoid committing, at the
//! price of not streaming arguments at all; the fixtures' `partial-call` cases (a cut stream
//! shows the open call) fix the rule chosen here.
//!
//! # Invariants
//! Deltas never retract text, never split a code point or a marker (the grammar stops plain
//! text before anything that may still become a marker), announce a call only with its
//! complete name, and never carry healed closers before the end of output; their concatenation
//! equals the message parsed from the same prefix. Malformed output never panics: what is not
//! a call stays content, a committed call keeps what was read of it, and
//! [`finish`](ChatStream::finish) says where the format was left.

use crate::message::{ChatDelta, ChatMessage, DeltaTracker, PartialMessage, TrackerConfig};
use crate::peg::{Change, Session, Status};

use super::commit::CommitCursor;
use super::mapper::Mapper;
use super::parser::{ChatParser, Parsed};

/// A streaming parse (see the module docs).
#[derive(Debug)]
pub struct ChatStream<'p> {
    parser: &'p ChatParser,
    session: Session<'p>,
    mapper: Mapper<'p>,
    tracker: DeltaTracker,
    /// The tracker compares whole fields (after a restart, until an update has no conflict).
    verifying: bool,
    /// Whether any chunk was fed (until then no delta was emitted, not even the prefill's).
    fed: bool,
    output_len: usize,
    /// Content bytes of the mapped message already searched for call triggers.
    content_checked: usize,
    /// The commit rule's scan state (created at the first check), kept as the text grows.
    commit_cursor: Option<CommitCursor<'p>>,
    /// Set once a committed call broke (see "Committing to a call"): the message from then on.
    committed: Option<CommittedTail>,
}

/// The message after a committed call broke: the calls as they were, then content that only
/// grows with the output.
#[derive(Debug)]
struct CommittedTail {
    message: PartialMessage,
    /// Session-text offset up to which the output was appended to the content.
    upto: usize,
    /// Trailing whitespace of the content, held back until more text follows.
    pending: String,
}

impl CommittedTail {
    /// Appends the output from `upto` to the end of `text` to the content (outer whitespace
    /// trimmed, as the mapper does).
    fn extend(&mut self, text: &str) {
        let Some(piece) = text.get(self.upto..) else {
            return;
        };
        self.upto = text.len();
        let content = &mut self.message.content;
        let piece = if content.is_empty() {
            piece.trim_start()
        } else {
            piece
        };
        let body = piece.trim_end();
        if body.is_empty() {
            if !content.is_empty() {
                self.pending.push_str(piece);
            }
            return;
        }
        content.push_str(&self.pending);
        self.pending.clear();
        content.push_str(body);
        self.pending.push_str(&piece[body.len()..]);
    }
}

impl<'p> ChatStream<'p> {
    pub(crate) fn new(parser: &'p ChatParser) -> Self {
        let mut session = parser.grammar.session();
        session.feed_str(&parser.prefill_text);
        let mut stream = ChatStream {
            parser,
            session,
            mapper: parser.mapper(),
            // Mapping only appends (see the mapper), so the tracker need not re-compare emitted
            // text; a restart or the end of input switches to full verification.
            tracker: DeltaTracker::with_config(TrackerConfig { verify_window: 0 }),
            verifying: false,
            fed: false,
            output_len: 0,
            content_checked: 0,
            commit_cursor: None,
            committed: None,
        };
        stream.sync();
        // What the prefill itself maps to (a continued message, inline prefill) is the first
        // delta's business: left for the first feed.
        stream
    }

    /// Feeds the next chunk of output (any bytes; an incomplete UTF-8 sequence waits for the
    /// next chunk) and returns what it adds to the message, if anything.
    pub fn feed(&mut self, chunk: &[u8]) -> Option<ChatDelta> {
        self.fed = true;
        self.output_len += chunk.len();
        self.session.feed(chunk);
        if let Some(tail) = &mut self.committed {
            tail.extend(self.session.text());
            return self.tracker.update(&tail.message).delta;
        }
        match self.session.last_change() {
            // Only the suspended leaf advanced (a long text or string streaming in): the mapper
            // pushes the new text of its open leaf, no AST is built, and the tracker only
            // looks at the field that grew (nothing else changed, nothing to verify).
            Change::Frontier(frontier) => {
                let appended = self.mapper.grow(frontier, self.session.text());
                if let (Some(appended), false) = (appended, self.verifying) {
                    return self
                        .tracker
                        .update_appended(self.mapper.message(), appended)
                        .delta;
                }
            }
            Change::None => {}
            Change::Tree => self.sync(),
        }
        if let Some(before) = self.mapper.take_restarted() {
            // The message was rebuilt: what was emitted may no longer be a prefix of it.
            self.verify_everything(&before);
            self.verifying = true;
            // The content was rebuilt: search it for call starts again.
            self.content_checked = 0;
        }
        // A call start enters the content only when the tree changes (a call alternative
        // failed): feeds that only advanced the open leaf skip the check (checked later).
        let tree = self.session.last_change() == Change::Tree;
        if tree && self.check_commit() {
            // What was emitted is a prefix of the committed message; check it all once.
            self.verifying = true;
            self.tracker.set_verify_window(usize::MAX);
            if let Some(tail) = &self.committed {
                let update = self.tracker.update(&tail.message);
                if update.conflicts.is_empty() {
                    self.verifying = false;
                    self.tracker.set_verify_window(0);
                }
                return update.delta;
            }
        }
        let update = self.tracker.update(self.mapper.message());
        if self.verifying && update.conflicts.is_empty() {
            // The rebuilt message extends everything emitted: from here on mapping only
            // appends again, so the cheap tracker (no re-comparison) is exact. Staying in full
            // verification would compare whole fields on every feed (quadratic).
            self.verifying = false;
            self.tracker.set_verify_window(0);
        }
        update.delta
    }

    /// Applies the commit rule when the mapped content gained a call trigger: returns whether
    /// a committed call broke (the stream then follows [`CommittedTail`]).
    fn check_commit(&mut self) -> bool {
        let content = &self.mapper.message().content;
        if content.len() <= self.content_checked || self.parser.call_starts.is_empty() {
            return false;
        }
        let longest = self
            .parser
            .call_starts
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(0);
        let from = self.content_checked.saturating_sub(longest);
        let fresh = content.as_bytes().get(from..).unwrap_or_default();
        if !self.parser.has_trigger(fresh) {
            self.content_checked = content.len();
            return false;
        }
        self.content_checked = content.len();
        let text = self.session.text();
        let Some(committed) = self.parser.commit(
            text,
            self.mapper.content_spans(),
            self.mapper.message(),
            true,
            self.commit_cursor
                .get_or_insert_with(|| CommitCursor::new(self.parser)),
        ) else {
            return false;
        };
        let tail_text = text.get(committed.tail_from..).unwrap_or_default();
        let pending = if committed.message.content.is_empty() {
            String::new()
        } else {
            tail_text[tail_text.trim_end().len()..].to_owned()
        };
        self.committed = Some(CommittedTail {
            message: committed.message,
            upto: text.len(),
            pending,
        });
        true
    }

    /// Switches to a tracker that compares whole fields (O(field) per update), primed with
    /// what was emitted so far: the stable view of `emitted_from` (deltas reproduce it).
    fn verify_everything(&mut self, emitted_from: &PartialMessage) {
        let mut tracker = DeltaTracker::with_config(TrackerConfig {
            verify_window: usize::MAX,
        });
        let _ = tracker.update(emitted_from);
        self.tracker = tracker;
    }

    /// Feeds a string chunk.
    pub fn feed_str(&mut self, chunk: &str) -> Option<ChatDelta> {
        self.feed(chunk.as_bytes())
    }

    /// The message parsed so far (no healing).
    pub fn message(&self) -> ChatMessage {
        self.mapper.message().stable_message()
    }

    /// Ends the output: the last delta (if any) and the final message.
    pub fn finish(mut self) -> (Option<ChatDelta>, Parsed) {
        let status = self.session.finish();
        if status == Status::Failure {
            let text = self.session.text()[self
                .parser
                .prefill_text
                .len()
                .min(self.session.text().len())..]
                .to_owned();
            let parsed = self.parser.parse(&text);
            let delta = self
                .tracker
                .update(&crate::message::PartialMessage::from_final(&parsed.message))
                .delta;
            return (delta, parsed);
        }
        // The end of input resolves what partial parses left open, and may undo completed nodes
        // (an optional part that turns out not to match): the final message is mapped afresh
        // from the final tree (one O(n) mapping pass), so it always equals the one-shot parse.
        let mut mapper = self.parser.mapper();
        mapper.update(&self.session.ast(), self.session.text());
        let last_content = mapper.content_spans().last().cloned();
        let final_message = mapper.finish(false);
        // The final tree may differ from the partial ones: check everything once.
        let emitted = match &self.committed {
            Some(tail) => tail.message.clone(),
            // Nothing fed: nothing emitted, not even what the prefill maps to.
            None if !self.fed => PartialMessage::default(),
            None => self.mapper.message().clone(),
        };
        self.verify_everything(&emitted);
        let has_trigger = self.parser.has_trigger(final_message.content.as_bytes())
            || self.parser.may_end_in_call(
                self.session.text(),
                last_content,
                final_message.tool_calls.len(),
            );
        if self.committed.is_some() || has_trigger {
            // The commit rule may apply: the one-shot parse decides (see the module docs).
            let output = self
                .session
                .text()
                .get(self.parser.prefill_text.len()..)
                .unwrap_or_default()
                .to_owned();
            let parsed = self.parser.parse(&output);
            let delta = self
                .tracker
                .update(&PartialMessage::from_final(&parsed.message))
                .delta;
            return (delta, parsed);
        }
        let delta = self.tracker.update(&final_message).delta;
        let message = final_message.to_message();
        let text = self.session.text();
        let output = text
            .get(self.parser.prefill_text.len()..)
            .unwrap_or_default();
        // No call start is left in the content here (that case took the one-shot path).
        let problem = self.parser.problem_of(&message, output, None);
        (delta, Parsed { message, problem })
    }

    /// Work units so far: (parse, mapping), the commit rule's scans included. Both grow
    /// linearly with the fed bytes.
    pub fn work(&self) -> (u64, u64) {
        let (scan_parse, scan_mapping) = self.commit_cursor.as_ref().map_or((0, 0), |c| c.work());
        (
            self.session.work() + scan_parse,
            self.mapper.work() + scan_mapping,
        )
    }

    /// How many times an open node vanished and the mapping restarted (a delta conflict).
    pub fn restarts(&self) -> usize {
        self.mapper.restarts()
    }

    fn sync(&mut self) {
        self.mapper.follow(&self.session);
    }
}
