//! Building a [`PartialMessage`] while walking a parse tree (the mapper's side).
//!
//! The mapper builds a fresh message for each parse of a prefix of the output. The builder
//! applies the mapper rules:
//! - **Buffered arguments**: argument text pushed before the call's name is complete waits in a
//!   buffer and moves into the arguments when the name is set, so arguments never stream ahead
//!   of their function name.
//! - **Python dicts**: [`push_python_arguments`](MessageBuilder::push_python_arguments)
//!   normalises `'key': 'value'`, `True`/`False`/`None` to JSON, holding back what may still
//!   change (see [`python`](super::python)).
//! - **Tagged arguments**: [`push_argument_key`](MessageBuilder::push_argument_key),
//!   [`open_string_value`](MessageBuilder::open_string_value) and
//!   [`end_argument_value`](MessageBuilder::end_argument_value) write `{"name": "value"` for
//!   `<parameter=name>value</parameter>` formats; the closing quote of a string value stays
//!   pending until the value ends, so a partial value streams as an open JSON string.
//! - **Brace auto-closing**: [`end_tool_call`](MessageBuilder::end_tool_call) writes a pending
//!   closing quote, then the `"`, `]` and `}` that close arguments left open (only when closing
//!   needs no text dropped).
//! - **Healing is separate**: [`finish`](MessageBuilder::finish) of a partial parse stores healed
//!   JSON in [`PartialToolCall::healed_arguments`]; it is never part of
//!   [`PartialToolCall::arguments`].
//!
//! # Monotonicity
//! If the mapper's calls for a longer prefix extend those for a shorter prefix (same calls,
//! with text arguments that extend the earlier ones, possibly more calls after them), each text
//! field of the longer snapshot extends the shorter one's, because every field is only appended
//! to and nothing provisional (healing, held-back Python words, buffered arguments) is written
//! into a field. Names and ids are set whole; a name set with
//! [`set_partial_name`](MessageBuilder::set_partial_name) is flagged not final.

use super::heal::heal;
use super::partial::{PartialMessage, PartialToolCall};
use super::python::PythonToJson;
use super::request::Prefill;

/// Builds one [`PartialMessage`] (see the module docs).
#[derive(Debug, Default)]
pub struct MessageBuilder {
    message: PartialMessage,
    /// Per-call state, parallel to `message.tool_calls`.
    calls: Vec<CallState>,
}

#[derive(Debug, Default)]
struct CallState {
    /// Argument text waiting for the name.
    buffer: String,
    /// Whether any argument text was pushed (buffered or not).
    has_arguments: bool,
    /// A string argument value is open: its closing quote is still to be written.
    closing_quote_pending: bool,
    python: Option<PythonToJson>,
    ended: bool,
    /// The arguments are known to be one complete JSON value (see
    /// [`MessageBuilder::arguments_complete`]); any later push clears it.
    complete_json: bool,
    /// Tagged arguments written only through the key/value methods (`{"k": "v", "k2": 1`
    /// with complete values): one `}` closes them. Any raw push clears it.
    tagged_clean: bool,
    /// `tagged_clean` as it was before the key just written, until its value is.
    tagged_key_clean: bool,
}

impl MessageBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder whose message starts with what a continued assistant turn already holds
    /// (see [`ChatRequest::prefill`](super::ChatRequest::prefill)).
    pub fn with_prefill(prefill: &Prefill) -> Self {
        let mut builder = Self::new();
        builder.push_reasoning(&prefill.reasoning_content);
        builder.push_content(&prefill.content);
        builder
    }

    /// Appends content text.
    pub fn push_content(&mut self, text: &str) {
        self.message.content.push_str(text);
    }

    /// Appends reasoning text.
    pub fn push_reasoning(&mut self, text: &str) {
        self.message.reasoning_content.push_str(text);
    }

    /// Starts a new tool call; a call still open is ended first
    /// (see [`end_tool_call`](Self::end_tool_call)).
    pub fn start_tool_call(&mut self) {
        if self.calls.last().is_some_and(|c| !c.ended) {
            self.end_tool_call();
        }
        self.message.tool_calls.push(PartialToolCall {
            id_final: true,
            ..Default::default()
        });
        self.calls.push(CallState::default());
    }

    /// Declares that the current call carries an id: until [`set_id`](Self::set_id) (or the end
    /// of the call) the id is not final, which holds the call back from streams so that the id
    /// is announced with the name.
    pub fn expect_id(&mut self) {
        let (call, _) = self.current();
        if call.id.is_empty() {
            call.id_final = false;
        }
    }

    /// Sets the current call's id (final).
    pub fn set_id(&mut self, id: &str) {
        let (call, _) = self.current();
        call.id = id.to_owned();
        call.id_final = true;
    }

    /// Sets the current call's complete name and moves buffered argument text into the
    /// arguments.
    pub fn set_name(&mut self, name: &str) {
        let (call, state) = self.current();
        call.name = name.to_owned();
        call.name_final = true;
        call.arguments.push_str(&state.buffer);
        state.buffer.clear();
    }

    /// The current call's argument text held back until its name is final.
    pub fn buffered_arguments(&self) -> &str {
        self.calls.last().map_or("", |c| c.buffer.as_str())
    }

    /// The current call's id (empty when it has none).
    pub fn current_id(&self) -> String {
        self.message
            .tool_calls
            .last()
            .map_or_else(String::new, |c| c.id.clone())
    }

    /// Whether the current call has a final name.
    pub fn has_final_name(&self) -> bool {
        self.message
            .tool_calls
            .last()
            .is_some_and(|c| c.name_final && !c.name.is_empty())
    }

    /// Sets a name that may still grow (a partial parse cut inside it): not final, so streams
    /// do not show it yet, and arguments stay buffered.
    pub fn set_partial_name(&mut self, name: &str) {
        let (call, _) = self.current();
        call.name = name.to_owned();
        call.name_final = false;
    }

    /// Appends JSON argument text to the current call (buffered until the name is complete).
    pub fn push_arguments(&mut self, json_text: &str) {
        let (call, state) = self.current();
        state.has_arguments |= !json_text.is_empty();
        state.complete_json &= json_text.is_empty();
        state.tagged_clean &= json_text.is_empty();
        state.tagged_key_clean &= json_text.is_empty();
        if call.name_final {
            call.arguments.push_str(json_text);
        } else {
            state.buffer.push_str(json_text);
        }
    }

    /// Declares that the current call's argument text pushed so far is exactly one complete,
    /// valid JSON value (the mapper knows it when a JSON-scanned arguments node completes), so
    /// [`end_tool_call`](Self::end_tool_call) need not check it for closers. Any later push
    /// withdraws the claim.
    pub fn arguments_complete(&mut self) {
        let (_, state) = self.current();
        state.complete_json = state.has_arguments && !state.closing_quote_pending;
    }

    /// Appends raw text as the inside of a JSON string (escaped, without quotes), e.g. the
    /// value of a string-typed tagged argument.
    pub fn push_json_string_content(&mut self, raw: &str) {
        let (call, state) = self.current();
        state.has_arguments |= !raw.is_empty();
        state.complete_json &= raw.is_empty();
        let out = if call.name_final {
            &mut call.arguments
        } else {
            &mut state.buffer
        };
        escape_json_into(out, raw);
    }

    /// Starts the tagged argument `name` (`<parameter=name>`): writes `{` before the first
    /// argument, `, ` before the others, then `"name": `. A string value left open by the
    /// previous argument is closed first.
    pub fn push_argument_key(&mut self, name: &str) {
        self.end_argument_value();
        let first = !self.current().1.has_arguments;
        let clean = first || self.current().1.tagged_clean;
        let separator = if first { "{" } else { ", " };
        self.push_arguments(separator);
        let mut key = String::with_capacity(name.len() + 4);
        key.push('"');
        escape_json_into(&mut key, name);
        key.push_str("\": ");
        self.push_arguments(&key);
        // Not closable until the value is written.
        self.current().1.tagged_key_clean = clean;
    }

    /// Writes a complete, valid JSON value for the tagged argument whose key was just pushed
    /// (keeps the arguments closable with a single `}`).
    pub fn push_argument_value(&mut self, json: &str) {
        let state = self.current().1;
        let clean = std::mem::take(&mut state.tagged_key_clean);
        self.push_arguments(json);
        self.current().1.tagged_clean = clean;
    }

    /// Opens a string argument value (for a string-typed parameter): writes `"` and remembers
    /// that the closing quote is pending. Push the raw value with
    /// [`push_json_string_content`](Self::push_json_string_content).
    pub fn open_string_value(&mut self) {
        let clean = std::mem::take(&mut self.current().1.tagged_key_clean);
        self.push_arguments("\"");
        let state = self.current().1;
        state.closing_quote_pending = true;
        state.tagged_clean = clean;
    }

    /// Ends the current argument value: writes the pending closing quote of a string value, if
    /// any.
    pub fn end_argument_value(&mut self) {
        if self
            .calls
            .last()
            .is_some_and(|c| !c.ended && c.closing_quote_pending)
        {
            let clean = self.current().1.tagged_clean;
            self.current().1.closing_quote_pending = false;
            self.push_arguments("\"");
            self.current().1.tagged_clean = clean;
        }
    }

    /// Appends Python-literal argument text, normalised to JSON (see
    /// [`python`](super::python)).
    pub fn push_python_arguments(&mut self, text: &str) {
        let mut out = String::new();
        self.current()
            .1
            .python
            .get_or_insert_with(PythonToJson::new)
            .push(text, &mut out);
        self.push_arguments(&out);
    }

    /// Ends the current call: flushes held-back Python text and buffered arguments, closes open
    /// strings, arrays and objects when that needs no text dropped, and marks the id, name and
    /// arguments final.
    pub fn end_tool_call(&mut self) {
        if self.calls.last().is_none_or(|c| c.ended) {
            return;
        }
        self.end_argument_value();
        let mut out = String::new();
        let (call, state) = self.current();
        if let Some(python) = state.python.as_mut() {
            python.finish(&mut out);
        }
        state.complete_json &= out.is_empty();
        state.tagged_clean &= out.is_empty();
        state.buffer.push_str(&out);
        call.arguments.push_str(&state.buffer);
        state.buffer.clear();
        // Complete, valid JSON (the usual case) needs no closers: the resumable scanner checks
        // that at a few bytes per cycle, far cheaper than the healing walk.
        if state.tagged_clean && !state.closing_quote_pending {
            // `{` and complete members: the object's `}` is all that is missing.
            call.arguments.push('}');
        } else if state.complete_json || is_complete_json(&call.arguments) {
            // Nothing to close.
        } else if let Some(healing) = heal(&call.arguments) {
            let closes_only = healing
                .closers
                .chars()
                .all(|c| matches!(c, '"' | ']' | '}'));
            if healing.only_appends(&call.arguments) && closes_only {
                call.arguments.push_str(&healing.closers);
            }
        }
        call.id_final = true;
        call.name_final = true;
        call.arguments_final = true;
        state.ended = true;
    }

    /// Whether a tool call is open (started and not ended).
    pub fn in_tool_call(&self) -> bool {
        self.calls.last().is_some_and(|c| !c.ended)
    }

    /// The snapshot. `partial`: the parse stopped at the end of a cut-off output, so an open
    /// call stays unfinished (its healed arguments are computed); otherwise open calls are
    /// ended first.
    pub fn finish(mut self, partial: bool) -> PartialMessage {
        if !partial {
            self.end_tool_call();
        }
        for (call, state) in self.message.tool_calls.iter_mut().zip(&self.calls) {
            if !state.ended {
                call.refresh_healing();
            }
        }
        self.message
    }

    /// The message built so far, by reference: no copy and no healing (open calls'
    /// [`healed_arguments`](PartialToolCall::healed_arguments) are not refreshed). Streams feed
    /// this to a [`DeltaTracker`](super::DeltaTracker), which never reads healing.
    pub fn message(&self) -> &PartialMessage {
        &self.message
    }

    /// The snapshot so far without consuming the builder (open calls stay unfinished).
    pub fn snapshot(&self) -> PartialMessage {
        let mut message = self.message.clone();
        for (call, state) in message.tool_calls.iter_mut().zip(&self.calls) {
            if !state.ended {
                call.refresh_healing();
            }
        }
        message
    }

    /// The current call (started on demand).
    fn current(&mut self) -> (&mut PartialToolCall, &mut CallState) {
        if self.calls.last().is_none_or(|c| c.ended) {
            self.start_tool_call();
        }
        let call = self
            .message
            .tool_calls
            .last_mut()
            .expect("a call was just ensured");
        let state = self.calls.last_mut().expect("a call was just ensured");
        (call, state)
    }
}

/// Whether `text` is one complete JSON value (surrounded by optional whitespace): the
/// resumable scanner in full mode, without the UTF-8 check (`text` is a `str`).
fn is_complete_json(text: &str) -> bool {
    use crate::json::{Flavour, Scan, Scanner, Target};
    let bytes = text.as_bytes();
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let start = bytes.iter().position(|b| !ws(b)).unwrap_or(bytes.len());
    match Scanner::new(Flavour::Json, Target::Value, start).resume(bytes, true) {
        Scan::Complete(end) => bytes.get(end..).is_some_and(|tail| tail.iter().all(ws)),
        _ => false,
    }
}

/// The bytes a JSON string must escape: `"`, `\\` and control characters.
static NEEDS_ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Appends `raw` escaped as the inside of a JSON string (as `serde_json` writes it: `\"`,
/// `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other control characters as `\u00XX`), in one pass:
/// runs without anything to escape are copied whole.
pub(crate) fn escape_json_into(out: &mut String, raw: &str) {
    use crate::json::scanner::{ctl_mask, eq_mask, word, LO};
    let bytes = raw.as_bytes();
    // Escapes lengthen the text a little: one reservation instead of repeated doubling.
    out.reserve(raw.len() + raw.len() / 8);
    let mut start = 0;
    let mut i = 0;
    loop {
        // Eight bytes at a time up to the next byte to escape.
        while let Some(w) = word(bytes, i) {
            let m =
                eq_mask(w, LO * u64::from(b'"')) | eq_mask(w, LO * u64::from(b'\\')) | ctl_mask(w);
            if m != 0 {
                i += (m.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        let Some(&b) = bytes.get(i) else { break };
        i += 1;
        if !NEEDS_ESCAPE[usize::from(b)] {
            continue;
        }
        let i = i - 1;
        let escaped: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        // `i` is an ASCII byte: a char boundary, as is `start`.
        out.push_str(raw.get(start..i).unwrap_or_default());
        if escaped.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(escaped);
        }
        start = i + 1;
    }
    out.push_str(raw.get(start..).unwrap_or_default());
}

#[cfg(test)]
mod escape_tests {
    use super::escape_json_into;

    #[test]
    fn escapes_like_serde_json() {
        for raw in [
            "",
            "plain",
            "a\"b\\c\nd\re\tf",
            "\u{0}\u{1}\u{8}\u{c}\u{1f}\u{7f}",
            "naïve → 日本語 \"q\"",
            "\\\\\"\"",
        ] {
            let mut out = String::new();
            escape_json_into(&mut out, raw);
            let expected = serde_json::Value::String(raw.to_owned()).to_string();
            assert_eq!(format!("\"{out}\""), expected, "{raw:?}");
        }
    }
}
