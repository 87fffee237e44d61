//! Turning successive snapshots of a message being parsed into streaming deltas.
//!
//! A [`DeltaTracker`] remembers what it has emitted. For each new [`PartialMessage`] (parsed
//! from a longer prefix of the output) [`DeltaTracker::update`] emits one [`ChatDelta`] with what
//! is new, under these invariants:
//!
//! 1. **Reproduction**: after an update that reports no [`Conflict`], folding every delta emitted
//!    so far (see [`DeltaAccumulator`](super::DeltaAccumulator)) gives exactly the snapshot's
//!    [`stable_message`](PartialMessage::stable_message).
//! 2. **No retraction**: emitted text is never taken back. A snapshot field that does not extend
//!    what was emitted (shorter, different, or cut inside a code point at the emitted length) is
//!    not emitted; the update reports a [`Conflict`] for it, the tracker counts it
//!    ([`DeltaTracker::conflicts`]) and later snapshots that extend the emitted text resume
//!    the field. Nothing panics.
//! 3. **Whole code points**: every emitted fragment is a `str` slice cut at char boundaries of
//!    the snapshot (checked before slicing).
//! 4. **Names whole, id first**: a call is announced (index, id, `type`, name) only once its name
//!    is complete and its id final ([`is_announceable`]), in one fragment; calls are announced
//!    in order, so a call waits for the ones before it. Its arguments follow.
//! 5. **No healing**: only the [`arguments`] text is streamed, never the [`healed_arguments`];
//!    closers appear when the parse really contains them (or the builder closes the finished
//!    call).
//!
//! [`is_announceable`]: super::PartialToolCall::is_announceable
//! [`arguments`]: super::PartialToolCall::arguments
//! [`healed_arguments`]: super::PartialToolCall::healed_arguments
//!
//! # Cost
//! The tracker keeps the emitted text of each field. An update costs O(new text + calls ×
//! (window + id + name)): it checks a field's extension by comparing the snapshot's bytes just
//! before the emitted length with the emitted text over a bounded window
//! ([`TrackerConfig::verify_window`], default 64 bytes), not the whole prefix. The window makes
//! the no-retraction check a spot check for edits far back in a field; set it to `usize::MAX` for a
//! full O(total) comparison (tests do).

use std::fmt;

use super::delta::{ChatDelta, FunctionDelta, ToolCallDelta};
use super::partial::PartialMessage;

/// Settings of a [`DeltaTracker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackerConfig {
    /// How many bytes before the emitted length are compared to check that a snapshot field
    /// extends what was emitted. `usize::MAX`: compare everything.
    pub verify_window: usize,
}

impl Default for TrackerConfig {
    fn default() -> Self {
        TrackerConfig { verify_window: 64 }
    }
}

/// A snapshot field that does not extend what was already emitted; it was not emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflict {
    /// The content.
    Content,
    /// The reasoning.
    Reasoning,
    /// The announced call at this index is missing from the snapshot.
    MissingCall(usize),
    /// The announced call's id changed or is no longer flagged final.
    Id(usize),
    /// The announced call's name changed or is no longer flagged final.
    Name(usize),
    /// The call's arguments do not extend the emitted ones.
    Arguments(usize),
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Conflict::Content => write!(f, "content does not extend the streamed content"),
            Conflict::Reasoning => write!(f, "reasoning does not extend the streamed reasoning"),
            Conflict::MissingCall(i) => write!(f, "streamed tool call {i} is missing"),
            Conflict::Id(i) => write!(f, "tool call {i}: id is not the streamed one"),
            Conflict::Name(i) => write!(f, "tool call {i}: name is not the streamed one"),
            Conflict::Arguments(i) => {
                write!(
                    f,
                    "tool call {i}: arguments do not extend the streamed ones"
                )
            }
        }
    }
}

/// The result of one [`DeltaTracker::update`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Update {
    /// What is new, if anything.
    pub delta: Option<ChatDelta>,
    /// Fields that were held back because they contradict what was emitted.
    pub conflicts: Vec<Conflict>,
}

/// Emits deltas for successive snapshots (see the module docs for the invariants).
#[derive(Debug, Clone, Default)]
pub struct DeltaTracker {
    config: TrackerConfig,
    role_sent: bool,
    content: String,
    reasoning: String,
    calls: Vec<SentCall>,
    conflicts: usize,
    /// Leading calls that ended and were emitted whole (skipped by cheap updates).
    settled: usize,
    /// The last update reported no conflict: what was emitted reproduces its snapshot.
    in_sync: bool,
}

/// The one field a streaming step appended text to, and nothing else changed (see
/// [`DeltaTracker::update_appended`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    /// The content.
    Content,
    /// The reasoning.
    Reasoning,
    /// The arguments of the call at this index.
    Arguments(usize),
}

#[derive(Debug, Clone)]
struct SentCall {
    id: String,
    name: String,
    arguments: String,
}

impl DeltaTracker {
    /// A tracker with the default [`TrackerConfig`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A tracker with the given settings.
    pub fn with_config(config: TrackerConfig) -> Self {
        DeltaTracker {
            config,
            ..Self::default()
        }
    }

    /// Changes [`TrackerConfig::verify_window`] for the following updates.
    pub fn set_verify_window(&mut self, window: usize) {
        self.config.verify_window = window;
    }

    /// How many conflicts all updates have reported.
    pub fn conflicts(&self) -> usize {
        self.conflicts
    }

    /// Emits what `snapshot` adds to what was emitted so far.
    pub fn update(&mut self, snapshot: &PartialMessage) -> Update {
        let window = self.config.verify_window;
        let mut delta = ChatDelta::default();
        let mut conflicts = Vec::new();

        match extend(&mut self.reasoning, &snapshot.reasoning_content, window) {
            Some(new) => delta.reasoning_content = owned(new),
            None => conflicts.push(Conflict::Reasoning),
        }
        match extend(&mut self.content, &snapshot.content, window) {
            Some(new) => delta.content = owned(new),
            None => conflicts.push(Conflict::Content),
        }

        let mut fragments = Vec::new();
        for index in snapshot.tool_calls.len()..self.calls.len() {
            conflicts.push(Conflict::MissingCall(index));
        }
        // Without re-comparison (`window == 0`), calls that ended and were fully emitted are
        // not looked at again: an update costs O(open calls), not O(all calls).
        let skip = if window == 0 {
            self.settled.min(snapshot.tool_calls.len())
        } else {
            0
        };
        for (index, call) in snapshot.tool_calls.iter().enumerate().skip(skip) {
            if let Some(sent) = self.calls.get_mut(index) {
                if !same(&sent.id, &call.id) || !call.id_final {
                    conflicts.push(Conflict::Id(index));
                    continue;
                }
                if !same(&sent.name, &call.name) || !call.name_final {
                    conflicts.push(Conflict::Name(index));
                    continue;
                }
                match extend(&mut sent.arguments, &call.arguments, window) {
                    Some("") => {}
                    Some(arguments) => fragments.push(ToolCallDelta {
                        index,
                        function: FunctionDelta {
                            name: None,
                            arguments: Some(arguments.to_owned()),
                        },
                        ..ToolCallDelta::default()
                    }),
                    None => conflicts.push(Conflict::Arguments(index)),
                }
            } else if call.is_announceable() {
                self.calls.push(SentCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                });
                fragments.push(ToolCallDelta {
                    index,
                    id: (!call.id.is_empty()).then(|| call.id.clone()),
                    kind: Some("function".to_owned()),
                    function: FunctionDelta {
                        name: Some(call.name.clone()),
                        arguments: (!call.arguments.is_empty()).then(|| call.arguments.clone()),
                    },
                });
            } else {
                break;
            }
        }
        while let (Some(sent), Some(call)) = (
            self.calls.get(self.settled),
            snapshot.tool_calls.get(self.settled),
        ) {
            let done = call.arguments_final
                && call.id_final
                && call.name_final
                && sent.arguments.len() == call.arguments.len();
            if !done {
                break;
            }
            self.settled += 1;
        }
        if !fragments.is_empty() {
            delta.tool_calls = Some(fragments);
        }

        self.conflicts += conflicts.len();
        self.in_sync = conflicts.is_empty();
        if delta.is_empty() {
            return Update {
                delta: None,
                conflicts,
            };
        }
        if !self.role_sent {
            self.role_sent = true;
            delta.role = Some("assistant".to_owned());
        }
        Update {
            delta: Some(delta),
            conflicts,
        }
    }
}

impl DeltaTracker {
    /// [`update`](Self::update) for a snapshot that differs from the previous one only by text
    /// appended to one field (`appended`), the common streaming step: only that field is
    /// looked at. The caller vouches for "only"; the tracker falls back to the full update
    /// unless the previous update reported no conflict and [`TrackerConfig::verify_window`]
    /// is 0 (no re-comparison), where both give the same delta.
    pub fn update_appended(&mut self, snapshot: &PartialMessage, appended: Appended) -> Update {
        if !self.in_sync || self.config.verify_window != 0 {
            return self.update(snapshot);
        }
        let calls = self.calls.len();
        let (sent, now) = match appended {
            Appended::Content => (&mut self.content, &snapshot.content),
            Appended::Reasoning => (&mut self.reasoning, &snapshot.reasoning_content),
            Appended::Arguments(index) => {
                // Only the last announced call, with every call announced (the full update
                // would otherwise look at calls still waiting to be announced).
                match (self.calls.get_mut(index), snapshot.tool_calls.get(index)) {
                    (Some(sent), Some(call))
                        if index + 1 == calls && snapshot.tool_calls.len() == calls =>
                    {
                        (&mut sent.arguments, &call.arguments)
                    }
                    _ => return self.update(snapshot),
                }
            }
        };
        let Some(new) = extend(sent, now, 0) else {
            return self.update(snapshot);
        };
        if new.is_empty() {
            return Update::default();
        }
        let mut delta = ChatDelta::default();
        match appended {
            Appended::Content => delta.content = owned(new),
            Appended::Reasoning => delta.reasoning_content = owned(new),
            Appended::Arguments(index) => {
                delta.tool_calls = Some(vec![ToolCallDelta {
                    index,
                    function: FunctionDelta {
                        name: None,
                        arguments: owned(new),
                    },
                    ..ToolCallDelta::default()
                }]);
            }
        }
        if !self.role_sent {
            self.role_sent = true;
            delta.role = Some("assistant".to_owned());
        }
        Update {
            delta: Some(delta),
            conflicts: Vec::new(),
        }
    }
}

/// `a == b`, without calling `memcmp` for empty strings: a zero-length `memcmp` on an empty
/// `String`'s dangling pointer may still issue a masked load there, and a masked load from an
/// unmapped page costs a microcode assist (this made every feed of a tool call ~4× slower).
#[inline]
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

/// Extends `sent` to `new` if `new` extends it: returns the new suffix (empty when there is
/// none), or `None` when `new` does not extend `sent` (checked over the last `window` bytes) or
/// would be cut inside a code point. Returns a borrowed slice (no `Result` of an owned string
/// moved through the stack on every feed).
#[inline]
fn extend<'n>(sent: &mut String, new: &'n str, window: usize) -> Option<&'n str> {
    let len = sent.len();
    if new.len() < len || !new.is_char_boundary(len) {
        return None;
    }
    let from = len.saturating_sub(window);
    // An empty window is not compared at all: even a zero-length `memcmp` may touch the bytes
    // at the end of the buffers (a masked load), which near a page boundary costs a microcode
    // assist per call.
    if from < len && new.as_bytes().get(from..len) != sent.as_bytes().get(from..len) {
        return None;
    }
    let suffix = new.get(len..).unwrap_or_default();
    // Not even an empty copy: `memcpy` of nothing into an empty `String`'s dangling pointer
    // may still issue a masked access there (see `same`).
    if !suffix.is_empty() {
        sent.push_str(suffix);
    }
    Some(suffix)
}

/// A non-empty suffix as an owned delta field.
#[inline]
fn owned(suffix: &str) -> Option<String> {
    (!suffix.is_empty()).then(|| suffix.to_owned())
}
