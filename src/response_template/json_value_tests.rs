use proptest::prelude::*;
use serde_json::Value;

use super::*;

/// `from_str` and serde_json's own parse as text (serialisation keeps key order, which
/// `Value`'s equality ignores) or as the error message.
fn both(text: &str) -> (Result<String, String>, Result<String, String>) {
    let show =
        |r: Result<Value, serde_json::Error>| r.map(|v| v.to_string()).map_err(|e| e.to_string());
    (
        show(from_str(text)),
        show(serde_json::from_str::<Value>(text)),
    )
}

fn check(text: &str) {
    let (ours, theirs) = both(text);
    assert_eq!(ours, theirs, "{text:?}");
}

#[test]
fn same_values_as_serde_json() {
    for text in [
        "0",
        "-0",
        "-0.0",
        "1.5e-3",
        "-12E+4",
        "1e400",
        "-1e400",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "0.1",
        "2.2250738585072014e-308",
        "true",
        "false",
        "null",
        r#""""#,
        r#""\u00e9\n\"\\\/\b\f\r\t""#,
        r#""\ud83d\ude00 é 😀""#,
        "[]",
        "{}",
        " [1, [2, {}], {\"a\": null}] \n",
        r#"{"city": "Paris", "days": 1, "unit": "celsius", "detailed": true}"#,
        r#"{"name": "f", "arguments": {"a": [1, 2.5, "x", {"b": {"c": []}}], "d": {}}}"#,
        r#"{"a": 1, "b": 2, "a": 3}"#,
        r#"{"a": {"x": 1}, "b": [1], "a": {"y": 2}, "c": 0, "b": null}"#,
        r#"[{"k": 1, "k": 2}, {"k": 3}, [], [[], [[]]]]"#,
        r#"{"z": 1, "y": 2, "x": 3, "w": 4, "v": 5, "u": 6, "t": 7, "s": 8, "r": 9}"#,
        r#"{"\u0061": 1, "a": 2}"#,
    ] {
        check(text);
    }
}

#[test]
fn same_errors_as_serde_json() {
    for text in [
        "",
        " ",
        "{",
        "[1, 2",
        "[1, 2,]",
        r#"{"a": 1,}"#,
        r#"{"a" 1}"#,
        "{a: 1}",
        r#"{"a": 1} x"#,
        "[1] [2]",
        "01",
        "1.",
        "-",
        "nul",
        "True",
        r#""\x""#,
        r#""\ud800""#,
        "\"a\nb\"",
        "NaN",
        r#"{"a": [1, {"b": }]}"#,
    ] {
        let (ours, theirs) = both(text);
        assert!(ours.is_err(), "{text:?}");
        assert_eq!(ours, theirs, "{text:?}");
    }
}

#[test]
fn recursion_limit_is_serde_json_s() {
    for depth in [127, 128, 129, 200] {
        check(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
        check(&format!(
            "{}1{}",
            "{\"a\":".repeat(depth),
            "}".repeat(depth)
        ));
    }
}

#[test]
fn scratch_is_reused_after_errors() {
    check(r#"{"a": [1, 2, {"b": 3, "c": ["#);
    check(r#"{"a": [1, 2, {"b": 3}], "c": 4}"#);
    let big = format!("[{}0]", "1, ".repeat(1000));
    check(&big);
    check("[1, {\"a\": 2}]");
}

#[test]
fn known_shapes_give_the_same_maps() {
    let docs = [
        r#"{"a": 1, "b": 2}"#,
        r#"{"a": 1, "b": 2, "c": 3}"#,
        r#"{"a": 1}"#,
        r#"{"a": 1, "c": 2}"#,
        r#"{"a": 1, "b": 2, "a": 3}"#,
        r#"{"a": 1, "b": 2, "b": 3}"#,
        r#"{"b": 1, "a": 2}"#,
        r#"{"\u0061": 1, "b": {"a": 1, "b": [{"a": 1, "b": 2}, {"a": 1}]}}"#,
        r#"{"a": {"a": {"a": {"a": 1, "b": 2}, "b": 2}, "b": 2}, "b": 2}"#,
        r#"{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9}"#,
        r#"{"a": 1, "b": 2, "c": [1, {"a": 1, "b": 2, "c"#,
        r#"{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9, "j": 0,
            "k": 1, "l": 2, "m": 3, "n": 4, "o": 5, "p": 6, "q": 7}"#,
        r#"{"": 1}"#,
        r#"{"a": 1, "b": 2, "a": {"a": 1, "b": 2}}"#,
    ];
    // Three rounds: shapes are learnt on the second sighting and used on the third.
    for _ in 0..3 {
        for doc in docs {
            check(doc);
        }
    }
    // More shapes than are kept.
    for round in 0..3 {
        for n in 1..20 {
            let keys: Vec<String> = (0..n)
                .map(|i| format!("\"k{}\": {i}", (i + round) % 7))
                .collect();
            check(&format!("{{{}}}", keys.join(", ")));
        }
    }
}

/// Objects over a few keys (so that shapes repeat, extend and cut each other), with
/// repeated and escaped keys, nested in objects and arrays, as text.
fn arb_shaped() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (0..9i32).prop_map(|i| i.to_string()),
        Just("\"s\"".to_owned()),
        Just("[]".to_owned()),
    ];
    leaf.prop_recursive(3, 40, 5, |inner| {
        let key = prop::sample::select(&["a", "b", "c", "\\u0061", "ab"][..]);
        prop_oneof![
            prop::collection::vec((key, inner.clone()), 0..5).prop_map(|members| {
                let members: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("\"{k}\": {v}"))
                    .collect();
                format!("{{{}}}", members.join(", "))
            }),
            prop::collection::vec(inner, 0..5).prop_map(|items| format!("[{}]", items.join(", "))),
        ]
    })
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>().prop_map(|f| serde_json::json!(f)),
        any::<i64>().prop_map(|i| serde_json::json!(i)),
        any::<u64>().prop_map(|i| serde_json::json!(i)),
        "[a-c\"\\\\\u{e9}\u{1F600}\n\u{1}]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-d]{0,2}", inner), 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn prop_documents(v in arb_json(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&v).unwrap_or_default()
        } else {
            v.to_string()
        };
        let (ours, theirs) = both(&text);
        prop_assert_eq!(ours, theirs);
    }

    #[test]
    fn prop_repeated_shapes(docs in prop::collection::vec(arb_shaped(), 1..6)) {
        let text = format!("[{}]", docs.join(", "));
        for _ in 0..2 {
            for doc in docs.iter().chain([&text]) {
                let (ours, theirs) = both(doc);
                prop_assert_eq!(ours, theirs);
            }
        }
    }

    #[test]
    fn prop_duplicate_keys(keys in prop::collection::vec(("[a-c]", 0..9i32), 0..12)) {
        let members: Vec<String> = keys.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
        let text = format!("{{{}}}", members.join(", "));
        let (ours, theirs) = both(&text);
        prop_assert_eq!(ours, theirs);
    }

    #[test]
    fn prop_any_text(bytes in prop::collection::vec(prop::sample::select(
        b"{}[]\":,01-.eE+tfnrula\\ \n".to_vec()), 0..24)) {
        let text = String::from_utf8_lossy(&bytes);
        let (ours, theirs) = both(&text);
        prop_assert_eq!(ours, theirs);
    }
}
