//! The parser generator: from a template [`Analysis`](crate::analyze::Analysis) and a
//! [`ChatRequest`](crate::message::ChatRequest) to a parser for one assistant turn.
//!
//! # Pipeline
//! 1. [`format`](mod@format): the analysis becomes a [`TurnFormat`] (plain data: reasoning, content and
//!    tool-call markers, literal argument values, or a channel-message layout). Post-processing
//!    from what the renders show: a reasoning opener held in the assistant header moves to the
//!    reasoning; tagged values whose strings carry their own quotes become literals; a template
//!    that renders no reasoning markers gets the conventional `<think>` block. [`families`]
//!    document formats as JSON data; the analysis selects one only by what the template
//!    renders (tokens of the family's vocabulary in a tools preamble, channel headers in
//!    rendered turns), checked by parsing back with the generated parser.
//! 2. [`prompt`]: the prompt is rendered; what it already wrote of the turn (an opened
//!    `<think>`) is the *prefill*, read by the parser before the output. A continued final
//!    message starts the parser in the continued field instead.
//! 3. [`grammar`]: the format and the request options become a PEG grammar with tagged nodes.
//! 4. [`mapper`]: the AST drives a [`MessageBuilder`](crate::message::MessageBuilder),
//!    incrementally.
//! 5. [`ChatParser::parse`] runs it once (with a fast path: output containing none of the
//!    format's markers is plain content, found with one `memchr` pass); [`ChatStream`] runs it
//!    over chunks with an incremental session and emits deltas.
//!
//! The built parser exposes its [`triggers`](ChatParser::triggers) (texts that start a call,
//! for lazy grammar-constrained decoding) and
//! [`preserved_tokens`](ChatParser::preserved_tokens). Parsing never fails: what does not follow
//! the format stays content, and [`Parsed::problem`] says where (byte, line, column) and in
//! which template. Request options used: tools and `tool_choice: none` (no call parsing),
//! `reasoning_format` (`none` keeps reasoning inline, including what the prompt opened),
//! `continue_final_message` (the parser starts in the continued field, the message starts with
//! the continued text), `enable_thinking`/`add_generation_prompt` (through the rendered
//! prefill), `parallel_tool_calls: false` (the grammar reads one call per turn: a second call
//! stays content, reported as a problem). Checked after parsing, reported as a
//! [`ParseProblem`] with the message kept as parsed: `tool_choice: required` or a named
//! function (a turn without the call, or with a call to another function), and a `json_schema`
//! response format (a fenced JSON content is unwrapped; content that is not JSON or that the
//! [schema subset](crate::json::schema) rejects is a problem).
//!
//! ```
//! use chatparse::generate::{ChatParser, TurnFormat, ReasoningFormat};
//! use chatparse::message::ChatRequest;
//!
//! let format = TurnFormat {
//!     reasoning: ReasoningFormat { start: "<think>".into(), end: "</think>".into(), tool_calls_only: false, block_join: None, opened_by_turn: false },
//!     ..TurnFormat::default()
//! };
//! let parser = ChatParser::from_format("demo", format, &ChatRequest::default(), String::new()).unwrap();
//! let parsed = parser.parse("<think>hmm</think>Hello");
//! assert_eq!(parsed.message.reasoning_content, "hmm");
//! assert_eq!(parsed.message.content, "Hello");
//! ```

mod commit;
pub mod elements;
pub mod families;
pub mod format;
pub mod grammar;
pub mod id_name;
pub mod literal;
pub mod mapper;
pub mod parser;
pub mod prompt;
pub mod stream;

#[cfg(test)]
mod tests;

pub use format::{ChannelFormat, ContentFormat, ReasoningFormat, SwitchFormat, TurnFormat};
pub use grammar::GrammarOptions;
pub use parser::{ChatParser, GenerateError, ParseProblem, Parsed};
pub use stream::ChatStream;
