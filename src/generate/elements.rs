//! Reads a tagged value the template writes as elements
//! ([`ElementValues`]: `<meta><source>x</source></meta>`, `<tags><item>a</item></tags>`) into
//! JSON, typed by the parameter's schema: a member list is an object, or an array when the
//! schema says so (or, without a schema, when every element has the item name); text is a
//! string where the schema allows one, otherwise JSON when it reads as JSON.
//!
//! Nesting is bounded ([`MAX_DEPTH`]): deeper text is no element value (the caller keeps it
//! as text).

use serde_json::{Map, Value};

use crate::analyze::slots::{self, Slot};
use crate::analyze::ElementValues;
use crate::message::request::{declared_types, padded_integer};

/// How deep elements may nest before a value is read as text instead.
pub const MAX_DEPTH: usize = 64;

/// A value written as elements: text, or elements in a row.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Text(String),
    List(Vec<(String, Node)>),
}

/// The JSON value of `raw` (a whole tagged value) when it is written as elements, typed by
/// `schema`; `None` when `raw` is not elements from start to end, or when the schema allows a
/// string (the text is then the string: a string may hold anything, elements included).
pub fn element_json(raw: &str, e: &ElementValues, schema: Option<&Value>) -> Option<Value> {
    if schema.is_some_and(|s| declared_types(s).iter().any(|t| t == "string")) {
        return None;
    }
    if raw.trim().is_empty() {
        return empty_container(schema);
    }
    let open = e.open.trim();
    if open.is_empty() || !raw.trim_start().starts_with(open) {
        return None;
    }
    let reader = Reader::new(e);
    let (list, end) = reader.list(raw, 0, 0)?;
    if !raw[end..].trim().is_empty() || list.is_empty() {
        return None;
    }
    Some(to_json(&Node::List(list), schema, &e.item))
}

struct Reader<'e> {
    open: &'e str,
    name_value: &'e str,
    close_start: &'e str,
    /// The closer's text after the repeated name (`>`), when the closer repeats it.
    close_end: Option<&'e str>,
    e: &'e ElementValues,
}

impl<'e> Reader<'e> {
    fn new(e: &'e ElementValues) -> Reader<'e> {
        Reader {
            open: e.open.trim(),
            name_value: e.name_value.trim(),
            close_start: slots::head(e.close.trim()),
            close_end: match slots::pieces(e.close.trim()).as_slice() {
                [slots::Piece::Text(_), slots::Piece::Slot(Slot::Key), slots::Piece::Text(end)] => {
                    Some(*end)
                }
                _ => None,
            },
            e,
        }
    }

    /// Elements in a row from `at`, up to a closer or the end; with where they end.
    fn list(
        &self,
        text: &str,
        mut at: usize,
        depth: usize,
    ) -> Option<(Vec<(String, Node)>, usize)> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let mut out = Vec::new();
        loop {
            let next = skip_space(text, at);
            let rest = &text[next..];
            if rest.is_empty() || rest.starts_with(self.close_start) || !rest.starts_with(self.open)
            {
                return Some((out, at));
            }
            let (name, node, end) = self.element(text, next + self.open.len(), depth)?;
            out.push((name, node));
            at = end;
        }
    }

    /// One element after its opener: name, value, closer.
    fn element(&self, text: &str, at: usize, depth: usize) -> Option<(String, Node, usize)> {
        let rest = &text[at..];
        let name_len = if self.name_value.is_empty() {
            rest.find(char::is_whitespace)?
        } else {
            rest.find(self.name_value)?
        };
        let name = rest[..name_len].trim();
        if name.is_empty() || name.contains(['<', '>', '\n']) {
            return None;
        }
        let value_at = at + name_len + self.name_value.len();
        let after = &text[value_at..];
        let starts_list = {
            let t = after.trim_start();
            t.starts_with(self.open) && !t.starts_with(self.close_start)
        };
        // Elements when they parse up to a closer (as the parser's ordered choice), else
        // text up to the first closer (`<tool` in a string is text).
        let list = starts_list
            .then(|| self.list(text, value_at, depth + 1))
            .flatten()
            .filter(|(list, end)| {
                !list.is_empty() && text[skip_space(text, *end)..].starts_with(self.close_start)
            });
        let (node, value_end) = match list {
            Some((list, end)) => (Node::List(list), end),
            None => {
                let len = self.text_len(after)?;
                (Node::Text(after[..len].to_owned()), value_at + len)
            }
        };
        let close = self.e.close.trim().replace(Slot::Key.char(), name);
        let close_at = skip_space(text, value_end);
        text[close_at..]
            .starts_with(close.as_str())
            .then(|| (name.to_owned(), node, close_at + close.len()))
    }

    /// How long the text at the start of `after` is: up to the first closer (the closer's
    /// start, a name, the closer's end); a closer's start that begins no closer is text.
    fn text_len(&self, after: &str) -> Option<usize> {
        let Some(end) = self.close_end else {
            return after.find(self.close_start);
        };
        let mut from = 0;
        loop {
            let at = from + after[from..].find(self.close_start)?;
            let rest = &after[at + self.close_start.len()..];
            if name_before(rest, end).is_some() {
                return Some(at);
            }
            from = at + self.close_start.len();
        }
    }
}

/// The length of the element name `text` starts with when `end` follows it: words without
/// whitespace or a tag's brackets, one space between them (a key that holds spaces:
/// `</Model Name>`), as the grammar reads names.
fn name_before(text: &str, end: &str) -> Option<usize> {
    let stop = |c: char| c.is_whitespace() || matches!(c, '<' | '>' | '/' | '[');
    let mut at = 0;
    loop {
        let rest = &text[at..];
        let word = rest
            .char_indices()
            .find(|&(i, c)| stop(c) || rest[i..].starts_with(end))
            .map_or(rest.len(), |(i, _)| i);
        if word == 0 {
            return None;
        }
        at += word;
        if text[at..].starts_with(end) {
            return Some(at);
        }
        at += text[at..].strip_prefix(' ').map(|_| 1)?;
    }
}

fn skip_space(text: &str, at: usize) -> usize {
    at + (text[at..].len() - text[at..].trim_start().len())
}

/// No elements: the empty container `schema` wants (array or object, not both).
fn empty_container(schema: Option<&Value>) -> Option<Value> {
    let types = schema.map(declared_types).unwrap_or_default();
    match (
        types.iter().any(|t| t == "array"),
        types.iter().any(|t| t == "object"),
    ) {
        (true, false) => Some(Value::Array(Vec::new())),
        (false, true) => Some(Value::Object(Map::new())),
        _ => None,
    }
}

/// The alternative of `schema` (itself, or one of its `anyOf`/`oneOf`) that declares `ty`.
fn alternative<'s>(schema: &'s Value, ty: &str) -> Option<&'s Value> {
    if declared_types(schema).iter().all(|t| t != ty) {
        return None;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = schema.get(key) {
            if let Some(alt) = alts
                .iter()
                .find(|a| declared_types(a).iter().any(|t| t == ty))
            {
                return Some(alt);
            }
        }
    }
    Some(schema)
}

/// The JSON of `node` (its depth is bounded by the reader, so is this recursion).
fn to_json(node: &Node, schema: Option<&Value>, item: &str) -> Value {
    match node {
        Node::Text(text) => {
            let types = schema.map(declared_types).unwrap_or_default();
            if types.iter().any(|t| t == "string") {
                return Value::String(text.clone());
            }
            if let Some(empty) = empty_container(schema).filter(|_| text.trim().is_empty()) {
                return empty;
            }
            serde_json::from_str(text.trim())
                .ok()
                .or_else(|| padded_integer(text, &types))
                .unwrap_or_else(|| Value::String(text.clone()))
        }
        Node::List(members) => {
            let array_schema = schema.and_then(|s| alternative(s, "array"));
            let object_schema = schema.and_then(|s| alternative(s, "object"));
            let as_array = match (array_schema, object_schema) {
                (Some(_), None) => true,
                (None, Some(_)) => false,
                _ => !members.is_empty() && members.iter().all(|(name, _)| name == item),
            };
            if as_array {
                let items = array_schema.and_then(|s| s.get("items"));
                Value::Array(
                    members
                        .iter()
                        .map(|(_, n)| to_json(n, items, item))
                        .collect(),
                )
            } else {
                let props = object_schema.and_then(|s| s.get("properties"));
                let mut repeated: Vec<&String> = Vec::new();
                let mut map = Map::new();
                for (name, n) in members {
                    let sub = props.and_then(|p| p.get(name));
                    let value = to_json(n, sub, item);
                    // A member written again is one more item of a list (`<tag>a</tag>
                    // <tag>b</tag>`): no value the model wrote is lost.
                    match map.get_mut(name) {
                        Some(Value::Array(items)) if repeated.contains(&name) => items.push(value),
                        Some(first) => {
                            let first = first.take();
                            map.insert(name.clone(), Value::Array(vec![first, value]));
                            repeated.push(name);
                        }
                        None => {
                            map.insert(name.clone(), value);
                        }
                    }
                }
                Value::Object(map)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::element_json;
    use crate::analyze::slots::Slot;
    use crate::analyze::ElementValues;

    fn xml() -> ElementValues {
        ElementValues {
            open: "<".into(),
            name_value: ">".into(),
            close: format!("</{}>", Slot::Key.char()),
            separator: String::new(),
            item: "item".into(),
        }
    }

    #[test]
    fn objects_arrays_and_scalars_follow_the_schema() {
        let raw = "<a>1</a><b><item>x</item><item>2</item></b><c><d>true</d></c>";
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string"},
            "b": {"type": "array", "items": {"type": "string"}},
            "c": {"type": "object", "properties": {"d": {"type": "boolean"}}}}});
        assert_eq!(
            element_json(raw, &xml(), Some(&schema)),
            Some(json!({"a": "1", "b": ["x", "2"], "c": {"d": true}}))
        );
        assert_eq!(
            element_json(raw, &xml(), None),
            Some(json!({"a": 1, "b": ["x", 2], "c": {"d": true}}))
        );
    }

    #[test]
    fn text_and_broken_elements_are_no_element_value() {
        assert_eq!(element_json("plain", &xml(), None), None);
        assert_eq!(element_json("<a>1</b>", &xml(), None), None);
        assert_eq!(element_json("<a>1</a> tail", &xml(), None), None);
        let string_or_object = json!({"oneOf": [{"type": "string"}, {"type": "object"}]});
        assert_eq!(
            element_json("<a>1</a>", &xml(), Some(&string_or_object)),
            None
        );
    }

    #[test]
    fn no_elements_are_an_empty_container_of_the_schema() {
        let array = json!({"type": "array"});
        let object = json!({"type": "object"});
        assert_eq!(element_json("", &xml(), Some(&array)), Some(json!([])));
        assert_eq!(element_json(" ", &xml(), Some(&object)), Some(json!({})));
        assert_eq!(element_json("", &xml(), None), None);
        let slots = json!({"type": "array", "items": {"type": "object"}});
        assert_eq!(
            element_json("<item></item>", &xml(), Some(&slots)),
            Some(json!([{}]))
        );
    }

    #[test]
    fn a_closer_start_that_starts_no_closer_is_text() {
        let details = json!({"type": "object", "properties": {"room": {"type": "string"}}});
        assert_eq!(
            element_json("<room></thin</room>", &xml(), Some(&details)),
            Some(json!({"room": "</thin"}))
        );
    }

    #[test]
    fn text_that_starts_like_an_element_is_text() {
        let details = json!({"type": "object", "properties": {"room": {"type": "string"}}});
        assert_eq!(
            element_json("<room><tool</room>", &xml(), Some(&details)),
            Some(json!({"room": "<tool"}))
        );
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let raw = "<a>".repeat(10_000) + &"</a>".repeat(10_000);
        assert_eq!(element_json(&raw, &xml(), None), None);
    }
}
