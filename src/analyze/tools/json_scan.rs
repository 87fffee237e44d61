//! Finding JSON values (or Python dict/list literals) inside rendered text.

use serde_json::Value;

/// A JSON value found in a text: its byte span and parsed value.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonSpan {
    /// Byte offset where the value starts.
    pub start: usize,
    /// Byte offset just after the value.
    pub end: usize,
    /// The parsed value.
    pub value: Value,
    /// The text used single quotes (a Python literal).
    pub python: bool,
}

/// Parses the JSON value that starts at `start` in `text`, if any.
pub fn json_at(text: &str, start: usize) -> Option<JsonSpan> {
    let parse = |t: &str| -> Option<(usize, Value)> {
        let mut it = serde_json::Deserializer::from_str(&t[start..]).into_iter::<Value>();
        let value = it.next()?.ok()?;
        Some((start + it.byte_offset(), value))
    };
    if let Some((end, value)) = parse(text) {
        return Some(JsonSpan {
            start,
            end,
            value,
            python: false,
        });
    }
    // Python literals: swap the quote characters (same byte length, spans stay valid).
    if !text[start..].contains('\'') {
        return None;
    }
    if let Some(span) = mixed_python_at(text, start) {
        return Some(span);
    }
    let swapped: String = text
        .chars()
        .map(|c| match c {
            '\'' => '"',
            '"' => '\'',
            c => c,
        })
        .collect();
    parse(&swapped).map(|(end, value)| JsonSpan {
        start,
        end,
        value,
        python: true,
    })
}

/// A Python literal at `start` whose strings mix both quote kinds (`{"name": "f", "arguments":
/// {'a': 'x'}}`, as a template writes a dict with `%s` inside JSON text): the scanner finds
/// where the object or list ends.
fn mixed_python_at(text: &str, start: usize) -> Option<JsonSpan> {
    use crate::json::{scan, Flavour, Scan, Target};
    let rest = &text[start..];
    if !rest.starts_with(['{', '[']) {
        return None;
    }
    let Scan::Complete(len) = scan(rest.as_bytes(), Flavour::Python, Target::Value, true) else {
        return None;
    };
    let end = start + len;
    let json = crate::json::python_to_json(&text[start..end]).ok()?;
    let value = serde_json::from_str(&json).ok()?;
    Some(JsonSpan {
        start,
        end,
        value,
        python: true,
    })
}

/// The outermost JSON object or array of `text` (starting at or after `from`) whose span
/// contains `pos`.
pub fn json_covering(text: &str, from: usize, pos: usize) -> Option<JsonSpan> {
    text[from..pos]
        .char_indices()
        .filter(|(_, c)| *c == '{' || *c == '[')
        .find_map(|(i, _)| json_at(text, from + i).filter(|s| s.end > pos))
}

/// Whether `value` holds the string `needle` as a key or as a string value anywhere.
pub fn holds_string(value: &Value, needle: &str) -> bool {
    match value {
        Value::String(s) => s == needle,
        Value::Array(items) => items.iter().any(|v| holds_string(v, needle)),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k == needle || holds_string(v, needle)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_covering_values() {
        let text = r#"<tool_call>{"name": "f", "arguments": {"a": "X"}}</tool_call>"#;
        let span = json_covering(text, 0, text.find('X').unwrap()).unwrap();
        assert_eq!(span.start, 11);
        assert_eq!(&text[span.end..], "</tool_call>");
        let mixed = r#"x {"name": "f", "arguments": {'a': "it's", 'b': None}} y"#;
        let span = json_covering(mixed, 0, mixed.find("f\"").unwrap()).unwrap();
        assert!(span.python);
        assert_eq!(&mixed[span.end..], " y");
        assert_eq!(span.value["arguments"]["a"], "it's");
        assert!(span.value["arguments"]["b"].is_null());
        let py = "[{'name': 'f'}]";
        let span = json_covering(py, 0, 5).unwrap();
        assert!(span.python);
        assert_eq!(span.value[0]["name"], "f");
    }
}
