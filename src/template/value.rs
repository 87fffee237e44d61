//! Conversions between JSON and minijinja values, and the mutable list used for Python-style
//! in-place list methods.
//!
//! minijinja values are immutable, but some chat templates (Kimi-K2) keep a queue in a namespace
//! and call `ns.ids.append(x)` / `ns.ids.pop(0)` on it. We support that with [`MutableList`], a
//! list object with interior mutability. A list becomes mutable when it is stored in a
//! `namespace(...)` (our `namespace` global converts list arguments); list literals elsewhere and
//! the lists of the render context stay ordinary immutable minijinja lists, and calling a mutating
//! method on them is a render error rather than a silent no-op.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// The printed size of the items (see [`super::guard::weight`]), kept up to date by the
    /// in-place methods so that growing the list is checked against the memory limit.
    weight: AtomicUsize,
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
            Ok(iter) => {
                let items: Vec<Value> = iter.collect();
                let weight = items
                    .iter()
                    .map(|v| super::guard::weight(v, usize::MAX - 1))
                    .fold(0usize, usize::saturating_add);
                Value::from_object(MutableList {
                    items: Mutex::new(items),
                    weight: AtomicUsize::new(weight),
                })
            }
            Err(_) => value,
        }
    }

    /// Accounts for `more` items about to be added; fails if the list would print larger than
    /// the render's `max_value_bytes` (then nothing is added).
    fn grow(&self, more: &[Value]) -> Result<(), Error> {
        let cap = super::guard::max_value();
        let added = more
            .iter()
            .map(|v| super::guard::weight(v, cap).saturating_add(2))
            .fold(0usize, usize::saturating_add);
        let total = self.weight.load(Ordering::Relaxed).saturating_add(added);
        super::guard::require_size("a list", total)?;
        self.weight.store(total, Ordering::Relaxed);
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Value>> {
        // A panic while holding the lock cannot leave the Vec itself invalid.
        self.items.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Containers nested deeper than this cannot be stored in a mutable list or a namespace.
const MAX_NESTING: usize = 64;

/// Values the store checks of one render may visit in total; beyond it, storing fails with an
/// out-of-fuel error (fuel does not meter the checks, and a loop re-storing a growing list would
/// otherwise make a render quadratic).
const CHECK_BUDGET: usize = 2_000_000;

/// The render's remaining [`CHECK_BUDGET`], kept in a render-local extension of the `State`.
#[derive(Clone)]
struct CheckBudget(Arc<AtomicUsize>);

fn check_budget(state: &mut State) -> Arc<AtomicUsize> {
    state
        .get_or_insert_extension_with(|| CheckBudget(Arc::new(AtomicUsize::new(CHECK_BUDGET))))
        .0
        .clone()
}

/// Why a value cannot be stored in a container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// It is the container or contains it: storing it would create a cycle.
    Cycle,
    /// It is nested deeper than [`MAX_NESTING`].
    TooDeep,
    /// The render used up its [`CHECK_BUDGET`].
    OverBudget,
}

/// Checks that `value` may be stored in the container that `is_self` recognises: it must not be
/// the container or contain it (through lists, maps and namespaces), nor be nested deeper than
/// [`MAX_NESTING`]. minijinja compares, prints and drops containers recursively, so a cycle or a
/// very deep value would overflow the stack.
fn check_store(
    is_self: &dyn Fn(&Value) -> bool,
    value: &Value,
    depth: usize,
    budget: &AtomicUsize,
) -> Result<(), Refusal> {
    use minijinja::value::ValueKind;
    if budget
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
        .is_err()
    {
        return Err(Refusal::OverBudget);
    }
    if is_self(value) {
        return Err(Refusal::Cycle);
    }
    match value.kind() {
        ValueKind::Seq | ValueKind::Iterable | ValueKind::Map => {
            if depth >= MAX_NESTING {
                return Err(Refusal::TooDeep);
            }
            let Ok(iter) = value.try_iter() else {
                return Ok(());
            };
            let is_map = value.kind() == ValueKind::Map;
            for item in iter {
                let item = if is_map {
                    value.get_item(&item).unwrap_or_default()
                } else {
                    item
                };
                check_store(is_self, &item, depth + 1, budget)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_values(
    what: &str,
    is_self: &dyn Fn(&Value) -> bool,
    values: &[Value],
    budget: &AtomicUsize,
) -> Result<(), Error> {
    for value in values {
        match check_store(is_self, value, 0, budget) {
            Ok(()) => {}
            Err(Refusal::Cycle) => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("a {what} cannot contain itself"),
                ))
            }
            Err(Refusal::TooDeep) => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "a {what} cannot store values nested more than {MAX_NESTING} levels deep"
                    ),
                ))
            }
            Err(Refusal::OverBudget) => {
                return Err(Error::new(
                    ErrorKind::OutOfFuel,
                    format!(
                        "storing into a {what}: more than {CHECK_BUDGET} values checked in \
                         this render"
                    ),
                ))
            }
        }
    }
    Ok(())
}

fn check_no_cycle(list: &MutableList, values: &[Value], state: &mut State) -> Result<(), Error> {
    let is_self = |v: &Value| {
        v.downcast_object_ref::<MutableList>()
            .is_some_and(|other| std::ptr::eq(other, list))
    };
    check_values("list", &is_self, values, &check_budget(state))
}

/// A Jinja2 `namespace()`: a map of attributes that `{% set ns.attr = value %}` changes.
///
/// minijinja's own namespace object accepts any value in `{% set %}`, including the namespace
/// itself, and minijinja 3.0.5 overflows the stack comparing two namespaces that contain
/// themselves. This one behaves the same when read (a map with sorted keys) but has no minijinja
/// `{% set %}` support: [`super::preprocess`] rewrites each `{% set a.b = expr %}` into
/// `{% do __chatparse_setattr(a, "b", (expr)) %}`, and [`set_attr`] refuses values that contain
/// the namespace or are nested too deeply. Any other assignment form (`{% set a.b %}` blocks,
/// tuple targets) is a render error ("can only assign to namespaces"), never a cycle.
#[derive(Debug, Default)]
pub(crate) struct Namespace {
    attrs: Mutex<BTreeMap<Arc<str>, Value>>,
}

impl Namespace {
    /// A namespace value with the given attributes.
    pub(crate) fn new_value(attrs: impl IntoIterator<Item = (Arc<str>, Value)>) -> Value {
        Value::from_object(Namespace {
            attrs: Mutex::new(attrs.into_iter().collect()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<Arc<str>, Value>> {
        self.attrs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Object for Namespace {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        self.lock().get(key.as_str()?).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.lock().keys().cloned().map(Value::from).collect())
    }
}

/// The name of the global that `{% set ns.attr = value %}` statements are rewritten to call.
pub(crate) const SETATTR_FN: &str = "__chatparse_setattr";

/// `__chatparse_setattr(namespace, name, value)`: `{% set namespace.name = value %}`.
pub(crate) fn set_attr(
    state: &mut State,
    target: &Value,
    name: &str,
    value: Value,
) -> Result<Value, Error> {
    let Some(ns) = target.downcast_object_ref::<Namespace>() else {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("can only assign to namespaces, not {}", target.kind()),
        ));
    };
    let is_self = |v: &Value| {
        v.downcast_object_ref::<Namespace>()
            .is_some_and(|other| std::ptr::eq(other, ns))
    };
    check_values(
        "namespace",
        &is_self,
        std::slice::from_ref(&value),
        &check_budget(state),
    )?;
    ns.lock().insert(Arc::from(name), value);
    Ok(Value::from(()))
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
        state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        // Read the arguments before taking the lock: an argument can be this very list
        // (`l.extend(l)`), and iterating it locks too.
        if let ("extend", [xs]) = (method, args) {
            let more: Vec<Value> = xs.try_iter()?.collect();
            check_no_cycle(self, &more, state)?;
            self.grow(&more)?;
            self.lock().extend(more);
            return Ok(Value::from(()));
        }
        match (method, args) {
            ("append", [x]) | ("insert", [_, x]) => {
                check_no_cycle(self, args, state)?;
                self.grow(std::slice::from_ref(x))?;
            }
            _ => {}
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
                let removed = items.remove(at);
                let w = super::guard::weight(&removed, usize::MAX - 1);
                let _ = self
                    .weight
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                        Some(n.saturating_sub(w))
                    });
                Ok(removed)
            }
            ("clear", []) => {
                items.clear();
                self.weight.store(0, Ordering::Relaxed);
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
