//! The `json` content type's dialect rewrites: `string_delims` and `unquoted_keys`.
//!
//! Both rewrite the text before it is read as strict JSON, and both leave JSON string literals
//! alone (a deliberate deviation: the reference also rewrites inside string literals, which
//! corrupts values such as `"a,b:c"`):
//!
//! - `string_delims` (`[[open, close], ...]`): left to right, outside string literals, an
//!   `open` (the first pair, in list order, whose `open` starts there and whose `close` follows)
//!   up to the first `close` after it becomes a JSON string of the text between them;
//! - `unquoted_keys`: outside string literals, a run of word characters (Unicode `\w`) right
//!   after `{` or `,` and right before `:` is quoted (the reference's
//!   `(?<=[{,])(\w+):` → `"\1":`).

use serde_json::Value;

use super::util::is_word_char;

/// Byte length of the JSON string literal at the start of `s` (or all of `s` if unterminated).
fn string_literal_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut i = 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    s.len()
}

/// Replaces each `open ... close` span outside string literals with a JSON string of its
/// inner text.
pub(crate) fn apply_string_delims(text: &str, delims: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'outer: while let Some(c) = rest.chars().next() {
        if c == '"' {
            let (literal, tail) = rest.split_at(string_literal_len(rest).min(rest.len()));
            out.push_str(literal);
            rest = tail;
            continue;
        }
        for (open, close) in delims {
            let Some(after) = rest.strip_prefix(open.as_str()) else {
                continue;
            };
            if let Some(pos) = after.find(close.as_str()) {
                let inner = after.get(..pos).unwrap_or_default();
                out.push_str(&Value::String(inner.to_owned()).to_string());
                rest = after.get(pos + close.len()..).unwrap_or_default();
                continue 'outer;
            }
        }
        out.push(c);
        rest = rest.get(c.len_utf8()..).unwrap_or_default();
    }
    out
}

/// Quotes bare keys: a run of word characters right after `{` or `,` and right before `:`,
/// outside string literals.
pub(crate) fn quote_keys(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    let mut after_open = false;
    while let Some(c) = rest.chars().next() {
        if c == '"' {
            let (literal, tail) = rest.split_at(string_literal_len(rest).min(rest.len()));
            out.push_str(literal);
            rest = tail;
            after_open = false;
            continue;
        }
        if after_open && is_word_char(c) {
            let len = rest
                .char_indices()
                .find(|(_, ch)| !is_word_char(*ch))
                .map_or(rest.len(), |(i, _)| i);
            let (word, tail) = rest.split_at(len);
            if tail.starts_with(':') {
                out.push('"');
                out.push_str(word);
                out.push_str("\":");
                rest = tail.get(1..).unwrap_or_default();
            } else {
                out.push_str(word);
                rest = tail;
            }
            after_open = false;
            continue;
        }
        out.push(c);
        after_open = c == '{' || c == ',';
        rest = rest.get(c.len_utf8()..).unwrap_or_default();
    }
    out
}

#[cfg(test)]
#[path = "json_dialect_tests.rs"]
mod tests;
