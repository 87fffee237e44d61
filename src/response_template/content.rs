//! Content types: how a region's raw text becomes its value.
//!
//! | type | value | `content_args` |
//! | --- | --- | --- |
//! | `text` | the text, stripped | `strip` (default `true`) |
//! | `int` | Python `int()` of the stripped text | |
//! | `float` | Python `float()` of the stripped text (must be finite) | |
//! | `bool` | `true`/`false`/`1`/`0`/`yes`/`no`, any case | |
//! | `json` | JSON after `string_delims` then `unquoted_keys` rewriting | `string_delims`, `unquoted_keys`, `allow_non_json` |
//! | `xml-inline` | a dict from each `tag_pattern` match | `tag_pattern`, `value_parser`, `merge_duplicates` |
//! | `kv-lines` | a dict from `key: value` lines | `line_sep`, `kv_sep`, `strip`, `value_parser` |

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::pattern::TagPattern;
use super::util::{py_strip, py_type};

/// The content type names, sorted (as listed in the unknown-parser error).
pub(crate) const CONTENT_TYPES: [&str; 7] = [
    "bool",
    "float",
    "int",
    "json",
    "kv-lines",
    "text",
    "xml-inline",
];

/// A compiled content parser.
#[derive(Debug)]
pub(crate) enum Content {
    Text {
        strip: bool,
    },
    Int,
    Float,
    Bool,
    Json(JsonArgs),
    XmlInline {
        tag: TagPattern,
        value_parser: Option<Box<Content>>,
        merge_duplicates: bool,
    },
    KvLines {
        line_sep: String,
        kv_sep: String,
        strip: bool,
        value_parser: Option<Box<Content>>,
    },
}

/// Arguments of the `json` content type.
#[derive(Debug, Default)]
pub(crate) struct JsonArgs {
    unquoted_keys: bool,
    string_delims: Vec<(String, String)>,
    allow_non_json: bool,
}

fn arg_bool(args: &Map<String, Value>, key: &str, default: bool) -> Result<bool, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(format!(
            "content_args '{key}' must be a bool, got {}",
            py_type(other)
        )),
    }
}

fn arg_str(args: &Map<String, Value>, key: &str, default: &str) -> Result<String, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default.to_owned()),
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("content_args '{key}' cannot be empty")),
        Some(other) => Err(format!(
            "content_args '{key}' must be a string, got {}",
            py_type(other)
        )),
    }
}

impl Content {
    /// Compiles a content type with its arguments.
    pub(crate) fn compile(name: &str, args: &Map<String, Value>) -> Result<Content, String> {
        Ok(match name {
            "text" => Content::Text {
                strip: arg_bool(args, "strip", true)?,
            },
            "int" => Content::Int,
            "float" => Content::Float,
            "bool" => Content::Bool,
            "json" => {
                let mut delims = Vec::new();
                match args.get("string_delims") {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(pairs)) => {
                        for pair in pairs {
                            match pair.as_array().map(Vec::as_slice) {
                                Some([Value::String(o), Value::String(c)])
                                    if !o.is_empty() && !c.is_empty() =>
                                {
                                    delims.push((o.clone(), c.clone()))
                                }
                                _ => {
                                    return Err("content_args 'string_delims' must be a list of \
                                                [open, close] pairs of non-empty strings"
                                        .into())
                                }
                            }
                        }
                    }
                    Some(other) => {
                        return Err(format!(
                            "content_args 'string_delims' must be a list, got {}",
                            py_type(other)
                        ))
                    }
                }
                Content::Json(JsonArgs {
                    unquoted_keys: arg_bool(args, "unquoted_keys", false)?,
                    string_delims: delims,
                    allow_non_json: arg_bool(args, "allow_non_json", false)?,
                })
            }
            "xml-inline" => {
                let pattern = match args.get("tag_pattern") {
                    Some(Value::String(p)) => p,
                    Some(other) => {
                        return Err(format!(
                            "content_args 'tag_pattern' must be a string, got {}",
                            py_type(other)
                        ))
                    }
                    None => return Err("xml-inline requires content_args 'tag_pattern'".into()),
                };
                let tag = TagPattern::python(pattern)
                    .map_err(|e| format!("invalid tag_pattern {pattern:?}: {e}"))?;
                if !tag.has_group("key") || !tag.has_group("value") {
                    return Err(
                        "xml-inline 'tag_pattern' must contain named groups 'key' and \
                                'value'"
                            .into(),
                    );
                }
                Content::XmlInline {
                    tag,
                    value_parser: value_parser(args)?,
                    merge_duplicates: arg_bool(args, "merge_duplicates", false)?,
                }
            }
            "kv-lines" => Content::KvLines {
                line_sep: arg_str(args, "line_sep", "\n")?,
                kv_sep: arg_str(args, "kv_sep", ":")?,
                strip: arg_bool(args, "strip", true)?,
                value_parser: value_parser(args)?,
            },
            other => {
                return Err(format!(
                    "unknown content parser '{other}'. Available: {}",
                    super::util::py_list(&CONTENT_TYPES)
                ))
            }
        })
    }

    /// Whether chunks of this type are raw text that needs parsing.
    pub(crate) fn dirty(&self) -> bool {
        !matches!(
            self,
            Content::Text { .. } | Content::Int | Content::Float | Content::Bool
        )
    }

    /// Parses a region's raw text.
    pub(crate) fn parse(&self, raw: &str) -> Result<Value, String> {
        match self {
            Content::Text { strip } => Ok(Value::String(
                if *strip { py_strip(raw) } else { raw }.to_owned(),
            )),
            Content::Int => parse_int(py_strip(raw))
                .map(Value::from)
                .ok_or_else(|| format!("invalid literal for int(): {:?}", py_strip(raw))),
            Content::Float => parse_float(py_strip(raw))
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| format!("could not convert string to float: {:?}", py_strip(raw))),
            Content::Bool => parse_bool(py_strip(raw))
                .map(Value::Bool)
                .ok_or_else(|| format!("could not convert string to bool: {:?}", py_strip(raw))),
            Content::Json(args) => args.parse(raw),
            Content::XmlInline {
                tag,
                value_parser,
                merge_duplicates,
            } => {
                let pairs = tag.pairs(raw)?;
                // Sized once (repeated keys only leave some room unused).
                let mut map = Map::with_capacity(pairs.len());
                let mut merged = Vec::new();
                for (key, value) in pairs {
                    let value = match value_parser {
                        Some(p) => p.parse(value)?,
                        None => Value::String(value.to_owned()),
                    };
                    insert(
                        &mut map,
                        &mut merged,
                        key.to_owned(),
                        value,
                        *merge_duplicates,
                    );
                }
                Ok(Value::Object(map))
            }
            Content::KvLines {
                line_sep,
                kv_sep,
                strip,
                value_parser,
            } => {
                let mut map = Map::new();
                for line in raw.split(line_sep.as_str()) {
                    let Some((key, value)) = line.split_once(kv_sep.as_str()) else {
                        continue;
                    };
                    let (key, value) = if *strip {
                        (py_strip(key), py_strip(value))
                    } else {
                        (key, value)
                    };
                    let value = match value_parser {
                        Some(p) => p.parse(value)?,
                        None => Value::String(value.to_owned()),
                    };
                    map.insert(key.to_owned(), value);
                }
                Ok(Value::Object(map))
            }
        }
    }
}

/// The nested `value_parser` of `xml-inline` / `kv-lines`.
fn value_parser(args: &Map<String, Value>) -> Result<Option<Box<Content>>, String> {
    match args.get("value_parser") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(spec)) => {
            let Some(Value::String(name)) = spec.get("name") else {
                return Err("content_args 'value_parser' needs a string 'name'".into());
            };
            let empty = Map::new();
            let args = match spec.get("args") {
                None | Some(Value::Null) => &empty,
                Some(Value::Object(a)) => a,
                Some(other) => {
                    return Err(format!(
                        "value_parser 'args' must be a dict, got {}",
                        py_type(other)
                    ))
                }
            };
            Ok(Some(Box::new(Content::compile(name, args)?)))
        }
        Some(other) => Err(format!(
            "content_args 'value_parser' must be a dict, got {}",
            py_type(other)
        )),
    }
}

/// Inserts a key; with `merge`, a repeated key collects its values into a list (`merged`
/// remembers which keys already hold such a collected list).
fn insert(
    map: &mut Map<String, Value>,
    merged: &mut Vec<String>,
    key: String,
    value: Value,
    merge: bool,
) {
    if !merge {
        map.insert(key, value);
        return;
    }
    let collected = merged.contains(&key);
    match map.get_mut(&key) {
        Some(Value::Array(items)) if collected => items.push(value),
        Some(existing) => {
            let first = existing.take();
            *existing = Value::Array(vec![first, value]);
            merged.push(key);
        }
        None => {
            map.insert(key, value);
        }
    }
}

/// Python `int()` of already-stripped text: sign, digits, single underscores between digits.
pub(crate) fn parse_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let mut value: i64 = 0;
    for c in digits.chars() {
        if c == '_' {
            continue;
        }
        let d = i64::from(c.to_digit(10)?);
        value = value
            .checked_mul(10)?
            .checked_add(if neg { -d } else { d })?;
    }
    Some(value)
}

/// Python `float()` of already-stripped text (finite values only).
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    if s.contains("__") || s.starts_with('_') || s.ends_with('_') {
        return None;
    }
    let cleaned: Cow<str> = if s.contains('_') {
        Cow::Owned(s.chars().filter(|c| *c != '_').collect())
    } else {
        Cow::Borrowed(s)
    };
    let body = cleaned.trim_start_matches(['+', '-']);
    let word = |w: &str| {
        body.get(..w.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(w))
    };
    if word("inf") || word("nan") {
        return None;
    }
    let value: f64 = cleaned.parse().ok()?;
    value.is_finite().then_some(value)
}

/// `Some(true)` when `s` is one of the `yes` words, `Some(false)` when one of the `no` words,
/// ignoring ASCII case (the words are lowercase).
pub(crate) fn parse_bool_word(s: &str, yes: &[&str], no: &[&str]) -> Option<bool> {
    let is = |words: &[&str]| words.iter().any(|w| s.eq_ignore_ascii_case(w));
    if is(yes) {
        Some(true)
    } else if is(no) {
        Some(false)
    } else {
        None
    }
}

/// The `bool` content type: `true`/`1`/`yes` or `false`/`0`/`no`, any case.
fn parse_bool(s: &str) -> Option<bool> {
    parse_bool_word(s, &["true", "1", "yes"], &["false", "0", "no"])
}

impl JsonArgs {
    fn parse(&self, raw: &str) -> Result<Value, String> {
        let stripped = py_strip(raw);
        let plain = self.string_delims.is_empty() && !self.unquoted_keys;
        let json_start = |b: &u8| b"{[\"-0123456789tfn".contains(b);
        if plain && self.allow_non_json && !stripped.as_bytes().first().is_some_and(json_start) {
            // Cannot be JSON: skip the failing parse.
            return Ok(Value::String(stripped.to_owned()));
        }
        let mut rewritten = None;
        if !self.string_delims.is_empty() {
            rewritten = Some(apply_string_delims(stripped, &self.string_delims));
        }
        if self.unquoted_keys {
            rewritten = Some(quote_keys(rewritten.as_deref().unwrap_or(stripped)));
        }
        match super::json_value::from_str(rewritten.as_deref().unwrap_or(stripped)) {
            Ok(v) => Ok(v),
            Err(_) if self.allow_non_json => Ok(Value::String(py_strip(raw).to_owned())),
            Err(e) => Err(format!("invalid JSON: {e}")),
        }
    }
}

/// Replaces each `open ... close` span with a JSON string literal of its inner text. Text
/// inside ordinary `"..."` strings is left alone.
fn apply_string_delims(text: &str, delims: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'outer: while !rest.is_empty() {
        if rest.starts_with('"') {
            let end = json_string_end(rest);
            let (s, tail) = rest.split_at(end);
            out.push_str(s);
            rest = tail;
            continue;
        }
        for (open, close) in delims {
            if let Some(after) = rest.strip_prefix(open.as_str()) {
                if let Some(pos) = after.find(close.as_str()) {
                    let inner = after.get(..pos).unwrap_or("");
                    out.push_str(&Value::String(inner.to_owned()).to_string());
                    rest = after.get(pos + close.len()..).unwrap_or("");
                    continue 'outer;
                }
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

/// Byte length of the JSON string literal at the start of `s` (or all of `s` if unterminated).
fn json_string_end(s: &str) -> usize {
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

/// Quotes bare identifier keys (`{name: 1}` → `{"name": 1}`) outside string literals.
fn quote_keys(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    let mut after_brace_or_comma = false;
    while let Some(c) = rest.chars().next() {
        if c == '"' {
            let end = json_string_end(rest);
            out.push_str(rest.get(..end).unwrap_or(rest));
            rest = rest.get(end..).unwrap_or("");
            after_brace_or_comma = false;
            continue;
        }
        if after_brace_or_comma && (c.is_alphabetic() || c == '_' || c == '$') {
            let len = rest
                .char_indices()
                .find(|(_, ch)| !(ch.is_alphanumeric() || *ch == '_' || *ch == '$' || *ch == '-'))
                .map_or(rest.len(), |(i, _)| i);
            let ident = rest.get(..len).unwrap_or("");
            let tail = rest.get(len..).unwrap_or("");
            if tail.trim_start().starts_with(':') {
                out.push('"');
                out.push_str(ident);
                out.push('"');
            } else {
                out.push_str(ident);
            }
            rest = tail;
            after_brace_or_comma = false;
            continue;
        }
        out.push(c);
        if c == '{' || c == ',' {
            after_brace_or_comma = true;
        } else if !c.is_whitespace() {
            after_brace_or_comma = false;
        }
        rest = rest.get(c.len_utf8()..).unwrap_or("");
    }
    out
}

#[cfg(test)]
#[path = "content_tests.rs"]
mod tests;
