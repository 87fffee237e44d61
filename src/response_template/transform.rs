//! `transform`: a JSON template whose whole-string `{path}` placeholders are replaced by values
//! from the region's scope (`content` and the named groups of the open/close patterns).
//!
//! A string is either exactly one placeholder (the value keeps its type; `a.b.c` walks into
//! dicts; as in the reference, a list cannot be indexed) or a plain literal. Mixing the two is a
//! load error.

use std::sync::OnceLock;

use regex_automata::meta;
use serde_json::{Map, Value};

use super::util::{py_list, py_type};

/// A compiled transform template.
#[derive(Debug, Clone)]
pub(crate) enum Transform {
    /// `take`: the root is used by no other placeholder, so its value can be moved out of
    /// the scope instead of cloned.
    Placeholder {
        text: String,
        path: Vec<String>,
        take: bool,
    },
    /// A value with no placeholder in it (a whole subtree is one literal).
    Literal(Value),
    /// An object with a placeholder somewhere below: `skeleton` holds every key in template
    /// order (built once, so applying clones its index table instead of hashing each key),
    /// with the literal values in place and `null` where `fill` (one slot per key) has the
    /// node that computes the value.
    Object {
        skeleton: Map<String, Value>,
        fill: Vec<Option<Transform>>,
    },
    /// An array with a placeholder somewhere below.
    Array(Vec<Transform>),
}

/// The reference's placeholder syntax: `{` word (`.` word)* `}`, with Unicode `\w` (the
/// `regex` module's, which is the Rust engines' too). `.0` is the key `"0"`, not an index.
const PLACEHOLDER: &str = r"\{\w+(?:\.\w+)*\}";

/// The compiled [`PLACEHOLDER`]: unanchored, and anchored at both ends (`None` only if the
/// fixed syntax failed to compile, which its tests rule out).
fn placeholder_regexes() -> Option<&'static (meta::Regex, meta::Regex)> {
    static REGEXES: OnceLock<Option<(meta::Regex, meta::Regex)>> = OnceLock::new();
    REGEXES
        .get_or_init(|| {
            let search = meta::Regex::new(PLACEHOLDER).ok()?;
            let whole = meta::Regex::new(&format!("^{PLACEHOLDER}$")).ok()?;
            Some((search, whole))
        })
        .as_ref()
}

/// Parses `{name}` / `{a.b}` when `s` is exactly one placeholder.
fn placeholder(s: &str) -> Option<Vec<String>> {
    if !placeholder_regexes()?.1.is_match(s) {
        return None;
    }
    let inner = s.get(1..s.len() - 1)?;
    Some(inner.split('.').map(str::to_owned).collect())
}

/// Whether `s` contains a placeholder somewhere.
fn contains_placeholder(s: &str) -> bool {
    placeholder_regexes().is_some_and(|(search, _)| search.is_match(s))
}

impl Transform {
    /// Compiles a transform template; the error message is the reference's.
    pub(crate) fn compile(v: &Value, field: &str) -> Result<Transform, String> {
        let mut t = Transform::compile_node(v, field)?;
        let mut counts: Vec<(String, usize)> = Vec::new();
        t.count_roots(&mut counts);
        t.mark_takes(&counts);
        Ok(t)
    }

    fn count_roots(&self, counts: &mut Vec<(String, usize)>) {
        match self {
            Transform::Placeholder { path, .. } => {
                let root = path.first().cloned().unwrap_or_default();
                match counts.iter_mut().find(|(r, _)| *r == root) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((root, 1)),
                }
            }
            Transform::Literal(_) => {}
            Transform::Object { fill, .. } => {
                fill.iter().flatten().for_each(|t| t.count_roots(counts))
            }
            Transform::Array(items) => items.iter().for_each(|t| t.count_roots(counts)),
        }
    }

    fn mark_takes(&mut self, counts: &[(String, usize)]) {
        match self {
            Transform::Placeholder { path, take, .. } => {
                let root = path.first().map(String::as_str).unwrap_or_default();
                *take = counts.iter().any(|(r, n)| r == root && *n == 1);
            }
            Transform::Literal(_) => {}
            Transform::Object { fill, .. } => {
                fill.iter_mut().flatten().for_each(|t| t.mark_takes(counts))
            }
            Transform::Array(items) => items.iter_mut().for_each(|t| t.mark_takes(counts)),
        }
    }

    /// Whether this node is a plain literal.
    fn is_literal(&self) -> bool {
        matches!(self, Transform::Literal(_))
    }

    fn compile_node(v: &Value, field: &str) -> Result<Transform, String> {
        Ok(match v {
            Value::String(s) => match placeholder(s) {
                Some(path) => Transform::Placeholder {
                    text: s.clone(),
                    path,
                    take: false,
                },
                None if contains_placeholder(s) => {
                    return Err(format!(
                        "Field '{field}': transform string '{s}' mixes a {{placeholder}} with \
                         literal text. Use either a whole-string placeholder (e.g. \
                         \"{{content}}\") or a plain literal; string interpolation is not \
                         supported."
                    ))
                }
                None => Transform::Literal(v.clone()),
            },
            Value::Object(map) => {
                let nodes = map
                    .values()
                    .map(|v| Transform::compile_node(v, field))
                    .collect::<Result<Vec<_>, String>>()?;
                if nodes.iter().all(Transform::is_literal) {
                    return Ok(Transform::Literal(v.clone()));
                }
                let mut skeleton = Map::with_capacity(map.len());
                let mut fill = Vec::with_capacity(map.len());
                for (key, node) in map.keys().zip(nodes) {
                    let (value, node) = match node {
                        Transform::Literal(value) => (value, None),
                        node => (Value::Null, Some(node)),
                    };
                    skeleton.insert(key.clone(), value);
                    fill.push(node);
                }
                Transform::Object { skeleton, fill }
            }
            Value::Array(items) => {
                let nodes = items
                    .iter()
                    .map(|v| Transform::compile_node(v, field))
                    .collect::<Result<Vec<_>, String>>()?;
                if nodes.iter().all(Transform::is_literal) {
                    return Ok(Transform::Literal(v.clone()));
                }
                Transform::Array(nodes)
            }
            other => Transform::Literal(other.clone()),
        })
    }

    /// Applies the template to a scope. Values used by a single placeholder are moved out of
    /// the scope.
    pub(crate) fn apply(&self, scope: &mut Map<String, Value>) -> Result<Value, String> {
        match self {
            Transform::Literal(v) => Ok(v.clone()),
            Transform::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for t in items {
                    out.push(t.apply(scope)?);
                }
                Ok(Value::Array(out))
            }
            Transform::Object { skeleton, fill } => {
                let mut out = skeleton.clone();
                for (slot, t) in out.values_mut().zip(fill) {
                    if let Some(t) = t {
                        *slot = t.apply(scope)?;
                    }
                }
                Ok(Value::Object(out))
            }
            Transform::Placeholder { text, path, take } => {
                let found = lookup(scope, text, path)?;
                Ok(match (take, found) {
                    (true, Some(v)) => v.take(),
                    (_, found) => found.map_or(Value::Null, |v| v.clone()),
                })
            }
        }
    }
}

/// Scopes up to this many entries are searched by comparing keys instead of hashing.
const SMALL_SCOPE: usize = 8;

fn lookup<'s>(
    scope: &'s mut Map<String, Value>,
    text: &str,
    path: &[String],
) -> Result<Option<&'s mut Value>, String> {
    let Some((head, rest)) = path.split_first() else {
        return Err(format!("transform placeholder '{text}' is empty"));
    };
    let small = scope.len() <= SMALL_SCOPE;
    let defined = if small {
        scope.keys().any(|k| k == head)
    } else {
        scope.contains_key(head)
    };
    if !defined {
        let keys: Vec<&String> = scope.keys().collect();
        return Err(format!(
            "transform placeholder '{text}' is not defined. Available: {}",
            py_list(&keys)
        ));
    }
    // Scopes are small (the captured groups and `content`): comparing a few keys costs less
    // than hashing the head again.
    let mut current = if small {
        scope
            .iter_mut()
            .find(|(k, _)| k.as_str() == head.as_str())
            .map(|(_, v)| v)
    } else {
        scope.get_mut(head)
    };
    for part in rest {
        let Some(value) = current else {
            return Ok(None);
        };
        current = match value {
            Value::Object(map) => {
                if !map.contains_key(part) {
                    let keys: Vec<&String> = map.keys().collect();
                    return Err(format!(
                        "transform placeholder '{text}' is missing key '{part}'. Available: {}",
                        py_list(&keys)
                    ));
                }
                map.get_mut(part)
            }
            other => {
                return Err(format!(
                    "transform placeholder '{text}' cannot index into {} at '{part}'",
                    py_type(other)
                ))
            }
        };
    }
    Ok(current)
}

#[cfg(test)]
#[path = "transform_tests.rs"]
mod tests;
