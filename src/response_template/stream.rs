//! The streaming parser.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::coerce::coerce_tool_calls;
use super::error::{Error, ErrorKind, Result};
use super::events::Event;
use super::scan::{Found, Scanner};
use super::spec::{ResponseTemplate, Watch, WatchSet};
use super::util::{is_empty, py_type};

/// A streaming parser for one generation. Create it with [`ResponseParser::new`], replay
/// [`initial_events`](ResponseParser::initial_events), call [`feed`](ResponseParser::feed) with
/// each piece of generated text, then [`finalize`](ResponseParser::finalize).
///
/// Feeding the same text in any chunking yields the same message and, after merging
/// consecutive chunks, the same events. Work per byte is constant (amortized): no text is
/// scanned twice except the few bytes a decided delimiter needed as lookahead.
#[derive(Debug)]
pub struct ResponseParser<'t> {
    tpl: &'t ResponseTemplate,
    tools: Vec<Value>,
    /// Unconsumed text; `buf[0]` is at absolute offset `base`.
    buf: String,
    base: usize,
    /// Where scanning (re)starts: the end of the last committed delimiter.
    scan_pos: usize,
    /// Text before this absolute position has been handed to regions (or discarded).
    emit_pos: usize,
    /// The open region's field, if any.
    region: Option<usize>,
    /// Where the open region's raw text starts (absolute); it runs to the emit position.
    region_start: usize,
    region_caps: Vec<(String, Option<String>)>,
    /// The watch set index in force and one scanner per watched delimiter.
    watch: usize,
    scanners: Vec<Scanner>,
    /// Scanners a smaller watch set left over, kept for their allocations.
    spare: Vec<Scanner>,
    /// Every scanner is idle (nothing in flight) and has scanned all of `buf`.
    all_idle: bool,
    /// Idle scanners have (lazily) scanned up to here: the fast path of `push` moves this
    /// instead of every scanner.
    skipped_to: usize,
    /// An empty match may not end here: where the previous delimiter ended, when that
    /// delimiter's match was empty too.
    no_empty: Option<usize>,
    out: Map<String, Value>,
    /// Region values not yet folded into `out` (streaming only): each is shared with its
    /// `region_close` event, and folded at the end, when the caller has usually dropped the
    /// event so the value moves into the message without a copy. With whether the field was
    /// present before it.
    pending: Vec<(usize, Arc<Value>, bool)>,
    present: Vec<bool>,
    initial: Vec<Event<'t>>,
    finished: bool,
    /// No events are produced (whole-text parsing, where nobody reads them).
    quiet: bool,
    /// Set when the feed fast path applies: a region is open (or text outside regions is
    /// dropped), every scanner is idle and all of `buf` has been handed out (see
    /// [`ResponseParser::feed_into`]).
    fast: Option<Fast<'t>>,
    /// Set when the in-flight fast path applies: one scanner holds the only match attempt in
    /// flight, as a single candidate (see [`ResponseParser::feed_glide`]).
    glide: Option<Glide<'t>>,
    /// While `fast` is set: the end of buffered text from which a fast feed calls `compact`
    /// (`usize::MAX`: none will).
    compact_at: usize,
    /// Set while the buffer ends with a proper piece of the watch set's shared literal,
    /// starting at this absolute position, and nothing else is in flight: every scanner is
    /// idle (lazily at this position, see `skipped_to`) and all text before it has been
    /// handed out (see [`ResponseParser::feed_held`]).
    held: Option<usize>,
    /// Set while one match attempt glides (see [`glide`](ResponseParser::glide)) and the
    /// buffer ends with a proper piece of the watch set's shared literal starting at this
    /// absolute position: the idle scanners have (lazily) scanned up to it, the gliding
    /// candidate has stepped over the feed that began the hold, and each feed is compared with
    /// the literal and stepped by the gliding candidate alone (see
    /// [`ResponseParser::feed_glide_held`]).
    glide_held: Option<usize>,
    /// The event buffer [`feed_with`](ResponseParser::feed_with) reuses for feeds that do not
    /// take the fast path.
    scratch: Vec<Event<'t>>,
}

/// What the in-flight fast path needs.
#[derive(Debug, Clone, Copy)]
struct Glide<'t> {
    /// `can_start[b]`: byte `b` can start a delimiter watched in the current state.
    can_start: &'t [bool; 256],
    /// The scanner with the candidate, and its pattern.
    scanner: usize,
    pat: &'t super::pattern::Pattern,
}

/// What the feed fast path needs, resolved once when it becomes available.
#[derive(Debug, Clone, Copy)]
struct Fast<'t> {
    /// The open region's field name and whether its chunks are dirty; `None` when no region
    /// is open and the template has no implicit field (the text is dropped).
    field: Option<(&'t str, bool)>,
    /// The only byte that can start a watched delimiter, repeated in each byte of a `u32`
    /// (when there is exactly one): a 4-byte feed is checked with one word operation.
    splat: Option<u32>,
    /// The watch set in force (its start-byte table and shared literal).
    watches: &'t WatchSet,
}

impl Fast<'_> {
    /// Whether no byte of `bytes` (at most 64) can start a watched delimiter.
    #[inline]
    fn clean(&self, bytes: &[u8]) -> bool {
        if let (Some(splat), Ok(word)) = (self.splat, <[u8; 4]>::try_from(bytes)) {
            // A byte equal to the start byte is a zero byte of `x` (exact zero-byte test).
            let x = u32::from_le_bytes(word) ^ splat;
            return x.wrapping_sub(0x0101_0101) & !x & 0x8080_8080 == 0;
        }
        let can_start = self.watches.table();
        bytes.len() <= 64 && !bytes.iter().any(|b| can_start[usize::from(*b)])
    }

    /// Whether `bytes` (at most 64) departs from the shared literal at every byte that can
    /// start a watched delimiter, within the feed: nothing can start in it (what the light
    /// path would find, without the trip through it).
    #[inline(never)]
    fn departs(&self, bytes: &[u8]) -> bool {
        bytes.len() <= 64 && self.watches.feed_starts(bytes) == 0
    }
}

impl<'t> ResponseParser<'t> {
    /// Creates a parser. The prefix (the prompt) is cut after its last start anchor and
    /// processed like generated text; its events become
    /// [`initial_events`](ResponseParser::initial_events). The prefix is required, as in the
    /// reference: `None` is an [`ErrorKind::Init`] error (templates often pre-write part of the
    /// message, an opening `<think>` say, which the parser must see); pass `Some("")` when the
    /// text holds the whole message. `tools` enables argument coercion.
    pub fn new(
        tpl: &'t ResponseTemplate,
        prefix: Option<&str>,
        tools: Option<&[Value]>,
    ) -> Result<ResponseParser<'t>> {
        ResponseParser::with_mode(tpl, prefix, tools, false)
    }

    fn with_mode(
        tpl: &'t ResponseTemplate,
        prefix: Option<&str>,
        tools: Option<&[Value]>,
        quiet: bool,
    ) -> Result<ResponseParser<'t>> {
        let mut parser = ResponseParser {
            tpl,
            tools: tools.map(<[Value]>::to_vec).unwrap_or_default(),
            buf: String::new(),
            base: 0,
            scan_pos: 0,
            emit_pos: 0,
            region: None,
            region_start: 0,
            region_caps: Vec::new(),
            watch: 0,
            scanners: Vec::new(),
            spare: Vec::new(),
            all_idle: true,
            skipped_to: 0,
            no_empty: None,
            out: presized(&tpl.defaults, tpl.fields.len()),
            pending: Vec::new(),
            present: vec![false; tpl.fields.len()],
            initial: Vec::new(),
            finished: false,
            quiet,
            fast: None,
            glide: None,
            held: None,
            glide_held: None,
            compact_at: usize::MAX,
            scratch: Vec::new(),
        };
        parser.reset_scanners();
        let Some(prefix) = prefix else {
            return Err(Error::new(ErrorKind::Init, MISSING_PREFIX));
        };
        let cut = tpl.cut_prefix(prefix);
        let mut events = Vec::new();
        parser
            .push(cut, false, &mut events)
            .map_err(|e| e.with_kind(ErrorKind::Init))?;
        parser.initial = events;
        Ok(parser)
    }

    /// Events produced by the prefix (regions it opened, or opened and closed).
    pub fn initial_events(&self) -> &[Event<'t>] {
        &self.initial
    }

    /// Feeds generated text; returns the events it produced.
    pub fn feed(&mut self, chunk: &str) -> Result<Vec<Event<'t>>> {
        let mut events = Vec::new();
        self.feed_into(chunk, &mut events)?;
        Ok(events)
    }

    /// Like [`feed`](ResponseParser::feed), but appends the events to `events` (lets a caller
    /// reuse one buffer across feeds).
    #[inline]
    pub fn feed_into(&mut self, chunk: &str, events: &mut Vec<Event<'t>>) -> Result<()> {
        if let Some(fast) = &self.fast {
            if fast.clean(chunk.as_bytes()) || fast.departs(chunk.as_bytes()) {
                let field = fast.field;
                self.feed_fast(field, chunk, events);
                return Ok(());
            }
        }
        self.feed_rest(chunk, events)
    }

    /// Like [`feed`](ResponseParser::feed), but hands each event to `sink` as it is produced,
    /// in order, before this returns, with its text borrowed (from `chunk` or from the
    /// parser; [`Event::into_owned`] keeps a copy): nothing to collect, copy or clear, the
    /// cheapest way to stream (the common feed, text of the open region with nothing in
    /// flight, goes straight to `sink`). On an error, the events produced before it have been
    /// handed out.
    ///
    /// ```
    /// # use chatparse::response_template::{Event, ResponseParser, ResponseTemplate};
    /// let tpl = ResponseTemplate::from_json_str(
    ///     r#"{"start_anchor": "A:", "fields": {"content": {"close": "<end>"}}}"#,
    /// ).unwrap();
    /// let mut parser = ResponseParser::new(&tpl, Some(""), None).unwrap();
    /// let mut text = String::new();
    /// for piece in ["Hel", "lo<e", "nd>"] {
    ///     parser
    ///         .feed_with(piece, |event| {
    ///             if let Event::RegionChunk { text: chunk, .. } = event {
    ///                 text.push_str(chunk);
    ///             }
    ///         })
    ///         .unwrap();
    /// }
    /// assert_eq!(text, "Hello");
    /// ```
    #[inline]
    pub fn feed_with<F>(&mut self, chunk: &str, mut sink: F) -> Result<()>
    where
        F: for<'c> FnMut(Event<'t, &'c str>),
    {
        if let Some(fast) = &self.fast {
            if fast.clean(chunk.as_bytes()) || fast.departs(chunk.as_bytes()) {
                let field = fast.field;
                self.fast_append(chunk);
                if let Some((field, dirty)) = field.filter(|_| !chunk.is_empty()) {
                    sink(Event::RegionChunk {
                        field,
                        text: chunk,
                        dirty,
                    });
                }
                return Ok(());
            }
        }
        let mut events = std::mem::take(&mut self.scratch);
        let result = self.feed_rest(chunk, &mut events);
        if !events.is_empty() {
            events.drain(..).for_each(|event| sink(event.borrowed()));
        }
        // The placeholder `take` left is empty: nothing to drop.
        std::mem::forget(std::mem::replace(&mut self.scratch, events));
        result
    }

    /// [`feed_into`](ResponseParser::feed_into) once the feed fast path does not apply: the
    /// in-flight fast path, the light path, or the general path.
    #[inline]
    fn feed_rest(&mut self, chunk: &str, events: &mut Vec<Event<'t>>) -> Result<()> {
        if let Some(at) = self.glide_held {
            if self.feed_glide_held(at, chunk, events)? {
                return Ok(());
            }
        }
        if let Some(glide) = self.glide {
            if chunk.len() <= 64 && self.feed_glide(glide, chunk) {
                return Ok(());
            }
        }
        if chunk.len() <= 64 && !self.finished && self.feed_light(chunk, events)? {
            return Ok(());
        }
        self.feed_slow(chunk, events)
    }

    /// The general path of [`feed_into`](ResponseParser::feed_into).
    #[inline(never)]
    fn feed_slow(&mut self, chunk: &str, events: &mut Vec<Event<'t>>) -> Result<()> {
        if self.finished {
            return Err(Error::new(
                ErrorKind::Feed,
                "ResponseParser already finalized",
            ));
        }
        self.fast = None;
        self.glide = None;
        self.glide_held = None;
        if self.held.take().is_some() {
            // The held text still needs its scan: not the fast path of `push`.
            self.all_idle = false;
        }
        self.push(chunk, false, events).map_err(|e| {
            self.finished = true;
            e.with_kind(ErrorKind::Feed)
        })
    }

    /// Ends the stream: decides pending delimiters, closes open regions, checks required
    /// fields and drops empty keys not in `defaults`. Returns the message and the last events.
    pub fn finalize(&mut self) -> Result<(Value, Vec<Event<'t>>)> {
        if self.finished {
            return Err(Error::new(
                ErrorKind::Finalize,
                "ResponseParser already finalized",
            ));
        }
        self.finished = true;
        self.fast = None;
        self.glide = None;
        self.held = None;
        self.glide_held = None;
        let mut events = Vec::new();
        self.finish(&mut events)
            .map_err(|e| e.with_kind(ErrorKind::Finalize))?;
        Ok((Value::Object(std::mem::take(&mut self.out)), events))
    }

    /// The per-feed fast path (small chunks, nothing in flight, no byte of `chunk` can start a
    /// watched delimiter): the chunk is all text of the open region (or, with no region open
    /// and no implicit field, dropped text). Does the same as `push` would in that case,
    /// without its setup.
    #[inline]
    fn feed_fast(
        &mut self,
        field: Option<(&'t str, bool)>,
        chunk: &str,
        events: &mut Vec<Event<'t>>,
    ) {
        self.fast_append(chunk);
        if let Some((field, dirty)) = field.filter(|_| !chunk.is_empty()) {
            // Built in the buffer's new slot (`once_with` runs after the room is made): a
            // `push` builds the event on the stack with narrow stores and copies it with wide
            // loads right after, which the CPU cannot forward from its store buffer (measured
            // 10–15% slower per 4-byte feed).
            events.extend(std::iter::once_with(|| Event::RegionChunk {
                field,
                text: chunk.into(),
                dirty,
            }));
        }
    }

    /// The bookkeeping of [`feed_fast`](ResponseParser::feed_fast): the chunk joins the
    /// handed-out text.
    #[inline(always)]
    fn fast_append(&mut self, chunk: &str) {
        append(&mut self.buf, chunk);
        let end = self.emit_pos + chunk.len();
        self.skipped_to = end;
        self.emit_pos = end;
        if end >= self.compact_at {
            self.compact();
            self.update_compact_at();
        }
    }

    /// Sets [`compact_at`](ResponseParser::compact_at): `compact` keeps the open region's
    /// text, so there is nothing to drop until it starts far enough in.
    fn update_compact_at(&mut self) {
        self.compact_at = if self.region.is_none()
            || self.region_start.saturating_sub(self.base) >= COMPACT_MIN
        {
            self.base.saturating_add(COMPACT_MIN)
        } else {
            usize::MAX
        };
    }

    /// The in-flight fast path: one match attempt is in flight (a single candidate of one
    /// scanner, every other scanner idle) and no byte of `chunk` can start a delimiter. If
    /// the candidate steps over all of `chunk` through ordinary states that can still extend,
    /// nothing is decided and no text can be handed out (it is all held back behind the
    /// candidate): the chunk is only appended. Returns `false`, changing nothing, otherwise.
    #[inline]
    fn feed_glide(&mut self, glide: Glide<'t>, chunk: &str) -> bool {
        let bytes = chunk.as_bytes();
        if bytes.iter().any(|b| glide.can_start[usize::from(*b)]) {
            return false;
        }
        self.glide_over(glide, chunk)
    }

    /// [`feed_glide`](ResponseParser::feed_glide) once no position of `chunk` can start a
    /// delimiter.
    #[inline]
    fn glide_over(&mut self, glide: Glide<'t>, chunk: &str) -> bool {
        let bytes = chunk.as_bytes();
        let Some(sc) = self.scanners.get_mut(glide.scanner) else {
            return false;
        };
        if !sc.glide_all(glide.pat, bytes) {
            return false;
        }
        append(&mut self.buf, chunk);
        // The idle scanners cannot start anything in `chunk` either.
        self.skipped_to = self.base + self.buf.len();
        true
    }

    /// A feed while [`glide_held`](ResponseParser::glide_held). If the feed continues the
    /// held piece and the literal is still not complete, it is only appended (no scanner
    /// moves: the gliding candidate still stands at the end of the feed that began the hold).
    /// If it departs from the literal, nothing can start at the held position; unless the
    /// text after it can start a delimiter, the idle scanners skip it all and the gliding
    /// candidate steps over the text it has not read. Otherwise (the literal is complete, another start follows, or the
    /// candidate cannot glide over the text) the general path scans: the gliding scanner from
    /// where it stands, the idle ones from the held position. Each held byte is stepped once.
    fn feed_glide_held(
        &mut self,
        at: usize,
        chunk: &str,
        events: &mut Vec<Event<'t>>,
    ) -> Result<bool> {
        let tpl: &'t ResponseTemplate = self.tpl;
        let bytes = chunk.as_bytes();
        let (Some(glide), Some(ws)) = (self.glide, tpl.watches.get(self.watch)) else {
            self.glide_held = None;
            return Ok(false);
        };
        let end = self.base + self.buf.len();
        let piece = held_piece(ws, at, end, bytes);
        append(&mut self.buf, chunk);
        if piece == Piece::Continues {
            return Ok(true);
        }
        self.glide_held = None;
        if piece == Piece::Departs && self.nothing_starts_after(ws, at) {
            let new_end = end + bytes.len();
            let from = self
                .scanners
                .get(glide.scanner)
                .map_or(new_end, Scanner::pos);
            let unread = self
                .buf
                .as_bytes()
                .get(from.saturating_sub(self.base)..)
                .unwrap_or_default();
            let glided = self
                .scanners
                .get_mut(glide.scanner)
                .is_some_and(|sc| sc.glide_all(glide.pat, unread));
            if glided {
                self.skipped_to = new_end;
                return Ok(true);
            }
        }
        // The general path: every scanner resumes where it stands.
        self.fast = None;
        self.glide = None;
        self.advance(false, events).map(|()| true).map_err(|e| {
            self.finished = true;
            e.with_kind(ErrorKind::Feed)
        })
    }

    /// The light path, for small feeds that decide nothing: each match attempt in flight,
    /// and each one the feed starts, either steps over the rest of the feed into a state that
    /// can still extend, or dies without a match (see [`Scanner::light`]). Then the text no
    /// attempt holds back any more is handed out. Does the same as `push`, without its setup.
    /// Returns `Ok(false)`, changing nothing, if the first scanner the feed concerns needs the
    /// general path; if a later one does, the feed goes on through the general path from
    /// there (the scanners already stepped are where `run` would have left them).
    #[inline(never)]
    fn feed_light(&mut self, chunk: &str, events: &mut Vec<Event<'t>>) -> Result<bool> {
        let tpl: &'t ResponseTemplate = self.tpl;
        let Some(ws) = tpl.watches.get(self.watch) else {
            return Ok(false);
        };
        if let Some(at) = self.held {
            return self.feed_held(ws, at, chunk, events).map(|()| true);
        }
        let bytes = chunk.as_bytes();
        let end = self.base + self.buf.len();
        let look_behind = self.buf.as_bytes().last().copied();
        // Idle scanners need a look only where the feed has a byte that can start a match.
        // Start bytes where the feed departs from the literal every watched delimiter begins
        // with start nothing: such a feed may still take the fast or in-flight path.
        let starts = ws.feed_starts(bytes);
        if let Some(fast) = self.fast.filter(|_| starts & starts.wrapping_sub(1) == 0) {
            let i = starts.trailing_zeros() as usize;
            let shared = ws.shared();
            if starts != 0 && bytes.len() - i < shared.len() {
                // One start, a piece of the shared literal that ends the feed: hold it.
                let end = self.base + self.buf.len();
                append(&mut self.buf, chunk);
                if let (Some((field, dirty)), Some(text)) = (fast.field, chunk.get(..i)) {
                    if !text.is_empty() {
                        events.push(Event::RegionChunk {
                            field,
                            text: text.into(),
                            dirty,
                        });
                    }
                }
                self.emit_pos = end + i;
                self.skipped_to = end + i;
                self.held = Some(end + i);
                self.fast = None;
                return Ok(true);
            }
        }
        if starts == 0 {
            if let Some(fast) = self.fast {
                self.feed_fast(fast.field, chunk, events);
                return Ok(true);
            }
            if let Some(glide) = self.glide {
                if self.glide_over(glide, chunk) {
                    return Ok(true);
                }
            }
        } else if let Some(glide) = self.glide.filter(|_| starts & starts.wrapping_sub(1) == 0) {
            let i = starts.trailing_zeros() as usize;
            let glided = bytes.len() - i < ws.shared().len()
                && self
                    .scanners
                    .get_mut(glide.scanner)
                    .is_some_and(|sc| sc.pos() == end && sc.glide_all(glide.pat, bytes));
            if glided {
                // One start, a piece of the shared literal that ends the feed, while one
                // attempt glides on over the whole feed, still undecided (so all its text
                // stays held back): hold the feed (the idle scanners have nothing to start
                // before the piece; the gliding candidate goes on from the end of the feed once
                // the hold ends). Where the attempt would end or be decided within the feed,
                // text may be due: the light or general path takes the feed.
                append(&mut self.buf, chunk);
                self.skipped_to = end + i;
                self.glide_held = Some(end + i);
                return Ok(true);
            }
        }
        let mut stepped = false;
        let mut safe = usize::MAX;
        let mut all_idle = true;
        for (sc, w) in self.scanners.iter_mut().zip(&ws.items) {
            if starts == 0 && sc.idle() {
                continue;
            }
            let at_end = sc.pos() == end || (sc.idle() && self.skipped_to == end);
            let ok = at_end
                && tpl
                    .pattern(*w)
                    .is_some_and(|pat| sc.light(pat, bytes, end, look_behind, starts));
            if !ok {
                if !stepped {
                    return Ok(false);
                }
                self.buf.push_str(chunk);
                self.fast = None;
                self.glide = None;
                return self.advance(false, events).map(|()| true).map_err(|e| {
                    self.finished = true;
                    e.with_kind(ErrorKind::Feed)
                });
            }
            stepped = true;
            if let Some(start) = sc.pending_start() {
                safe = safe.min(start);
                all_idle = false;
            }
        }
        append(&mut self.buf, chunk);
        let end = end + bytes.len();
        self.skipped_to = end;
        self.emit_text(safe.min(end), events);
        self.all_idle = all_idle;
        self.compact();
        self.update_fast();
        Ok(true)
    }

    /// A feed while [`held`](ResponseParser::held) (the buffer ends with a proper piece of
    /// the shared literal starting at `at`): if the feed continues the piece and the literal
    /// is still not complete, it is only appended. If it departs from the literal, nothing
    /// can start at `at`; unless the text after `at` can start a delimiter, all of it is
    /// handed out and the fast path resumes. Otherwise (the literal is complete, or another
    /// start follows) the general path scans from `at`.
    fn feed_held(
        &mut self,
        ws: &'t WatchSet,
        at: usize,
        chunk: &str,
        events: &mut Vec<Event<'t>>,
    ) -> Result<()> {
        let end = self.base + self.buf.len();
        let bytes = chunk.as_bytes();
        let piece = held_piece(ws, at, end, bytes);
        append(&mut self.buf, chunk);
        if piece == Piece::Continues {
            return Ok(());
        }
        self.held = None;
        let new_end = end + bytes.len();
        if piece == Piece::Departs && self.nothing_starts_after(ws, at) {
            self.skipped_to = new_end;
            self.emit_text(new_end, events);
            self.all_idle = true;
            self.compact();
            self.update_fast();
            return Ok(());
        }
        self.all_idle = false;
        self.advance(false, events).map_err(|e| {
            self.finished = true;
            e.with_kind(ErrorKind::Feed)
        })
    }

    fn finish(&mut self, events: &mut Vec<Event<'t>>) -> Result<()> {
        self.push("", true, events)?;
        if let Some(f) = self.region.take() {
            let offset = self.base + self.buf.len();
            self.close_region(f, Vec::new(), offset, events)?;
        }
        for (f, value, present) in std::mem::take(&mut self.pending) {
            let value = Arc::try_unwrap(value).unwrap_or_else(|shared| (*shared).clone());
            self.store(f, value, present);
        }
        // A required field is there when a region of it closed, or when it has a default.
        let missing: Vec<&str> = self
            .tpl
            .fields
            .iter()
            .filter(|f| !f.optional && !self.out.contains_key(&f.name))
            .map(|f| f.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(Error::new(
                ErrorKind::Finalize,
                format!(
                    "Required response_template fields missing from parsed output: {}",
                    super::util::py_list(&missing)
                ),
            ));
        }
        let defaults = &self.tpl.defaults;
        self.out
            .retain(|k, v| defaults.contains_key(k) || !is_empty(v));
        Ok(())
    }

    fn reset_scanners(&mut self) {
        self.watch = match self.region {
            Some(f) if Some(f) != self.tpl.implicit => f + 1,
            _ => 0,
        };
        let n = self
            .tpl
            .watches
            .get(self.watch)
            .map_or(0, |w| w.items.len());
        // Reset in place, and park the scanners a smaller watch set does not need: each
        // scanner keeps its candidate list allocated across delimiters.
        let pos = self.scan_pos;
        while self.scanners.len() > n {
            self.spare.extend(self.scanners.pop());
        }
        self.scanners.iter_mut().for_each(|s| s.reset(pos));
        while self.scanners.len() < n {
            let mut scanner = self.spare.pop().unwrap_or_else(|| Scanner::new(pos));
            scanner.reset(pos);
            self.scanners.push(scanner);
        }
        self.skipped_to = self.scan_pos;
    }

    fn byte_at(&self, abs: usize) -> Option<u8> {
        abs.checked_sub(self.base)
            .and_then(|i| self.buf.as_bytes().get(i).copied())
    }

    fn look_behind(&self, abs: usize) -> Option<u8> {
        abs.checked_sub(1).and_then(|p| self.byte_at(p))
    }

    /// Appends text and processes as much as can be decided; at `eoi` everything is decided.
    fn push(&mut self, chunk: &str, eoi: bool, events: &mut Vec<Event<'t>>) -> Result<()> {
        self.buf.push_str(chunk);
        if !eoi && self.all_idle {
            // Fast path: nothing in flight and no byte of the new text can start a delimiter.
            let ws = self.tpl.watches.get(self.watch);
            if ws.is_some_and(|ws| !ws.may_start_in(chunk.as_bytes())) {
                let end = self.base + self.buf.len();
                self.skipped_to = end;
                self.emit_text(end, events);
                self.compact();
                self.update_fast();
                return Ok(());
            }
        }
        self.advance(eoi, events)
    }

    /// The general path of `push`, once the new text is in the buffer: runs the scanners to
    /// its end, commits what is decided and hands out the text nothing holds back.
    fn advance(&mut self, eoi: bool, events: &mut Vec<Event<'t>>) -> Result<()> {
        let skipped = self.skipped_to;
        self.scanners.iter_mut().for_each(|s| s.skip_to(skipped));
        loop {
            let end = self.base + self.buf.len();
            if let Some(found) = self.scan_to(end) {
                self.commit(found, events)?;
                continue;
            }
            if !eoi && self.scanners.iter().all(|s| s.frontier().is_none()) {
                break;
            }
            let lb = self.look_behind(end);
            let mut decided = false;
            for (i, sc) in self.scanners.iter_mut().enumerate() {
                let w = self
                    .tpl
                    .watches
                    .get(self.watch)
                    .and_then(|ws| ws.items.get(i));
                if let Some(pat) = w.and_then(|w| self.tpl.pattern(*w)) {
                    decided |= if eoi {
                        sc.finish(pat, end, lb, self.no_empty)
                    } else {
                        sc.settle(pat, end, self.no_empty)
                    };
                }
            }
            if decided || self.scanners.iter().any(|s| s.best().is_some()) {
                if let Some(found) = self.decide() {
                    self.commit(found, events)?;
                    continue;
                }
            }
            break;
        }
        let end = self.base + self.buf.len();
        let safe = if eoi {
            end
        } else {
            self.scanners
                .iter()
                .filter_map(Scanner::frontier)
                .min()
                .unwrap_or(end)
                .min(end)
        };
        self.emit_text(safe, events);
        self.all_idle = self.scanners.iter().all(Scanner::idle);
        self.compact();
        self.update_fast();
        Ok(())
    }

    /// Scans up to absolute position `end`; returns a match to commit once one is decided.
    ///
    /// Each scanner runs on its own over a horizon that doubles while nothing is decided, so
    /// scanners stay close together and work past a committed match stays bounded.
    fn scan_to(&mut self, end: usize) -> Option<(usize, Found)> {
        let ws = self.tpl.watches.get(self.watch)?;
        let mut span = 256usize;
        loop {
            let low = self
                .scanners
                .iter()
                .filter(|s| s.best().is_none())
                .map(Scanner::pos)
                .min()
                .unwrap_or(end);
            let until = end.min(low.saturating_add(span));
            let mut limit = self
                .scanners
                .iter()
                .filter_map(|s| s.best().map(|f| f.start))
                .min()
                .unwrap_or(usize::MAX);
            let bytes = self.buf.as_bytes();
            for (sc, w) in self.scanners.iter_mut().zip(&ws.items) {
                if let Some(pat) = self.tpl.pattern(*w) {
                    if sc.run(pat, bytes, self.base, until, limit, self.no_empty) {
                        limit = limit.min(sc.best().map_or(usize::MAX, |f| f.start));
                    }
                }
            }
            if limit != usize::MAX {
                if let Some(found) = self.decide() {
                    return Some(found);
                }
            }
            if until >= end {
                return None;
            }
            span = span.saturating_mul(2);
        }
    }

    /// Picks the winning decided match, if no undecided candidate could still beat it:
    /// earliest start, then longest, then an open before a close, then the field name that
    /// sorts first (the reference's order).
    fn decide(&self) -> Option<(usize, Found)> {
        let ws = self.tpl.watches.get(self.watch)?;
        let tpl = self.tpl;
        let rank = |i: usize| {
            let w = ws.items.get(i);
            let f = match w {
                Some(Watch::Open(f) | Watch::Close(f)) => *f,
                None => usize::MAX,
            };
            let name = tpl.fields.get(f).map_or("", |f| f.name.as_str());
            (matches!(w, Some(Watch::Close(_))), name)
        };
        let mut best: Option<(usize, Found)> = None;
        for (i, sc) in self.scanners.iter().enumerate() {
            let Some(f) = sc.best() else { continue };
            let better = match best {
                None => true,
                Some((bi, b)) => {
                    (f.start, std::cmp::Reverse(f.end - f.start), rank(i))
                        < (b.start, std::cmp::Reverse(b.end - b.start), rank(bi))
                }
            };
            if better {
                best = Some((i, f));
            }
        }
        let (_, winner) = best?;
        let blocked = self
            .scanners
            .iter()
            .filter_map(Scanner::pending_start)
            .any(|s| s <= winner.start);
        (!blocked).then_some(best?)
    }

    fn commit(
        &mut self,
        (index, found): (usize, Found),
        events: &mut Vec<Event<'t>>,
    ) -> Result<()> {
        let watch = self
            .tpl
            .watches
            .get(self.watch)
            .and_then(|ws| ws.items.get(index))
            .copied();
        self.emit_text(found.start, events);
        let hay_from = self.base;
        let caps = match watch.and_then(|w| self.tpl.pattern(w)) {
            Some(p) if !p.names().is_empty() => p.captures(
                &self.buf,
                found.start.saturating_sub(hay_from),
                found.end.saturating_sub(hay_from),
            ),
            _ => Vec::new(),
        };
        match watch {
            Some(Watch::Open(f)) => {
                if let Some(open) = self.region.take() {
                    self.close_region(open, Vec::new(), found.start, events)?;
                }
                self.region = Some(f);
                self.region_start = found.end;
                self.region_caps = caps;
                if let Some(field) = self.tpl.fields.get(f).filter(|_| !self.quiet) {
                    events.push(Event::RegionOpen { field: &field.name });
                }
            }
            Some(Watch::Close(f)) if self.region == Some(f) => {
                self.region = None;
                self.close_region(f, caps, found.start, events)?;
            }
            Some(Watch::Close(_)) | None => {}
        }
        self.emit_pos = found.end;
        self.scan_pos = found.end;
        // Two empty matches in a row at one position are not taken (the parser always makes
        // progress); an empty match right after a non-empty one is (as in the reference).
        self.no_empty = (found.start == found.end).then_some(found.end);
        self.reset_scanners();
        Ok(())
    }

    /// Hands text up to absolute position `to` to the current region (opening the implicit
    /// field if no region is open), or discards it.
    fn emit_text(&mut self, to: usize, events: &mut Vec<Event<'t>>) {
        if to <= self.emit_pos {
            return;
        }
        let from_rel = self.emit_pos.saturating_sub(self.base);
        let to_rel = to.saturating_sub(self.base);
        self.emit_pos = to;
        if to_rel <= from_rel {
            return;
        }
        if self.region.is_none() {
            let Some(implicit) = self.tpl.implicit else {
                return;
            };
            self.region = Some(implicit);
            self.region_start = self.base + from_rel;
            self.region_caps.clear();
            if let Some(field) = self.tpl.fields.get(implicit).filter(|_| !self.quiet) {
                events.push(Event::RegionOpen { field: &field.name });
            }
        }
        let Some(field) = self.region.and_then(|f| self.tpl.fields.get(f)) else {
            return;
        };
        let Some(text) = self.buf.get(from_rel..to_rel) else {
            return;
        };
        if self.quiet {
            return;
        }
        events.push(Event::RegionChunk {
            field: &field.name,
            text: text.into(),
            dirty: field.content.dirty(),
        });
    }

    /// Computes a closing region's value, records it and emits `region_close`.
    fn close_region(
        &mut self,
        f: usize,
        close_caps: Vec<(String, Option<String>)>,
        offset: usize,
        events: &mut Vec<Event<'t>>,
    ) -> Result<()> {
        let Some(field) = self.tpl.fields.get(f) else {
            return Ok(());
        };
        let fail = |m: String| {
            Error::new(ErrorKind::Feed, m)
                .with_field(&field.name)
                .with_offset(offset)
        };
        let raw_from = self.region_start.saturating_sub(self.base);
        let raw_to = offset.saturating_sub(self.base);
        let raw = self.buf.get(raw_from..raw_to).unwrap_or_default();
        let content = field
            .content
            .parse(raw)
            .map_err(|e| fail(format!("Field '{}': {e}", field.name)))?;
        let mut value = match &field.transform {
            None => content,
            Some(t) => {
                // The groups that took part in the delimiters' matches (the reference leaves
                // out the others, so naming one is an undefined placeholder).
                let mut scope = Map::with_capacity(self.region_caps.len() + close_caps.len() + 1);
                for (k, v) in std::mem::take(&mut self.region_caps)
                    .into_iter()
                    .chain(close_caps)
                {
                    if let Some(v) = v {
                        scope.insert(k, Value::String(v));
                    }
                }
                if field.transform_each {
                    // Each item (a dict) is applied with its keys joining the groups.
                    let Value::Array(items) = content else {
                        return Err(fail(format!(
                            "Field '{}': transform_each requires the parsed content to be a \
                             list, got {}.",
                            field.name,
                            py_type(&content)
                        )));
                    };
                    let mut out = Vec::with_capacity(items.len());
                    for item in items {
                        let Value::Object(m) = item else {
                            return Err(fail(format!(
                                "Field '{}': transform_each requires each list element to be \
                                 a dict, got {}.",
                                field.name,
                                py_type(&item)
                            )));
                        };
                        let mut s = scope.clone();
                        s.extend(m);
                        out.push(t.apply(&mut s).map_err(fail)?);
                    }
                    Value::Array(out)
                } else {
                    scope.insert("content".into(), content);
                    t.apply(&mut scope).map_err(fail)?
                }
            }
        };
        if !self.tools.is_empty() {
            value = coerce_tool_calls(&value, &self.tools);
        }
        let present = self.present.get(f).copied().unwrap_or(false);
        self.check_store(f, &value, present).map_err(fail)?;
        if let Some(p) = self.present.get_mut(f) {
            *p = true;
        }
        if self.quiet {
            self.store(f, value, present);
            return Ok(());
        }
        let value = Arc::new(value);
        self.pending.push((f, Arc::clone(&value), present));
        events.push(Event::RegionClose {
            field: &field.name,
            value,
        });
        Ok(())
    }

    /// Whether a region's value can be recorded (see [`store`](ResponseParser::store)): a
    /// `join` field needs a string value, and a string (or nothing) before it; a `repeats`
    /// field a list (or nothing) before its first value. Before a field's first value, what
    /// is there is its default. Checked when the region closes, so the error is raised there.
    fn check_store(
        &self,
        f: usize,
        value: &Value,
        present: bool,
    ) -> std::result::Result<(), String> {
        let Some(field) = self.tpl.fields.get(f) else {
            return Ok(());
        };
        let name = field.name.as_str();
        let default = field.default.as_ref().filter(|_| !present);
        if field.join.is_some() {
            if !value.is_string() {
                return Err(join_error(name, value));
            }
            if let Some(d) = default.filter(|d| !d.is_string() && !d.is_null()) {
                return Err(format!(
                    "Field '{name}': 'join' cannot append to the default of type {}",
                    py_type(d)
                ));
            }
        } else if field.repeats {
            if let Some(d) = default.filter(|d| !d.is_array()) {
                return Err(format!(
                    "Field '{name}': 'repeats' cannot append to the default: '{}' object has no \
                     attribute 'append'",
                    py_type(d)
                ));
            }
        }
        Ok(())
    }

    /// Records one region's value in the output, as the reference does: `join` appends the
    /// separator and the value to the string there (a default, or earlier matches), or sets
    /// the value when there is none; `repeats` appends the value to the list there (a default
    /// list, or earlier matches; a `transform_each` list is one item), or starts one; other
    /// fields overwrite. `present`: whether the field had a value before this one. The value
    /// passed [`check_store`](ResponseParser::check_store).
    fn store(&mut self, f: usize, value: Value, present: bool) {
        let Some(field) = self.tpl.fields.get(f) else {
            return;
        };
        let name = field.name.as_str();
        if let Some(sep) = &field.join {
            let Value::String(s) = value else {
                return;
            };
            match self.out.get_mut(name) {
                Some(Value::String(prev)) => {
                    prev.push_str(sep);
                    prev.push_str(&s);
                }
                Some(slot) => *slot = Value::String(s),
                None => {
                    self.out.insert(name.to_owned(), Value::String(s));
                }
            }
        } else if field.repeats {
            match self.out.get_mut(name) {
                // One more match: no one-item list to build and drop.
                Some(Value::Array(prev)) => prev.push(value),
                Some(slot) => *slot = Value::Array(vec![value]),
                None => {
                    self.out.insert(name.to_owned(), Value::Array(vec![value]));
                }
            }
        } else {
            // Deliberate deviation: an empty value of the implicit field (typically whitespace
            // after its close, e.g. "\n" after "<|im_end|>") does not erase an earlier value.
            let keep = Some(f) == self.tpl.implicit
                && present
                && is_empty(&value)
                && self.out.get(name).is_some_and(|v| !is_empty(v));
            if !keep {
                match self.out.get_mut(name) {
                    Some(slot) => *slot = value,
                    None => {
                        self.out.insert(name.to_owned(), value);
                    }
                }
            }
        }
    }

    /// Whether the next small feed may take [`feed_fast`](ResponseParser::feed_fast) or
    /// [`feed_glide`](ResponseParser::feed_glide).
    fn update_fast(&mut self) {
        self.fast = None;
        self.glide = None;
        if self.held.is_some() {
            return;
        }
        if !self.finished && !self.quiet && !self.all_idle {
            self.update_glide();
            return;
        }
        if self.finished
            || self.quiet
            || !self.all_idle
            || self.emit_pos != self.base + self.buf.len()
        {
            return;
        }
        let tpl: &'t ResponseTemplate = self.tpl;
        let field = match self.region {
            Some(f) => match tpl.fields.get(f) {
                Some(field) => Some((field.name.as_str(), field.content.dirty())),
                None => return,
            },
            // Text outside any region is dropped when there is no implicit field.
            None if tpl.implicit.is_none() => None,
            None => return,
        };
        let Some(ws) = tpl.watches.get(self.watch) else {
            return;
        };
        self.update_compact_at();
        self.fast = Some(Fast {
            field,
            splat: ws.only_first_byte().map(|b| u32::from(b) * 0x0101_0101),
            watches: ws,
        });
    }

    /// Whether nothing can start in the buffered text after `at` (at most 64 bytes of it;
    /// longer text counts as possibly starting something).
    fn nothing_starts_after(&self, ws: &WatchSet, at: usize) -> bool {
        let span = self
            .buf
            .as_bytes()
            .get((at + 1).saturating_sub(self.base)..)
            .unwrap_or_default();
        span.len() <= 64 && ws.feed_starts(span) == 0
    }

    /// Sets up [`feed_glide`](ResponseParser::feed_glide) when exactly one scanner is in
    /// flight, with a single candidate, and has scanned all of the buffer.
    fn update_glide(&mut self) {
        let end = self.base + self.buf.len();
        let mut busy = self.scanners.iter().enumerate().filter(|(_, s)| !s.idle());
        let (Some((index, sc)), None) = (busy.next(), busy.next()) else {
            return;
        };
        if !sc.single() || sc.pos() != end {
            return;
        }
        let tpl: &'t ResponseTemplate = self.tpl;
        let Some(ws) = tpl.watches.get(self.watch) else {
            return;
        };
        let Some(pat) = ws.items.get(index).and_then(|w| tpl.pattern(*w)) else {
            return;
        };
        self.glide = Some(Glide {
            can_start: ws.table(),
            scanner: index,
            pat,
        });
    }

    /// Drops consumed text from the buffer (keeping one character of look-behind).
    fn compact(&mut self) {
        if self.emit_pos.saturating_sub(self.base) < COMPACT_MIN {
            return;
        }
        let scanned = self
            .scanners
            .iter()
            .filter(|s| s.best().is_none())
            .map(|s| s.pos().max(self.skipped_to))
            .min()
            .unwrap_or(self.emit_pos);
        let region = if self.region.is_some() {
            self.region_start
        } else {
            usize::MAX
        };
        let keep_from = self
            .emit_pos
            .min(scanned)
            .min(region)
            .saturating_sub(self.base);
        if keep_from < 4096 || keep_from * 2 < self.buf.len() {
            return;
        }
        let mut cut = keep_from.saturating_sub(1);
        while cut > 0 && !self.buf.is_char_boundary(cut) {
            cut -= 1;
        }
        self.buf.drain(..cut);
        self.base += cut;
    }
}

/// `buf.push_str(s)`, with the copy of a 4-byte feed (the common streaming size) inlined as
/// one fixed-size move instead of a `memcpy` call.
#[inline]
fn append(buf: &mut String, s: &str) {
    match s.get(..4) {
        Some(head) if s.len() == 4 => buf.push_str(head),
        _ => buf.push_str(s),
    }
}

/// A copy of `defaults` with room for `fields` more keys (the message's keys, at most: no
/// growth as regions close).
fn presized(defaults: &Map<String, Value>, fields: usize) -> Map<String, Value> {
    let mut out = Map::with_capacity(defaults.len() + fields);
    out.extend(defaults.iter().map(|(k, v)| (k.clone(), v.clone())));
    out
}

/// How a feed relates to a held piece of the shared literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// The feed continues the piece and the literal is still not complete.
    Continues,
    /// The feed completes the literal (and may go on past it).
    Completes,
    /// The feed departs from the literal: nothing can start where the piece starts.
    Departs,
}

/// How `bytes`, fed at absolute position `end`, relates to the piece of `ws`'s shared literal
/// held from `at`.
fn held_piece(ws: &WatchSet, at: usize, end: usize, bytes: &[u8]) -> Piece {
    let rest = ws
        .shared()
        .get(end.saturating_sub(at)..)
        .unwrap_or_default();
    let n = bytes.len().min(rest.len());
    if bytes.get(..n) != rest.get(..n) {
        Piece::Departs
    } else if bytes.len() < rest.len() {
        Piece::Continues
    } else {
        Piece::Completes
    }
}

/// The error for a `join` field whose value is not a string.
fn join_error(name: &str, value: &Value) -> String {
    format!(
        "Field '{name}': 'join' requires each match to parse to a string, got {}.",
        super::util::py_type(value)
    )
}

/// The error for a parser created without a prefix (the reference's message).
const MISSING_PREFIX: &str =
    "`ResponseParser`/`parse_response` requires `prefix` (the chat prompt \
    sent to the model before generation), because chat templates often pre-write part of the \
    assistant message (e.g. an opening `<think>` tag) that the parser must see to parse the \
    output correctly. If the generation already contains the complete message, pass \
    `prefix=\"\"` to opt out explicitly.";

/// `compact` does nothing while less than this much text has been handed out.
const COMPACT_MIN: usize = 4096;

/// Parses a whole output: creates a parser with `prefix` (required, see
/// [`ResponseParser::new`]) and `tools`, feeds `text` once and finalizes. Returns the message.
pub fn parse_response(
    tpl: &ResponseTemplate,
    text: &str,
    prefix: Option<&str>,
    tools: Option<&[Value]>,
) -> Result<Value> {
    let mut parser = ResponseParser::with_mode(tpl, prefix, tools, true)?;
    parser.feed(text)?;
    parser.finalize().map(|(message, _)| message)
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "semantics_tests.rs"]
mod semantics_tests;
