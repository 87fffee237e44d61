//! Hugging Face-style declarative response templates.
//!
//! A *response template* (the `response_template` key of a `tokenizer_config.json`) describes
//! how raw model output becomes a message dict: named *fields* with open/close delimiters
//! (literals or Python regexes), a content type per field, and an optional reshaping
//! `transform`. See [`syntax`] for the template language.
//!
//! # Inputs and outputs
//!
//! - [`ResponseTemplate`]: load and validate a template ([`ResponseTemplate::from_json_str`],
//!   [`ResponseTemplate::from_value`], [`ResponseTemplate::from_path`]). Errors are
//!   [`ErrorKind::Load`].
//! - [`parse_response`]: parse a whole output; returns the message as a JSON object.
//! - [`ResponseParser`]: the streaming parser: [`initial_events`](ResponseParser::initial_events)
//!   (from the prompt prefix), [`feed`](ResponseParser::feed) → [`Event`]s,
//!   [`finalize`](ResponseParser::finalize) → `(message, events)`.
//! - [`coerce`] helpers for schema-driven tool-argument coercion, and
//!   [`conformance::run_conformance_case`] for the recorded vectors.
//!
//! # Streaming behaviour
//!
//! Outside a region the parser watches every explicit `open` and the implicit field's `close`;
//! inside a region only that region's `close`. Each delimiter pattern is stepped byte by byte
//! by an anchored DFA ([`regex_automata`]); text from the start of a match that is partial, or
//! complete but still extendable at the end of the buffer, is held back. Among decided matches
//! the earliest wins, then the longest, then an open before a close. `region_chunk` events
//! carry raw text (never splitting a code point); `dirty` is false for text/int/float/bool.
//! Values are computed when a region closes; at the end every open region closes. The result
//! does not depend on how the text is chunked.
//!
//! # Limits
//!
//! - Patterns: lookarounds, backreferences, atomic groups and possessive quantifiers are
//!   rejected at load in `open_pattern`/`close_pattern`/`start_anchor_pattern` (the
//!   `xml-inline` `tag_pattern` allows them). `\b` is an ASCII word boundary. Each pattern's
//!   DFA is limited to 8 MiB.
//! - Integers must fit in an `i64`; floats must be finite.
//! - Work is linear in the text; memory holds the undecided tail and the open region's text.
//!
//! # Deliberate deviations from transformers 5.23.0
//!
//! - `close: "eos"` means "until the end of the stream" (the reference matches the literal
//!   text `eos`).
//! - An empty value of the implicit field (e.g. from whitespace after its close, `"\n"` after
//!   `<|im_end|>`) does not overwrite an earlier non-empty value (the reference erases the
//!   content).
//! - Python `$` consumes a final `\n` (the reference stops before it); region text is the same.
//! - In the recorded vectors, an `ops` case's template errors are reported at `init`, which
//!   this API raises at load; [`conformance`] accepts either.
//!
//! # Example
//!
//! ```
//! use chatparse::response_template::{parse_response, ResponseParser, ResponseTemplate};
//!
//! let tpl = ResponseTemplate::from_json_str(r#"{
//!     "defaults": {"role": "assistant"},
//!     "start_anchor": "<|im_start|>assistant\n",
//!     "fields": {
//!         "thinking": {"open": "<think>", "close": "</think>"},
//!         "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": true,
//!                        "content": "json",
//!                        "transform": {"type": "function", "function": "{content}"}},
//!         "content": {"close": "<|im_end|>"}
//!     }
//! }"#).unwrap();
//!
//! let text = "<think>Hi?</think><tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
//! let message = parse_response(&tpl, text, None, None).unwrap();
//! assert_eq!(message["thinking"], "Hi?");
//! assert_eq!(message["tool_calls"][0]["function"]["name"], "f");
//!
//! // Streaming: same result in any chunking.
//! let mut parser = ResponseParser::new(&tpl, Some("<|im_start|>assistant\n"), None).unwrap();
//! for piece in ["<thi", "nk>Hi?</th", "ink>", &text[18..]] {
//!     for event in parser.feed(piece).unwrap() {
//!         let _ = event.to_json();
//!     }
//! }
//! let (streamed, _final_events) = parser.finalize().unwrap();
//! assert_eq!(streamed, message);
//! ```

pub mod coerce;
pub mod conformance;
mod content;
mod error;
mod events;
mod pattern;
mod scan;
mod spec;
mod stream;
pub mod syntax;
mod transform;
mod util;

pub use error::{Error, ErrorKind, Result};
pub use events::{merge_chunks, ChunkText, Event};
pub use spec::ResponseTemplate;
pub use stream::{parse_response, ResponseParser};
