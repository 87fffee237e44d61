//! Object shapes (key sequences) seen recently while reading JSON, so that an object with a
//! known shape is built by cloning a map instead of hashing and inserting each key.
//!
//! Tool-call arguments repeat the same keys in the same order call after call. A known shape
//! is kept as a map of its keys with `null` values (a *skeleton*): cloning it copies the index
//! table and the keys' hashes (one allocation per key, as an insert makes, but no hashing
//! or probing), and the values are then put in place in order. A shape is learnt the second
//! time it is seen (a cheap fingerprint of the keys remembers the first time), so documents
//! whose objects never repeat a shape only pay for the fingerprint.

use std::hash::BuildHasher;
use std::rc::Rc;

use foldhash::fast::FixedState;

use serde_json::{Map, Value};

/// Shapes kept at most (the oldest learnt is replaced first).
const KNOWN: usize = 8;
/// Shapes with more keys than this are not learnt.
const MAX_KEYS: usize = 16;
/// Fingerprints of shapes seen once that are remembered.
const SEEN: usize = 8;

/// A learnt shape: its keys, in order, each with a `null` value.
pub(super) type Skeleton = Rc<Map<String, Value>>;

/// The shapes known on one thread, and the fingerprints of shapes seen once.
pub(super) struct Shapes {
    /// Learnt shapes.
    known: Vec<Skeleton>,
    /// The slot of `known` the next learnt shape replaces once it is full.
    victim: usize,
    /// Fingerprints of shapes seen once (0: none).
    seen: [u64; SEEN],
    /// The slot of `seen` the next fingerprint goes to.
    seen_next: usize,
}

/// Whether the key after the first `matched` keys of `shape` is `key`.
pub(super) fn continues(shape: &Map<String, Value>, matched: usize, key: &str) -> bool {
    shape.keys().nth(matched).is_some_and(|k| k == key)
}

/// Whether two shapes begin with the same `n` keys.
fn same_prefix(a: &Map<String, Value>, b: &Map<String, Value>, n: usize) -> bool {
    a.len() >= n && b.len() >= n && a.keys().zip(b.keys()).take(n).all(|(x, y)| x == y)
}

impl Shapes {
    /// No shapes known.
    pub(super) const fn new() -> Shapes {
        Shapes {
            known: Vec::new(),
            victim: 0,
            seen: [0; SEEN],
            seen_next: 0,
        }
    }

    /// A known shape that begins with the first `matched` keys of `current` (any shape when
    /// `matched` is 0) and then continues with `next`, or, for `None`, ends there.
    pub(super) fn find(
        &self,
        current: Option<&Map<String, Value>>,
        matched: usize,
        next: Option<&str>,
    ) -> Option<Skeleton> {
        self.known
            .iter()
            .find(|s| {
                let fits = match next {
                    Some(key) => continues(s, matched, key),
                    None => s.len() == matched,
                };
                fits && (matched == 0 || current.is_some_and(|c| same_prefix(c, s, matched)))
            })
            .cloned()
    }

    /// Records the shape of a map built key by key: learnt if its fingerprint was seen
    /// before, remembered otherwise.
    pub(super) fn offer(&mut self, map: &Map<String, Value>) {
        if map.is_empty() || map.len() > MAX_KEYS {
            return;
        }
        let print = fingerprint(map);
        if let Some(slot) = self.seen.iter_mut().find(|p| **p == print) {
            *slot = 0;
            let skeleton: Map<String, Value> =
                map.keys().map(|k| (k.clone(), Value::Null)).collect();
            let skeleton = Rc::new(skeleton);
            if self.known.len() < KNOWN {
                self.known.push(skeleton);
            } else if let Some(old) = self.known.get_mut(self.victim) {
                *old = skeleton;
                self.victim = (self.victim + 1) % KNOWN;
            }
        } else if let Some(slot) = self.seen.get_mut(self.seen_next) {
            *slot = print;
            self.seen_next = (self.seen_next + 1) % SEEN;
        }
    }
}

/// A fingerprint of a map's key sequence (a fast unkeyed hash, never 0): equal fingerprints
/// only mean "probably seen before", which is all learning needs.
fn fingerprint(map: &Map<String, Value>) -> u64 {
    map.keys().fold(0x9e37_79b9_7f4a_7c15, |seed, key| {
        FixedState::with_seed(seed).hash_one(key)
    }) | 1
}
