//! Small helpers shared by the response-template modules.

use serde_json::Value;

/// Python's `str.isspace()` for one character.
pub(crate) fn py_is_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `str.strip()`.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_is_space)
}

/// The Python type name of a JSON value, for messages.
pub(crate) fn py_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// A Python-style list literal of strings: `['a', 'b']`.
pub(crate) fn py_list<S: AsRef<str>>(items: &[S]) -> String {
    let inner: Vec<String> = items.iter().map(|s| format!("'{}'", s.as_ref())).collect();
    format!("[{}]", inner.join(", "))
}

/// Whether a value counts as empty for the final cleanup (`None`, `""`, `[]`, `{}`).
pub(crate) fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Whether `c` is a word character (Unicode `\w`: what Python's `regex` module and the Rust
/// engines both mean by it).
pub(crate) fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    static WORD: std::sync::OnceLock<Option<regex_automata::meta::Regex>> =
        std::sync::OnceLock::new();
    let mut buf = [0u8; 4];
    WORD.get_or_init(|| regex_automata::meta::Regex::new(r"^\w$").ok())
        .as_ref()
        .is_some_and(|re| re.is_match(c.encode_utf8(&mut buf) as &str))
}
