//! Global functions and methods transformers gives chat templates, plus Python methods that
//! minijinja-contrib's `pycompat` does not cover.
//!
//! - `raise_exception(message)`: fails the render with `TemplateErrorKind::Raised`, carrying the
//!   message, the template name and line.
//! - `strftime_now(format)`: formats "now" from the render's [`Clock`](super::Clock), which the
//!   renderer passes in the reserved context variable [`CLOCK_VAR`].
//! - `namespace(...)`: like Jinja2's, but list values become [`MutableList`]s so that
//!   `ns.items.append(x)` mutates; names starting with `_` are rejected as transformers does.
//!   It makes our own [`Namespace`] object, whose attributes only `{% set ns.attr = value %}`
//!   (rewritten to a `__chatparse_setattr` call) changes, with cycle and depth checks.

use std::sync::Arc;

use minijinja::value::{Rest, ValueKind, ValueOrKwargs};
use minijinja::{Error, ErrorKind, State, Value};

use super::strftime::strftime;
use super::value::{MutableList, Namespace};

/// Prefix that marks the detail of a `raise_exception` error.
pub(crate) const RAISED_PREFIX: &str = "raise_exception: ";

/// Reserved context variable carrying the render clock (Unix seconds, UTC); absent = system time.
pub(crate) const CLOCK_VAR: &str = "__chatparse_clock_unix__";

/// `raise_exception(message)`.
pub(crate) fn raise_exception(message: Option<Value>) -> Result<Value, Error> {
    let mut text = String::new();
    if let Some(m) = &message {
        super::python::py_str(m, &mut text);
    }
    Err(Error::new(
        ErrorKind::InvalidOperation,
        format!("{RAISED_PREFIX}{text}"),
    ))
}

/// `strftime_now(format)`.
pub(crate) fn strftime_now(state: &State, format: &str) -> Result<Value, Error> {
    let now = match state.lookup(CLOCK_VAR).and_then(|v| v.as_i64()) {
        Some(t) => t,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
    };
    Ok(Value::from(strftime(now, format)))
}

/// transformers' `namespace(...)`, with mutable lists.
pub(crate) fn namespace(args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let mut attrs = Vec::new();
    for arg in args.into_values() {
        if arg.kind() != ValueKind::Map {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "namespace expects a mapping or keyword arguments, got {}",
                    arg.kind()
                ),
            ));
        }
        for key in arg.try_iter()? {
            if key.as_str().is_some_and(|k| k.starts_with('_')) {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "chat templates cannot store underscore-prefixed attributes on a \
                         namespace, but got '{key}'"
                    ),
                ));
            }
            let value = arg.get_item(&key)?;
            if let Some(name) = key.as_str() {
                attrs.push((Arc::from(name), MutableList::wrap(value)));
            }
        }
    }
    Ok(Namespace::new_value(attrs))
}

/// Python methods on values: our additions first, then minijinja-contrib's `pycompat`.
pub(crate) fn unknown_method(
    state: &mut State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    match (value.kind(), method) {
        (ValueKind::Seq, "append" | "extend" | "insert" | "pop" | "clear" | "remove") => {
            Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "list.{method}: this list is immutable (only lists stored in a namespace() \
                     are mutable)"
                ),
            ))
        }
        (ValueKind::String, "rsplit") => {
            super::guard::precheck_method(value, method, args)?;
            rsplit(value.as_str().unwrap_or_default(), args)
        }
        (ValueKind::String, "removeprefix") => {
            let s = value.as_str().unwrap_or_default();
            let p = args.first().and_then(|a| a.as_str()).unwrap_or_default();
            Ok(Value::from(s.strip_prefix(p).unwrap_or(s)))
        }
        (ValueKind::String, "removesuffix") => {
            let s = value.as_str().unwrap_or_default();
            let p = args.first().and_then(|a| a.as_str()).unwrap_or_default();
            Ok(Value::from(s.strip_suffix(p).unwrap_or(s)))
        }
        _ => {
            super::guard::precheck_method(value, method, args)?;
            minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
        }
    }
}

/// Python `str.rsplit(sep=None, maxsplit=-1)`.
fn rsplit(s: &str, args: &[Value]) -> Result<Value, Error> {
    let sep = args
        .first()
        .filter(|v| !v.is_none())
        .and_then(|v| v.as_str());
    let maxsplit = args.get(1).and_then(|v| v.as_i64()).unwrap_or(-1);
    let limit = usize::try_from(maxsplit).ok();
    let mut parts: Vec<Value> = match (sep, limit) {
        (Some(sep), Some(n)) => s.rsplitn(n + 1, sep).map(Value::from).collect(),
        (Some(sep), None) => s.rsplit(sep).map(Value::from).collect(),
        (None, _) => {
            let words: Vec<&str> = s.split_whitespace().collect();
            match limit {
                Some(n) if words.len() > n + 1 => {
                    // Keep the head (with its inner whitespace) as one part.
                    let trimmed = s.trim_end();
                    let mut rest = trimmed;
                    let mut tail = Vec::new();
                    for _ in 0..n {
                        let cut = rest.rfind(char::is_whitespace).unwrap_or(0);
                        tail.push(Value::from(rest[cut..].trim_start()));
                        rest = rest[..cut].trim_end();
                    }
                    tail.push(Value::from(rest));
                    tail
                }
                _ => words.into_iter().rev().map(Value::from).collect(),
            }
        }
    };
    parts.reverse();
    Ok(Value::from(parts))
}
