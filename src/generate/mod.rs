//! The parser generator: from a template [`Analysis`](crate::analyze::Analysis) and a
//! [`ChatRequest`](crate::message::ChatRequest) to a parser for one assistant turn.
//!
//! # Pipeline
//! 1. [`format`]: the analysis becomes a [`TurnFormat`] (plain data: reasoning, content and
//!    tool-call markers); [`families`] patch it, as data, for formats the analysis misses.
//! 2. [`prompt`]: the prompt is rendered; what it already wrote of the turn (an opened
//!    `<think>`) is the *prefill*, read by the parser before the output. A continued final
//!    message starts the parser in the continued field instead.
//! 3. [`grammar`]: the format and the request options become a PEG grammar with tagged nodes.
//! 4. [`mapper`]: the AST drives a [`MessageBuilder`](crate::message::MessageBuilder),
//!    incrementally.
//! 5. [`ChatParser::parse`] runs it once; [`ChatStream`] runs it over chunks with an
//!    incremental session and emits deltas.
//!
//! ```
//! use chatparse::generate::{ChatParser, TurnFormat, ReasoningFormat};
//! use chatparse::message::ChatRequest;
//!
//! let format = TurnFormat {
//!     reasoning: ReasoningFormat { start: "<think>".into(), end: "</think>".into(), tool_calls_only: false },
//!     ..TurnFormat::default()
//! };
//! let parser = ChatParser::from_format("demo", format, &ChatRequest::default(), String::new()).unwrap();
//! let parsed = parser.parse("<think>hmm</think>Hello");
//! assert_eq!(parsed.message.reasoning_content, "hmm");
//! assert_eq!(parsed.message.content, "Hello");
//! ```

pub mod families;
pub mod format;
pub mod grammar;
pub mod literal;
pub mod mapper;
pub mod parser;
pub mod prompt;
pub mod stream;

#[cfg(test)]
mod tests;

pub use format::{ChannelFormat, ContentFormat, ReasoningFormat, TurnFormat};
pub use grammar::GrammarOptions;
pub use parser::{ChatParser, GenerateError, ParseProblem, Parsed};
pub use stream::ChatStream;
