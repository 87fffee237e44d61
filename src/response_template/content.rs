//! Content types: how a region's raw text becomes its value, as the reference computes it.
//!
//! | type | value | `content_args` |
//! | --- | --- | --- |
//! | `text` | the text, stripped | `strip` (default `true`) |
//! | `int` | Python `int()` of the text | `strip` |
//! | `float` | Python `float()` of the text (must be finite) | `strip` |
//! | `bool` | `true` when the (stripped) text lowercased is `true` or `1`, else `false` | `strip` |
//! | `json` | strict JSON after the `string_delims` then `unquoted_keys` rewrites ([`super::json_dialect`]); on failure, with `allow_non_json`, the (stripped) text | `string_delims`, `unquoted_keys`, `allow_non_json`, `strip` |
//! | `xml-inline` | a dict from each `tag_pattern` match (`key` → `value`) | `tag_pattern`, `value_parser`, `merge_duplicates` |
//! | `kv-lines` | a dict from `key: value` lines | `line_sep`, `kv_sep`, `strip`, `value_parser` |
//!
//! Loading is strict: an argument a type does not take, a value of the wrong type, an empty
//! separator, a `tag_pattern` that does not compile or lacks the `key` or `value` group, an
//! unknown `value_parser` are load errors naming the argument (the reference accepts them,
//! and fails, or silently does something else, only when a region of the field closes).

use serde_json::{Map, Value};

use super::json_dialect::{apply_string_delims, quote_keys};
use super::pattern::TagPattern;
use super::py_number::{py_bool, py_float, py_int};
use super::util::{py_list, py_strip, py_type};

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

/// The arguments each content type takes.
fn known_args(name: &str) -> &'static [&'static str] {
    match name {
        "json" => &["allow_non_json", "string_delims", "strip", "unquoted_keys"],
        "xml-inline" => &["merge_duplicates", "tag_pattern", "value_parser"],
        "kv-lines" => &["kv_sep", "line_sep", "strip", "value_parser"],
        _ => &["strip"],
    }
}

/// A content-argument error: the path of the offending key below `content_args` and the
/// message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ArgError {
    pub(crate) path: Vec<String>,
    pub(crate) message: String,
}

impl ArgError {
    fn new(key: &str, message: impl Into<String>) -> ArgError {
        ArgError {
            path: vec![key.to_owned()],
            message: message.into(),
        }
    }

    /// The error of a nested argument map, below `key`.
    fn under(mut self, key: &str) -> ArgError {
        self.path.insert(0, key.to_owned());
        self
    }
}

/// A compiled content parser.
#[derive(Debug)]
pub(crate) enum Content {
    Text {
        strip: bool,
    },
    Int,
    Float,
    Bool {
        strip: bool,
    },
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
    strip: bool,
}

fn arg_bool(args: &Map<String, Value>, key: &str, default: bool) -> Result<bool, ArgError> {
    match args.get(key) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(ArgError::new(
            key,
            format!(
                "content_args '{key}' must be a bool, got {}",
                py_type(other)
            ),
        )),
    }
}

fn arg_str(args: &Map<String, Value>, key: &str, default: &str) -> Result<String, ArgError> {
    match args.get(key) {
        None => Ok(default.to_owned()),
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(ArgError::new(
            key,
            format!("content_args '{key}' cannot be empty"),
        )),
        Some(other) => Err(ArgError::new(
            key,
            format!(
                "content_args '{key}' must be a string, got {}",
                py_type(other)
            ),
        )),
    }
}

fn string_delims(args: &Map<String, Value>) -> Result<Vec<(String, String)>, ArgError> {
    const KEY: &str = "string_delims";
    let pairs = match args.get(KEY) {
        None => return Ok(Vec::new()),
        Some(Value::Array(pairs)) => pairs,
        Some(other) => {
            return Err(ArgError::new(
                KEY,
                format!(
                    "content_args '{KEY}' must be a list, got {}",
                    py_type(other)
                ),
            ))
        }
    };
    let mut delims = Vec::with_capacity(pairs.len());
    for pair in pairs {
        match pair.as_array().map(Vec::as_slice) {
            Some([Value::String(o), Value::String(c)]) if !o.is_empty() && !c.is_empty() => {
                delims.push((o.clone(), c.clone()))
            }
            _ => {
                return Err(ArgError::new(
                    KEY,
                    format!(
                        "content_args '{KEY}' must be a list of [open, close] pairs of \
                         non-empty strings, got {pair}"
                    ),
                ))
            }
        }
    }
    Ok(delims)
}

impl Content {
    /// Compiles a content type with its arguments. Errors name the unknown type, or the
    /// argument at fault.
    pub(crate) fn compile(name: &str, args: &Map<String, Value>) -> Result<Content, ArgError> {
        if !CONTENT_TYPES.contains(&name) {
            return Err(ArgError {
                path: Vec::new(),
                message: format!(
                    "unknown content parser '{name}'. Available: {}",
                    py_list(&CONTENT_TYPES)
                ),
            });
        }
        let known = known_args(name);
        if let Some(unknown) = args.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(ArgError::new(
                unknown,
                format!(
                    "content_args has an unknown key '{unknown}' (content type '{name}' takes {})",
                    py_list(known)
                ),
            ));
        }
        Ok(match name {
            "int" | "float" => {
                // `int()`/`float()` strip whitespace themselves: `strip` changes nothing.
                arg_bool(args, "strip", true)?;
                if name == "int" {
                    Content::Int
                } else {
                    Content::Float
                }
            }
            "bool" => Content::Bool {
                strip: arg_bool(args, "strip", true)?,
            },
            "json" => Content::Json(JsonArgs {
                unquoted_keys: arg_bool(args, "unquoted_keys", false)?,
                string_delims: string_delims(args)?,
                allow_non_json: arg_bool(args, "allow_non_json", false)?,
                strip: arg_bool(args, "strip", true)?,
            }),
            "xml-inline" => {
                const KEY: &str = "tag_pattern";
                let pattern = match args.get(KEY) {
                    Some(Value::String(p)) => p,
                    Some(other) => {
                        return Err(ArgError::new(
                            KEY,
                            format!(
                                "content_args '{KEY}' must be a string, got {}",
                                py_type(other)
                            ),
                        ))
                    }
                    None => {
                        return Err(ArgError::new(
                            KEY,
                            "xml-inline requires content_args 'tag_pattern'",
                        ))
                    }
                };
                let tag = TagPattern::python(pattern).map_err(|e| {
                    ArgError::new(KEY, format!("invalid tag_pattern {pattern:?}: {e}"))
                })?;
                if let Some(group) = ["key", "value"].into_iter().find(|g| !tag.has_group(g)) {
                    return Err(ArgError::new(
                        KEY,
                        format!(
                            "xml-inline 'tag_pattern' {pattern:?} has no named group '{group}'"
                        ),
                    ));
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
            _ => Content::Text {
                strip: arg_bool(args, "strip", true)?,
            },
        })
    }

    /// Whether chunks of this type are raw text that needs parsing.
    pub(crate) fn dirty(&self) -> bool {
        !matches!(
            self,
            Content::Text { .. } | Content::Int | Content::Float | Content::Bool { .. }
        )
    }

    /// Parses a region's raw text.
    pub(crate) fn parse(&self, raw: &str) -> Result<Value, String> {
        match self {
            Content::Text { strip } => Ok(Value::String(strip_if(raw, *strip).to_owned())),
            Content::Int => py_int(raw).map(Value::from).ok_or_else(|| {
                format!(
                    "invalid literal for int() with base 10: {:?}",
                    py_strip(raw)
                )
            }),
            Content::Float => py_float(raw)
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| {
                    format!(
                        "could not convert string to a finite float: {:?}",
                        py_strip(raw)
                    )
                }),
            Content::Bool { strip } => Ok(Value::Bool(py_bool(strip_if(raw, *strip)))),
            Content::Json(args) => args.parse(raw),
            Content::XmlInline {
                tag,
                value_parser,
                merge_duplicates,
            } => {
                let pairs = tag.pairs(raw)?;
                let mut map = Map::with_capacity(pairs.len());
                for (key, value) in pairs {
                    let Some(key) = key else {
                        return Err(
                            "xml-inline: the tag_pattern's group 'key' took no part in a match"
                                .into(),
                        );
                    };
                    let value = match (value, value_parser) {
                        (Some(v), Some(p)) => p.parse(v)?,
                        (Some(v), None) => Value::String(v.to_owned()),
                        // A `value` group that took no part: the reference's `None`, which
                        // only an unstripped `text` parser passes through.
                        (None, p)
                            if p.as_deref()
                                .is_none_or(|p| matches!(p, Content::Text { strip: false })) =>
                        {
                            Value::Null
                        }
                        (None, _) => {
                            return Err("xml-inline: the tag_pattern's group 'value' took no \
                                        part in a match, its value_parser cannot read it"
                                .into())
                        }
                    };
                    insert(&mut map, key, value, *merge_duplicates);
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
                    let line = strip_if(line, *strip);
                    if line.is_empty() {
                        continue;
                    }
                    let Some((key, value)) = line.split_once(kv_sep.as_str()) else {
                        continue;
                    };
                    let value = strip_if(value, *strip);
                    let value = match value_parser {
                        Some(p) => p.parse(value)?,
                        None => Value::String(value.to_owned()),
                    };
                    map.insert(strip_if(key, *strip).to_owned(), value);
                }
                Ok(Value::Object(map))
            }
        }
    }
}

fn strip_if(s: &str, strip: bool) -> &str {
    if strip {
        py_strip(s)
    } else {
        s
    }
}

/// The nested `value_parser` of `xml-inline` / `kv-lines`: `{"name": <type, default text>,
/// "args": <its content_args>}`.
fn value_parser(args: &Map<String, Value>) -> Result<Option<Box<Content>>, ArgError> {
    const KEY: &str = "value_parser";
    let spec = match args.get(KEY) {
        None => return Ok(None),
        Some(Value::Object(spec)) => spec,
        Some(other) => {
            return Err(ArgError::new(
                KEY,
                format!(
                    "content_args '{KEY}' must be a dict, got {}",
                    py_type(other)
                ),
            ))
        }
    };
    if let Some(unknown) = spec.keys().find(|k| *k != "name" && *k != "args") {
        return Err(ArgError::new(
            unknown,
            format!("value_parser has an unknown key '{unknown}' (it takes ['name', 'args'])"),
        )
        .under(KEY));
    }
    let name = match spec.get("name") {
        None => "text",
        Some(Value::String(name)) => name.as_str(),
        Some(other) => {
            return Err(ArgError::new(
                "name",
                format!(
                    "value_parser 'name' must be a string, got {}",
                    py_type(other)
                ),
            )
            .under(KEY))
        }
    };
    let empty = Map::new();
    let nested = match spec.get("args") {
        None => &empty,
        Some(Value::Object(a)) => a,
        Some(other) => {
            return Err(ArgError::new(
                "args",
                format!("value_parser 'args' must be a dict, got {}", py_type(other)),
            )
            .under(KEY))
        }
    };
    let content = Content::compile(name, nested).map_err(|e| {
        if e.path.is_empty() {
            ArgError::new("name", format!("value_parser: {}", e.message)).under(KEY)
        } else {
            e.under("args").under(KEY)
        }
    })?;
    Ok(Some(Box::new(content)))
}

/// Inserts a key; with `merge`, a repeated key collects its values into a list (as the
/// reference does: a value that is already a list takes the new value at its end).
fn insert(map: &mut Map<String, Value>, key: &str, value: Value, merge: bool) {
    if !merge {
        map.insert(key.to_owned(), value);
        return;
    }
    match map.get_mut(key) {
        Some(Value::Array(items)) => items.push(value),
        Some(existing) => {
            let first = existing.take();
            *existing = Value::Array(vec![first, value]);
        }
        None => {
            map.insert(key.to_owned(), value);
        }
    }
}

impl JsonArgs {
    fn parse(&self, raw: &str) -> Result<Value, String> {
        let plain = self.string_delims.is_empty() && !self.unquoted_keys;
        let fallback = || Value::String(strip_if(raw, self.strip).to_owned());
        if plain && self.allow_non_json {
            // Cannot be JSON (after JSON whitespace, which is ASCII): skip the failing parse.
            let first = raw.bytes().find(|b| !b" \t\n\r".contains(b));
            if !first.is_some_and(|b| b"{[\"-0123456789tfn".contains(&b)) {
                return Ok(fallback());
            }
        }
        let mut rewritten = None;
        if !self.string_delims.is_empty() {
            rewritten = Some(apply_string_delims(raw, &self.string_delims));
        }
        if self.unquoted_keys {
            rewritten = Some(quote_keys(rewritten.as_deref().unwrap_or(raw)));
        }
        match super::json_value::from_str(rewritten.as_deref().unwrap_or(raw)) {
            Ok(v) => Ok(v),
            Err(_) if self.allow_non_json => Ok(fallback()),
            Err(e) => Err(format!("json parser could not parse region as JSON: {e}")),
        }
    }
}

#[cfg(test)]
#[path = "content_tests.rs"]
mod tests;
