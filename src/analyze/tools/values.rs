//! A4: how tagged argument values are written beyond their markers, from renders of one call
//! whose first argument holds a typed or a special value (the second stays a plain string, so
//! the first value ends where the second argument's name prefix starts).
//!
//! - **Python literals**: a boolean, `null`, an object and an array each render as JSON or as a
//!   Python literal (`True`, `None`, `{'k': 'v'}`, `['a']`); the kinds written as Python are
//!   recorded ([`ArgumentMarkers::python_values`]).
//! - **Wrapper and escapes**: a string holding `<`, `>`, `&`, `"`, `'`, a newline, a backslash
//!   and a tab between distinct tokens. The text before the first token and after the last is
//!   a wrapper ([`ArgumentMarkers::value_wrapper`]; whitespace alone is layout, not a
//!   wrapper); the text between two tokens is how the
//!   character between them is written ([`ArgumentMarkers::escapes`]). A wrapper a plain
//!   string renders without is conditional; one an object holding `<` and `&` renders without
//!   wraps strings only; a string holding the wrapper's closing text tells whether the
//!   template splits it into sections that join (`]]]]><![CDATA[>`). Escapes apply to strings
//!   only when the object probe reads as it is, without undoing them.
//! - **Quotes that are a wrapper**: strings in extra quotes
//!   ([`NonStringValues::StringsQuoted`]) whose objects hold plain JSON or Python strings (not
//!   strings in those quotes) are wrapped strings, not literals with custom quotes: the quotes
//!   become a wrapper of strings only, and values have the same markers.
//!
//! - **Verbatim strings**: literals with custom quotes whose strings the template writes as
//!   they are, with no escapes ([`ArgumentMarkers::verbatim_strings`]): the quote or a newline
//!   inside a value is written raw.
//!
//! Everything found is checked: the renders decoded with it give the values back; otherwise
//! the wrapper and escapes are not recorded (and quotes stay quotes).

use serde_json::{json, Value};

use crate::analyze::scenario::ProbeSet;

use super::{ArgumentMarkers, Escape, JsonKind, NonStringValues, ValueWrapper};

/// The tokens of the special string, around the characters of [`SPECIALS`].
const TOKENS: [&str; 9] = [
    "XQXa", "XQXb", "XQXc", "XQXd", "XQXe", "XQXf", "XQXg", "XQXh", "XQXi",
];

/// The characters a template may write otherwise in a value.
const SPECIALS: [char; 8] = ['<', '>', '&', '"', '\'', '\n', '\\', '\t'];

/// The token inside the object probe's nested string.
const NESTED: &str = "XQXs";

/// Renders one call whose first argument has the given value (the second is the primary
/// probe string) and returns its call text, slotted like the analysis's other renders.
pub type RenderFirst<'a> = dyn Fn(Value) -> Option<String> + 'a;

/// The special string: the tokens with one special character between each two.
fn special_string() -> String {
    let mut s = TOKENS[0].to_owned();
    for (c, token) in SPECIALS.iter().zip(&TOKENS[1..]) {
        s.push(*c);
        s.push_str(token);
    }
    s
}

/// An object with a nested string holding `<` and `&`, and a nested array.
fn object_probe() -> Value {
    json!({"XQXk": format!("{NESTED} <&"), "XQXl": [1, false]})
}

/// Records in `markers` how values are written (see the module docs); `plain` is the call
/// text of the primary one-call render (its first value is a plain string).
pub fn analyze(render: &RenderFirst<'_>, plain: &str, markers: &mut ArgumentMarkers) {
    let object = object_probe();
    let object_text = render(object.clone());
    let mut found = markers.clone();
    if found.non_string_values == NonStringValues::StringsQuoted {
        if !object_text
            .as_deref()
            .is_some_and(|text| quotes_are_wrapper(text, &found, &object))
        {
            // Literals with custom quotes (their own decoding): only whether strings are
            // written in them as they are.
            markers.verbatim_strings = verbatim_strings(render, markers);
            return;
        }
        found.value_wrapper = Some(ValueWrapper {
            open: std::mem::take(&mut found.string_open),
            close: std::mem::take(&mut found.string_close),
            conditional: false,
            strings_only: true,
            sections: false,
        });
        found.non_string_values = NonStringValues::SameMarkers;
    }
    if wrapper_and_escapes(render, plain, object_text.as_deref(), &mut found) {
        *markers = found;
    } else if markers.non_string_values == NonStringValues::StringsQuoted {
        // The quotes stay literal quotes.
        markers.verbatim_strings = verbatim_strings(render, markers);
    }
    markers.python_values = python_kinds(render, object_text.as_deref(), markers);
    markers.element_values = super::elements::element_values(render, markers);
    if markers.element_values.is_some() {
        // Containers are elements, not literals.
        markers
            .python_values
            .retain(|k| !matches!(k, JsonKind::Object | JsonKind::Array));
    }
}

/// Whether string values are written in their quotes as they are: the special string (which
/// holds both quote characters, a newline and a backslash) renders unchanged between them.
/// Such quotes do not make a literal (a quote inside ends nothing), so values are read up to a
/// closing quote followed by what follows a value.
fn verbatim_strings(render: &RenderFirst<'_>, markers: &ArgumentMarkers) -> bool {
    let special = special_string();
    render(Value::String(special.clone()))
        .as_deref()
        .and_then(|text| value_region(text, markers, true))
        .is_some_and(|region| region == special)
}

/// Whether the strings' extra quotes are a wrapper: the object probe renders as JSON or a
/// Python literal, and its nested string is not in the quotes.
fn quotes_are_wrapper(text: &str, markers: &ArgumentMarkers, object: &Value) -> bool {
    let Some(region) = value_region(text, markers, false) else {
        return false;
    };
    let quoted = format!("{}{NESTED}", markers.string_open);
    !region.contains(&quoted) && reads_as(region.trim(), object).is_some()
}

/// Reads the wrapper and the escapes from the special string's render into `markers`; false
/// when the render does not have that shape or does not decode back.
fn wrapper_and_escapes(
    render: &RenderFirst<'_>,
    plain: &str,
    object_text: Option<&str>,
    markers: &mut ArgumentMarkers,
) -> bool {
    let special = special_string();
    let Some(text) = render(Value::String(special.clone())) else {
        return false;
    };
    let Some(region) = value_region(&text, markers, true) else {
        return false;
    };
    let Some((open, close, escapes)) = read_special(region) else {
        return false;
    };
    markers.escapes = escapes;
    markers.escaped_strings_only = !markers.escapes.is_empty()
        && object_text
            .and_then(|t| value_region(t, markers, false))
            .is_some_and(|v| reads_as(v.trim(), &object_probe()).is_some());
    if open.is_empty() {
        // A wrapper taken from quotes must show around the special string too.
        return markers.value_wrapper.is_none() && decodes_to(markers, region, &special);
    }
    if open.trim().is_empty() || close.trim().is_empty() {
        // Whitespace around some values is layout, not a wrapper the value can be told by.
        return false;
    }
    let conditional = match value_region(plain, markers, true) {
        Some(v) if v == ProbeSet::PRIMARY.value_first => true,
        Some(v) if v == format!("{open}{}{close}", ProbeSet::PRIMARY.value_first) => false,
        _ => return false,
    };
    let strings_only = match &markers.value_wrapper {
        Some(w) if w.open != open || w.close != close => return false,
        Some(w) => w.strings_only,
        None => object_text
            .and_then(|t| value_region(t, markers, false))
            .is_some_and(|v| !v.starts_with(open) && v.contains(['<', '&'])),
    };
    let mut wrapper = ValueWrapper {
        open: open.to_owned(),
        close: close.to_owned(),
        conditional,
        strings_only,
        sections: false,
    };
    // A string holding the closing text: one section, or several that join.
    let holding_close = format!("{}{close}{}", TOKENS[0], TOKENS[1]);
    if let Some(region) = render(Value::String(holding_close.clone()))
        .as_deref()
        .and_then(|t| value_region(t, markers, true).map(str::to_owned))
    {
        markers.value_wrapper = Some(wrapper.clone());
        let single = decodes_to(markers, &region, &holding_close);
        wrapper.sections = true;
        markers.value_wrapper = Some(wrapper.clone());
        let joined = decodes_to(markers, &region, &holding_close);
        wrapper.sections = joined && !single;
    }
    markers.value_wrapper = Some(wrapper);
    decodes_to(markers, region, &special)
}

/// The wrapper (opening, closing) and the escapes of the special string's rendered value;
/// `None` when a token is missing, a character is dropped, or only one side is wrapped.
fn read_special(region: &str) -> Option<(&str, &str, Vec<Escape>)> {
    let mut bounds = Vec::with_capacity(TOKENS.len());
    let mut at = 0;
    for token in TOKENS {
        let start = at + region[at..].find(token)?;
        at = start + token.len();
        bounds.push((start, at));
    }
    let open = &region[..bounds[0].0];
    let close = &region[at..];
    if open.is_empty() != close.is_empty() {
        return None;
    }
    let mut escapes = Vec::new();
    for (c, pair) in SPECIALS.iter().zip(bounds.windows(2)) {
        let written = &region[pair[0].1..pair[1].0];
        if written.is_empty() {
            return None;
        }
        if written != c.encode_utf8(&mut [0; 4]) {
            escapes.push(Escape {
                character: c.to_string(),
                written: written.to_owned(),
            });
        }
    }
    Some((open, close, escapes))
}

/// Whether `region` decodes to `expected` with what `markers` say.
fn decodes_to(markers: &ArgumentMarkers, region: &str, expected: &str) -> bool {
    markers.value_text().decode(region).0 == expected
}

/// The kinds of non-string value written as Python literals.
fn python_kinds(
    render: &RenderFirst<'_>,
    object_text: Option<&str>,
    markers: &ArgumentMarkers,
) -> Vec<JsonKind> {
    if !matches!(
        markers.non_string_values,
        NonStringValues::SameMarkers | NonStringValues::Typed
    ) {
        return Vec::new();
    }
    let syntax = markers.non_string_text();
    let probes = [
        (JsonKind::Boolean, Value::Bool(true), None),
        (JsonKind::Null, Value::Null, None),
        (JsonKind::Object, object_probe(), object_text),
        (JsonKind::Array, json!(["XQXs", 2, null]), None),
    ];
    probes
        .into_iter()
        .filter(|(_, value, text)| {
            let text = match text {
                Some(t) => Some(t.to_string()),
                None => render(value.clone()),
            };
            text.as_deref()
                .and_then(|t| value_region(t, markers, false))
                .and_then(|region| reads_as(syntax.decode(region).0.trim(), value))
                == Some(Syntax::Python)
        })
        .map(|(kind, _, _)| kind)
        .collect()
}

/// How a value's text was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Json,
    Python,
}

/// Whether `text` is `value` written as JSON or as a Python literal.
fn reads_as(text: &str, value: &Value) -> Option<Syntax> {
    if serde_json::from_str::<Value>(text).is_ok_and(|v| v == *value) {
        return Some(Syntax::Json);
    }
    let json = crate::json::python_to_json(text).ok()?;
    serde_json::from_str::<Value>(&json)
        .is_ok_and(|v| v == *value)
        .then_some(Syntax::Python)
}

/// The first argument's value as rendered in `text` (a call whose second argument is the
/// primary probe's): between the first name's suffix and value prefix (the string or the
/// non-string ones) and the value suffix before the second argument; for strings, inside the
/// strings' extra quotes.
pub(super) fn value_region<'t>(
    text: &'t str,
    markers: &ArgumentMarkers,
    string: bool,
) -> Option<&'t str> {
    let p = &ProbeSet::PRIMARY;
    let start = text.find(p.arg_first)? + p.arg_first.len();
    let after = &text[start..];
    let next = format!(
        "{}{}{}",
        markers.separator, markers.name_prefix, p.arg_second
    );
    let end = after.find(&next)?;
    let (name_suffix, value_prefix, value_suffix) = match (&markers.non_string, string) {
        (Some(n), false) => (&n.name_suffix, &n.value_prefix, &n.value_suffix),
        _ => (
            &markers.name_suffix,
            &markers.value_prefix,
            &markers.value_suffix,
        ),
    };
    let value = after[..end]
        .strip_prefix(name_suffix.as_str())?
        .strip_prefix(value_prefix.as_str())?
        .strip_suffix(value_suffix.as_str())?;
    if string {
        value
            .strip_prefix(markers.string_open.as_str())?
            .strip_suffix(markers.string_close.as_str())
    } else {
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::{read_special, special_string};

    #[test]
    fn reads_escapes_between_tokens() {
        let written = special_string()
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('\n', "&#10;");
        let (open, close, escapes) = read_special(&written).unwrap();
        assert_eq!((open, close), ("", ""));
        let table: Vec<(&str, &str)> = escapes
            .iter()
            .map(|e| (e.character.as_str(), e.written.as_str()))
            .collect();
        assert_eq!(table, [("<", "&lt;"), ("&", "&amp;"), ("\n", "&#10;")]);
    }

    #[test]
    fn reads_a_wrapper_around_the_tokens() {
        let written = format!("[[{}]]", special_string());
        let (open, close, escapes) = read_special(&written).unwrap();
        assert_eq!((open, close), ("[[", "]]"));
        assert!(escapes.is_empty());
        assert!(read_special(&format!("[[{}", special_string())).is_none());
        assert!(read_special(&special_string().replace('\t', "")).is_none());
    }
}
