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
    assert!(load_err(json!({"fields": {"c": {}}})).contains("must define 'start_anchor'"));
    assert!(load_err(
        json!({"start_anchor": "a", "start_anchor_pattern": "b", "fields": {"c": {}}})
    )
    .contains("cannot specify both"));
    assert!(
        load_err(json!({"start_anchor_pattern": "(?=a)", "fields": {"c": {}}}))
            .contains("lookaround")
    );
    assert!(load_err(json!({"start_anchor": null, "fields": {"c": {}}})).contains("got NoneType"));
    assert!(ResponseTemplate::from_value(
        &json!({"start_anchor": ["a", "b"], "fields": {"c": {}}})
    )
    .is_ok());
}

#[test]
fn version() {
    assert!(
        load_err(json!({"version": 2, "start_anchor": "a", "fields": {"c": {}}}))
            .contains("Unsupported response_template version: 2")
    );
    assert!(
        load_err(json!({"version": null, "start_anchor": "a", "fields": {"c": {}}}))
            .contains("Unsupported")
    );
    assert!(ResponseTemplate::from_value(
        &json!({"version": 1, "start_anchor": "a", "fields": {"c": {}}})
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
    .contains("cannot specify both"));
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
    .contains("no transform was provided"));
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
    assert!(load_err(json!({"start_anchor": "a"})).contains("fields must be a non-empty dict"));
    assert!(load_err(json!({"start_anchor": "a", "fields": []}))
        .contains("fields must be a non-empty dict, got list"));
    assert!(load_err(json!({"start_anchor": "a", "fields": {}})).contains("an empty dict"));
    assert!(
        load_err(json!({"start_anchor": "a", "defaults": null, "fields": {"c": {}}}))
            .contains("defaults must be a dict")
    );
    assert!(load_err(with_fields(json!({"x": 3}))).contains("Field 'x' must be a dict"));
    assert!(ResponseTemplate::from_json_str("{").is_err());
}

#[test]
fn prefix_cut() {
    let t = ResponseTemplate::from_value(
        &json!({"start_anchor": ["<a>", "<bb>"], "fields": {"c": {}}}),
    );
    let t = t.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.cut_prefix("x<a>1<bb>2<a>3"), "3");
    assert_eq!(t.cut_prefix("none"), "none");
    let t = ResponseTemplate::from_value(
        &json!({"start_anchor_pattern": r"<t\d>", "fields": {"c": {}}}),
    );
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

fn load_error(v: Value) -> Error {
    match ResponseTemplate::from_value(&v) {
        Ok(_) => panic!("template loaded: {v}"),
        Err(e) => e,
    }
}

#[test]
fn unknown_keys_are_errors_with_their_path() {
    let e = load_error(json!({"start_anchor": "a", "fields": {"c": {}}, "stop": 1}));
    assert_eq!(e.path(), ["stop"]);
    assert!(
        e.message()
            .contains("Unknown keys in response_template: ['stop']"),
        "{e}"
    );
    let e = load_error(with_fields(json!({"c": {}, "tool": {"opn": "<t>"}})));
    assert_eq!(e.path(), ["fields", "tool", "opn"]);
    assert_eq!(e.field(), Some("tool"));
    assert!(e.message().contains("unknown keys ['opn']"), "{e}");
    let e = load_error(with_fields(
        json!({"c": {"content": "text", "content_args": {"stirp": false}}}),
    ));
    assert_eq!(e.path(), ["fields", "c", "content_args", "stirp"]);
    let e = load_error(with_fields(json!({"c": {"optional": "no"}})));
    assert_eq!(e.path(), ["fields", "c", "optional"]);
    let e = load_error(with_fields(json!({"c": {"open": null}})));
    assert_eq!(e.path(), ["fields", "c", "open"]);
    let e = load_error(with_fields(json!({"c": {"open_pattern": "<(a"}})));
    assert_eq!(e.path(), ["fields", "c", "open_pattern"]);
    assert!(e.message().contains("invalid open_pattern regex"), "{e}");
    let e = load_error(with_fields(json!({"c": {"content": "xml-inline",
        "content_args": {"tag_pattern": "<(?P<k>\\w+)>(?P<value>.*)"}}})));
    assert_eq!(e.path(), ["fields", "c", "content_args", "tag_pattern"]);
    assert!(e.message().contains("no named group 'key'"), "{e}");
}

#[test]
fn errors_from_json_text_give_line_and_column() {
    let text = "{\n  \"start_anchor\": \"A\",\n  \"fields\": {\n    \"content\": {\"clsoe\": \"<e>\"}\n  }\n}";
    let e = ResponseTemplate::from_json_str(text)
        .err()
        .unwrap_or_else(|| panic!("loaded"));
    assert_eq!(e.path(), ["fields", "content", "clsoe"]);
    assert_eq!(e.location(), Some((4, 17)));
    let shown = e.to_string();
    assert!(
        shown.starts_with(
            "load error in field 'content' at fields.content.clsoe (line 4, column 17): "
        ),
        "{shown}"
    );
}
