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
        t.apply(&mut scope(json!({"content": [5, 6]}))),
        Ok(json!(6))
    );
}
