//! A4 (elements): objects and arrays a template writes as elements, recursively
//! (`<meta><source>x</source><level>2</level></meta>`, `<tags><item>a</item></tags>`), instead
//! of JSON or a Python literal.
//!
//! Found from renders of one call whose first argument holds an object of one member, of two,
//! an array of two strings and an object nested in an object: the one-member object gives the
//! element's markers around its name and value (the probe name and value cut them out), the
//! others must then render exactly as those markers predict (members in a row with at most
//! whitespace between them, array items under one fixed name, nesting by the same rule).
//! Anything else (JSON, a literal, markers that do not repeat) is no element format.

use serde_json::{json, Value};

use super::values::{value_region, RenderFirst};
use super::{ArgumentMarkers, ElementValues};
use crate::analyze::slots::Slot;

/// Member names and string values of the probes (no template writes them).
const KEYS: [&str; 2] = ["XQXek", "XQXem"];
const VALUES: [&str; 2] = ["XQXev", "XQXew"];

impl ElementValues {
    /// The text of one element named `name` holding the text `value`.
    pub fn element(&self, name: &str, value: &str) -> String {
        let close = self.close.replace(Slot::Key.char(), name);
        format!("{}{name}{}{value}{close}", self.open, self.name_value)
    }
}

/// The element format of `markers`' values, if the renders show one (see the module docs).
pub fn element_values(
    render: &RenderFirst<'_>,
    markers: &ArgumentMarkers,
) -> Option<ElementValues> {
    let region = |value: Value| {
        render(value).and_then(|text| value_region(&text, markers, false).map(str::to_owned))
    };
    let [k1, k2] = KEYS;
    let [v1, v2] = VALUES;
    let one = region(json!({ k1: v1 }))?;
    let at = one.find(k1)?;
    let open = &one[..at];
    let rest = &one[at + k1.len()..];
    let at = rest.find(v1)?;
    let name_value = &rest[..at];
    let close = &rest[at + v1.len()..];
    if open.trim().is_empty() || close.trim().is_empty() || close.matches(k1).count() > 1 {
        return None;
    }
    let mut found = ElementValues {
        open: open.to_owned(),
        name_value: name_value.to_owned(),
        close: close.replace(k1, &Slot::Key.char().to_string()),
        separator: String::new(),
        item: String::new(),
    };
    // Two members: the elements in a row, whitespace at most between them.
    let two = region(json!({ k1: v1, k2: v2 }))?;
    let separator = two
        .strip_prefix(&found.element(k1, v1))?
        .strip_suffix(&found.element(k2, v2))?;
    if !separator.trim().is_empty() {
        return None;
    }
    found.separator = separator.to_owned();
    // An array: items under one name, a word.
    let array = region(json!([v1, v2]))?;
    let after_open = array.strip_prefix(&found.open)?;
    let item = &after_open[..after_open.find(&found.name_value).filter(|&at| at > 0)?];
    if !item
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
    {
        return None;
    }
    found.item = item.to_owned();
    let items = format!(
        "{}{}{}",
        found.element(item, v1),
        found.separator,
        found.element(item, v2)
    );
    if array != items {
        return None;
    }
    // Nesting by the same rule.
    let nested = region(json!({ k1: { k2: v2 } }))?;
    (nested == found.element(k1, &found.element(k2, v2))).then_some(found)
}
