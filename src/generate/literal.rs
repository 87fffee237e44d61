//! Tagged argument values written as literals: strings inside the template's own quotes
//! (`<|"|>text<|"|>`, `'text'`), everything else bare (`42`, `true`, `{key:<|"|>v<|"|>}`), with
//! bare object keys. [`literal_to_json`] turns such a value into JSON text.

use serde_json::Value;

/// Converts a literal value with string quotes `open`/`close` to JSON text. Quote characters
/// `'`/`"` mean Python literals (see [`crate::json::python_to_json`]). Anything that is not a
/// number, boolean or null, and not a key, becomes a JSON string; never fails.
pub fn literal_to_json(raw: &str, open: &str, close: &str) -> String {
    let raw = raw.trim();
    if open == "'" || open == "\"" {
        if let Ok(json) = crate::json::python_to_json(raw) {
            return json;
        }
        return Value::String(raw.to_owned()).to_string();
    }
    let mut out = String::with_capacity(raw.len() + 8);
    let mut rest = raw;
    while !rest.is_empty() {
        if !open.is_empty() && rest.starts_with(open) {
            let inner = &rest[open.len()..];
            let end = if close.is_empty() {
                None
            } else {
                inner.find(close)
            };
            let (text, after) = match end {
                Some(at) => (&inner[..at], &inner[at + close.len()..]),
                None => (inner, ""),
            };
            out.push_str(&Value::String(text.to_owned()).to_string());
            rest = after;
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        if matches!(c, '{' | '}' | '[' | ']' | ',' | ':') || c.is_whitespace() {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        }
        // A bare word: up to punctuation, whitespace or a string opener.
        let mut end = rest.len();
        for (i, ch) in rest.char_indices() {
            if matches!(ch, '{' | '}' | '[' | ']' | ',' | ':')
                || ch.is_whitespace()
                || (!open.is_empty() && rest[i..].starts_with(open))
            {
                end = i;
                break;
            }
        }
        let end = end.max(c.len_utf8());
        let word = &rest[..end];
        rest = &rest[end..];
        let is_key = rest.trim_start().starts_with(':');
        let scalar = match word {
            "True" => Some("true".to_owned()),
            "False" => Some("false".to_owned()),
            "None" => Some("null".to_owned()),
            _ => serde_json::from_str::<Value>(word)
                .ok()
                .filter(|v| !v.is_object() && !v.is_array() && !v.is_string())
                .map(|_| word.to_owned()),
        };
        match scalar {
            Some(json) if !is_key => out.push_str(&json),
            _ => out.push_str(&Value::String(word.to_owned()).to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::literal_to_json;

    #[test]
    fn custom_quotes_bare_keys_and_scalars() {
        let q = "<|\"|>";
        assert_eq!(literal_to_json("<|\"|>London<|\"|>", q, q), "\"London\"");
        assert_eq!(literal_to_json("-7", q, q), "-7");
        assert_eq!(literal_to_json("1.5e10", q, q), "1.5e10");
        assert_eq!(
            literal_to_json("{theme:<|\"|>dark<|\"|>,count:2}", q, q),
            "{\"theme\":\"dark\",\"count\":2}"
        );
        assert_eq!(
            literal_to_json("[<|\"|>a, b<|\"|>,<|\"|>c<|\"|>]", q, q),
            "[\"a, b\",\"c\"]"
        );
        assert_eq!(literal_to_json("True", "'", "'"), "true");
    }
}
