//! Filters that replace minijinja's built-ins where Jinja2/transformers behave differently.
//!
//! - `tojson`: transformers' own filter, Python `json.dumps(x, ensure_ascii=False, indent=None,
//!   separators=None, sort_keys=False)`: no HTML escaping, key order preserved unless `sort_keys`.
//! - `from_json`: parses a JSON string into a value (used by DeepSeek-V3.2/V4 templates).
//! - `indent`: Jinja2's, which keeps a trailing newline and accepts a string width.
//! - `int`: Jinja2's, where a value that is not a number gives the default (0).
//! - `float`: Jinja2's, where a value that is not a number gives the default (0.0).
//! - `length`/`count`: Python `len()`, where an undefined value has length 0.
//! - `replace`: Jinja2's, with the optional `count`.
//! - `string`: Python `str()`, so `none | string` is `None` and `true | string` is `True`.

use minijinja::value::{Rest, ValueKind, ValueOrKwargs};
use minijinja::{Error, ErrorKind, Value};

use super::python::{json_dumps, py_str, DumpOptions};

/// Parameter names of transformers' `tojson`, in positional order.
const TOJSON_PARAMS: [&str; 4] = ["ensure_ascii", "indent", "separators", "sort_keys"];

/// Splits filter/function arguments into positional values and keyword pairs.
pub(super) fn split_args(args: &[Value]) -> (Vec<Value>, Vec<(String, Value)>) {
    let mut positional = Vec::new();
    let mut keywords = Vec::new();
    for arg in args {
        if arg.is_kwargs() {
            if let Ok(keys) = arg.try_iter() {
                for key in keys {
                    let value = arg.get_item(&key).unwrap_or_default();
                    keywords.push((key.as_str().unwrap_or_default().to_string(), value));
                }
            }
        } else {
            positional.push(arg.clone());
        }
    }
    (positional, keywords)
}

/// Binds arguments to named parameters like a Python call; errors on unknown or repeated names.
fn bind<const N: usize>(
    what: &str,
    params: [&str; N],
    args: &[Value],
) -> Result<[Option<Value>; N], Error> {
    let (positional, keywords) = split_args(args);
    if positional.len() > N {
        return Err(Error::new(
            ErrorKind::TooManyArguments,
            format!("{what} takes at most {N} arguments"),
        ));
    }
    let mut bound: [Option<Value>; N] = std::array::from_fn(|_| None);
    for (slot, value) in bound.iter_mut().zip(positional) {
        *slot = Some(value);
    }
    for (name, value) in keywords {
        let Some(i) = params.iter().position(|p| *p == name) else {
            return Err(Error::new(
                ErrorKind::TooManyArguments,
                format!("{what} got an unexpected keyword argument '{name}'"),
            ));
        };
        if bound[i].is_some() {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("{what} got multiple values for argument '{name}'"),
            ));
        }
        bound[i] = Some(value);
    }
    Ok(bound)
}

fn present(v: &Option<Value>) -> Option<&Value> {
    v.as_ref().filter(|v| !v.is_none() && !v.is_undefined())
}

/// transformers' `tojson`: Python `json.dumps` with its options.
pub(crate) fn tojson(value: &Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let args = args.into_values();
    if value.is_undefined() {
        return Err(Error::new(
            ErrorKind::UndefinedError,
            "tojson: Object of type Undefined is not JSON serializable",
        ));
    }
    let [ensure_ascii, indent, separators, sort_keys] = bind("tojson", TOJSON_PARAMS, &args)?;
    let indent = match present(&indent) {
        None => None,
        Some(v) if v.kind() == ValueKind::String => {
            Some(v.as_str().unwrap_or_default().to_string())
        }
        Some(v) => {
            let n = v.as_i64().ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOperation,
                    "tojson: indent must be an int or str",
                )
            })?;
            Some(" ".repeat(usize::try_from(n).unwrap_or(0).min(256)))
        }
    };
    let separators = match present(&separators) {
        None => None,
        Some(v) => {
            let parts: Vec<Value> = v.try_iter()?.collect();
            match parts.as_slice() {
                [a, b] if a.as_str().is_some() && b.as_str().is_some() => Some((
                    a.as_str().unwrap_or_default().to_string(),
                    b.as_str().unwrap_or_default().to_string(),
                )),
                _ => {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "tojson: separators must be a pair of strings",
                    ))
                }
            }
        }
    };
    let opts = DumpOptions {
        ensure_ascii: ensure_ascii.is_some_and(|v| v.is_true()),
        indent,
        separators,
        sort_keys: sort_keys.is_some_and(|v| v.is_true()),
    };
    json_dumps(value, &opts).map(Value::from)
}

/// Parses a JSON string into a template value.
pub(crate) fn from_json(value: &Value) -> Result<Value, Error> {
    let text = value.as_str().ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("from_json expects a string, got {}", value.kind()),
        )
    })?;
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("from_json: invalid JSON: {e}"),
        )
    })?;
    Ok(super::value::from_json(&json))
}

/// Python `str.splitlines()` line boundaries.
pub(super) fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{b}'
            | '\u{c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Python `str.splitlines()` (without keepends).
fn splitlines(s: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if is_line_break(c) {
            lines.push(&s[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' {
                if let Some(&(j, '\n')) = chars.peek() {
                    chars.next();
                    end = j + 1;
                }
            }
            start = end;
        }
    }
    if start < s.len() {
        lines.push(&s[start..]);
    }
    lines
}

/// Jinja2's `indent(s, width=4, first=False, blank=False)`.
pub(crate) fn indent(value: &Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let args = args.into_values();
    let [width, first, blank] = bind("indent", ["width", "first", "blank"], &args)?;
    let indention = match &width {
        None => "    ".to_string(),
        Some(w) if w.kind() == ValueKind::String => w.as_str().unwrap_or_default().to_string(),
        Some(w) => {
            let n = w.as_i64().ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOperation,
                    "indent: width must be an int or str",
                )
            })?;
            " ".repeat(usize::try_from(n).unwrap_or(0).min(1024))
        }
    };
    let first = first.is_some_and(|v| v.is_true());
    let blank = blank.is_some_and(|v| v.is_true());
    let mut text = String::new();
    py_str(value, &mut text);
    text.push('\n'); // Jinja2's quirk, so that a trailing newline survives splitlines
    let lines = splitlines(&text);
    let estimate = text.len() + (lines.len() + 1) * indention.len();
    super::guard::require_size("indent", estimate)?;
    let mut rv = String::with_capacity(text.len() + lines.len() * indention.len());
    if blank {
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                rv.push('\n');
                rv.push_str(&indention);
            }
            rv.push_str(line);
        }
    } else {
        let mut it = lines.iter();
        if let Some(head) = it.next() {
            rv.push_str(head);
        }
        for line in it {
            rv.push('\n');
            if !line.is_empty() {
                rv.push_str(&indention);
            }
            rv.push_str(line);
        }
    }
    if first {
        rv.insert_str(0, &indention);
    }
    Ok(Value::from(rv))
}

/// Python `int(text, base)` for a string (surrounding whitespace and `_` separators allowed).
fn parse_py_int(text: &str, base: u32) -> Option<i128> {
    let t = text.trim();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = if base == 16 {
        digits
            .strip_prefix("0x")
            .or(digits.strip_prefix("0X"))
            .unwrap_or(digits)
    } else {
        digits
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let cleaned: String = digits.chars().filter(|c| *c != '_').collect();
    let n = i128::from_str_radix(&cleaned, base).ok()?;
    Some(if neg { -n } else { n })
}

/// Jinja2's `int(value, default=0, base=10)`: a value that is not a number gives `default`.
pub(crate) fn int(value: &Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let args = args.into_values();
    let [default, base] = bind("int", ["default", "base"], &args)?;
    let default = default.unwrap_or(Value::from(0));
    let base = match base {
        Some(b) => u32::try_from(b.as_i64().unwrap_or(10)).unwrap_or(10),
        None => 10,
    };
    if !(2..=36).contains(&base) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "int: base must be 2..=36",
        ));
    }
    Ok(match value.kind() {
        ValueKind::Undefined => {
            return Err(Error::new(
                ErrorKind::UndefinedError,
                "int of an undefined value",
            ))
        }
        ValueKind::Bool => Value::from(i64::from(value.is_true())),
        ValueKind::Number if value.is_integer() => value.clone(),
        ValueKind::Number => match f64::try_from(value.clone()) {
            Ok(f) if f.is_finite() => Value::from(f.trunc() as i128),
            _ => default,
        },
        ValueKind::String => {
            let s = value.as_str().unwrap_or_default();
            match parse_py_int(s, base) {
                Some(i) => Value::from(i),
                None => match s.trim().parse::<f64>() {
                    Ok(f) if f.is_finite() => Value::from(f.trunc() as i128),
                    _ => default,
                },
            }
        }
        _ => default,
    })
}

/// Jinja2's `float(value, default=0.0)`: a value that is not a number gives `default`.
pub(crate) fn float(value: &Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let args = args.into_values();
    let [default] = bind("float", ["default"], &args)?;
    let default = default.unwrap_or(Value::from(0.0));
    Ok(match value.kind() {
        ValueKind::Undefined => {
            return Err(Error::new(
                ErrorKind::UndefinedError,
                "float of an undefined value",
            ))
        }
        ValueKind::Bool => Value::from(if value.is_true() { 1.0 } else { 0.0 }),
        ValueKind::Number => f64::try_from(value.clone()).map_or(default, Value::from),
        ValueKind::String => {
            let text: String = value
                .as_str()
                .unwrap_or_default()
                .trim()
                .chars()
                .filter(|c| *c != '_')
                .collect();
            text.parse::<f64>().map_or(default, Value::from)
        }
        _ => default,
    })
}

/// Jinja2's `replace(s, old, new, count=None)`: Python `str(s).replace(old, new, count)`.
pub(crate) fn replace(value: &Value, args: Rest<ValueOrKwargs>) -> Result<Value, Error> {
    let args = args.into_values();
    let [old, new, count] = bind("replace", ["old", "new", "count"], &args)?;
    let (Some(old), Some(new)) = (old, new) else {
        return Err(Error::new(
            ErrorKind::MissingArgument,
            "replace needs the old and new strings",
        ));
    };
    let text = |v: &Value| {
        let mut s = String::new();
        py_str(v, &mut s);
        s
    };
    let (subject, old, new) = (text(value), text(&old), text(&new));
    let count = present(&count).and_then(Value::as_i64).unwrap_or(-1);
    let estimate = super::guard::replace_estimate(&subject, &old, &new, Some(count));
    super::guard::require_size("replace", estimate)?;
    Ok(Value::from(match usize::try_from(count) {
        Ok(n) => subject.replacen(&old, &new, n),
        Err(_) => subject.replace(&old, &new),
    }))
}

/// Jinja2's `length`/`count`: Python `len()`, where an undefined value has length 0.
pub(crate) fn length(value: &Value) -> Result<Value, Error> {
    if value.is_undefined() {
        return Ok(Value::from(0));
    }
    if let Some(s) = value.as_str() {
        return Ok(Value::from(s.chars().count()));
    }
    value.len().map(Value::from).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("object of type {} has no len()", value.kind()),
        )
    })
}

/// Python `str(value)`.
pub(crate) fn string(value: &Value) -> Value {
    if value.kind() == ValueKind::String {
        return value.clone();
    }
    let mut s = String::new();
    py_str(value, &mut s);
    Value::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<&str> {
        splitlines(s)
    }

    #[test]
    fn splitlines_like_python() {
        assert_eq!(lines("a\nb\r\nc\rd\n"), ["a", "b", "c", "d"]);
        assert_eq!(lines("a\n\n"), ["a", ""]);
        assert!(lines("").is_empty());
    }

    #[test]
    fn py_int_parsing() {
        assert_eq!(parse_py_int(" 42 ", 10), Some(42));
        assert_eq!(parse_py_int("-1_000", 10), Some(-1000));
        assert_eq!(parse_py_int("4.5", 10), None);
        assert_eq!(parse_py_int("ff", 16), Some(255));
    }
}
