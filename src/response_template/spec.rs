//! The template model: loading a JSON template, validating it and compiling its patterns.

use std::path::Path;

use serde_json::{Map, Value};

use super::content::{Content, CONTENT_TYPES};
use super::error::{Error, ErrorKind, Result};
use super::locate::locate;
use super::pattern::Pattern;
use super::transform::Transform;
use super::util::{py_list, py_type};

/// A loaded, validated and compiled response template. Immutable and `Send + Sync`: create
/// any number of [`ResponseParser`](super::ResponseParser)s from it.
#[derive(Debug)]
pub struct ResponseTemplate {
    pub(crate) defaults: Map<String, Value>,
    pub(crate) anchor: Anchor,
    pub(crate) fields: Vec<Field>,
    pub(crate) implicit: Option<usize>,
    /// Watch lists: index 0 = outside any explicit region, `1 + f` = inside field `f`.
    pub(crate) watches: Vec<WatchSet>,
}

/// How the start of the current assistant message is found in a prefix.
#[derive(Debug)]
pub(crate) enum Anchor {
    Literals(Vec<String>),
    Pattern(Box<Pattern>),
}

/// One compiled field.
#[derive(Debug)]
pub(crate) struct Field {
    pub(crate) name: String,
    /// `None`: the implicit field.
    pub(crate) open: Option<Pattern>,
    /// `None`: the region runs to the end of the stream.
    pub(crate) close: Option<Pattern>,
    pub(crate) repeats: bool,
    pub(crate) join: Option<String>,
    pub(crate) optional: bool,
    pub(crate) content: Content,
    pub(crate) transform: Option<Transform>,
    pub(crate) transform_each: bool,
    /// The field's value in `defaults`, when it has one (what `repeats`/`join` extend).
    pub(crate) default: Option<Value>,
}

/// A delimiter watched by the scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Watch {
    Open(usize),
    Close(usize),
}

/// The delimiters watched in one parser state, plus the union of their first bytes.
#[derive(Debug)]
pub(crate) struct WatchSet {
    pub(crate) items: Vec<Watch>,
    can_start: [bool; 256],
    /// The bytes that can start a delimiter, when there are at most three (for `memchr`).
    first_bytes: Option<Vec<u8>>,
    /// The literal every watched delimiter begins with (their common literal prefix), or
    /// empty: a feed position that departs from it can start none of them.
    shared: Vec<u8>,
}

impl WatchSet {
    /// The literal every watched delimiter begins with, or an empty slice.
    pub(crate) fn shared(&self) -> &[u8] {
        &self.shared
    }

    /// `table()[b]`: whether byte `b` can start a watched delimiter.
    pub(crate) fn table(&self) -> &[bool; 256] {
        &self.can_start
    }

    /// The only byte that can start a watched delimiter, if there is exactly one.
    pub(crate) fn only_first_byte(&self) -> Option<u8> {
        match self.first_bytes.as_deref() {
            Some(&[b]) => Some(b),
            _ => None,
        }
    }

    /// Bit `i` set where byte `i` of `feed` (a feed of at most 64 bytes, at the end of the
    /// buffer) can start a watched delimiter whose attempt survives the feed: a start byte
    /// where the feed continues with the [`shared`](WatchSet::shared) literal, or with a piece
    /// of it up to the end of the feed. Elsewhere no watched pattern can start (see
    /// [`Pattern::may_start_at`]).
    #[inline]
    pub(crate) fn feed_starts(&self, feed: &[u8]) -> u64 {
        let mut starts = 0u64;
        for (i, &b) in feed.iter().enumerate() {
            if self.can_start[usize::from(b)]
                && feed
                    .get(i..)
                    .unwrap_or_default()
                    .iter()
                    .zip(&self.shared)
                    .all(|(x, y)| x == y)
            {
                starts |= 1 << (i & 63);
            }
        }
        starts
    }

    /// Whether some byte of `hay` can start a watched delimiter.
    pub(crate) fn may_start_in(&self, hay: &[u8]) -> bool {
        if hay.len() < 16 {
            return hay.iter().any(|b| self.can_start[usize::from(*b)]);
        }
        match self.first_bytes.as_deref() {
            Some([]) => false,
            Some([a]) => memchr::memchr(*a, hay).is_some(),
            Some([a, b]) => memchr::memchr2(*a, *b, hay).is_some(),
            Some([a, b, c]) => memchr::memchr3(*a, *b, *c, hay).is_some(),
            _ => hay.iter().any(|b| self.can_start[usize::from(*b)]),
        }
    }
}

impl ResponseTemplate {
    /// Loads a template from JSON text (the value of `response_template` in
    /// `tokenizer_config.json`). Load errors give the path of the offending key and its line
    /// and column in `text`.
    pub fn from_json_str(text: &str) -> Result<ResponseTemplate> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::load(format!("response_template is not valid JSON: {e}")))?;
        ResponseTemplate::from_value(&value).map_err(|e| {
            let location = locate(text, e.path());
            e.with_location(location)
        })
    }

    /// Loads a template from a JSON file. A `tokenizer_config.json` (an object with a
    /// `response_template` key) is accepted too.
    pub fn from_path(path: impl AsRef<Path>) -> Result<ResponseTemplate> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::load(format!("cannot read {}: {e}", path.display())))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| Error::load(format!("{} is not valid JSON: {e}", path.display())))?;
        let result = match value.get("response_template") {
            Some(inner) if value.get("fields").is_none() => ResponseTemplate::from_value(inner)
                .map_err(|e| e.under_path(&["response_template"])),
            _ => ResponseTemplate::from_value(&value),
        };
        result.map_err(|e| {
            let location = locate(&text, e.path());
            e.with_location(location)
        })
    }

    /// Loads a template from a parsed JSON value.
    ///
    /// Validation is the reference's, and stricter where the reference silently accepts a
    /// mistake or only fails once a region needs the faulty part: an unknown or misspelled
    /// key anywhere (top level, field, `content_args`, `value_parser`), a flag that is not a
    /// bool, an empty `fields` map, a regex that does not compile, a `tag_pattern` without its
    /// `key` or `value` group, and named groups without a `transform` are load errors that
    /// name the field and the key ([`Error::path`]).
    pub fn from_value(value: &Value) -> Result<ResponseTemplate> {
        let Value::Object(top) = value else {
            return Err(Error::load(format!(
                "response_template must be a dict, got {}",
                py_type(value)
            )));
        };
        if let Some(v) = top.get("version") {
            if v.as_f64() != Some(1.0) {
                return Err(
                    Error::load(format!("Unsupported response_template version: {v}"))
                        .with_path(&["version"]),
                );
            }
        }
        let mut unknown: Vec<&String> = top
            .keys()
            .filter(|k| !TOP_KEYS.contains(&k.as_str()))
            .collect();
        if let Some(first) = unknown.first().copied() {
            unknown.sort();
            return Err(Error::load(format!(
                "Unknown keys in response_template: {} (known keys: {})",
                py_list(&unknown),
                py_list(&TOP_KEYS)
            ))
            .with_path(&[first]));
        }
        let defaults = match top.get("defaults") {
            None => Map::new(),
            Some(Value::Object(d)) => d.clone(),
            Some(other) => {
                return Err(Error::load(format!(
                    "response_template.defaults must be a dict, got {}",
                    py_type(other)
                ))
                .with_path(&["defaults"]))
            }
        };
        let field_specs = match top.get("fields") {
            Some(Value::Object(f)) if !f.is_empty() => f,
            Some(other) => {
                return Err(Error::load(format!(
                    "response_template.fields must be a non-empty dict, got {}",
                    if other.is_object() {
                        "an empty dict"
                    } else {
                        py_type(other)
                    }
                ))
                .with_path(&["fields"]))
            }
            None => {
                return Err(Error::load(
                    "response_template.fields must be a non-empty dict (it is missing)",
                ))
            }
        };
        let mut fields = Vec::with_capacity(field_specs.len());
        for (name, spec) in field_specs {
            let mut field = load_field(name, spec).map_err(|e| {
                let path: Vec<String> = ["fields", name.as_str()]
                    .into_iter()
                    .map(str::to_owned)
                    .chain(e.path().iter().cloned())
                    .collect();
                Error::load(e.message().to_owned())
                    .with_field(name)
                    .with_path(&path)
            })?;
            field.default = defaults.get(name).cloned();
            fields.push(field);
        }
        let implicit_names: Vec<&str> = fields
            .iter()
            .filter(|f| f.open.is_none())
            .map(|f| f.name.as_str())
            .collect();
        if implicit_names.len() > 1 {
            return Err(Error::load(format!(
                "At most one field may omit 'open'/'open_pattern' (that field becomes the \
                 implicit-open / leftover sink). Found: {}",
                implicit_names.join(", ")
            ))
            .with_path(&["fields", implicit_names[1]]));
        }
        let anchor = load_anchor(top)?;
        let implicit = fields.iter().position(|f| f.open.is_none());
        let mut template = ResponseTemplate {
            defaults,
            anchor,
            fields,
            implicit,
            watches: Vec::new(),
        };
        template.watches = template.build_watches();
        Ok(template)
    }

    fn build_watches(&self) -> Vec<WatchSet> {
        let mut outside: Vec<Watch> = Vec::new();
        for (i, f) in self.fields.iter().enumerate() {
            if f.open.is_some() {
                outside.push(Watch::Open(i));
            }
        }
        if let Some(i) = self.implicit {
            if self.fields.get(i).is_some_and(|f| f.close.is_some()) {
                outside.push(Watch::Close(i));
            }
        }
        let mut sets = vec![self.watch_set(outside)];
        for (i, f) in self.fields.iter().enumerate() {
            let items = if f.close.is_some() {
                vec![Watch::Close(i)]
            } else {
                Vec::new()
            };
            sets.push(self.watch_set(items));
        }
        sets
    }

    fn watch_set(&self, items: Vec<Watch>) -> WatchSet {
        let mut can_start = [false; 256];
        for w in &items {
            if let Some(p) = self.pattern(*w) {
                for (b, slot) in (0..=255u8).zip(can_start.iter_mut()) {
                    *slot |= p.can_start(b);
                }
            }
        }
        let bytes: Vec<u8> = (0..=255u8).filter(|b| can_start[usize::from(*b)]).collect();
        let first_bytes = (bytes.len() <= 3).then_some(bytes);
        let mut shared: Option<&[u8]> = None;
        for w in &items {
            let lit = self.pattern(*w).map_or(&[][..], Pattern::literal_prefix);
            let common = shared.map_or(lit.len(), |s| {
                s.iter().zip(lit).take_while(|(a, b)| a == b).count()
            });
            shared = lit.get(..common);
        }
        let shared = shared.unwrap_or_default().to_vec();
        WatchSet {
            items,
            can_start,
            first_bytes,
            shared,
        }
    }

    /// The pattern of a watched delimiter.
    pub(crate) fn pattern(&self, w: Watch) -> Option<&Pattern> {
        match w {
            Watch::Open(i) => self.fields.get(i)?.open.as_ref(),
            Watch::Close(i) => self.fields.get(i)?.close.as_ref(),
        }
    }

    /// The field names, in template order.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|f| f.name.as_str())
    }

    /// Cuts `prefix` after the last match of the start anchor (the whole prefix when the
    /// anchor does not occur).
    pub fn cut_prefix<'p>(&self, prefix: &'p str) -> &'p str {
        let end = match &self.anchor {
            Anchor::Literals(lits) => lits
                .iter()
                .filter_map(|l| prefix.rfind(l.as_str()).map(|s| (s, s + l.len())))
                .max(),
            Anchor::Pattern(p) => p.find_iter(prefix).into_iter().last(),
        };
        match end {
            Some((_, end)) => prefix.get(end..).unwrap_or(""),
            None => prefix,
        }
    }
}

/// The keys a template may have.
const TOP_KEYS: [&str; 5] = [
    "version",
    "defaults",
    "fields",
    "start_anchor",
    "start_anchor_pattern",
];

/// The keys a field may have.
const FIELD_KEYS: [&str; 11] = [
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
];

fn load_anchor(top: &Map<String, Value>) -> Result<Anchor> {
    let literal = top.get("start_anchor");
    let pattern = top.get("start_anchor_pattern");
    match (literal, pattern) {
        (None, None) => Err(Error::load(
            "response_template must define 'start_anchor' or 'start_anchor_pattern'.",
        )),
        (Some(_), Some(_)) => Err(Error::load(
            "response_template: cannot specify both 'start_anchor' and 'start_anchor_pattern'",
        )
        .with_path(&["start_anchor_pattern"])),
        (Some(lit), None) => literals(lit, "start_anchor")
            .map(Anchor::Literals)
            .map_err(|e| Error::load(e).with_path(&["start_anchor"])),
        (None, Some(Value::String(p))) => Pattern::python(p)
            .map(|p| Anchor::Pattern(Box::new(p)))
            .map_err(|e| {
                Error::load(format!("invalid start_anchor_pattern regex {p:?}: {e}"))
                    .with_path(&["start_anchor_pattern"])
            }),
        (None, Some(other)) => Err(Error::load(format!(
            "'start_anchor_pattern' must be a string, got {}",
            py_type(other)
        ))
        .with_path(&["start_anchor_pattern"])),
    }
}

/// Validates a literal or literal list (`open`, `close`, `start_anchor`); duplicates are
/// dropped (first one kept).
fn literals(v: &Value, key: &str) -> std::result::Result<Vec<String>, String> {
    let mut lits: Vec<String> = match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => {
            if items.is_empty() {
                return Err(format!("'{key}' list must contain at least one literal"));
            }
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(s) => out.push(s.clone()),
                    _ => return Err(format!("'{key}' list must contain only strings")),
                }
            }
            out
        }
        other => {
            return Err(format!(
                "'{key}' must be a string or list of strings, got {}",
                py_type(other)
            ))
        }
    };
    if lits.iter().any(String::is_empty) {
        return Err(format!("'{key}' literals cannot be empty strings"));
    }
    let mut seen = Vec::with_capacity(lits.len());
    lits.retain(|l| {
        let new = !seen.contains(l);
        if new {
            seen.push(l.clone());
        }
        new
    });
    Ok(lits)
}

/// A field-level error: the message (prefixed with the field, as the reference's are) and
/// the key at fault, below the field.
fn field_error(name: &str, key: &[&str], message: impl std::fmt::Display) -> Error {
    Error::load(format!("Field '{name}': {message}")).with_path(key)
}

/// Compiles `open`/`open_pattern` (or `close`/`close_pattern`).
fn delimiter(name: &str, spec: &Map<String, Value>, key: &str) -> Result<Option<Pattern>> {
    let pattern_key = format!("{key}_pattern");
    match (spec.get(key), spec.get(&pattern_key)) {
        (Some(_), Some(_)) => Err(field_error(
            name,
            &[&pattern_key],
            format!("cannot specify both '{key}' and '{pattern_key}'"),
        )),
        (None, None) => Ok(None),
        // Deliberate deviation: `close: "eos"` means "until the end of the stream".
        (Some(Value::String(s)), None) if key == "close" && s == "eos" => Ok(None),
        (Some(lit), None) => {
            let lits = literals(lit, key).map_err(|e| field_error(name, &[key], e))?;
            Pattern::literals(&lits)
                .map(Some)
                .map_err(|e| field_error(name, &[key], e))
        }
        (None, Some(Value::String(p))) => Pattern::python(p).map(Some).map_err(|e| {
            field_error(
                name,
                &[&pattern_key],
                format!("invalid {pattern_key} regex {p:?}: {e}"),
            )
        }),
        (None, Some(other)) => Err(field_error(
            name,
            &[&pattern_key],
            format!("'{pattern_key}' must be a string, got {}", py_type(other)),
        )),
    }
}

/// A boolean key: absent gives `default`; anything but `true`/`false` is an error (the
/// reference would read `"no"` as true).
fn flag(name: &str, spec: &Map<String, Value>, key: &str, default: bool) -> Result<bool> {
    match spec.get(key) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(field_error(
            name,
            &[key],
            format!("'{key}' must be a bool, got {}", py_type(other)),
        )),
    }
}

fn load_field(name: &str, spec: &Value) -> Result<Field> {
    let Value::Object(spec) = spec else {
        return Err(Error::load(format!(
            "Field '{name}' must be a dict, got {}",
            py_type(spec)
        )));
    };
    let mut unknown: Vec<&String> = spec
        .keys()
        .filter(|k| !FIELD_KEYS.contains(&k.as_str()))
        .collect();
    if let Some(first) = unknown.first().copied() {
        unknown.sort();
        return Err(field_error(
            name,
            &[first],
            format!(
                "unknown keys {} (known keys: {})",
                py_list(&unknown),
                py_list(&FIELD_KEYS)
            ),
        ));
    }
    let content_name = match spec.get("content") {
        None => "text",
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return Err(field_error(
                name,
                &["content"],
                format!("'content' must be a string, got {}", py_type(other)),
            ))
        }
    };
    if !CONTENT_TYPES.contains(&content_name) {
        return Err(field_error(
            name,
            &["content"],
            format!(
                "unknown content parser '{content_name}'. Available: {}",
                py_list(&CONTENT_TYPES)
            ),
        ));
    }
    let open = delimiter(name, spec, "open")?;
    let close = delimiter(name, spec, "close")?;
    let repeats = flag(name, spec, "repeats", false)?;
    let join = match spec.get("join") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(field_error(
                name,
                &["join"],
                format!("'join' must be a string, got {}", py_type(other)),
            ))
        }
    };
    if join.is_some() && !repeats {
        return Err(field_error(
            name,
            &["join"],
            "'join' requires 'repeats': true",
        ));
    }
    let transform_each = flag(name, spec, "transform_each", false)?;
    let transform = match spec.get("transform") {
        None | Some(Value::Null) => None,
        Some(t) => Some(
            Transform::compile(t, name).map_err(|e| Error::load(e).with_path(&["transform"]))?,
        ),
    };
    if transform_each && transform.is_none() {
        return Err(field_error(
            name,
            &["transform_each"],
            "transform_each is set but no transform was provided",
        ));
    }
    let mut groups: Vec<String> = Vec::new();
    for p in open.iter().chain(close.iter()) {
        groups.extend(p.names().iter().cloned());
    }
    if !groups.is_empty() && transform.is_none() {
        groups.sort();
        groups.dedup();
        let key = if open.as_ref().is_some_and(|p| !p.names().is_empty()) {
            "open_pattern"
        } else {
            "close_pattern"
        };
        return Err(field_error(
            name,
            &[key],
            format!(
                "open_pattern/close_pattern declares named group(s) {}, but the field has no \
                 'transform'. Named captures are only surfaced through a 'transform' template \
                 (where they appear alongside 'content'). Either add a 'transform' that uses \
                 the captures, or remove the named groups from the pattern.",
                py_list(&groups)
            ),
        ));
    }
    let optional = flag(name, spec, "optional", true)?;
    let empty = Map::new();
    let args = match spec.get("content_args") {
        None => &empty,
        Some(Value::Object(a)) => a,
        Some(other) => {
            return Err(field_error(
                name,
                &["content_args"],
                format!("'content_args' must be a dict, got {}", py_type(other)),
            ))
        }
    };
    let content = Content::compile(content_name, args).map_err(|e| {
        let mut path = vec!["content_args"];
        path.extend(e.path.iter().map(String::as_str));
        field_error(name, &path, e.message)
    })?;
    Ok(Field {
        name: name.to_owned(),
        open,
        close,
        repeats,
        join,
        optional,
        content,
        transform,
        transform_each,
        default: None,
    })
}

impl std::str::FromStr for ResponseTemplate {
    type Err = Error;

    fn from_str(s: &str) -> Result<ResponseTemplate> {
        ResponseTemplate::from_json_str(s)
    }
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<ResponseTemplate>();
    let _ = ErrorKind::Load;
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
