use serde_json::{json, Map, Value};

use super::*;

fn parse(name: &str, args: Value, raw: &str) -> Result<Value, String> {
    let args: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
    Content::compile(name, &args)
        .map_err(|e| e.message)?
        .parse(raw)
}

fn compile_err(name: &str, args: Value) -> ArgError {
    let args: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
    match Content::compile(name, &args) {
        Ok(_) => panic!("{name} {args:?} compiled"),
        Err(e) => e,
    }
}

#[test]
fn text_strips_by_default() {
    assert_eq!(parse("text", json!({}), "  hi \n"), Ok(json!("hi")));
    assert_eq!(
        parse("text", json!({"strip": false}), "  hi \n"),
        Ok(json!("  hi \n"))
    );
}

#[test]
fn int_float_bool() {
    assert_eq!(parse("int", json!({}), " 42 "), Ok(json!(42)));
    assert_eq!(parse("int", json!({}), "-1_000"), Ok(json!(-1000)));
    assert_eq!(parse("int", json!({}), "007"), Ok(json!(7)));
    assert_eq!(parse("int", json!({}), "٣"), Ok(json!(3)));
    assert!(parse("int", json!({}), "4.2").is_err());
    assert!(parse("int", json!({}), "99999999999999999999999").is_err());
    assert_eq!(parse("float", json!({}), "1.5"), Ok(json!(1.5)));
    assert_eq!(parse("float", json!({}), "1e3"), Ok(json!(1000.0)));
    assert!(parse("float", json!({}), "nan").is_err());
    assert!(parse("float", json!({}), "abc").is_err());
    // The reference's bool: `true`/`1` (any case) or else false, never an error.
    assert_eq!(parse("bool", json!({}), " True "), Ok(json!(true)));
    assert_eq!(parse("bool", json!({}), "0"), Ok(json!(false)));
    assert_eq!(parse("bool", json!({}), "yes"), Ok(json!(false)));
    assert_eq!(
        parse("bool", json!({"strip": false}), " true"),
        Ok(json!(false))
    );
}

#[test]
fn dirty_flags() {
    let empty = Map::new();
    for (name, dirty) in [
        ("text", false),
        ("int", false),
        ("float", false),
        ("bool", false),
        ("json", true),
        ("kv-lines", true),
    ] {
        assert_eq!(
            Content::compile(name, &empty).map(|c| c.dirty()),
            Ok(dirty),
            "{name}"
        );
    }
}

#[test]
fn json_strict_and_relaxed() {
    assert_eq!(
        parse("json", json!({}), " {\"a\": [1, 2]}\n"),
        Ok(json!({"a": [1, 2]}))
    );
    // Only JSON whitespace around the value (as Python's json.loads).
    assert!(parse("json", json!({}), "\u{a0}{}").is_err());
    assert!(parse("json", json!({}), "{a: 1}").is_err());
    assert_eq!(
        parse(
            "json",
            json!({"unquoted_keys": true}),
            r#"{a: 1,b_c: "x:y"}"#
        ),
        Ok(json!({"a": 1, "b_c": "x:y"}))
    );
    // As the reference's pattern: a key right after `{` or `,`.
    assert!(parse("json", json!({"unquoted_keys": true}), "{a: 1, b: 2}").is_err());
    assert_eq!(
        parse(
            "json",
            json!({"unquoted_keys": true, "string_delims": [["<|\"|>", "<|\"|>"]]}),
            r#"{k:<|"|>say "hi", {x: 1}<|"|>,n:[<|"|>a<|"|>]}"#
        ),
        Ok(json!({"k": "say \"hi\", {x: 1}", "n": ["a"]}))
    );
    assert_eq!(
        parse("json", json!({"allow_non_json": true}), "  plain words "),
        Ok(json!("plain words"))
    );
    assert_eq!(
        parse(
            "json",
            json!({"allow_non_json": true, "strip": false}),
            " plain "
        ),
        Ok(json!(" plain "))
    );
}

#[test]
fn xml_inline() {
    let args = json!({"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</\1>"});
    assert_eq!(
        parse("xml-inline", args, "<a>1</a><b> x </b>"),
        Ok(json!({"a": "1", "b": " x "}))
    );
    let args = json!({
        "tag_pattern": r"<p=(?P<key>\w+)>(?P<value>.*?)</p>",
        "value_parser": {"name": "json", "args": {"allow_non_json": true}},
        "merge_duplicates": true
    });
    assert_eq!(
        parse(
            "xml-inline",
            args,
            "<p=h>7</p><p=h>[9]</p><p=h>x</p><p=l>[1]</p>"
        ),
        Ok(json!({"h": [7, [9], "x"], "l": [1]}))
    );
    // A first value that is a list takes the repeated ones (the reference's merge).
    let args = json!({
        "tag_pattern": r"<p=(?P<key>\w+)>(?P<value>.*?)</p>",
        "value_parser": {"name": "json"},
        "merge_duplicates": true
    });
    assert_eq!(
        parse("xml-inline", args, "<p=h>[1, 2]</p><p=h>3</p>"),
        Ok(json!({"h": [1, 2, 3]}))
    );
    assert_eq!(compile_err("xml-inline", json!({})).path, ["tag_pattern"]);
    let no_value = compile_err("xml-inline", json!({"tag_pattern": r"<(?P<key>\w+)>"}));
    assert!(
        no_value.message.contains("no named group 'value'"),
        "{no_value:?}"
    );
    // A `value` group that takes no part: null.
    let args = json!({"tag_pattern": r"<(?P<key>\w+)(?:=(?P<value>\w+))?>"});
    assert_eq!(
        parse("xml-inline", args, "<a=1><b>"),
        Ok(json!({"a": "1", "b": null}))
    );
}

#[test]
fn kv_lines() {
    assert_eq!(
        parse("kv-lines", json!({}), "a: 1\n\nnoise\nb: x: y"),
        Ok(json!({"a": "1", "b": "x: y"}))
    );
    assert_eq!(
        parse(
            "kv-lines",
            json!({"line_sep": ";", "kv_sep": "=", "value_parser": {"name": "int"}}),
            "a=1;b = 2"
        ),
        Ok(json!({"a": 1, "b": 2}))
    );
    assert_eq!(
        parse("kv-lines", json!({"strip": false}), "a: 1"),
        Ok(json!({"a": " 1"}))
    );
    // Each line is stripped before the separator is looked for.
    assert_eq!(
        parse("kv-lines", json!({"kv_sep": " -> "}), " -> x\na -> b"),
        Ok(json!({"a": "b"}))
    );
}

#[test]
fn arguments_are_checked_at_load() {
    let e = compile_err("text", json!({"stirp": false}));
    assert_eq!(e.path, ["stirp"]);
    assert!(e.message.contains("unknown key 'stirp'"), "{e:?}");
    assert_eq!(compile_err("json", json!({"strip": "no"})).path, ["strip"]);
    assert_eq!(
        compile_err("kv-lines", json!({"line_sep": ""})).path,
        ["line_sep"]
    );
    assert_eq!(
        compile_err("json", json!({"string_delims": [["'"]]})).path,
        ["string_delims"]
    );
    let e = compile_err(
        "kv-lines",
        json!({"value_parser": {"name": "json", "args": {"allow_non_jsn": true}}}),
    );
    assert_eq!(e.path, ["value_parser", "args", "allow_non_jsn"]);
    let e = compile_err("kv-lines", json!({"value_parser": {"name": "number"}}));
    assert_eq!(e.path, ["value_parser", "name"]);
    let e = compile_err("kv-lines", json!({"value_parser": {"nme": "int"}}));
    assert_eq!(e.path, ["value_parser", "nme"]);
    // `name` defaults to text.
    assert_eq!(
        parse("kv-lines", json!({"value_parser": {}}), "a: 1"),
        Ok(json!({"a": "1"}))
    );
}

#[test]
fn unknown_type() {
    let err = compile_err("yaml", json!({}));
    assert!(
        err.message.contains("unknown content parser 'yaml'"),
        "{err:?}"
    );
}
