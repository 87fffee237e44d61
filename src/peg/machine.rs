//! The interpreter: an explicit-stack PEG machine that can suspend at the end of the input
//! and resume after more input is appended (see the module docs of [`peg`](super)).

use super::error::{line_column, ParseError, ParseErrorKind};
use super::grammar::{Grammar, Node, Parser, TagId};
use crate::json::{Scan, Scanner};
use foldhash::fast::FixedState;
use std::collections::HashMap;

/// Successful rule results with more AST nodes than this are not memoized.
const MEMO_NODE_LIMIT: usize = 64;
/// A leaf resumed on at most this many new bytes first checks with one `memchr` whether a
/// delimiter can start in them at all (the common streaming step); longer texts go straight to
/// the search, which would otherwise scan them twice.
const SHORT_STEP: usize = 64;
/// At most this many distinct expectations are kept for an error.
const MAX_EXPECTED: usize = 16;

/// The state of a parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// The root parser matched the text `0..end`. Final: more input cannot change it.
    Success {
        /// End (exclusive) of the match.
        end: usize,
    },
    /// The input ended where more input could change the result (partial mode only).
    NeedMore,
    /// The input does not match. Final. The error has the details.
    Failure,
}

impl Status {
    /// Whether this is [`Status::Success`].
    pub fn is_success(self) -> bool {
        matches!(self, Status::Success { .. })
    }
    /// Whether this is [`Status::NeedMore`].
    pub fn is_need_more(self) -> bool {
        self == Status::NeedMore
    }
    /// Whether this is [`Status::Failure`].
    pub fn is_failure(self) -> bool {
        self == Status::Failure
    }
}

/// A completed AST node in post-order: its descendants are `first..self` in the node vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawNode {
    pub(crate) tag: TagId,
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) first: u32,
}

/// Resumable state of a leaf matcher that hit the end of the input.
#[derive(Clone, Debug)]
enum Leaf {
    Fresh,
    /// Scanning position (until, space).
    Pos(usize),
    /// Characters matched and position (chars).
    Count {
        count: u32,
        pos: usize,
    },
    Json(Box<Scanner>),
}

enum LeafOut {
    Ok(usize),
    Fail {
        at: usize,
        json: Option<&'static str>,
    },
    More {
        leaf: Leaf,
        progress: usize,
    },
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    node: Parser,
    start: usize,
    /// Seq: position after the last child; Repeat: position after the last iteration.
    pos: usize,
    /// AST length at entry.
    mark: u32,
    /// Seq/Choice: child index; Repeat: iterations done.
    i: u32,
    /// Innermost active rule + 1 (0: none).
    rule: u32,
}

#[derive(Clone, Debug)]
struct Pending {
    node: Parser,
    start: usize,
    leaf: Leaf,
    rule: u32,
    progress: usize,
}

#[derive(Clone, Copy, Debug)]
enum Memo {
    Fail,
    Ok { end: usize, from: u32, to: u32 },
}

enum Msg {
    Enter(Parser, usize),
    Ret(Option<usize>),
}

/// The mutable parse state for one input (the "cache"): stack, suspended leaf, AST, memo.
#[derive(Clone, Debug, Default)]
pub(crate) struct Machine {
    stack: Vec<Frame>,
    pending: Option<Pending>,
    pub(crate) ast: Vec<RawNode>,
    /// Keyed by (rule, position), with a fast fixed-seed hash: keys are small integers, at
    /// most one entry per rule and input position, so there is no hash flooding to resist.
    memo: HashMap<(u32, usize), Memo, FixedState>,
    memo_nodes: Vec<RawNode>,
    lookahead: u32,
    far: usize,
    far_rule: u32,
    expected: Vec<(Parser, Option<&'static str>)>,
    depth_error: Option<usize>,
    started: bool,
    done: Option<Status>,
    pub(crate) work: u64,
    /// The last [`run`](Self::run) only resumed the suspended leaf, which suspended again: the
    /// stack and the completed nodes are unchanged, only the frontier moved.
    pub(crate) leaf_only: bool,
}

impl Machine {
    /// Runs (or resumes) the parse over `input` (valid UTF-8; only ever appended to between
    /// calls). `eof`: the input is final.
    #[inline]
    pub(crate) fn run(&mut self, g: &Grammar, input: &[u8], eof: bool) -> Status {
        self.leaf_only = false;
        if let Some(s) = self.done {
            return s;
        }
        if !eof && self.step_text_scan(g, input) {
            self.leaf_only = true;
            return Status::NeedMore;
        }
        self.run_general(g, input, eof)
    }

    #[inline(never)]
    fn run_general(&mut self, g: &Grammar, input: &[u8], eof: bool) -> Status {
        let mut msg = if let Some(p) = self.pending.take() {
            match self.leaf(g, p.node, p.start, p.leaf, p.rule, input, eof) {
                Some(m) => m,
                None => {
                    self.leaf_only = true;
                    return Status::NeedMore;
                }
            }
        } else if !self.started {
            self.started = true;
            // Room for a typical turn's nesting and nodes without a chain of small regrowths.
            self.stack.reserve(32);
            self.ast.reserve(32);
            self.expected.reserve(MAX_EXPECTED);
            Msg::Enter(g.root, 0)
        } else {
            return Status::NeedMore;
        };
        loop {
            self.work += 1;
            msg = match msg {
                Msg::Enter(node, pos) => match self.enter(g, node, pos, input, eof) {
                    Some(m) => m,
                    None if self.depth_error.is_some() => return self.finish(Status::Failure),
                    None => return Status::NeedMore,
                },
                Msg::Ret(r) => {
                    if self.stack.is_empty() {
                        return self.finish(match r {
                            Some(end) => Status::Success { end },
                            None => Status::Failure,
                        });
                    }
                    self.ret(g, r)
                }
            };
        }
    }

    fn finish(&mut self, s: Status) -> Status {
        self.done = Some(s);
        self.stack.clear();
        self.pending = None;
        if s != Status::Failure {
            self.expected.clear();
        }
        s
    }

    fn rule(&self) -> u32 {
        self.stack.last().map_or(0, |f| f.rule)
    }

    fn push(&mut self, node: Parser, pos: usize, rule: u32, g: &Grammar) -> bool {
        if self.stack.len() >= g.max_depth {
            self.depth_error = Some(pos);
            return false;
        }
        self.stack.push(Frame {
            node,
            start: pos,
            pos,
            mark: self.ast.len() as u32,
            i: 0,
            rule,
        });
        true
    }

    /// Starts `node` at `pos`. `None`: suspended (need more) or depth error.
    fn enter(
        &mut self,
        g: &Grammar,
        node: Parser,
        pos: usize,
        input: &[u8],
        eof: bool,
    ) -> Option<Msg> {
        let rule = self.rule();
        let first = match g.node(node) {
            Node::Seq(ps) => match ps.first() {
                None => return Some(Msg::Ret(Some(pos))),
                Some(&p) => p,
            },
            Node::Choice(ps) => match ps.first() {
                None => return Some(Msg::Ret(None)),
                Some(&p) => p,
            },
            Node::Repeat { max: Some(0), .. } => return Some(Msg::Ret(Some(pos))),
            Node::Repeat { p, .. } | Node::Atomic(p) | Node::Tag { p, .. } => *p,
            Node::Peek(p) | Node::Negate(p) => {
                self.lookahead += 1;
                *p
            }
            Node::Schema { p, .. } => return Some(Msg::Enter(*p, pos)),
            Node::Ref(r) => {
                match self.memo.get(&(*r, pos)) {
                    Some(Memo::Fail) => return Some(Msg::Ret(None)),
                    Some(&Memo::Ok { end, from, to }) => {
                        let mark = self.ast.len() as u32;
                        let nodes = self
                            .memo_nodes
                            .get(from as usize..to as usize)
                            .unwrap_or(&[]);
                        self.ast.extend(nodes.iter().map(|n| RawNode {
                            first: n.first + mark,
                            ..*n
                        }));
                        return Some(Msg::Ret(Some(end)));
                    }
                    None => {}
                }
                let body = g.rules.get(*r as usize)?.body;
                if !self.push(node, pos, r + 1, g) {
                    return None;
                }
                return Some(Msg::Enter(body, pos));
            }
            _ => return self.leaf(g, node, pos, Leaf::Fresh, rule, input, eof),
        };
        if !self.push(node, pos, rule, g) {
            return None;
        }
        Some(Msg::Enter(first, pos))
    }

    /// Handles a child's result in the top frame.
    fn ret(&mut self, g: &Grammar, r: Option<usize>) -> Msg {
        let Some(f) = self.stack.last_mut() else {
            return Msg::Ret(r);
        };
        let f = *f;
        let pop = |m: &mut Machine| {
            m.stack.pop();
        };
        match g.node(f.node) {
            Node::Seq(ps) => match r {
                Some(end) => {
                    let i = f.i as usize + 1;
                    match ps.get(i) {
                        Some(&next) => {
                            if let Some(top) = self.stack.last_mut() {
                                top.i += 1;
                                top.pos = end;
                            }
                            Msg::Enter(next, end)
                        }
                        None => {
                            pop(self);
                            Msg::Ret(Some(end))
                        }
                    }
                }
                None => {
                    self.ast.truncate(f.mark as usize);
                    pop(self);
                    Msg::Ret(None)
                }
            },
            Node::Choice(ps) => match r {
                Some(end) => {
                    pop(self);
                    Msg::Ret(Some(end))
                }
                None => {
                    self.ast.truncate(f.mark as usize);
                    let i = f.i as usize + 1;
                    match ps.get(i) {
                        Some(&next) => {
                            if let Some(top) = self.stack.last_mut() {
                                top.i += 1;
                            }
                            Msg::Enter(next, f.start)
                        }
                        None => {
                            pop(self);
                            Msg::Ret(None)
                        }
                    }
                }
            },
            &Node::Repeat { p, min, max } => match r {
                Some(end) => {
                    let count = f.i.saturating_add(1);
                    if end == f.pos || max.is_some_and(|m| count >= m) {
                        pop(self);
                        return Msg::Ret(Some(end));
                    }
                    if let Some(top) = self.stack.last_mut() {
                        top.i = count;
                        top.pos = end;
                    }
                    Msg::Enter(p, end)
                }
                None => {
                    pop(self);
                    if f.i >= min {
                        Msg::Ret(Some(f.pos))
                    } else {
                        self.ast.truncate(f.mark as usize);
                        Msg::Ret(None)
                    }
                }
            },
            Node::Peek(_) => {
                self.lookahead = self.lookahead.saturating_sub(1);
                self.ast.truncate(f.mark as usize);
                pop(self);
                Msg::Ret(r.map(|_| f.start))
            }
            Node::Negate(_) => {
                self.lookahead = self.lookahead.saturating_sub(1);
                self.ast.truncate(f.mark as usize);
                pop(self);
                match r {
                    Some(_) => {
                        self.record(f.start, f.node, None, f.rule);
                        Msg::Ret(None)
                    }
                    None => Msg::Ret(Some(f.start)),
                }
            }
            &Node::Tag { tag, .. } => {
                pop(self);
                if let Some(end) = r {
                    self.ast.push(RawNode {
                        tag,
                        start: f.start,
                        end,
                        first: f.mark,
                    });
                }
                Msg::Ret(r)
            }
            &Node::Ref(rule) => {
                pop(self);
                let memo = match r {
                    None => Some(Memo::Fail),
                    Some(end) => {
                        let nodes = self.ast.get(f.mark as usize..).unwrap_or(&[]);
                        (nodes.len() <= MEMO_NODE_LIMIT).then(|| {
                            let from = self.memo_nodes.len() as u32;
                            self.memo_nodes.extend(nodes.iter().map(|n| RawNode {
                                first: n.first.saturating_sub(f.mark),
                                ..*n
                            }));
                            Memo::Ok {
                                end,
                                from,
                                to: self.memo_nodes.len() as u32,
                            }
                        })
                    }
                };
                if let Some(m) = memo {
                    self.memo.insert((rule, f.start), m);
                }
                Msg::Ret(r)
            }
            _ => {
                // Atomic and anything unexpected: transparent.
                pop(self);
                Msg::Ret(r)
            }
        }
    }

    /// The common streaming step, done in place: the suspended leaf scans text for a
    /// delimiter (`until`, `until_one_of`) and none of the few new bytes can start one, so it
    /// only advances to the end of the input (what [`run_leaf`](Self::run_leaf) would do,
    /// without moving the suspended state out and back). Returns whether it applied.
    #[inline]
    fn step_text_scan(&mut self, g: &Grammar, input: &[u8]) -> bool {
        let Some(p) = self.pending.as_mut() else {
            return false;
        };
        let Leaf::Pos(pos) = p.leaf else {
            return false;
        };
        let hay = input.get(pos..).unwrap_or_default();
        if hay.len() > SHORT_STEP {
            return false;
        }
        // The same work units as `run_leaf` counts for this step.
        let work = match g.node(p.node) {
            Node::Until(finder) => finder
                .needle()
                .first()
                .filter(|&&d0| !contains_any(hay, &[d0]))
                .map(|_| hay.len() as u64),
            Node::UntilOneOf { firsts, .. } if !contains_any(hay, firsts) => {
                Some(hay.len() as u64 + 1)
            }
            _ => None,
        };
        let Some(work) = work else {
            return false;
        };
        p.leaf = Leaf::Pos(input.len());
        p.progress = input.len();
        self.work += work;
        true
    }

    fn record(&mut self, at: usize, node: Parser, json: Option<&'static str>, rule: u32) {
        if self.lookahead > 0 || at < self.far {
            return;
        }
        if at > self.far {
            self.far = at;
            self.expected.clear();
            self.far_rule = rule;
        }
        if self.expected.len() < MAX_EXPECTED && !self.expected.contains(&(node, json)) {
            self.expected.push((node, json));
        }
    }

    /// Runs a leaf; `None` means suspended (the pending leaf is saved).
    #[allow(clippy::too_many_arguments)]
    fn leaf(
        &mut self,
        g: &Grammar,
        node: Parser,
        start: usize,
        leaf: Leaf,
        rule: u32,
        input: &[u8],
        eof: bool,
    ) -> Option<Msg> {
        match self.run_leaf(g, node, start, leaf, input, eof) {
            LeafOut::Ok(end) => Some(Msg::Ret(Some(end))),
            LeafOut::Fail { at, json } => {
                self.record(at, node, json, rule);
                Some(Msg::Ret(None))
            }
            LeafOut::More { leaf, progress } => {
                self.pending = Some(Pending {
                    node,
                    start,
                    leaf,
                    rule,
                    progress,
                });
                None
            }
        }
    }

    fn run_leaf(
        &mut self,
        g: &Grammar,
        node: Parser,
        start: usize,
        leaf: Leaf,
        input: &[u8],
        eof: bool,
    ) -> LeafOut {
        let len = input.len();
        let more = |leaf: Leaf, progress: usize| {
            if eof {
                LeafOut::Fail {
                    at: len,
                    json: None,
                }
            } else {
                LeafOut::More { leaf, progress }
            }
        };
        match g.node(node) {
            Node::Eps => LeafOut::Ok(start),
            Node::Start if start == 0 => LeafOut::Ok(0),
            Node::Start => LeafOut::Fail {
                at: start,
                json: None,
            },
            Node::End if start == len => {
                if eof {
                    LeafOut::Ok(start)
                } else {
                    LeafOut::More {
                        leaf,
                        progress: start,
                    }
                }
            }
            Node::End => LeafOut::Fail {
                at: start,
                json: None,
            },
            Node::Literal(lit) => self.literal(lit, start, input, eof),
            Node::JsonKey { json, python, .. } => {
                let form = if g.flavour == crate::json::Flavour::Python
                    && input.get(start) == Some(&b'\'')
                {
                    python
                } else {
                    json
                };
                self.literal(form, start, input, eof)
            }
            Node::Any => match char_len(input, start) {
                Some(n) => LeafOut::Ok(start + n),
                None => more(leaf, start),
            },
            Node::Rest => {
                if eof {
                    LeafOut::Ok(len)
                } else {
                    LeafOut::More {
                        leaf,
                        progress: len,
                    }
                }
            }
            Node::Space => {
                let mut pos = match leaf {
                    Leaf::Pos(p) => p,
                    _ => start,
                };
                let from = pos;
                while input
                    .get(pos)
                    .is_some_and(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                {
                    pos += 1;
                }
                self.work += (pos - from) as u64;
                if pos == len && !eof {
                    LeafOut::More {
                        leaf: Leaf::Pos(pos),
                        progress: pos,
                    }
                } else {
                    LeafOut::Ok(pos)
                }
            }
            Node::Chars { class, min, max } => {
                let (mut count, mut pos) = match leaf {
                    Leaf::Count { count, pos } => (count, pos),
                    _ => (0, start),
                };
                let from = pos;
                let out = loop {
                    if max.is_some_and(|m| count >= m) {
                        break LeafOut::Ok(pos);
                    }
                    match decode(input, pos) {
                        Some((c, n)) if class.matches(c) => {
                            count = count.saturating_add(1);
                            pos += n;
                        }
                        Some(_) if count >= *min => break LeafOut::Ok(pos),
                        Some(_) => {
                            break LeafOut::Fail {
                                at: pos,
                                json: None,
                            }
                        }
                        None if eof && count >= *min => break LeafOut::Ok(pos),
                        None => break more(Leaf::Count { count, pos }, pos),
                    }
                };
                self.work += (pos - from) as u64;
                out
            }
            Node::Until(finder) => {
                let from = match leaf {
                    Leaf::Pos(p) => p,
                    _ => start,
                };
                let hay = input.get(from..).unwrap_or(&[]);
                self.work += hay.len() as u64;
                // The common streaming step: none of the new bytes can start the delimiter, so
                // there is neither a match nor a partial one (one `memchr`, no searcher set-up).
                // Only for short steps: on a long text the searcher below scans it anyway.
                if let (true, Some(&d0)) = (hay.len() <= SHORT_STEP, finder.needle().first()) {
                    if !contains_any(hay, &[d0]) {
                        return scanned_to_end(len, eof);
                    }
                }
                match finder.find(hay) {
                    Some(i) => LeafOut::Ok(from + i),
                    None if eof => LeafOut::Ok(len),
                    None => {
                        let d = finder.needle();
                        let maybe = first_partial(input, start.max(from), d);
                        LeafOut::More {
                            leaf: Leaf::Pos(maybe),
                            progress: maybe,
                        }
                    }
                }
            }
            Node::UntilOneOf { delimiters, firsts } => {
                let mut pos = match leaf {
                    Leaf::Pos(p) => p,
                    _ => start,
                };
                let from = pos;
                let hay = input.get(pos..).unwrap_or(&[]);
                let any_first = hay.len() > SHORT_STEP || contains_any(hay, firsts);
                if !any_first {
                    // No delimiter can start in the new bytes: no match, no partial one.
                    self.work += hay.len() as u64 + 1;
                    return scanned_to_end(len, eof);
                }
                if let Some(out) = until_suffix_family(delimiters, input, pos, eof) {
                    let to = match out {
                        LeafOut::Ok(end) => end,
                        _ => len,
                    };
                    self.work += to.saturating_sub(from) as u64 + 1;
                    return out;
                }
                let out = loop {
                    let hay = input.get(pos..).unwrap_or(&[]);
                    let cand = match **firsts {
                        [a] => memchr::memchr(a, hay),
                        [a, b] => memchr::memchr2(a, b, hay),
                        [a, b, c] => memchr::memchr3(a, b, c, hay),
                        _ => hay.iter().position(|b| firsts.binary_search(b).is_ok()),
                    };
                    let Some(i) = cand else {
                        break scanned_to_end(len, eof);
                    };
                    pos += i;
                    let at = input.get(pos..).unwrap_or(&[]);
                    if delimiters.iter().any(|d| at.starts_with(d)) {
                        break LeafOut::Ok(pos);
                    }
                    let partial = delimiters.iter().any(|d| d.starts_with(at));
                    if partial && !eof {
                        break LeafOut::More {
                            leaf: Leaf::Pos(pos),
                            progress: pos,
                        };
                    }
                    pos += 1;
                };
                self.work += (pos - from) as u64 + 1;
                out
            }
            Node::Json(target) => {
                let mut scanner = match leaf {
                    Leaf::Json(s) => s,
                    _ => Box::new(
                        Scanner::new(g.flavour, *target, start).with_max_depth(g.json_max_depth),
                    ),
                };
                let before = scanner.work();
                let scan = scanner.resume(input, eof);
                self.work += scanner.work() - before;
                match scan {
                    Scan::Complete(end) => LeafOut::Ok(end),
                    Scan::NeedMore => LeafOut::More {
                        leaf: Leaf::Json(scanner),
                        progress: len,
                    },
                    Scan::Fail { offset, expected } => LeafOut::Fail {
                        at: offset,
                        json: Some(expected),
                    },
                }
            }
            // Composite nodes never reach here; a stray one fails.
            _ => LeafOut::Fail {
                at: start,
                json: None,
            },
        }
    }

    fn literal(&mut self, lit: &[u8], start: usize, input: &[u8], eof: bool) -> LeafOut {
        let avail = input.get(start..).unwrap_or(&[]);
        let n = lit.iter().zip(avail).take_while(|(a, b)| a == b).count();
        self.work += n as u64;
        if n == lit.len() {
            LeafOut::Ok(start + n)
        } else if n == avail.len() && !eof {
            LeafOut::More {
                leaf: Leaf::Fresh,
                progress: start,
            }
        } else {
            LeafOut::Fail {
                at: start + n,
                json: None,
            }
        }
    }

    /// The error for a failed parse.
    pub(crate) fn error(&self, g: &Grammar, input: &[u8]) -> Option<ParseError> {
        if self.done != Some(Status::Failure) {
            return None;
        }
        let (kind, offset) = match self.depth_error {
            Some(pos) => (ParseErrorKind::DepthLimit, pos),
            None => (ParseErrorKind::NoMatch, self.far),
        };
        let (line, column) = line_column(input, offset);
        let expected = if kind == ParseErrorKind::DepthLimit {
            Vec::new()
        } else {
            let mut out: Vec<String> = Vec::new();
            for &(node, json) in &self.expected {
                let e = super::dump::expectation(g, node, json);
                if !out.contains(&e) {
                    out.push(e);
                }
            }
            out
        };
        let rule = (self.far_rule > 0 && kind == ParseErrorKind::NoMatch)
            .then(|| {
                g.rules
                    .get(self.far_rule as usize - 1)
                    .map(|r| r.name.to_string())
            })
            .flatten();
        Some(ParseError {
            kind,
            offset,
            line,
            column,
            expected,
            rule,
            grammar: g.name.as_deref().map(str::to_owned),
        })
    }

    /// How far the suspended leaf got (the end of every open tag), if one is suspended.
    pub(crate) fn frontier(&self, g: &Grammar) -> Option<usize> {
        self.pending.as_ref().map(|p| self.open_end(g, p.progress))
    }

    /// Where open tags end when the suspended leaf got to `progress`: there, or where the
    /// outermost undecided lookahead started (what a lookahead reads is no part of any open
    /// tag: it consumes nothing).
    fn open_end(&self, g: &Grammar, progress: usize) -> usize {
        self.stack
            .iter()
            .find(|f| matches!(g.node(f.node), Node::Peek(_) | Node::Negate(_)))
            .map_or(progress, |f| progress.min(f.start))
    }

    /// The AST in post-order, including open tags as partial nodes (end = the suspended
    /// leaf's progress), minus anything under an open `atomic` or an undecided lookahead
    /// (`peek`/`negate`: whatever it matches is dropped once it is decided, so showing it
    /// meanwhile would make nodes vanish).
    pub(crate) fn raw_ast(&self, g: &Grammar) -> (Vec<RawNode>, usize) {
        self.raw_ast_from(g, 0)
    }

    /// The number of leading completed nodes that are final: no frame still on the stack can
    /// remove them, no open tag can still wrap them, and no lookahead or atomic frame hides
    /// them. They form whole top-level subtrees.
    ///
    /// Nodes are only removed by truncation to a frame's mark: a sequence or repetition that
    /// fails, a choice whose alternative fails, a lookahead when it ends. Going from the
    /// innermost running part (the suspended leaf) outwards, each frame is asked whether what
    /// runs inside it may still fail and whether it may then fail itself (using the grammar's
    /// [`infallible`](Grammar::is_infallible) nodes: a sequence whose remaining children
    /// cannot fail, a repetition that has its minimum, a choice with an infallible
    /// alternative left do not). The root failing fails the parse, which ends the session.
    fn settled(&self, g: &Grammar) -> usize {
        let mut settled = self.ast.len();
        let mut inner_may_fail = self
            .pending
            .as_ref()
            .is_some_and(|p| !g.is_infallible(p.node));
        for (depth, f) in self.stack.iter().enumerate().rev() {
            // (may remove or change the nodes after its mark, may fail itself)
            let (unsettles, may_fail) = match g.node(f.node) {
                Node::Seq(ps) => {
                    let fails =
                        inner_may_fail || after(ps, f.i).iter().any(|&p| !g.is_infallible(p));
                    // The root failing fails the parse: nothing to keep then.
                    (fails && depth > 0, fails)
                }
                Node::Choice(ps) => {
                    let rescued = after(ps, f.i).iter().any(|&p| g.is_infallible(p));
                    (inner_may_fail && depth > 0, inner_may_fail && !rescued)
                }
                Node::Repeat { min, .. } => {
                    let fails = inner_may_fail && f.i < *min;
                    (fails && depth > 0, fails)
                }
                // Lookaheads drop what they matched; atomic parts are hidden until done; an
                // open tag will wrap what follows its mark.
                Node::Peek(_) | Node::Atomic(_) | Node::Tag { .. } => (true, inner_may_fail),
                Node::Negate(_) => (true, true),
                _ => (false, inner_may_fail),
            };
            if unsettles {
                settled = settled.min(f.mark as usize);
            }
            inner_may_fail = may_fail;
        }
        settled
    }

    /// A whole-subtree boundary at or before `hint` (and before the unsettled nodes): the
    /// post-order index where a window of the AST may start.
    pub(crate) fn window_start(&self, g: &Grammar, hint: usize) -> usize {
        let mut at = self.settled(g);
        // Step back over whole top-level subtrees (post-order: the subtree ending at
        // `at - 1` starts at its `first`) until at or before the hint.
        while at > hint {
            let first = self
                .ast
                .get(at - 1)
                .map_or(0, |n| (n.first as usize).min(at - 1));
            at = first;
        }
        at
    }

    /// [`raw_ast`](Self::raw_ast) without the first `base` completed nodes (a
    /// [`window_start`](Self::window_start)): `first` fields are relative to `base`.
    pub(crate) fn raw_ast_from(&self, g: &Grammar, base: usize) -> (Vec<RawNode>, usize) {
        let rebase = |n: &RawNode| RawNode {
            first: n.first.saturating_sub(base as u32),
            ..*n
        };
        let mut nodes: Vec<RawNode> = self
            .ast
            .get(base..)
            .unwrap_or_default()
            .iter()
            .map(rebase)
            .collect();
        let Some(p) = &self.pending else {
            let n = nodes.len();
            return (nodes, n);
        };
        let atomic = self.stack.iter().position(|f| {
            matches!(
                g.node(f.node),
                Node::Atomic(_) | Node::Peek(_) | Node::Negate(_)
            )
        });
        let open = match atomic {
            Some(i) => {
                let mark = self.stack.get(i).map_or(0, |f| f.mark as usize);
                nodes.truncate(mark.saturating_sub(base));
                self.stack.get(..i).unwrap_or(&[])
            }
            None => &self.stack[..],
        };
        let progress = self.open_end(g, p.progress);
        let complete = nodes.len();
        for f in open.iter().rev() {
            if let &Node::Tag { tag, .. } = g.node(f.node) {
                nodes.push(RawNode {
                    tag,
                    start: f.start,
                    end: progress.max(f.start),
                    first: f.mark.saturating_sub(base as u32),
                });
            }
        }
        (nodes, complete)
    }
}

/// A text scan that reached the end of the input `0..len` without finding its delimiter:
/// done at the end of input, else suspended there.
fn scanned_to_end(len: usize, eof: bool) -> LeafOut {
    if eof {
        LeafOut::Ok(len)
    } else {
        LeafOut::More {
            leaf: Leaf::Pos(len),
            progress: len,
        }
    }
}

/// The children after the `i`-th.
fn after(ps: &[Parser], i: u32) -> &[Parser] {
    ps.get(i as usize + 1..).unwrap_or_default()
}

/// Length of the UTF-8 character at `pos` of valid UTF-8 `input`, if complete.
fn char_len(input: &[u8], pos: usize) -> Option<usize> {
    let &b = input.get(pos)?;
    let n = match b {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    };
    (pos + n <= input.len()).then_some(n)
}

/// Decodes the character at `pos` of valid UTF-8 `input`.
#[inline]
fn decode(input: &[u8], pos: usize) -> Option<(char, usize)> {
    let &b = input.get(pos)?;
    if b < 0x80 {
        return Some((char::from(b), 1));
    }
    let n = char_len(input, pos)?;
    let s = std::str::from_utf8(input.get(pos..pos + n)?).ok()?;
    s.chars().next().map(|c| (c, n))
}

/// Whether `hay` (a short streaming step, at most [`SHORT_STEP`] bytes) holds one of the
/// sorted bytes `firsts` (true when there are more than three: the caller then searches).
/// Steps of a few bytes (a token) are checked inline: a `memchr` call and its dispatch
/// cost more than the loop.
#[inline]
fn contains_any(hay: &[u8], firsts: &[u8]) -> bool {
    const INLINE: usize = 16;
    match *firsts {
        [a] if hay.len() <= INLINE => hay.contains(&a),
        [a, b] if hay.len() <= INLINE => hay.iter().any(|&x| x == a || x == b),
        [a, b, c] if hay.len() <= INLINE => hay.iter().any(|&x| x == a || x == b || x == c),
        [a] => memchr::memchr(a, hay).is_some(),
        [a, b] => memchr::memchr2(a, b, hay).is_some(),
        [a, b, c] => memchr::memchr3(a, b, c, hay).is_some(),
        _ => true,
    }
}

/// The first position `>= from` where a proper prefix of `d` ends the input (or
/// `input.len()`): the earliest place a delimiter could still start.
fn first_partial(input: &[u8], from: usize, d: &[u8]) -> usize {
    let len = input.len();
    let lo = len.saturating_sub(d.len().saturating_sub(1)).max(from);
    let Some(&d0) = d.first() else {
        return len;
    };
    let mut pos = lo;
    while let Some(i) = input.get(pos..).and_then(|t| memchr::memchr(d0, t)) {
        let at = pos + i;
        if d.starts_with(input.get(at..).unwrap_or(&[])) {
            return at;
        }
        pos = at + 1;
    }
    len
}

/// `until_one_of` where the delimiters form suffix families: each ends with a *core*, the
/// shortest delimiter of its family, as in `["\n</parameter>", "</parameter>", "\n<parameter=",
/// "<parameter="]` (cores `</parameter>` and `<parameter=`). One `memmem` pass per core instead
/// of stopping at every occurrence of any delimiter's first byte (every newline, every `<`):
/// any delimiter occurrence contains its core at its end, so the first core occurrence bounds
/// the answer, a longer delimiter of the family can only start in the few bytes before it, and
/// each later core is searched only up to the best start found so far. `None`: the delimiters
/// are not such families (use the general loop).
fn until_suffix_family(
    delimiters: &[Box<[u8]>],
    input: &[u8],
    pos: usize,
    eof: bool,
) -> Option<LeafOut> {
    if delimiters.len() < 2 || delimiters.iter().any(|d| d.is_empty()) {
        return None;
    }
    // The cores: delimiters no shorter delimiter ends; each delimiter must end with one.
    let cores: Vec<&[u8]> = delimiters
        .iter()
        .filter(|d| {
            !delimiters
                .iter()
                .any(|o| o.len() < d.len() && d.ends_with(o))
        })
        .map(|d| &**d)
        .collect();
    // A family of one delimiter each is the general case: the loop is as fast.
    if cores.len() * 2 > delimiters.len() + 1 {
        return None;
    }
    let longest = delimiters.iter().map(|d| d.len()).max().unwrap_or(0);
    let len = input.len();
    let mut best: Option<usize> = None;
    for core in &cores {
        // Only an occurrence whose delimiter starts before the best so far can win.
        let end = best.map_or(len, |b| (b + longest).min(len));
        let hay = input.get(pos..end).unwrap_or_default();
        let Some(i) = memchr::memmem::find(hay, core) else {
            continue;
        };
        let at = pos + i;
        // The earliest start of a delimiter whose core part is this occurrence.
        let first = delimiters
            .iter()
            .filter(|d| d.ends_with(core))
            .filter_map(|d| {
                let s = (at + core.len()).checked_sub(d.len())?;
                (s >= pos && input.get(s..).is_some_and(|t| t.starts_with(d))).then_some(s)
            })
            .min()
            .unwrap_or(at);
        best = Some(best.map_or(first, |b| b.min(first)));
    }
    match best {
        Some(first) => Some(LeafOut::Ok(first)),
        None if eof => Some(LeafOut::Ok(len)),
        None => {
            // No complete delimiter: stop before the earliest place one may still start.
            let maybe = delimiters
                .iter()
                .map(|d| first_partial(input, pos, d))
                .min()
                .unwrap_or(len);
            Some(LeafOut::More {
                leaf: Leaf::Pos(maybe),
                progress: maybe,
            })
        }
    }
}
