//! Python formatting of template values: `str()`/`repr()` (what Jinja2 prints for `{{ x }}` and
//! `x | string`) and `json.dumps` (what transformers' `tojson` filter returns).

use std::fmt::Write as _;

use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, Value};

/// Python `repr(float)`: shortest round-trip digits, scientific outside `1e-4 <= |x| < 1e16`.
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        let zeros = "0".repeat(point.unsigned_abs() as usize);
        format!("{sign}0.{zeros}{digits}")
    } else if point as usize >= digits.len() {
        let zeros = "0".repeat(point as usize - digits.len());
        format!("{sign}{digits}{zeros}.0")
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{sign}{int}.{frac}")
    }
}

fn f64_of(value: &Value) -> Option<f64> {
    f64::try_from(value.clone()).ok()
}

/// Python `str(value)`, as Jinja2 prints a value; undefined prints as nothing.
pub(crate) fn py_str(value: &Value, out: &mut String) {
    match value.kind() {
        ValueKind::Undefined => {}
        ValueKind::String => out.push_str(value.as_str().unwrap_or_default()),
        _ => py_repr(value, out),
    }
}

/// Containers nested deeper than this print as `...` (a mutable list can contain itself; Python
/// prints such a cycle as `[...]`).
const MAX_REPR_DEPTH: usize = 64;

/// Python `repr(value)`.
pub(crate) fn py_repr(value: &Value, out: &mut String) {
    repr_at(value, out, 0);
}

fn repr_at(value: &Value, out: &mut String, depth: usize) {
    if depth > MAX_REPR_DEPTH
        && matches!(
            value.kind(),
            ValueKind::Seq | ValueKind::Iterable | ValueKind::Map
        )
    {
        out.push_str("...");
        return;
    }
    match value.kind() {
        ValueKind::Undefined => {}
        ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number => {
            if value.is_integer() {
                let _ = write!(out, "{value}");
            } else {
                out.push_str(&float_repr(f64_of(value).unwrap_or(f64::NAN)));
            }
        }
        ValueKind::String => str_repr(value.as_str().unwrap_or_default(), out),
        ValueKind::Seq | ValueKind::Iterable => {
            let tuple = value.is_tuple();
            out.push(if tuple { '(' } else { '[' });
            let mut count = 0;
            if let Ok(iter) = value.try_iter() {
                for (i, item) in iter.enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    repr_at(&item, out, depth + 1);
                    count += 1;
                }
            }
            if tuple && count == 1 {
                out.push(',');
            }
            out.push(if tuple { ')' } else { ']' });
        }
        ValueKind::Map => {
            out.push('{');
            if let Ok(iter) = value.try_iter() {
                for (i, key) in iter.enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    repr_at(&key, out, depth + 1);
                    out.push_str(": ");
                    repr_at(&value.get_item(&key).unwrap_or_default(), out, depth + 1);
                }
            }
            out.push('}');
        }
        _ => {
            let _ = write!(out, "{value}");
        }
    }
}

/// Python `repr(str)`: single quotes unless the text has `'` and no `"`.
fn str_repr(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Options of Python's `json.dumps`, as transformers' `tojson` filter exposes them.
#[derive(Debug, Clone, Default)]
pub(crate) struct DumpOptions {
    pub ensure_ascii: bool,
    /// `None`: single line; `Some(s)`: newline then `s` per nesting level.
    pub indent: Option<String>,
    /// `(item_separator, key_separator)`; defaults depend on `indent` like Python's.
    pub separators: Option<(String, String)>,
    pub sort_keys: bool,
}

/// Python `json.dumps(value, ...)` of a template value.
pub(crate) fn json_dumps(value: &Value, opts: &DumpOptions) -> Result<String, Error> {
    let (item_sep, key_sep) = match &opts.separators {
        Some((i, k)) => (i.as_str(), k.as_str()),
        None if opts.indent.is_some() => (",", ": "),
        None => (", ", ": "),
    };
    let mut enc = Encoder {
        opts,
        item_sep,
        key_sep,
        out: String::new(),
    };
    enc.value(value, 0)?;
    Ok(enc.out)
}

struct Encoder<'a> {
    opts: &'a DumpOptions,
    item_sep: &'a str,
    key_sep: &'a str,
    out: String,
}

const MAX_DEPTH: usize = 500;

impl Encoder<'_> {
    fn newline(&mut self, level: usize) {
        if let Some(indent) = &self.opts.indent {
            self.out.push('\n');
            for _ in 0..level {
                self.out.push_str(indent);
            }
        }
    }

    fn value(&mut self, value: &Value, level: usize) -> Result<(), Error> {
        if level > MAX_DEPTH {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "tojson: value nested too deeply",
            ));
        }
        match value.kind() {
            ValueKind::None => self.out.push_str("null"),
            ValueKind::Bool => self
                .out
                .push_str(if value.is_true() { "true" } else { "false" }),
            ValueKind::Number => self.number(value),
            ValueKind::String => self.string(value.as_str().unwrap_or_default()),
            ValueKind::Seq | ValueKind::Iterable => {
                let items: Vec<Value> = value.try_iter()?.collect();
                if items.is_empty() {
                    self.out.push_str("[]");
                    return Ok(());
                }
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(self.item_sep);
                    }
                    self.newline(level + 1);
                    self.value(item, level + 1)?;
                }
                self.newline(level);
                self.out.push(']');
            }
            ValueKind::Map => {
                let mut pairs: Vec<(String, Value)> = Vec::new();
                for key in value.try_iter()? {
                    let item = value.get_item(&key)?;
                    pairs.push((self.key_text(&key)?, item));
                }
                if pairs.is_empty() {
                    self.out.push_str("{}");
                    return Ok(());
                }
                if self.opts.sort_keys {
                    pairs.sort_by(|a, b| a.0.cmp(&b.0));
                }
                self.out.push('{');
                for (i, (key, item)) in pairs.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(self.item_sep);
                    }
                    self.newline(level + 1);
                    self.string(key);
                    self.out.push_str(self.key_sep);
                    self.value(item, level + 1)?;
                }
                self.newline(level);
                self.out.push('}');
            }
            kind => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("Object of type {kind} is not JSON serializable"),
                ))
            }
        }
        Ok(())
    }

    fn key_text(&self, key: &Value) -> Result<String, Error> {
        Ok(match key.kind() {
            ValueKind::String => key.as_str().unwrap_or_default().to_string(),
            ValueKind::None => "null".into(),
            ValueKind::Bool => (if key.is_true() { "true" } else { "false" }).into(),
            ValueKind::Number => {
                let mut s = String::new();
                py_repr(key, &mut s);
                s
            }
            kind => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("keys must be str, int, float, bool or None, not {kind}"),
                ))
            }
        })
    }

    fn number(&mut self, value: &Value) {
        if value.is_integer() {
            let _ = write!(self.out, "{value}");
            return;
        }
        let f = f64_of(value).unwrap_or(f64::NAN);
        if f.is_nan() {
            self.out.push_str("NaN");
        } else if f.is_infinite() {
            self.out
                .push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
        } else {
            self.out.push_str(&float_repr(f));
        }
    }

    fn string(&mut self, s: &str) {
        let out = &mut self.out;
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c if self.opts.ensure_ascii && (c as u32) > 0x7e => {
                    let mut buf = [0u16; 2];
                    for unit in c.encode_utf16(&mut buf) {
                        let _ = write!(out, "\\u{unit:04x}");
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        for (f, want) in [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (123.456, "123.456"),
            (1.5e300, "1.5e+300"),
        ] {
            assert_eq!(float_repr(f), want, "{f}");
        }
    }

    #[test]
    fn repr_of_containers() {
        let v = Value::from(vec![
            Value::from("it's"),
            Value::from(true),
            Value::from(()),
            Value::from(1.0),
        ]);
        let mut s = String::new();
        py_str(&v, &mut s);
        assert_eq!(s, r#"["it's", True, None, 1.0]"#);
    }

    #[test]
    fn dumps_like_python() {
        let json: serde_json::Value =
            serde_json::from_str(r#"{"b": [1, 2.0, "é<&>'"], "a": {}, "c": []}"#).unwrap();
        let v = crate::template::value::from_json(&json);
        let plain = json_dumps(&v, &DumpOptions::default()).unwrap();
        assert_eq!(plain, r#"{"b": [1, 2.0, "é<&>'"], "a": {}, "c": []}"#);
        let opts = DumpOptions {
            ensure_ascii: true,
            indent: Some("  ".into()),
            sort_keys: true,
            ..DumpOptions::default()
        };
        let pretty = json_dumps(&v, &opts).unwrap();
        assert_eq!(
            pretty,
            "{\n  \"a\": {},\n  \"b\": [\n    1,\n    2.0,\n    \"\\u00e9<&>'\"\n  ],\n  \"c\": []\n}"
        );
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            any::<String>().prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                proptest::collection::vec((any::<String>(), inner), 0..6)
                    .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// `json_dumps` output is JSON that parses back to the input, with every option set.
        #[test]
        fn dumps_round_trips(json in json_value(), ascii: bool, indent: bool, sort: bool) {
            let v = crate::template::value::from_json(&json);
            let opts = DumpOptions {
                ensure_ascii: ascii,
                indent: indent.then(|| "  ".to_string()),
                separators: None,
                sort_keys: sort,
            };
            let text = json_dumps(&v, &opts).unwrap();
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            // serde_json's float parser is not always correctly rounded, so compare with the
            // input after the same serialize/parse trip (same shortest digits on both sides).
            let want: serde_json::Value =
                serde_json::from_str(&serde_json::to_string(&json).unwrap()).unwrap();
            proptest::prop_assert_eq!(back, want);
            if ascii {
                proptest::prop_assert!(text.is_ascii());
            }
        }

        /// `float_repr` round-trips through Rust's parser.
        #[test]
        fn float_repr_round_trips(f in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL) {
            proptest::prop_assert_eq!(float_repr(f).parse::<f64>().unwrap(), f);
        }
    }
}
