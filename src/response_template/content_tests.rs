use serde_json::{json, Map, Value};

use super::*;

fn parse(name: &str, args: Value, raw: &str) -> Result<Value, String> {
    let args: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
    Content::compile(name, &args)?.parse(raw)
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
    assert!(parse("int", json!({}), "4.2").is_err());
    assert!(parse("int", json!({}), "99999999999999999999999").is_err());
    assert_eq!(parse("float", json!({}), "1.5"), Ok(json!(1.5)));
    assert_eq!(parse("float", json!({}), "1e3"), Ok(json!(1000.0)));
    assert!(parse("float", json!({}), "nan").is_err());
    assert!(parse("float", json!({}), "abc").is_err());
    assert_eq!(parse("bool", json!({}), "True"), Ok(json!(true)));
    assert_eq!(parse("bool", json!({}), "0"), Ok(json!(false)));
    assert!(parse("bool", json!({}), "maybe").is_err());
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
        parse("json", json!({}), r#" {"a": [1, 2]} "#),
        Ok(json!({"a": [1, 2]}))
    );
    assert!(parse("json", json!({}), "{a: 1}").is_err());
    assert_eq!(
        parse(
            "json",
            json!({"unquoted_keys": true}),
            r#"{a: 1, b_c: "x:y"}"#
        ),
        Ok(json!({"a": 1, "b_c": "x:y"}))
    );
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
    assert!(Content::compile("xml-inline", &Map::new()).is_err());
    let no_value = json!({"tag_pattern": r"<(?P<key>\w+)>"});
    assert!(Content::compile("xml-inline", no_value.as_object().unwrap_or(&Map::new())).is_err());
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
}

#[test]
fn unknown_type() {
    let err = Content::compile("yaml", &Map::new())
        .err()
        .unwrap_or_default();
    assert!(err.contains("unknown content parser 'yaml'"), "{err}");
}

/// The float parser as first written (a lowercased copy of the text), as the oracle.
fn model_parse_float(s: &str) -> Option<f64> {
    let cleaned: String = s.chars().filter(|c| *c != '_').collect();
    if s.contains("__") || s.starts_with('_') || s.ends_with('_') {
        return None;
    }
    let lower = cleaned.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if body.starts_with("inf") || body.starts_with("nan") {
        return None;
    }
    let value: f64 = cleaned.parse().ok()?;
    value.is_finite().then_some(value)
}

#[test]
fn float_and_bool_words_match_the_lowercasing_versions() {
    for s in [
        "",
        "1",
        "1.5",
        "-1_000.25",
        "1__0",
        "_1",
        "1_",
        "+-1",
        "--1",
        "1e3",
        "1E-3",
        "inf",
        "-Inf",
        "+INFINITY",
        "NaN",
        "-nan",
        "+nAn1",
        "in",
        "na",
        "1e400",
        "-1e400",
        "é1",
        "ın",
        "+",
        "-",
        ".5",
        "5.",
        "1_e5",
        "0x10",
        "1.5_",
    ] {
        assert_eq!(parse_float(s), model_parse_float(s), "{s:?}");
    }
    for (s, want) in [
        ("True", Some(true)),
        ("YES", Some(true)),
        ("1", Some(true)),
        ("fAlSe", Some(false)),
        ("No", Some(false)),
        ("0", Some(false)),
        ("truE ", None),
        ("TRUEe", None),
        ("ye", None),
        ("", None),
        ("tRuͤe", None),
    ] {
        assert_eq!(parse_bool(s), want, "{s:?}");
    }
}
