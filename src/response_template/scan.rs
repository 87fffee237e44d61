//! Incremental, partial matching of one delimiter pattern.
//!
//! A [`Scanner`] is stepped one byte at a time and never looks at a byte twice. It keeps the
//! *candidates*: match attempts, each an anchored DFA state plus the position where it began
//! and the end of the longest-priority match seen so far. A candidate begins at each
//! character boundary whose byte can start the pattern, unless the buffered text there
//! already departs from the pattern's literal prefix ([`Pattern::next_start`]: such a
//! candidate would die within the buffer without a match); it ends when its DFA state dies. Of
//! two live candidates in the same DFA state the later one can never win (same future,
//! later start), so it is dropped: the candidate list stays bounded by the number of DFA
//! states, which makes scanning linear in the text.
//!
//! The scanner's answer is either a *decided* match (the earliest candidate died holding a
//! match: nothing more can change it) or the start of the earliest live candidate, from
//! which text must be held back.
//!
//! [`Scanner::light`] is the streaming light path's step over a small feed: the same
//! candidates as [`Scanner::run`] would keep, updated in place, or no change at all when the
//! feed would decide something (the general path then takes it).

use regex_automata::util::primitives::StateID;

use super::pattern::Pattern;

/// Steps `sid` over `bytes` for the light path: the final state (a dead one if the attempt
/// dies on the way), or `None` if it reaches a match or another special state, or ends in a
/// state that [`Scanner::settle`] would decide.
fn light_run(pat: &Pattern, mut sid: StateID, bytes: &[u8]) -> Option<StateID> {
    for &byte in bytes {
        sid = pat.next(sid, byte);
        if pat.is_special(sid) {
            return pat.is_dead(sid).then_some(sid);
        }
    }
    pat.undecided_at_end(sid).then_some(sid)
}

/// A decided match `[start, end)` (absolute byte offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

#[derive(Debug, Clone, Copy)]
struct Cand {
    start: usize,
    sid: StateID,
    match_end: Option<usize>,
    done: bool,
}

/// Scan state of one pattern.
#[derive(Debug, Default, Clone)]
pub(crate) struct Scanner {
    cands: Vec<Cand>,
    best: Option<Found>,
    /// Next absolute position to step over.
    pos: usize,
}

impl Scanner {
    /// A scanner that starts scanning at absolute position `pos`.
    pub(crate) fn new(pos: usize) -> Scanner {
        Scanner {
            cands: Vec::new(),
            best: None,
            pos,
        }
    }

    /// Makes this scanner like [`Scanner::new`]`(pos)`, keeping its allocation.
    pub(crate) fn reset(&mut self, pos: usize) {
        self.cands.clear();
        self.best = None;
        self.pos = pos;
    }

    /// With a single live candidate, steps its DFA through bytes that cannot start another
    /// candidate and lead to ordinary states, without any bookkeeping. Stops before the first
    /// byte that needs the general path.
    fn glide(&mut self, pat: &Pattern, buf: &[u8], base: usize, until: usize, limit: usize) {
        let Some(c) = self.cands.first_mut().filter(|c| !c.done) else {
            return;
        };
        let mut pos = self.pos;
        let mut sid = c.sid;
        let from = pos.saturating_sub(base);
        let to = until.saturating_sub(base);
        for &byte in buf.get(from..to).unwrap_or(&[]) {
            if pos <= limit
                && pat.can_start(byte)
                && pat.may_start_at(buf, pos.saturating_sub(base))
            {
                break;
            }
            let next = pat.next(sid, byte);
            if pat.is_special(next) {
                break;
            }
            sid = next;
            pos += 1;
        }
        c.sid = sid;
        self.pos = pos;
    }

    /// Whether exactly one live candidate is in flight and nothing is decided: the case
    /// [`Scanner::glide_all`] applies to.
    pub(crate) fn single(&self) -> bool {
        self.best.is_none() && matches!(self.cands.as_slice(), [c] if !c.done)
    }

    /// With a [`single`](Scanner::single) candidate, steps it over all of `bytes` (the text at
    /// this scanner's position, none of which can start a candidate) if every step leads to
    /// an ordinary state and the last one stays [undecided at the end of the
    /// buffer](Pattern::undecided_at_end) (so nothing would be decided, at any byte or at the
    /// end of the buffer). Returns whether it did; otherwise nothing changed.
    pub(crate) fn glide_all(&mut self, pat: &Pattern, bytes: &[u8]) -> bool {
        let Some(c) = self.cands.first_mut() else {
            return false;
        };
        let mut sid = c.sid;
        for &byte in bytes {
            sid = pat.next(sid, byte);
            if pat.is_special(sid) {
                return false;
            }
        }
        if !pat.undecided_at_end(sid) {
            return false;
        }
        c.sid = sid;
        self.pos += bytes.len();
        true
    }

    /// The light path over a feed: `bytes` is the text at absolute position `from` (the end
    /// of the buffer before the feed, up to which this scanner has scanned), `look_behind`
    /// the byte before it, bit `i` of `starts` set where byte `i` can start some watched
    /// delimiter (feeds are at most 64 bytes). Steps every live candidate over the feed, and starts and steps
    /// the candidates the feed begins, as [`run`](Scanner::run) would, as long as nothing
    /// gets decided: returns `false`, changing nothing, if something is decided or held, a
    /// candidate reaches a match (or another special state), or one ends at the end of the
    /// buffer in a state that [`settle`](Scanner::settle) would decide (or if more than a
    /// few candidates are involved).
    pub(crate) fn light(
        &mut self,
        pat: &Pattern,
        bytes: &[u8],
        from: usize,
        look_behind: Option<u8>,
        mut starts: u64,
    ) -> bool {
        const MAX: usize = 8;
        if self.best.is_some() || self.cands.len() > MAX {
            return false;
        }
        let mut sids = [StateID::ZERO; MAX];
        for (c, slot) in self.cands.iter().zip(sids.iter_mut()) {
            if c.done {
                return false;
            }
            match light_run(pat, c.sid, bytes) {
                Some(sid) if !(c.match_end.is_some() && pat.is_dead(sid)) => *slot = sid,
                _ => return false,
            }
        }
        let mut new = [(0usize, StateID::ZERO); 4];
        let mut fresh = 0;
        while starts != 0 {
            let i = starts.trailing_zeros() as usize;
            starts &= starts - 1;
            let Some(&byte) = bytes.get(i) else {
                return false;
            };
            if (byte as i8) >= -0x40 && pat.can_start(byte) && pat.may_start_in_feed(bytes, i) {
                let lb = match i.checked_sub(1) {
                    Some(j) => bytes.get(j).copied(),
                    None => look_behind,
                };
                let rest = bytes.get(i..).unwrap_or_default();
                let (Some(sid), Some(slot)) =
                    (light_run(pat, pat.start(lb), rest), new.get_mut(fresh))
                else {
                    return false;
                };
                *slot = (from + i, sid);
                fresh += 1;
            }
        }
        let mut died = false;
        for (c, sid) in self.cands.iter_mut().zip(sids) {
            c.sid = sid;
            c.done = pat.is_dead(sid);
            died |= c.done;
        }
        if died {
            self.cands.retain(|c| !c.done);
        }
        for &(start, sid) in new.get(..fresh).unwrap_or_default() {
            if !pat.is_dead(sid) {
                self.cands.push(Cand {
                    start,
                    sid,
                    match_end: None,
                    done: false,
                });
            }
        }
        self.dedup();
        self.pos = from + bytes.len();
        true
    }

    /// Whether nothing is in flight (no candidate, no decided match).
    pub(crate) fn idle(&self) -> bool {
        self.best.is_none() && self.cands.is_empty()
    }

    /// Moves an idle scanner to `pos` (the caller knows no match can start before it).
    pub(crate) fn skip_to(&mut self, pos: usize) {
        if self.idle() {
            self.pos = self.pos.max(pos);
        }
    }

    /// The next absolute position this scanner will look at.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Steps over `buf` (whose first byte is at absolute `base`) up to absolute position
    /// `until`, starting candidates only at positions up to `limit` (a decided match of another
    /// pattern at `limit` beats anything starting later). Stops early once a match is
    /// decided. Returns whether this scanner holds a decided match.
    pub(crate) fn run(
        &mut self,
        pat: &Pattern,
        buf: &[u8],
        base: usize,
        until: usize,
        limit: usize,
        no_empty: Option<usize>,
    ) -> bool {
        while self.pos < until && self.best.is_none() {
            if self.cands.is_empty() {
                // Nothing in flight: jump to the next byte that can start a match.
                let stop = until.min(limit.saturating_add(1));
                let from = self.pos.saturating_sub(base);
                match pat.next_start(buf, from, stop.saturating_sub(base)) {
                    Some(at) => self.pos = base + at,
                    None => {
                        self.pos = until;
                        break;
                    }
                }
            }
            if self.cands.len() == 1 {
                self.glide(pat, buf, base, until, limit);
                if self.pos >= until {
                    break;
                }
            }
            let rel = self.pos.saturating_sub(base);
            let Some(&byte) = buf.get(rel) else {
                self.pos = until;
                break;
            };
            let look_behind = rel.checked_sub(1).and_then(|i| buf.get(i)).copied();
            let start = (byte as i8) >= -0x40
                && self.pos <= limit
                && pat.can_start(byte)
                && pat.may_start_at(buf, rel);
            self.step(pat, self.pos, byte, look_behind, start, no_empty);
            self.pos += 1;
        }
        self.best.is_some()
    }
    /// The decided match, if any.
    pub(crate) fn best(&self) -> Option<Found> {
        self.best
    }

    /// Start of the earliest undecided candidate (text from here on must be held back).
    pub(crate) fn pending_start(&self) -> Option<usize> {
        if self.best.is_some() {
            return None;
        }
        self.cands.first().map(|c| c.start)
    }

    /// Where this pattern could still match from: the decided match or the earliest candidate.
    pub(crate) fn frontier(&self) -> Option<usize> {
        self.best.map(|f| f.start).or_else(|| self.pending_start())
    }

    /// Steps over the byte at absolute position `pos`. `look_behind` is the previous byte
    /// (`None` at the start of the stream), `start` whether a candidate starts at `pos` (a
    /// character boundary where an attempt can survive, see [`Pattern::next_start`]),
    /// `no_empty` a position where an empty match is not allowed. Returns whether a match
    /// became decided.
    fn step(
        &mut self,
        pat: &Pattern,
        pos: usize,
        byte: u8,
        look_behind: Option<u8>,
        start: bool,
        no_empty: Option<usize>,
    ) -> bool {
        if self.best.is_some() {
            return false;
        }
        if start {
            self.cands.push(Cand {
                start: pos,
                sid: pat.start(look_behind),
                match_end: None,
                done: false,
            });
        }
        let mut changed = false;
        for c in self.cands.iter_mut().filter(|c| !c.done) {
            c.sid = pat.next(c.sid, byte);
            if pat.is_match(c.sid) && !(pos == c.start && no_empty == Some(pos)) {
                c.match_end = Some(pos);
            }
            if pat.is_dead(c.sid) {
                c.done = true;
                changed = true;
            }
        }
        self.dedup();
        changed && self.resolve()
    }

    /// Applies the end of input at absolute position `end`: every candidate is decided.
    pub(crate) fn finish(
        &mut self,
        pat: &Pattern,
        end: usize,
        look_behind: Option<u8>,
        no_empty: Option<usize>,
    ) -> bool {
        if self.best.is_some() {
            return false;
        }
        self.cands.push(Cand {
            start: end,
            sid: pat.start(look_behind),
            match_end: None,
            done: false,
        });
        for c in self.cands.iter_mut().filter(|c| !c.done) {
            c.sid = pat.next_eoi(c.sid);
            if pat.is_match(c.sid) && !(end == c.start && no_empty == Some(end)) {
                c.match_end = Some(end);
            }
            c.done = true;
        }
        self.resolve()
    }

    /// At the end of the buffer (more text may follow): candidates whose state can neither
    /// extend their match nor produce a later one are decided now, except a match ending
    /// right there that what follows may still confirm or refute (`x$`), or of a pattern whose
    /// matches are not [final at the end of the buffer](Pattern::edge_final). Returns whether a
    /// match became decided.
    pub(crate) fn settle(&mut self, pat: &Pattern, end: usize, no_empty: Option<usize>) -> bool {
        if self.best.is_some() {
            return false;
        }
        let mut changed = false;
        let edge_final = pat.edge_final();
        for c in self.cands.iter_mut().filter(|c| !c.done) {
            let info = pat.end_info(c.sid);
            let excluded = end == c.start && no_empty == Some(end);
            let ends_here = info.ends_here && !excluded;
            // Undecided: the attempt can still extend; or a match ending here depends on what
            // follows (`x$` waits for the end of the stream); or it ends here but waits for
            // the next byte or the end of the stream anyway (see `Pattern::edge_final`).
            let waits = info.extendable
                || (!ends_here && info.may_end_here && !excluded)
                || (ends_here && !edge_final);
            if waits {
                continue;
            }
            if ends_here {
                c.match_end = Some(end);
            }
            c.done = true;
            changed = true;
        }
        changed && self.resolve()
    }

    /// Drops live candidates that share a DFA state with an earlier one (unless the later one
    /// holds a match the earlier lacks).
    fn dedup(&mut self) {
        if self.cands.len() < 2 {
            return;
        }
        let mut i = 1;
        while i < self.cands.len() {
            let (earlier, rest) = self.cands.split_at(i);
            let redundant = match rest.first() {
                Some(c) if !c.done => earlier.iter().any(|e| {
                    !e.done && e.sid == c.sid && (e.match_end.is_some() || c.match_end.is_none())
                }),
                _ => false,
            };
            if redundant {
                self.cands.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Pops finished candidates from the front; a finished one with a match decides.
    fn resolve(&mut self) -> bool {
        self.cands.retain(|c| !c.done || c.match_end.is_some());
        match self.cands.first() {
            Some(c) if c.done => {
                if let Some(end) = c.match_end {
                    self.best = Some(Found {
                        start: c.start,
                        end,
                    });
                    self.cands.clear();
                    return true;
                }
                false
            }
            _ => false,
        }
    }
}
