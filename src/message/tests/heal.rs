use proptest::prelude::*;
use serde_json::Value;

use crate::message::heal::{heal, heal_str, Healing, MAX_DEPTH};

fn check(prefix: &str, expected: Option<&str>) {
    let healed = heal_str(prefix);
    assert_eq!(healed.as_deref(), expected, "heal({prefix:?})");
    if let Some(healed) = healed {
        serde_json::from_str::<Value>(&healed)
            .unwrap_or_else(|e| panic!("heal({prefix:?}) = {healed:?} does not parse: {e}"));
    }
}

#[test]
fn closes_containers() {
    check("{", Some("{}"));
    check("[", Some("[]"));
    check(r#"{"a": [1, {"b": 2"#, Some(r#"{"a": [1, {"b": 2}]}"#));
    check(r#"{"a": 1} "#, Some(r#"{"a": 1} "#));
    check("[[[", Some("[[[]]]"));
}

#[test]
fn closes_open_string_values() {
    check(r#"{"a": "hel"#, Some(r#"{"a": "hel"}"#));
    check(r#"["é"#, Some(r#"["é"]"#));
    check(r#""top"#, Some(r#""top""#));
}

#[test]
fn drops_cut_escapes() {
    check(r#"{"a": "x\"#, Some(r#"{"a": "x"}"#));
    check(r#"{"a": "x\u00"#, Some(r#"{"a": "x"}"#));
    check(r#"{"a": "x\n"#, Some(r#"{"a": "x\n"}"#));
    check(r#"["\ud83d"#, Some(r#"[""]"#));
    check(r#"["\ud83d\u"#, Some(r#"[""]"#));
    check(r#"["\ud83d\ude00"#, Some(r#"["\ud83d\ude00"]"#));
}

#[test]
fn drops_dangling_members() {
    check(r#"{"ke"#, Some("{}"));
    check(r#"{"key""#, Some("{}"));
    check(r#"{"key": "#, Some("{}"));
    check(r#"{"a": 1, "#, Some(r#"{"a": 1}"#));
    check(r#"{"a": 1, "b"#, Some(r#"{"a": 1}"#));
    check("[1, ", Some("[1]"));
    check("[1, -", Some("[1]"));
    check(r#"{"a": -"#, Some("{}"));
}

#[test]
fn trims_numbers_and_completes_literals() {
    check("[1.", Some("[1]"));
    check("[1.5e", Some("[1.5]"));
    check("[2e-", Some("[2]"));
    check("[-0", Some("[-0]"));
    check(r#"{"a": tr"#, Some(r#"{"a": true}"#));
    check("[f", Some("[false]"));
    check("[nul", Some("[null]"));
    check("12", Some("12"));
}

#[test]
fn rejects_what_cannot_be_healed() {
    check("", None);
    check("   ", None);
    check("-", None);
    check("{]", None);
    check(r#"{"a" 1"#, None);
    check("[01", None);
    check("[1,]", None);
    check(r#"["a\q"#, None);
    check("[\"a\u{1}", None);
    check(r#"["\ude00"#, None);
    check(r#"["\ud83dx"#, None);
    check("{} x", None);
    check("[tx", None);
}

#[test]
fn depth_is_bounded() {
    let ok = "[".repeat(MAX_DEPTH);
    assert!(heal(&ok).is_some());
    assert_eq!(heal(&"[".repeat(MAX_DEPTH + 1)), None);
    assert_eq!(heal(&"[".repeat(100_000)), None);
}

#[test]
fn healing_reports_whether_it_only_appends() {
    let text = r#"{"a": 1, "#;
    let healing = heal(text).unwrap();
    assert_eq!(
        healing,
        Healing {
            keep: 7,
            closers: "}".to_owned()
        }
    );
    assert!(!healing.only_appends(text));
    assert!(heal("[1").unwrap().only_appends("[1"));
}

/// A strategy for JSON values with multi-byte strings, escapes and numbers.
pub(super) fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        // Quarters: exactly representable, so they survive text round trips.
        any::<i32>().prop_map(|n| Value::from(f64::from(n) / 4.0)),
        "[a-z\"\\\\\n\t é😀\u{1}]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-zé😀\"]{0,5}", inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

fn object_text() -> impl Strategy<Value = String> {
    let members = prop::collection::vec(("[a-zé😀\"]{0,5}", json_value()), 0..4)
        .prop_map(|members| Value::Object(members.into_iter().collect()));
    (members, any::<bool>()).prop_map(|(value, pretty)| {
        if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            // Escape non-ASCII as \u sequences to exercise surrogate pairs.
            let text = value.to_string();
            text.chars()
                .map(|c| match c as u32 {
                    0..=0x7f => c.to_string(),
                    _ => c
                        .encode_utf16(&mut [0; 2])
                        .iter()
                        .map(|u| format!("\\u{u:04x}"))
                        .collect(),
                })
                .collect()
        }
    })
}

proptest! {
    /// Every prefix of a valid JSON object heals into parsable JSON.
    #[test]
    fn every_prefix_of_an_object_heals(text in object_text()) {
        for (end, _) in text.char_indices().skip(1).chain([(text.len(), ' ')]) {
            let prefix = &text[..end];
            let healed = heal_str(prefix);
            prop_assert!(healed.is_some(), "heal({:?}) = None", prefix);
            let healed = healed.unwrap();
            prop_assert!(
                serde_json::from_str::<Value>(&healed).is_ok(),
                "heal({:?}) = {:?} does not parse", prefix, healed
            );
        }
        // The whole text heals to itself.
        prop_assert_eq!(heal_str(&text), Some(text.clone()));
    }

    /// Arbitrary text never makes the healer panic, and what it heals parses.
    #[test]
    fn arbitrary_text_never_panics(text in "[\\[\\]{}\":,0-9.eE+\\-tfnrul\\\\ aé]{0,40}") {
        if let Some(healed) = heal_str(&text) {
            prop_assert!(serde_json::from_str::<Value>(&healed).is_ok(), "{:?} -> {:?}", text, healed);
        }
    }
}
