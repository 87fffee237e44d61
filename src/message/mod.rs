//! The message layer: what a request asks for, what a parse produces, and how it streams.
//!
//! | item | role |
//! | --- | --- |
//! | [`ChatRequest`] | the OpenAI-compatible request: messages, tools, `tool_choice`, reasoning and response-format options |
//! | [`ChatMessage`], [`ToolCall`] | the parsed assistant message (OpenAI JSON via serde) |
//! | [`compare()`] | the conformance pass rule, with a short [`MessageDiff`] |
//! | [`MessageBuilder`] → [`PartialMessage`] | what a mapper drives while walking a parse tree; the snapshot flags what is final |
//! | [`heal`](heal::heal) | turns a JSON prefix into parsable JSON for display |
//! | [`python`] | Python-dict argument text to JSON, incrementally |
//! | [`value_text`] | a tagged value's wrapper and escapes undone, incrementally |
//! | [`DeltaTracker`] → [`ChatDelta`] | successive snapshots to OpenAI streaming deltas |
//! | [`DeltaAccumulator`] | folds deltas back into a [`ChatMessage`] |
//! | [`check_stream`] | the conformance streaming rule over the snapshots of successive prefixes |
//!
//! # Pipeline and invariants
//! For each prefix of the model output, the parser's mapper drives a fresh [`MessageBuilder`] and
//! [`finish`](MessageBuilder::finish)es it into a [`PartialMessage`]. Its text fields hold only
//! parsed text (healing is kept apart), so snapshots of growing prefixes extend each other
//! (see [`builder`]'s monotonicity notes). A [`DeltaTracker`] turns the snapshots into deltas
//! that never retract, never split a code point, announce a tool call (id, name) whole before
//! its arguments, never stream healed closers, and cost time proportional to the new text; after
//! each conflict-free update the accumulated deltas equal the snapshot's
//! [`stable_message`](PartialMessage::stable_message) (see [`stream`]).
//!
//! # Example
//! ```
//! use chatparse::message::{DeltaAccumulator, DeltaTracker, MessageBuilder};
//!
//! let output = ["Let me check.", r#"{"city": "Par"#, r#"is"}"#];
//! let mut tracker = DeltaTracker::new();
//! let mut client = DeltaAccumulator::new();
//! for end in 1..=output.len() {
//!     // The mapper rebuilds the message from each longer prefix.
//!     let mut builder = MessageBuilder::new();
//!     builder.push_content(output[0]);
//!     if end > 1 {
//!         builder.start_tool_call();
//!         builder.set_name("get_weather");
//!         for piece in &output[1..end] {
//!             builder.push_arguments(piece);
//!         }
//!     }
//!     let partial = end < output.len();
//!     let snapshot = builder.finish(partial);
//!     if partial && end > 1 {
//!         let healed = snapshot.tool_calls[0].healed_arguments.as_deref();
//!         assert_eq!(healed, Some(r#"{"city": "Par"}"#));
//!     }
//!     let update = tracker.update(&snapshot);
//!     assert!(update.conflicts.is_empty());
//!     client.apply(&update.delta.unwrap()).unwrap();
//!     assert_eq!(client.message(), &snapshot.stable_message());
//! }
//! let message = client.into_message();
//! assert_eq!(message.tool_calls[0].arguments, r#"{"city": "Paris"}"#);
//! assert_eq!(
//!     serde_json::to_value(&message).unwrap()["tool_calls"][0]["function"]["name"],
//!     "get_weather"
//! );
//! ```

#![deny(missing_docs)]

pub mod builder;
pub mod chat_message;
pub mod compare;
pub mod delta;
pub mod heal;
pub mod partial;
pub mod python;
pub mod request;
pub mod stream;
pub mod stream_check;
pub mod value_text;

pub use builder::MessageBuilder;
pub use chat_message::{ChatMessage, ToolCall};
pub use compare::{compare, MessageDiff, Mismatch};
pub use delta::{
    accumulate, AccumulateError, ChatDelta, DeltaAccumulator, FunctionDelta, ToolCallDelta,
};
pub use partial::{PartialMessage, PartialToolCall};
pub use request::{
    ArgumentKind, ChatRequest, ContinueFinalMessage, Prefill, ReasoningFormat, RequestMessage,
    Tool, ToolChoice,
};
pub use stream::{Appended, Conflict, DeltaTracker, TrackerConfig, Update};
pub use stream_check::{check_stream, StreamMismatch, StreamProblem};
pub use value_text::{ValueDecoder, ValueText};

#[cfg(test)]
mod tests;
