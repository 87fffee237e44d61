//! Capture groups of *sequence patterns* on ASCII text, without a regex engine.
//!
//! A sequence pattern is a concatenation of literals, single classes, repetitions of a class
//! (greedy or lazy, any bounds) and capture groups around such sequences: no alternation, no
//! look-around, no repetition of a group. Delimiters and tag patterns of chat templates are
//! nearly always of this shape (`<tool_call>\s*<function=(?P<name>\w+)>`,
//! `<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>`), and reading their groups with
//! the general engines costs thousands of instructions per match (the bounded backtracker's
//! setup and visited set, or the PikeVM's thread lists); this matcher costs a few per byte.
//!
//! The shape is derived from the translated pattern's syntax tree (compiled without Unicode,
//! like the ASCII capture programs of [`super::pattern`]), so it applies only to haystacks
//! that are all ASCII, where the classes agree with their Unicode forms. It backtracks in
//! priority order (greedy: longest first; lazy: shortest first), which finds exactly the
//! leftmost-first match and groups the automata engines find. Work per call is bounded by a
//! budget proportional to the text it may look at; past it the caller falls back to the
//! engines, so pathological patterns cost at most a constant factor more than before.

use regex_syntax::hir::{Class, Hir, HirKind};

/// One step of a sequence pattern.
#[derive(Debug, Clone)]
enum Op {
    /// These bytes, in order.
    Lit(Box<[u8]>),
    /// `min..=max` bytes of an ASCII set (bit `b` of `set`: byte `b` belongs).
    Rep {
        set: u128,
        min: usize,
        max: usize,
        greedy: bool,
    },
    /// Group `index` starts here.
    Open(usize),
    /// Group `index` ends here.
    Close(usize),
}

/// A compiled sequence pattern (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct SeqMatcher {
    ops: Vec<Op>,
    /// By op index: the bytes that can come right after a repetition at that op (the first
    /// bytes of what follows), or `None` when what follows can be empty (any end will do).
    /// A repetition tries to end only before one of them.
    follow: Vec<Option<u128>>,
    /// One more than the highest group index.
    groups: usize,
}

/// The search gave up (the work budget ran out): use a regex engine instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GaveUp;

/// Group spans of a match, by group index (`None`: the group did not take part).
pub(crate) type Slots = Vec<Option<(usize, usize)>>;

impl SeqMatcher {
    /// The matcher for a translated pattern, or `None` when it is not a sequence pattern.
    pub(crate) fn new(rust: &str) -> Option<SeqMatcher> {
        let hir = regex_syntax::ParserBuilder::new()
            .dot_matches_new_line(true)
            .unicode(false)
            .utf8(false)
            .build()
            .parse(rust)
            .ok()?;
        let mut ops = Vec::new();
        flatten(&hir, &mut ops)?;
        let groups = ops
            .iter()
            .filter_map(|op| match op {
                Op::Open(g) => Some(g + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let follow = (0..ops.len()).map(|i| follow_set(&ops, i + 1)).collect();
        Some(SeqMatcher {
            ops,
            follow,
            groups,
        })
    }

    /// Slots for [`SeqMatcher::exec`].
    pub(crate) fn slots(&self) -> Slots {
        vec![None; self.groups]
    }

    /// The match anchored at `start` of `hay` (which must be all ASCII): its end, with the
    /// group spans in `slots`; `Ok(None)` when there is none.
    pub(crate) fn exec(
        &self,
        hay: &[u8],
        start: usize,
        slots: &mut Slots,
    ) -> Result<Option<usize>, GaveUp> {
        slots.iter_mut().for_each(|s| *s = None);
        let mut budget = 256 + 4 * hay.len().saturating_sub(start);
        self.run(0, hay, start, slots, &mut budget)
    }

    fn run(
        &self,
        i: usize,
        hay: &[u8],
        pos: usize,
        slots: &mut Slots,
        budget: &mut usize,
    ) -> Result<Option<usize>, GaveUp> {
        let Some(op) = self.ops.get(i) else {
            return Ok(Some(pos));
        };
        match op {
            Op::Lit(lit) => {
                let end = pos + lit.len();
                match hay.get(pos..end) {
                    Some(text) if text == &lit[..] => self.run(i + 1, hay, end, slots, budget),
                    _ => Ok(None),
                }
            }
            Op::Open(g) | Op::Close(g) => {
                if let Some(slot) = slots.get_mut(*g) {
                    *slot = match op {
                        Op::Open(_) => Some((pos, pos)),
                        _ => slot.map(|(s, _)| (s, pos)),
                    };
                }
                self.run(i + 1, hay, pos, slots, budget)
            }
            Op::Rep {
                set,
                min,
                max,
                greedy,
            } => {
                let rest = hay.get(pos..).unwrap_or(&[]);
                let member = |b: &u8| *b < 128 && (set >> b) & 1 == 1;
                if *greedy {
                    let limit = rest.len().min(*max);
                    let run = rest
                        .get(..limit)
                        .map_or(0, |r| r.iter().position(|b| !member(b)).unwrap_or(limit));
                    spend(budget, run)?;
                    let follow = self.follow.get(i).copied().flatten();
                    let mut k = run;
                    while k >= *min {
                        spend(budget, 1)?;
                        // What follows needs a byte of `follow` here.
                        if follow.is_none_or(|f| rest.get(k).is_some_and(|b| member_of(f, *b))) {
                            if let Some(end) = self.run(i + 1, hay, pos + k, slots, budget)? {
                                return Ok(Some(end));
                            }
                        }
                        if k == 0 {
                            break;
                        }
                        k -= 1;
                    }
                    Ok(None)
                } else {
                    let mut k = 0;
                    while k < *min {
                        match rest.get(k) {
                            Some(b) if member(b) => k += 1,
                            _ => return Ok(None),
                        }
                    }
                    let follow = self.follow.get(i).copied().flatten();
                    loop {
                        spend(budget, 1)?;
                        // What follows needs a byte of `follow` here.
                        if follow.is_none_or(|f| rest.get(k).is_some_and(|b| member_of(f, *b))) {
                            if let Some(end) = self.run(i + 1, hay, pos + k, slots, budget)? {
                                return Ok(Some(end));
                            }
                        }
                        match rest.get(k) {
                            Some(b) if k < *max && member(b) => k += 1,
                            _ => return Ok(None),
                        }
                    }
                }
            }
        }
    }
}

/// Whether ASCII set `set` holds `b`.
fn member_of(set: u128, b: u8) -> bool {
    b < 128 && (set >> b) & 1 == 1
}

/// The bytes that can begin the text matched by `ops[from..]`, or `None` if that text can be
/// empty.
fn follow_set(ops: &[Op], from: usize) -> Option<u128> {
    let mut set = 0u128;
    for op in ops.get(from..).unwrap_or(&[]) {
        match op {
            Op::Open(_) | Op::Close(_) => {}
            Op::Lit(lit) => match lit.first() {
                Some(&b) if b < 128 => return Some(set | 1u128 << b),
                // A non-ASCII literal never matches an ASCII haystack; stay exact.
                Some(_) => return Some(set),
                None => {}
            },
            Op::Rep { set: s, min, .. } => {
                set |= s;
                if *min > 0 {
                    return Some(set);
                }
            }
        }
    }
    None
}

/// Takes `n` from the budget.
fn spend(budget: &mut usize, n: usize) -> Result<(), GaveUp> {
    *budget = budget.checked_sub(n).ok_or(GaveUp)?;
    Ok(())
}

/// Appends the ops of `hir`; `None` if it is not a sequence pattern.
fn flatten(hir: &Hir, ops: &mut Vec<Op>) -> Option<()> {
    match hir.kind() {
        HirKind::Empty => {}
        HirKind::Literal(lit) => match ops.last_mut() {
            Some(Op::Lit(prev)) => {
                let mut joined = prev.to_vec();
                joined.extend_from_slice(&lit.0);
                *prev = joined.into_boxed_slice();
            }
            _ => ops.push(Op::Lit(lit.0.clone())),
        },
        HirKind::Class(class) => ops.push(Op::Rep {
            set: ascii_set(class),
            min: 1,
            max: 1,
            greedy: true,
        }),
        HirKind::Repetition(rep) => {
            let set = match rep.sub.kind() {
                HirKind::Class(class) => ascii_set(class),
                HirKind::Literal(lit) => match &lit.0[..] {
                    [b] if *b < 128 => 1u128 << b,
                    _ => return None,
                },
                _ => return None,
            };
            let min = usize::try_from(rep.min).ok()?;
            let max = match rep.max {
                Some(m) => usize::try_from(m).ok()?,
                None => usize::MAX,
            };
            ops.push(Op::Rep {
                set,
                min,
                max,
                greedy: rep.greedy,
            });
        }
        HirKind::Capture(cap) => {
            let index = usize::try_from(cap.index).ok()?;
            ops.push(Op::Open(index));
            flatten(&cap.sub, ops)?;
            ops.push(Op::Close(index));
        }
        HirKind::Concat(items) => {
            for item in items {
                flatten(item, ops)?;
            }
        }
        HirKind::Look(_) | HirKind::Alternation(_) => return None,
    }
    Some(())
}

/// The ASCII members of a class (the only bytes an ASCII haystack has).
fn ascii_set(class: &Class) -> u128 {
    let mut set = 0u128;
    let mut add = |lo: u32, hi: u32| {
        for b in lo..=hi.min(127) {
            set |= 1u128 << b;
        }
    };
    match class {
        Class::Bytes(c) => c
            .ranges()
            .iter()
            .for_each(|r| add(u32::from(r.start()), u32::from(r.end()))),
        Class::Unicode(c) => c
            .ranges()
            .iter()
            .for_each(|r| add(u32::from(r.start()), u32::from(r.end()))),
    }
    set
}

#[cfg(test)]
#[path = "seq_tests.rs"]
mod tests;
