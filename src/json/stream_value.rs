//! A JSON value streamed in pieces whose text may turn out malformed (a model writing
//! `{\"a\": 1}` where a parameter's JSON goes): [`ValueStream`] passes on the longest prefix
//! that is valid JSON, drops the text from the first byte that cannot continue a value, and at
//! the end completes what it passed on **by appending only** (a closing quote, `null` for a
//! value a key still waits for, the rest of a cut word, closing brackets). Streams never retract
//! what they emitted, and the arguments they build stay valid JSON.
//!
//! Cost: each byte is scanned once (the resumable [`Scanner`]), plus one rescan of the piece
//! in which the text fails.

use super::scanner::{Container, Flavour, Scan, Scanner, State, StrKind, Target};

/// A JSON value fed in pieces (see the module docs).
#[derive(Debug, Clone)]
pub struct ValueStream {
    /// The value's text so far.
    buf: String,
    /// Scanner state at the end of what was passed on.
    scanner: Scanner,
    /// Bytes of `buf` passed on.
    emitted: usize,
    /// The value is complete, or its text failed: nothing more is passed on.
    closed: bool,
    /// The value was complete (nothing to append at the end).
    complete: bool,
    /// The value's first byte came (the scanner starts there).
    started: bool,
    /// Where the value's first byte is.
    start: usize,
}

impl Default for ValueStream {
    fn default() -> Self {
        ValueStream::new()
    }
}

impl ValueStream {
    /// A stream for one JSON value.
    pub fn new() -> ValueStream {
        ValueStream {
            buf: String::new(),
            scanner: Scanner::new(Flavour::Json, Target::Value, 0),
            emitted: 0,
            closed: false,
            complete: false,
            started: false,
            start: 0,
        }
    }

    /// Feeds `text`; returns what may be passed on now.
    pub fn push(&mut self, text: &str) -> &str {
        if self.closed {
            return "";
        }
        let from = self.emitted;
        self.buf.push_str(text);
        if !self.started {
            // Whitespace before the value passes on as it is.
            let Some(start) = self.buf.find(|c: char| !c.is_ascii_whitespace()) else {
                self.emitted = self.buf.len();
                return &self.buf[from..];
            };
            self.start = start;
            self.scanner = Scanner::new(Flavour::Json, Target::Value, start);
            self.started = true;
        }
        self.emitted = match self.scanner.resume(self.buf.as_bytes(), false) {
            Scan::NeedMore => self.buf.len(),
            Scan::Complete(end) => {
                self.closed = true;
                self.complete = true;
                end
            }
            Scan::Fail { offset, .. } => {
                // The state right before the offending byte: the valid part scanned again
                // (once per value, so the common path keeps no copy of the state).
                let mut end = offset.min(self.buf.len());
                while !self.buf.is_char_boundary(end) {
                    end -= 1;
                }
                self.scanner = Scanner::new(Flavour::Json, Target::Value, self.start);
                let _ = self.scanner.resume(&self.buf.as_bytes()[..end], false);
                self.closed = true;
                end
            }
        };
        &self.buf[from..self.emitted]
    }

    /// Ends the value: what completes the text passed on to one JSON value (appended only).
    pub fn finish(&self) -> String {
        if self.complete {
            return String::new();
        }
        completion(&self.scanner)
    }
}

/// The shortest append that completes a valid JSON prefix in `scanner`'s state.
fn completion(scanner: &Scanner) -> String {
    let mut out = String::new();
    match scanner.state {
        State::Value => out.push_str("null"),
        State::ArrFirst | State::ObjFirst | State::AfterValue | State::Done(_) => {}
        State::ObjKey => out.push_str("\"\": null"),
        State::Colon => out.push_str(": null"),
        State::Str(kind) => close_string(kind, &mut out),
        State::Esc(kind) => {
            out.push('\\');
            close_string(kind, &mut out);
        }
        State::Hex {
            kind,
            left,
            val,
            step,
        } => {
            for _ in 0..left {
                out.push('0');
            }
            let full = val << (4 * u32::from(left));
            if step == 1 && (0xD800..0xDC00).contains(&full) {
                // A high surrogate needs its low half.
                out.push_str("\\udc00");
            }
            close_string(kind, &mut out);
        }
        State::SurrogateBackslash(kind) => {
            out.push_str("\\udc00");
            close_string(kind, &mut out);
        }
        State::SurrogateU(kind) => {
            out.push_str("udc00");
            close_string(kind, &mut out);
        }
        State::Number(n) => {
            if !n.can_end() {
                out.push('0');
            }
        }
        State::Word { word, idx } => {
            out.push_str(&String::from_utf8_lossy(
                word.get(usize::from(idx)..).unwrap_or_default(),
            ));
        }
    }
    for container in scanner.stack.iter().rev() {
        out.push(match container {
            Container::Object => '}',
            Container::Array => ']',
        });
    }
    out
}

/// Closes an open string; a key then gets a `null` value.
fn close_string(kind: StrKind, out: &mut String) {
    out.push('"');
    if kind == StrKind::Key {
        out.push_str(": null");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `text` in pieces of `size` bytes (at char boundaries); the emitted text and the
    /// completion.
    fn stream(text: &str, size: usize) -> String {
        let mut s = ValueStream::new();
        let mut out = String::new();
        let mut at = 0;
        while at < text.len() {
            let mut end = (at + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            out.push_str(s.push(&text[at..end]));
            at = end;
        }
        out.push_str(&s.finish());
        out
    }

    #[test]
    fn valid_values_pass_unchanged_and_malformed_ones_end_valid() {
        let cases = [
            (
                r#"{"a": [1, 2.5, true], "b": {"c": null}}"#,
                r#"{"a": [1, 2.5, true], "b": {"c": null}}"#,
            ),
            (r#"{\"a\": 1}"#, "{}"),
            (r#"{"a": 1, b}"#, r#"{"a": 1, "": null}"#),
            (r#"{"a": "x\q"}"#, r#"{"a": "x\\"}"#),
            (r#"{"a": tru e}"#, r#"{"a": true}"#),
            (r#"{"a": 1.}"#, r#"{"a": 1.0}"#),
            (r#"{"key"}"#, r#"{"key": null}"#),
            (r#"{"a": "\ud83d x"}"#, r#"{"a": "\ud83d\udc00"}"#),
            (r#"[1, 2,]"#, "[1, 2,null]"),
            (r#"{"a": 1} tail"#, r#"{"a": 1}"#),
            ("[\"日本\", 'x']", "[\"日本\", null]"),
            (" \n [1]", " \n [1]"),
        ];
        for (input, want) in cases {
            for size in [1, 2, 3, 7, 1000] {
                let got = stream(input, size);
                // Whatever is cut off, the result is one JSON value.
                assert!(
                    serde_json::from_str::<serde_json::Value>(&got).is_ok(),
                    "{input:?} in pieces of {size}: {got:?} is not JSON"
                );
                assert_eq!(got, want, "{input:?} in pieces of {size}");
            }
        }
    }
}
