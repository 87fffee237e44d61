//! Conversions between JSON and minijinja values, and the mutable list used for Python-style
//! in-place list methods.
//!
//! minijinja values are immutable, but some chat templates (Kimi-K2) keep a queue in a namespace
//! and call `ns.ids.append(x)` / `ns.ids.pop(0)` on it. We support that with [`MutableList`], a
//! list object with interior mutability. A list becomes mutable when it is stored in a
//! `namespace(...)` (our `namespace` global converts list arguments); list literals elsewhere and
//! the lists of the render context stay ordinary immutable minijinja lists, and calling a mutating
//! method on them is a render error rather than a silent no-op.

use std::sync::{Arc, Mutex, MutexGuard};

use minijinja::value::{Enumerator, Object, ObjectRepr};
use minijinja::{Error, ErrorKind, State, Value};

/// An insertion-ordered map of template values (what minijinja builds for `{...}` literals).
pub(crate) type ValueMap = indexmap::IndexMap<Value, Value>;

/// Converts a JSON value into a minijinja value (maps keep their key order).
pub(crate) fn from_json(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::from(()),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                Value::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => {
            Value::from(items.iter().map(from_json).collect::<Vec<_>>())
        }
        serde_json::Value::Object(map) => {
            let map: ValueMap = map
                .iter()
                .map(|(k, v)| (Value::from(k.as_str()), from_json(v)))
                .collect();
            Value::from(map)
        }
    }
}

/// A list with Python's in-place methods (`append`, `pop`, `extend`, `insert`, `clear`).
#[derive(Debug, Default)]
pub(crate) struct MutableList {
    items: Mutex<Vec<Value>>,
}

impl MutableList {
    /// Wraps a list value's items into a fresh mutable list value; other values (tuples
    /// included: they are immutable in Python too) pass through.
    pub(crate) fn wrap(value: Value) -> Value {
        if value.kind() != minijinja::value::ValueKind::Seq
            || value.is_tuple()
            || value.downcast_object_ref::<MutableList>().is_some()
        {
            return value;
        }
        match value.try_iter() {
            Ok(iter) => Value::from_object(MutableList {
                items: Mutex::new(iter.collect()),
            }),
            Err(_) => value,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Value>> {
        // A panic while holding the lock cannot leave the Vec itself invalid.
        self.items.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Containers nested deeper than this cannot be stored in a mutable list.
const MAX_NESTING: usize = 64;

/// Whether `value` is `list` or contains it (through lists, maps and namespaces); values nested
/// deeper than [`MAX_NESTING`] count as containing it. Storing such a value would create a cycle,
/// and minijinja compares and prints containers recursively (a cycle would overflow the stack).
fn would_cycle(list: &MutableList, value: &Value, depth: usize) -> bool {
    use minijinja::value::ValueKind;
    if value
        .downcast_object_ref::<MutableList>()
        .is_some_and(|other| std::ptr::eq(other, list))
    {
        return true;
    }
    match value.kind() {
        ValueKind::Seq | ValueKind::Iterable | ValueKind::Map => {
            if depth >= MAX_NESTING {
                return true;
            }
            let Ok(iter) = value.try_iter() else {
                return false;
            };
            let is_map = value.kind() == ValueKind::Map;
            iter.into_iter().any(|item| {
                let item = if is_map {
                    value.get_item(&item).unwrap_or_default()
                } else {
                    item
                };
                would_cycle(list, &item, depth + 1)
            })
        }
        _ => false,
    }
}

fn check_no_cycle(list: &MutableList, values: &[Value]) -> Result<(), Error> {
    if values.iter().any(|v| would_cycle(list, v, 0)) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "a list cannot contain itself (or values nested too deeply)",
        ));
    }
    Ok(())
}

fn index_arg(len: usize, index: Option<&Value>, allow_end: bool) -> Result<usize, Error> {
    let Some(index) = index else {
        return if len == 0 && !allow_end {
            Err(Error::new(
                ErrorKind::InvalidOperation,
                "pop from empty list",
            ))
        } else {
            Ok(if allow_end { len } else { len - 1 })
        };
    };
    let i = index
        .as_i64()
        .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "list index must be an integer"))?;
    let len_i = len as i64;
    let resolved = if i < 0 { i + len_i } else { i };
    if allow_end {
        return Ok(resolved.clamp(0, len_i) as usize);
    }
    if resolved < 0 || resolved >= len_i {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "pop index out of range",
        ));
    }
    Ok(resolved as usize)
}

impl Object for MutableList {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let items = self.lock();
        let i = key.as_i64()?;
        let i = if i < 0 { i + items.len() as i64 } else { i };
        usize::try_from(i).ok().and_then(|i| items.get(i).cloned())
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.lock().clone())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.lock().len())
    }

    fn is_true(self: &Arc<Self>) -> bool {
        !self.lock().is_empty()
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        // Read the arguments before taking the lock: an argument can be this very list
        // (`l.extend(l)`), and iterating it locks too.
        if let ("extend", [xs]) = (method, args) {
            let more: Vec<Value> = xs.try_iter()?.collect();
            check_no_cycle(self, &more)?;
            self.lock().extend(more);
            return Ok(Value::from(()));
        }
        if matches!(method, "append" | "insert") {
            check_no_cycle(self, args)?;
        }
        let mut items = self.lock();
        match (method, args) {
            ("append", [x]) => {
                items.push(x.clone());
                Ok(Value::from(()))
            }
            ("insert", [i, x]) => {
                let at = index_arg(items.len(), Some(i), true)?;
                items.insert(at, x.clone());
                Ok(Value::from(()))
            }
            ("pop", [] | [_]) => {
                let at = index_arg(items.len(), args.first(), false)?;
                Ok(items.remove(at))
            }
            ("clear", []) => {
                items.clear();
                Ok(Value::from(()))
            }
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_maps_keep_insertion_order() {
        let json: serde_json::Value =
            serde_json::from_str(r#"{"z": 1, "a": [true, null]}"#).unwrap();
        let v = from_json(&json);
        let keys: Vec<String> = v.try_iter().unwrap().map(|k| k.to_string()).collect();
        assert_eq!(keys, ["z", "a"]);
    }

    #[test]
    fn mutable_list_wraps_only_lists() {
        assert!(MutableList::wrap(Value::from(1))
            .downcast_object_ref::<MutableList>()
            .is_none());
        let l = MutableList::wrap(Value::from(vec![Value::from(1)]));
        assert!(l.downcast_object_ref::<MutableList>().is_some());
        assert_eq!(l.len(), Some(1));
    }
}
