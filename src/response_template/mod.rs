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
//!   [`ResponseTemplate::from_value`], [`ResponseTemplate::from_path`], which also accepts a
//!   whole `tokenizer_config.json`). Errors are [`ErrorKind::Load`]; loading is strict: every
//!   unknown or misspelled key (top level, field, `content_args`, `value_parser`), empty
//!   `fields` map, flag that is not a bool, regex that does not compile and missing group is
//!   an error naming the field and the key ([`Error::path`]; [`Error::location`] gives its line
//!   and column in JSON text). A template is immutable,
//!   `Send + Sync`, and compiled once (each delimiter becomes a DFA: loading costs a few
//!   milliseconds to a few tens of milliseconds for patterns with Unicode classes).
//! - [`parse_response`]: parse a whole output (with the prompt as `prefix`, required as in the
//!   reference: `Some("")` when the output holds the whole message; and optional `tools`);
//!   returns the message as a JSON object.
//! - [`ResponseParser`]: the streaming parser: [`initial_events`](ResponseParser::initial_events)
//!   (from the prompt prefix), [`feed`](ResponseParser::feed) → [`Event`]s (or
//!   [`feed_into`](ResponseParser::feed_into) to reuse a buffer, or
//!   [`feed_with`](ResponseParser::feed_with) to hand each event to a closure, the cheapest),
//!   [`finalize`](ResponseParser::finalize) → `(message, events)`. Events borrow field names
//!   from the template; [`Event::to_json`] gives the reference's dict shape.
//! - [`coerce`]: schema-driven tool-argument coercion, and
//!   [`conformance::run_conformance_case`] for the recorded vectors.
//! - [`Error`]: the phase ([`ErrorKind`]: load, init, feed, finalize), the field and, for
//!   errors caused by text, the byte offset where the offending region closed.
//!
//! # Streaming behaviour
//!
//! Outside a region the parser watches every explicit `open` and the implicit field's `close`;
//! inside a region only that region's `close`. Each delimiter pattern is stepped byte by byte
//! by an anchored DFA ([`regex_automata`]) that keeps one state per live match attempt, so no
//! text is scanned twice (work is linear in the input, whatever the chunking). Text from the
//! start of a match that is partial, or complete but still extendable at the end of the
//! buffer, is held back; a match is decided as soon as no continuation can change it, except
//! that, as in the reference, a match reaching the end of the buffer waits for more text (or
//! the end of the stream) unless its delimiter is a literal none of whose alternatives begins
//! another (so each event comes with the same `feed` call as the reference's). Among decided
//! matches the earliest wins, then the longest, then an open before a close, then the field
//! name that sorts first. Text before a committed match goes to the current region (the
//! implicit field opens for it when no region is open; without an implicit field it is
//! dropped). `region_chunk` events carry raw text (never splitting a code point); `dirty` is
//! false for text/int/float/bool. Values are computed when a region closes; at the end every
//! open region closes. Empty matches count (a close may match empty right after its open),
//! but no empty match is taken where an empty match was just taken, so the parser always
//! makes progress. The result does not depend on how the text is chunked.
//!
//! # Cost
//!
//! A delimiter with a literal prefix of two bytes or more (as delimiters nearly always have) starts
//! a match attempt only where the buffered text continues with that prefix, or with a piece of it
//! reaching the end of the buffer: in one-shot parsing, long stretches are searched with `memmem`,
//! and a `<` that begins some other tag costs no DFA steps (in 4-byte streaming most such attempts
//! are still partial at the end of the buffer, so this helps less there). Text that no watched
//! delimiter can start is skipped with `memchr` (one-shot) or, in streaming, handed to the open
//! region (or dropped, outside regions of a template without an implicit field) by a per-feed fast
//! path (one table lookup per byte, or one word operation for a 4-byte feed when a single byte can
//! start the watched delimiters; no scanner setup) while nothing is in flight. Each watch set knows
//! the literal all its delimiters begin with (e.g. `<|channel|>` for the gpt-oss opens,
//! `</tool_call>` inside a Qwen tool call): a start byte where a feed departs from it starts
//! nothing, so such a feed still takes a fast path; and while the buffer only ends with a piece of
//! that literal, the piece is held back and each feed is compared with the literal alone (no
//! scanner is stepped) until it departs (the text is handed out) or completes. A feed that arrives
//! while a match attempt is in flight resumes the scanners' DFA states where the previous feed left
//! them: held-back text is never scanned again; when that attempt is a single candidate of one
//! pattern and the feed cannot start another, a second fast path steps its DFA over the feed and
//! appends it (no scanner setup, nothing decided, nothing handed out). Any other small feed that
//! decides nothing (attempts in flight or started by the feed extend or die without a match) takes
//! a light path that steps each concerned scanner's candidates in place and hands out the text no
//! longer held back, without the general path's setup (which only feeds deciding a match take:
//! about one per delimiter). While one attempt glides, a feed ending with a piece of the shared
//! literal is held the same way once the gliding attempt has stepped over the feed and is still
//! undecided (so the feed stays held back behind a live attempt), without stepping anything
//! more until the piece departs from the literal or completes. [`feed_with`](ResponseParser::feed_with) hands events over with their
//! text borrowed: a plain 4-byte feed costs about 55 instructions with the caller's handling of
//! its event, and streaming in 4-byte feeds costs 1.5–1.8× one-shot in instructions on the
//! bench inputs (1.8–2.1× through [`feed_into`](ResponseParser::feed_into), whose events are
//! copied into the caller's buffer and dropped there). Capture groups are read
//! only once a match is decided, on the match span alone. On ASCII text, patterns that are plain
//! sequences (literals, class repetitions, groups: no alternation or look-around, as delimiters and
//! tag patterns nearly always are) read their groups with no regex engine, by a small backtracker
//! derived from the pattern's syntax tree (a few instructions per byte, with a work budget past
//! which the engines take over; a repetition tries to end only before a byte that what follows it
//! can begin with, so `.*?</parameter>` tries one end per `<`, not one per byte); other ASCII spans
//! use a program compiled without Unicode classes (the same groups, from an NFA a fraction of the
//! size). `xml-inline` tag patterns that need no backtracking run the same way (or on the automata
//! engines), anchored at each byte that can begin a match. A streaming parser shares each region's
//! value between its `region_close` event and the message (an `Arc`): the message takes it over at
//! `finalize` without a copy unless the caller still holds the event.
//!
//! # Limits
//!
//! - Patterns: lookarounds, backreferences, atomic groups and possessive quantifiers are
//!   rejected at load in `open_pattern`/`close_pattern`/`start_anchor_pattern` (the
//!   `xml-inline` `tag_pattern` runs on a backtracking engine and allows them, with a
//!   backtracking limit). `\b`/`\B` are ASCII word boundaries. Python-only inline flags
//!   (`(?a)`, `(?L)`) are not translated. Each pattern's DFA is limited to 8 MiB.
//! - Integers must fit in an `i64` (Python's are unbounded; JSON integers beyond `u64` become
//!   floats); floats must be finite (JSON cannot carry NaN/inf).
//! - Memory holds the undecided tail of the text and the open region's raw text.
//!
//! # Deliberate deviations from transformers 5.23.0
//!
//! - `close: "eos"` means "until the end of the stream" (the reference matches the literal
//!   text `eos`, so a word like "videos" would close the region).
//! - An empty value of the implicit field (typically whitespace after its close or between
//!   regions, e.g. `"\n"` after `<|im_end|>` or between two tool calls) does not overwrite an
//!   earlier non-empty value; the reference erases the content. The events are unchanged. No
//!   conformance vector depends on this; the recorded `smollm-*.expected.json` bench outputs
//!   do (they lack `content`; this parser keeps it).
//! - Python `$` consumes a final `\n` (the reference stops before it): region text is the same
//!   and no stray `"\n"` region follows.
//! - In `ops` vectors a template error is expected at `init`; this API validates templates
//!   when they are loaded, so [`conformance`] accepts a load error there.
//! - Template mistakes the reference ignores, reads with Python truthiness, or only reports
//!   when a region of the field closes (unknown `content_args`/`value_parser` keys, non-bool
//!   flags and arguments, empty separators, bad `string_delims`, a missing or incomplete
//!   `tag_pattern`, an unknown `value_parser` type) are load errors.
//! - The named groups of `close_pattern` join the transform's scope, as the reference's docs
//!   say (its code only keeps the open's).
//! - `unquoted_keys` and `string_delims` rewrite only outside JSON string literals (the
//!   reference rewrites inside them too, corrupting them, and refuses `\x01`/`\x02`).
//! - Non-finite numbers (`nan`, `inf`, `1e400`, JSON `NaN`) are errors: JSON cannot carry them.
//! - Where the implicit field's close matches the empty string while its region is empty,
//!   parsing goes on (the reference stops there for good and loses the rest of the text).
//! - After a `feed` or `finalize` raised, the parser is finished (the reference goes on from
//!   the half-updated state: the region whose value failed stays open and takes what follows).
//! - Results never depend on the chunking; the reference's partial matching prefers a complete
//!   match anywhere to an earlier partial one and commits greedy or optional regex matches
//!   before more text could extend them, so its streamed results can differ from its
//!   one-shot ones. This parser gives the one-shot result.
//!
//! `tests/response_template_oracle.rs` checks all this against transformers itself (see the
//! README): `scripts/hf_response_oracle.py` applies each deviation to the reference, and any
//! other difference on generated cases ([`case_gen`]) fails.
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
//! let message = parse_response(&tpl, text, Some(""), None).unwrap();
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

pub mod case_gen;
pub mod coerce;
pub mod conformance;
mod content;
mod error;
mod events;
mod json_dialect;
mod json_shape;
mod json_value;
mod locate;
mod pattern;
mod py_number;
mod scan;
mod seq;
mod spec;
mod stream;
pub mod syntax;
mod transform;
mod translate;
mod util;

pub use error::{Error, ErrorKind, Result};
pub use events::{merge_chunks, ChunkText, Event};
pub use spec::ResponseTemplate;
pub use stream::{parse_response, ResponseParser};
