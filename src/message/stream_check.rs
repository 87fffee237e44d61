//! Checking the streaming rule of the conformance cases over a sequence of snapshots.
//!
//! The rule: feeding the output in pieces, the accumulated deltas equal the parse of each
//! prefix. [`check_stream`] runs the snapshots of successive prefixes through a fresh
//! [`DeltaTracker`] (with full verification) and a [`DeltaAccumulator`], and after each step
//! requires no [`Conflict`] and the accumulation to equal the snapshot's
//! [`stable_message`](PartialMessage::stable_message).

use std::fmt;

use super::chat_message::ChatMessage;
use super::delta::DeltaAccumulator;
use super::partial::PartialMessage;
use super::stream::{Conflict, DeltaTracker, TrackerConfig};

/// Where and why a stream broke the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamMismatch {
    /// The index of the snapshot at which the rule broke.
    pub step: usize,
    /// What went wrong.
    pub problem: StreamProblem,
}

/// What broke the streaming rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamProblem {
    /// The snapshot retracted or changed streamed text.
    Conflicts(Vec<Conflict>),
    /// The deltas could not be folded (a tracker bug).
    Accumulate(String),
    /// The accumulated deltas differ from the snapshot's stable view (a tracker bug).
    Differs {
        /// The snapshot's stable view.
        expected: Box<ChatMessage>,
        /// The accumulated deltas.
        accumulated: Box<ChatMessage>,
    },
}

impl fmt::Display for StreamMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stream step {}: ", self.step)?;
        match &self.problem {
            StreamProblem::Conflicts(conflicts) => {
                for (i, conflict) in conflicts.iter().enumerate() {
                    let sep = if i > 0 { "; " } else { "" };
                    write!(f, "{sep}{conflict}")?;
                }
                Ok(())
            }
            StreamProblem::Accumulate(error) => f.write_str(error),
            StreamProblem::Differs {
                expected,
                accumulated,
            } => {
                write!(
                    f,
                    "accumulated deltas {accumulated:?} differ from the parse {expected:?}"
                )
            }
        }
    }
}

impl std::error::Error for StreamMismatch {}

/// Streams `snapshots` and checks the rule after each (see the module docs); returns the final
/// accumulated message.
pub fn check_stream<'a>(
    snapshots: impl IntoIterator<Item = &'a PartialMessage>,
) -> Result<ChatMessage, StreamMismatch> {
    let mut tracker = DeltaTracker::with_config(TrackerConfig {
        verify_window: usize::MAX,
    });
    let mut accumulator = DeltaAccumulator::new();
    for (step, snapshot) in snapshots.into_iter().enumerate() {
        let fail = |problem| Err(StreamMismatch { step, problem });
        let update = tracker.update(snapshot);
        if let Some(delta) = &update.delta {
            if let Err(error) = accumulator.apply(delta) {
                return fail(StreamProblem::Accumulate(error.to_string()));
            }
        }
        if !update.conflicts.is_empty() {
            return fail(StreamProblem::Conflicts(update.conflicts));
        }
        let expected = snapshot.stable_message();
        if accumulator.message() != &expected {
            return fail(StreamProblem::Differs {
                expected: Box::new(expected),
                accumulated: Box::new(accumulator.message().clone()),
            });
        }
    }
    Ok(accumulator.into_message())
}
