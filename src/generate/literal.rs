//! Tagged argument values written as literals: strings inside the template's own quotes
//! (`<|"|>text<|"|>`, `'text'`), everything else bare (`42`, `true`, `{key:<|"|>v<|"|>}`), with
//! bare object keys. [`literal_to_json`] turns such a value into JSON text.
//!
//! Containers nested in a value are written with the format's own punctuation: the text
//! between an argument's name and its value (`:`, `=`) between a key and its value, and the
//! argument separator (`,`, `;`) between items ([`LiteralSyntax`]). JSON's `:` and `,` are
//! read too.

use serde_json::Value;

use crate::analyze::ArgumentMarkers;

/// How a format writes literal values: its string quotes, and the punctuation of nested
/// containers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiteralSyntax {
    /// Opens a string.
    pub open: String,
    /// Closes a string.
    pub close: String,
    /// Between a key and its value, besides `:` (empty: only `:`).
    pub key: String,
    /// Between two items, besides `,` (empty: only `,`).
    pub item: String,
}

impl LiteralSyntax {
    /// The literal syntax of tagged arguments: their string quotes, the argument name
    /// suffix and the argument separator (trimmed; kept only when punctuation).
    pub fn of(a: &ArgumentMarkers) -> LiteralSyntax {
        let punctuation = |m: &str| {
            let m = m.trim();
            let plain = !m.is_empty()
                && m.chars().count() <= 2
                && m.chars().all(|c| {
                    c.is_ascii_punctuation() && !matches!(c, '"' | '\'' | '{' | '}' | '[' | ']')
                });
            if plain && m != ":" && m != "," {
                m.to_owned()
            } else {
                String::new()
            }
        };
        LiteralSyntax {
            open: a.string_open.clone(),
            close: a.string_close.clone(),
            key: punctuation(&a.name_suffix),
            item: punctuation(&a.separator),
        }
    }

    /// Quotes only (JSON punctuation).
    pub fn quoted(open: &str, close: &str) -> LiteralSyntax {
        LiteralSyntax {
            open: open.to_owned(),
            close: close.to_owned(),
            ..LiteralSyntax::default()
        }
    }
}

/// Converts a literal value with string quotes `open`/`close` to JSON text (JSON
/// punctuation; see [`literal_to_json_in`]).
pub fn literal_to_json(raw: &str, open: &str, close: &str) -> String {
    literal_to_json_in(raw, &LiteralSyntax::quoted(open, close))
}

/// Converts a literal value written in `syntax` to JSON text. Quote characters `'`/`"` mean
/// Python literals (see [`crate::json::python_to_json`]). Anything that is not a number,
/// boolean or null, and not a key, becomes a JSON string; never fails.
pub fn literal_to_json_in(raw: &str, syntax: &LiteralSyntax) -> String {
    let (open, close) = (syntax.open.as_str(), syntax.close.as_str());
    let (key, item) = (syntax.key.as_str(), syntax.item.as_str());
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
        if !key.is_empty() && rest.starts_with(key) {
            out.push(':');
            rest = &rest[key.len()..];
            continue;
        }
        if !item.is_empty() && rest.starts_with(item) {
            out.push(',');
            rest = &rest[item.len()..];
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        if matches!(c, '{' | '}' | '[' | ']' | ',' | ':') || c.is_whitespace() {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        }
        // A bare key where a key goes (after `{` or `,`): all the text up to the key's
        // punctuation, spaces included (`{Model Name:1}`), as the template writes keys.
        if let Some(len) = spaced_key(rest, &out, syntax) {
            out.push_str(&Value::String(rest[..len].trim_end().to_owned()).to_string());
            rest = &rest[len..];
            continue;
        }
        // A bare word: up to punctuation, whitespace or a string opener.
        let mut end = rest.len();
        for (i, ch) in rest.char_indices() {
            if matches!(ch, '{' | '}' | '[' | ']' | ',' | ':')
                || ch.is_whitespace()
                || (!open.is_empty() && rest[i..].starts_with(open))
                || (!key.is_empty() && rest[i..].starts_with(key))
                || (!item.is_empty() && rest[i..].starts_with(item))
            {
                end = i;
                break;
            }
        }
        let end = end.max(c.len_utf8());
        let word = &rest[..end];
        rest = &rest[end..];
        let after = rest.trim_start();
        let is_key = after.starts_with(':') || (!key.is_empty() && after.starts_with(key));
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

/// The length of the bare key `rest` starts with, spaces included, when a key goes here (the
/// last JSON written is `{` or `,`) and the text up to the first punctuation ends at the
/// key's punctuation (`:` or the format's own); `None` otherwise.
fn spaced_key(rest: &str, out: &str, syntax: &LiteralSyntax) -> Option<usize> {
    if !matches!(out.trim_end().chars().last(), Some('{' | ',')) {
        return None;
    }
    let (open, key, item) = (
        syntax.open.as_str(),
        syntax.key.as_str(),
        syntax.item.as_str(),
    );
    for (i, c) in rest.char_indices() {
        let at = &rest[i..];
        if c == ':' || (!key.is_empty() && at.starts_with(key)) {
            return (i > 0 && rest[..i].contains(char::is_whitespace)).then_some(i);
        }
        if matches!(c, '{' | '}' | '[' | ']' | ',' | '\n' | '\r')
            || (!open.is_empty() && at.starts_with(open))
            || (!item.is_empty() && at.starts_with(item))
        {
            return None;
        }
    }
    None
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

    #[test]
    fn nested_containers_in_the_format_s_own_punctuation() {
        let syntax = super::LiteralSyntax {
            open: "<s>".into(),
            close: "</s>".into(),
            key: "=".into(),
            item: ";".into(),
        };
        let json = super::literal_to_json_in("{lang=<s>en; fr</s>; max=3; tags=[1; 2]}", &syntax);
        assert_eq!(json, "{\"lang\":\"en; fr\", \"max\":3, \"tags\":[1, 2]}");
        // Keys with spaces in them, as far as the key's punctuation.
        let q = "<|\"|>";
        let json =
            super::literal_to_json("{Model Name:{two words:[]}, a b :<|\"|>x y<|\"|>}", q, q);
        assert_eq!(json, "{\"Model Name\":{\"two words\":[]}, \"a b\":\"x y\"}");
        let json = super::literal_to_json_in("{two words=1; b=2}", &syntax);
        assert_eq!(json, "{\"two words\":1, \"b\":2}");
        // JSON punctuation is read too.
        let json = super::literal_to_json_in("{a:1,b=2}", &syntax);
        assert_eq!(json, "{\"a\":1,\"b\":2}");
    }
}
