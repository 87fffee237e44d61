use serde_json::{json, Map, Value};

use super::*;

fn scope(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[test]
fn placeholders_keep_types() {
    let t = Transform::compile(
        &json!({"f": {"name": "{name}", "args": "{content.args}", "n": 3, "lit": "plain"}}),
        "x",
    );
    let t = t.unwrap_or_else(|e| panic!("{e}"));
    let got = t.apply(&mut scope(
        json!({"name": "f", "content": {"args": {"a": [1]}}}),
    ));
    assert_eq!(
        got,
        Ok(json!({"f": {"name": "f", "args": {"a": [1]}, "n": 3, "lit": "plain"}}))
    );
}

#[test]
fn mixed_strings_rejected() {
    let err = Transform::compile(&json!({"v": "pre {content}"}), "x")
        .err()
        .unwrap_or_default();
    assert!(err.contains("mixes"), "{err}");
    assert!(Transform::compile(&json!(["{a} {b}"]), "x").is_err());
    // Braces that are not placeholders are plain literals.
    assert!(Transform::compile(&json!({"v": "{} and { x }"}), "x").is_ok());
}

#[test]
fn lookup_errors() {
    let t = Transform::compile(&json!("{missing}"), "x").unwrap_or_else(|e| panic!("{e}"));
    let err = t
        .apply(&mut scope(json!({"content": 1})))
        .err()
        .unwrap_or_default();
    assert!(
        err.contains("is not defined. Available: ['content']"),
        "{err}"
    );
    let t = Transform::compile(&json!("{content.args}"), "x").unwrap_or_else(|e| panic!("{e}"));
    let err = t
        .apply(&mut scope(json!({"content": {"name": "n"}})))
        .err()
        .unwrap_or_default();
    assert!(err.contains("missing key 'args'"), "{err}");
    let t = Transform::compile(&json!("{content.name.x}"), "x").unwrap_or_else(|e| panic!("{e}"));
    let err = t
        .apply(&mut scope(json!({"content": {"name": "n"}})))
        .err()
        .unwrap_or_default();
    assert!(err.contains("cannot index into str at 'x'"), "{err}");
    let t = Transform::compile(&json!("{content.1}"), "x").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        t.apply(&mut scope(json!({"content": {"1": 6}}))),
        Ok(json!(6))
    );
}

#[test]
fn keys_keep_template_order() {
    let template = json!({
        "z": "{a}",
        "lit": {"x": [1, {"y": "plain"}], "e": {}},
        "m": [{"k": "{b}", "l": "v"}, "w", ["{a}"]],
        "a": "{none}",
        "e": {}
    });
    let t = Transform::compile(&template, "x").unwrap_or_else(|e| panic!("{e}"));
    let got = t
        .apply(&mut scope(json!({"a": 1, "b": {"q": 2}, "none": null})))
        .unwrap_or_else(|e| panic!("{e}"));
    let want = json!({
        "z": 1,
        "lit": {"x": [1, {"y": "plain"}], "e": {}},
        "m": [{"k": {"q": 2}, "l": "v"}, "w", [1]],
        "a": null,
        "e": {}
    });
    // `Value` equality ignores key order: compare the text too.
    assert_eq!(got.to_string(), want.to_string());
    // A literal template applies to itself.
    let t = Transform::compile(&json!({"b": [1, "x"], "a": {}}), "x");
    let t = t.unwrap_or_else(|e| panic!("{e}"));
    let got = t.apply(&mut Map::new()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got.to_string(), r#"{"b":[1,"x"],"a":{}}"#);
}

#[test]
fn first_failing_placeholder_in_template_order() {
    let t = Transform::compile(&json!({"k": "{content.b}", "j": "{nope}"}), "x");
    let t = t.unwrap_or_else(|e| panic!("{e}"));
    let err = t
        .apply(&mut scope(json!({"content": {"a": 1}})))
        .err()
        .unwrap_or_default();
    assert!(err.contains("missing key 'b'"), "{err}");
}

#[test]
fn placeholder_syntax_is_the_references() {
    // Unicode word characters, digits first, dotted paths.
    assert_eq!(placeholder("{日本}"), Some(vec!["日本".to_owned()]));
    assert_eq!(placeholder("{0}"), Some(vec!["0".to_owned()]));
    assert_eq!(
        placeholder("{content.0}"),
        Some(vec!["content".to_owned(), "0".to_owned()])
    );
    assert_eq!(placeholder("{a-b}"), None);
    assert_eq!(placeholder("{a..b}"), None);
    assert!(contains_placeholder("x {a} y"));
    assert!(!contains_placeholder("{ a }"));
}

#[test]
fn lists_are_not_indexed() {
    let t = Transform::compile(&json!("{content.0}"), "x").unwrap_or_else(|e| panic!("{e}"));
    let err = t
        .apply(&mut scope(json!({"content": [1, 2]})))
        .err()
        .unwrap_or_default();
    assert!(err.contains("cannot index into list at '0'"), "{err}");
}
