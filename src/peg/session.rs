//! One-shot parsing ([`Grammar::parse`]) and incremental sessions ([`Session`]).

use super::ast::Ast;
use super::error::ParseError;
use super::grammar::Grammar;
use super::machine::{Machine, Status};
use std::borrow::Cow;

/// An invalid UTF-8 sequence in the input, replaced by U+FFFD in the parsed text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidUtf8 {
    /// Byte offset of the sequence in the raw input.
    pub offset: usize,
    /// Byte offset of the replacement character in the parsed text.
    pub text_offset: usize,
    /// Length of the invalid sequence in bytes.
    pub len: usize,
}

/// The result of a one-shot parse.
#[derive(Clone, Debug)]
pub struct Parse<'g> {
    /// Success, need-more or failure.
    pub status: Status,
    /// The failure details when `status` is [`Status::Failure`].
    pub error: Option<ParseError>,
    /// The tagged AST (partial nodes included when `status` is need-more).
    pub ast: Ast<'g>,
    /// Invalid UTF-8 sequences that were replaced (only from [`Grammar::parse_bytes`]).
    pub utf8_errors: Vec<InvalidUtf8>,
    /// Units of work done (combinator steps plus bytes examined).
    pub work: u64,
}

impl Parse<'_> {
    /// Whether the parse succeeded.
    pub fn is_success(&self) -> bool {
        self.status.is_success()
    }
    /// Whether more input is needed.
    pub fn is_need_more(&self) -> bool {
        self.status.is_need_more()
    }
    /// Whether the parse failed.
    pub fn is_failure(&self) -> bool {
        self.status.is_failure()
    }
}

impl Grammar {
    /// Parses complete input (full mode: the end of input is final).
    pub fn parse(&self, input: &str) -> Parse<'_> {
        self.run_once(input.as_bytes(), false, Vec::new())
    }

    /// Parses input that may continue (partial mode): running out of input is
    /// [`Status::NeedMore`], never a failure.
    pub fn parse_partial(&self, input: &str) -> Parse<'_> {
        self.run_once(input.as_bytes(), true, Vec::new())
    }

    /// Parses bytes; invalid UTF-8 is replaced by U+FFFD (spans then refer to the lossy text,
    /// `String::from_utf8_lossy(input)`) and reported in [`Parse::utf8_errors`]. In partial
    /// mode an incomplete trailing code point is left out, as a [`Session`] would hold it
    /// back.
    pub fn parse_bytes(&self, input: &[u8], partial: bool) -> Parse<'_> {
        let mut errors = Vec::new();
        let text = match std::str::from_utf8(input) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => {
                let mut d = Utf8Decoder::default();
                let mut s = String::new();
                d.push(input, &mut s, &mut errors);
                if !partial {
                    d.flush(&mut s, &mut errors);
                }
                Cow::Owned(s)
            }
        };
        self.run_once(text.as_bytes(), partial, errors)
    }

    fn run_once(&self, input: &[u8], partial: bool, utf8_errors: Vec<InvalidUtf8>) -> Parse<'_> {
        let mut m = Machine::default();
        let status = m.run(self, input, !partial);
        let (raw, complete) = m.raw_ast(self);
        Parse {
            status,
            error: m.error(self, input),
            ast: Ast::from_raw(self, &raw, complete),
            utf8_errors,
            work: m.work,
        }
    }

    /// A new incremental session over this grammar.
    pub fn session(&self) -> Session<'_> {
        Session::new(self)
    }
}

/// Chunks of at most this many bytes are first decoded inline (see [`Utf8Decoder::push`]).
const SHORT_CHUNK: usize = 16;

/// Incremental UTF-8 decoding: valid text is appended, invalid sequences become U+FFFD and
/// an incomplete trailing sequence (at most 3 bytes) is held back until more bytes arrive.
#[derive(Clone, Debug, Default)]
struct Utf8Decoder {
    held: Vec<u8>,
    /// Raw bytes consumed so far (including held ones).
    raw: usize,
}

impl Utf8Decoder {
    #[inline]
    fn push(&mut self, bytes: &[u8], out: &mut String, errors: &mut Vec<InvalidUtf8>) {
        // The common streaming step: a few complete code points and nothing held back. An
        // inline decoder (`utf8_chunks`) costs less on a token-sized chunk than `from_utf8`.
        if self.held.is_empty() && bytes.len() <= SHORT_CHUNK {
            let mut chunks = bytes.utf8_chunks();
            if let Some(chunk) = chunks.next() {
                if chunk.invalid().is_empty() {
                    self.raw += bytes.len();
                    out.push_str(chunk.valid());
                    return;
                }
            }
        }
        self.push_general(bytes, out, errors);
    }

    #[inline(never)]
    fn push_general(&mut self, mut bytes: &[u8], out: &mut String, errors: &mut Vec<InvalidUtf8>) {
        // Fast path: complete a held-back code point from the first bytes of this chunk
        // without allocating.
        if let Some(&lead) = self.held.first() {
            let width: usize = match lead {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            let have = self.held.len();
            let take = width.saturating_sub(have).min(bytes.len());
            let mut tmp = [0u8; 4];
            let mut n = 0;
            for (dst, &src) in tmp
                .iter_mut()
                .zip(self.held.iter().chain(bytes.iter().take(take)))
            {
                *dst = src;
                n += 1;
            }
            let candidate = tmp.get(..n).unwrap_or_default();
            match std::str::from_utf8(candidate) {
                Ok(c) => {
                    out.push_str(c);
                    self.held.clear();
                    self.raw += take;
                    bytes = bytes.get(take..).unwrap_or_default();
                }
                Err(e) if e.error_len().is_none() && take == bytes.len() => {
                    self.held.clear();
                    self.held.extend_from_slice(candidate);
                    self.raw += take;
                    return;
                }
                // Invalid: the general path below re-examines the held bytes.
                Err(_) => {}
            }
        }
        let base = self.raw - self.held.len();
        self.raw += bytes.len();
        let joined;
        let mut input: &[u8] = if self.held.is_empty() {
            bytes
        } else {
            let mut v = std::mem::take(&mut self.held);
            v.extend_from_slice(bytes);
            joined = v;
            &joined
        };
        let mut offset = base;
        loop {
            match std::str::from_utf8(input) {
                Ok(s) => {
                    out.push_str(s);
                    return;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    let (good, bad) = input.split_at(valid);
                    // `good` is valid UTF-8 by construction.
                    out.push_str(std::str::from_utf8(good).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            errors.push(InvalidUtf8 {
                                offset: offset + valid,
                                text_offset: out.len(),
                                len: n,
                            });
                            out.push(char::REPLACEMENT_CHARACTER);
                            input = bad.get(n..).unwrap_or(&[]);
                            offset += valid + n;
                        }
                        None => {
                            self.held.clear();
                            self.held.extend_from_slice(bad);
                            return;
                        }
                    }
                }
            }
        }
    }

    fn flush(&mut self, out: &mut String, errors: &mut Vec<InvalidUtf8>) {
        if !self.held.is_empty() {
            errors.push(InvalidUtf8 {
                offset: self.raw - self.held.len(),
                text_offset: out.len(),
                len: self.held.len(),
            });
            out.push(char::REPLACEMENT_CHARACTER);
            self.held.clear();
        }
    }
}

/// An incremental parse: feed the input in pieces, read the status and AST at any time.
///
/// The session owns the decoded text and the parse state; the grammar is borrowed and
/// immutable. Each [`feed`](Self::feed) resumes the suspended parse where it stopped (no
/// re-parse of the prefix), in partial mode; [`finish`](Self::finish) declares the end of
/// input (full mode). After success or failure, further input is still appended to
/// [`text`](Self::text) but cannot change the result; after `finish`, feeding is ignored.
///
/// ```
/// use chatparse::peg::{GrammarBuilder, Status};
/// let b = GrammarBuilder::new();
/// let root = b.seq([b.tag("content", b.until("<end>")), b.literal("<end>")]);
/// let g = b.build(root).unwrap();
/// let mut s = g.session();
/// assert_eq!(s.feed(b"hello <e"), Status::NeedMore);
/// let ast = s.ast();
/// let id = ast.find_first("content").unwrap();
/// assert_eq!((ast.text(id, s.text()), ast.is_partial(id)), ("hello ", true));
/// assert_eq!(s.feed(b"nd>"), Status::Success { end: 11 });
/// ```
#[derive(Clone, Debug)]
pub struct Session<'g> {
    grammar: &'g Grammar,
    text: String,
    decoder: Utf8Decoder,
    utf8_errors: Vec<InvalidUtf8>,
    machine: Machine,
    status: Status,
    finished: bool,
    error: Option<ParseError>,
    change: Change,
    /// AST nodes built by [`ast`](Self::ast) and [`ast_from`](Self::ast_from) (work units).
    tree_work: std::cell::Cell<u64>,
}

/// What one [`Session::feed`] changed in the session's AST (see [`Session::last_change`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Nothing: the parse had already ended (or the session was finished).
    None,
    /// Only the suspended leaf advanced: the AST has the same nodes as before, and every
    /// partial node now ends at this offset (or at its start, if that is later), as
    /// [`Session::ast`] would show.
    Frontier(usize),
    /// Anything else: read the AST again.
    Tree,
}

impl<'g> Session<'g> {
    /// A new session (nothing fed yet).
    pub fn new(grammar: &'g Grammar) -> Self {
        Session {
            grammar,
            text: String::new(),
            decoder: Utf8Decoder::default(),
            utf8_errors: Vec::new(),
            machine: Machine::default(),
            status: Status::NeedMore,
            finished: false,
            error: None,
            change: Change::Tree,
            tree_work: std::cell::Cell::new(0),
        }
    }

    /// Appends bytes and resumes the parse in partial mode.
    pub fn feed(&mut self, bytes: &[u8]) -> Status {
        if self.finished {
            self.change = Change::None;
            return self.status;
        }
        self.decoder
            .push(bytes, &mut self.text, &mut self.utf8_errors);
        self.resume(false)
    }

    /// Appends text and resumes the parse in partial mode.
    pub fn feed_str(&mut self, text: &str) -> Status {
        self.feed(text.as_bytes())
    }

    /// Declares the end of input (full mode) and returns the final status.
    pub fn finish(&mut self) -> Status {
        if !self.finished {
            self.decoder.flush(&mut self.text, &mut self.utf8_errors);
            self.finished = true;
            self.resume(true);
        }
        self.status
    }

    #[inline]
    fn resume(&mut self, eof: bool) -> Status {
        self.change = Change::None;
        if self.status == Status::NeedMore {
            self.change = Change::Tree;
            self.status = self.machine.run(self.grammar, self.text.as_bytes(), eof);
            if self.status == Status::Failure {
                self.error = self.machine.error(self.grammar, self.text.as_bytes());
            }
            if self.machine.leaf_only {
                if let Some(frontier) = self.machine.frontier(self.grammar) {
                    self.change = Change::Frontier(frontier);
                }
            }
        }
        self.status
    }

    /// What the last [`feed`](Self::feed) or [`finish`](Self::finish) changed in the
    /// [`ast`](Self::ast): lets a reader that follows the AST skip rebuilding it when only the
    /// suspended leaf advanced (the common case while a long text or JSON string streams in).
    pub fn last_change(&self) -> Change {
        self.change
    }

    /// The current status.
    pub fn status(&self) -> Status {
        self.status
    }

    /// The failure details, once the status is [`Status::Failure`].
    pub fn error(&self) -> Option<&ParseError> {
        self.error.as_ref()
    }

    /// The decoded text fed so far (AST spans index into it).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The grammar.
    pub fn grammar(&self) -> &'g Grammar {
        self.grammar
    }

    /// The AST so far (O(nodes) to build): completed nodes plus partial open tags.
    pub fn ast(&self) -> Ast<'g> {
        self.ast_from(0)
    }

    /// The AST so far as a window ([`Ast::base`]) that holds at least the nodes from
    /// pre-order index `hint` on: whole top-level subtrees that are final and lie before it
    /// are left out, so a reader that follows the parse (and has read them) pays O(nodes it
    /// may still look at) per step instead of O(all nodes). With `hint` 0, the whole AST.
    pub fn ast_from(&self, hint: usize) -> Ast<'g> {
        let base = self.machine.window_start(self.grammar, hint);
        let (raw, complete) = self.machine.raw_ast_from(self.grammar, base);
        self.tree_work
            .set(self.tree_work.get() + raw.len() as u64 + 1);
        Ast::from_raw_at(self.grammar, &raw, complete, base)
    }

    /// Invalid UTF-8 sequences seen so far (replaced by U+FFFD in [`text`](Self::text)).
    pub fn utf8_errors(&self) -> &[InvalidUtf8] {
        &self.utf8_errors
    }

    /// Whether [`finish`](Self::finish) was called.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Units of work done so far: combinator steps plus bytes examined by leaf matchers,
    /// plus AST nodes built for readers. Deterministic; used to check that incremental
    /// parsing (and reading it) is linear.
    pub fn work(&self) -> u64 {
        self.machine.work + self.tree_work.get()
    }
}
