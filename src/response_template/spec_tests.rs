use serde_json::{json, Value};

use super::*;

fn load_err(v: Value) -> String {
    match ResponseTemplate::from_value(&v) {
        Ok(_) => panic!("template loaded: {v}"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Load);
            e.to_string()
        }
    }
}

fn with_fields(fields: Value) -> Value {
    json!({"start_anchor": "A", "fields": fields})
}

#[test]
fn anchors() {
    assert!(load_err(json!({"fields": {}})).contains("must define 'start_anchor'"));
    assert!(
        load_err(json!({"start_anchor": "a", "start_anchor_pattern": "b", "fields": {}}))
            .contains("only one")
    );
    assert!(
        load_err(json!({"start_anchor_pattern": "(?=a)", "fields": {}})).contains("lookaround")
    );
    assert!(
        ResponseTemplate::from_value(&json!({"start_anchor": ["a", "b"], "fields": {}})).is_ok()
    );
}

#[test]
fn version() {
    assert!(
        load_err(json!({"version": 2, "start_anchor": "a", "fields": {}}))
            .contains("Unsupported response_template version: 2")
    );
    assert!(ResponseTemplate::from_value(
        &json!({"version": 1, "start_anchor": "a", "fields": {}})
    )
    .is_ok());
}

#[test]
fn implicit_fields() {
    let err = load_err(with_fields(json!({"a": {}, "b": {}})));
    assert!(
        err.contains("At most one field") && err.contains("Found: a, b"),
        "{err}"
    );
}

#[test]
fn literals_and_patterns() {
    assert!(load_err(with_fields(json!({"x": {"open": []}}))).contains("at least one literal"));
    assert!(load_err(with_fields(json!({"x": {"open": [""]}}))).contains("cannot be empty"));
    assert!(load_err(with_fields(json!({"x": {"open": [1]}}))).contains("only strings"));
    assert!(load_err(with_fields(json!({"x": {"open": {"a": 1}}}))).contains("got dict"));
    assert!(load_err(with_fields(
        json!({"x": {"open": "a", "open_pattern": "b"}})
    ))
    .contains("not both"));
    assert!(load_err(with_fields(json!({"x": {"open_pattern": "(a"}})))
        .contains("invalid open_pattern"));
    assert!(load_err(with_fields(
        json!({"x": {"open": "a", "close_pattern": "(?!b)"}})
    ))
    .contains("lookaround"));
}

#[test]
fn named_groups_need_transform() {
    let err = load_err(with_fields(json!({"x": {"open_pattern": "<(?P<n>a)>"}})));
    assert!(err.contains("named group(s) ['n']"), "{err}");
    assert!(ResponseTemplate::from_value(&with_fields(
        json!({"x": {"open_pattern": "<(?P<n>a)>", "transform": "{n}"}})
    ))
    .is_ok());
}

#[test]
fn join_rules() {
    assert!(
        load_err(with_fields(json!({"x": {"open": "a", "join": ""}})))
            .contains("requires 'repeats'")
    );
    assert!(load_err(with_fields(
        json!({"x": {"open": "a", "repeats": true, "join": 7}})
    ))
    .contains("must be a string, got int"));
}

#[test]
fn content_and_transform() {
    assert!(
        load_err(with_fields(json!({"x": {"open": "a", "content": "nope"}})))
            .contains("unknown content parser 'nope'")
    );
    assert!(load_err(with_fields(
        json!({"x": {"open": "a", "transform": {"v": "a {content}"}}})
    ))
    .contains("mixes"));
    assert!(load_err(with_fields(
        json!({"x": {"open": "a", "transform_each": true}})
    ))
    .contains("requires a 'transform'"));
    assert!(
        load_err(with_fields(json!({"x": {"open": "a", "repeats": "yes"}})))
            .contains("must be a bool")
    );
    assert!(load_err(with_fields(
        json!({"x": {"open": "a", "content": "xml-inline"}})
    ))
    .contains("tag_pattern"));
}

#[test]
fn shapes() {
    assert!(load_err(json!([])).contains("must be a dict"));
    assert!(load_err(json!({"start_anchor": "a"})).contains("'fields'"));
    assert!(
        load_err(json!({"start_anchor": "a", "fields": [], })).contains("'fields' must be a dict")
    );
    assert!(load_err(with_fields(json!({"x": 3}))).contains("field spec must be a dict"));
    assert!(ResponseTemplate::from_json_str("{").is_err());
}

#[test]
fn prefix_cut() {
    let t = ResponseTemplate::from_value(&json!({"start_anchor": ["<a>", "<bb>"], "fields": {}}));
    let t = t.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.cut_prefix("x<a>1<bb>2<a>3"), "3");
    assert_eq!(t.cut_prefix("none"), "none");
    let t = ResponseTemplate::from_value(&json!({"start_anchor_pattern": r"<t\d>", "fields": {}}));
    let t = t.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.cut_prefix("<t1>a<t2>b"), "b");
}

#[test]
fn from_path_accepts_a_tokenizer_config() {
    let dir = std::env::temp_dir().join(format!("chatparse-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join("tokenizer_config.json");
    let config = json!({"model_max_length": 8, "response_template": {"start_anchor": "A", "fields": {"x": {"open": "<x>"}}}});
    std::fs::write(&path, config.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let t = ResponseTemplate::from_path(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.field_names().collect::<Vec<_>>(), ["x"]);
    assert_eq!(
        ResponseTemplate::from_path(dir.join("missing.json"))
            .map(|_| ())
            .map_err(|e| e.kind()),
        Err(ErrorKind::Load)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
