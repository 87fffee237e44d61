use proptest::prelude::*;
use serde_json::{json, Value};

use crate::message::python::{python_to_json, PythonToJson};

/// `text` converted one character at a time.
fn char_by_char(text: &str) -> String {
    let mut converter = PythonToJson::new();
    let mut out = String::new();
    for c in text.chars() {
        converter.push(c.encode_utf8(&mut [0; 4]), &mut out);
    }
    converter.finish(&mut out);
    out
}

#[test]
fn converts_quotes_and_constants() {
    let text = r#"{'a': 'it\'s "x"', 'b': True, 'c': [False, None, 1.5], "d": "keep 'this'"}"#;
    let converted = python_to_json(text);
    let value: Value = serde_json::from_str(&converted).unwrap();
    assert_eq!(
        value,
        json!({"a": "it's \"x\"", "b": true, "c": [false, null, 1.5], "d": "keep 'this'"})
    );
}

#[test]
fn leaves_other_words_and_json_alone() {
    assert_eq!(
        python_to_json(r#"{"a": true, "b": null}"#),
        r#"{"a": true, "b": null}"#
    );
    assert_eq!(python_to_json("[Truth, None_, 1e5]"), "[Truth, None_, 1e5]");
    assert_eq!(python_to_json(r#"'a\nb'"#), r#""a\nb""#);
    assert_eq!(python_to_json(r#"["a\"b"]"#), r#"["a\"b"]"#);
}

#[test]
fn tuples_become_arrays_and_trailing_commas_go() {
    let text = "{'at': (1.5, 2), 'one': (1,), 'list': [1, 2, ], 'nested': ((1, 2), ('a',))}";
    let converted = python_to_json(text);
    let value: Value = serde_json::from_str(&converted).unwrap();
    assert_eq!(
        value,
        json!({"at": [1.5, 2], "one": [1], "list": [1, 2], "nested": [[1, 2], ["a"]]})
    );
    // Chunk by chunk, the same (a comma waits for what follows it).
    assert_eq!(char_by_char(text), converted);
    // Parentheses inside strings are text.
    assert_eq!(python_to_json("'(a,)'"), r#""(a,)""#);
}

#[test]
fn zeros_padding_integers_go() {
    let text = "{'month': 07, 'day': 005, 'zero': 0, 'zeros': 00, 'neg': -07, 'half': 0.5, \
                'list': [0, 10, 100], 'exp': 1e05, 'text': '007'}";
    let converted = python_to_json(text);
    let value: Value = serde_json::from_str(&converted).unwrap();
    assert_eq!(
        value,
        json!({"month": 7, "day": 5, "zero": 0, "zeros": 0, "neg": -7, "half": 0.5,
               "list": [0, 10, 100], "exp": 1e5, "text": "007"})
    );
    // Chunk by chunk, the same (a leading zero waits for what follows it).
    assert_eq!(char_by_char(text), converted);
    // The whole-value converter agrees.
    let whole = crate::json::python_to_json(text).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&whole).unwrap(), value);
}

#[test]
fn holds_back_what_may_change() {
    let mut converter = PythonToJson::new();
    let mut out = String::new();
    converter.push("{'a': Tr", &mut out);
    assert_eq!(out, r#"{"a": "#);
    converter.push("ue, 'b': 'x\\", &mut out);
    assert_eq!(out, r#"{"a": true, "b": "x"#);
    converter.push("'y'}", &mut out);
    assert_eq!(out, r#"{"a": true, "b": "x'y"}"#);
    converter.finish(&mut out);
    assert_eq!(out, r#"{"a": true, "b": "x'y"}"#);
}

#[test]
fn finish_flushes_a_final_word() {
    let mut converter = PythonToJson::new();
    let mut out = String::new();
    converter.push("None", &mut out);
    assert_eq!(out, "");
    converter.finish(&mut out);
    assert_eq!(out, "null");
}

/// Python `repr`-like rendering of a JSON value: single-quoted strings, True/False/None.
fn model_python(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let escaped: String = s
                .chars()
                .map(|c| match c {
                    '\'' => "\\'".to_owned(),
                    '\\' => "\\\\".to_owned(),
                    '\n' => "\\n".to_owned(),
                    c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32),
                    c => c.to_string(),
                })
                .collect();
            format!("'{escaped}'")
        }
        Value::Array(items) => {
            format!(
                "[{}]",
                items
                    .iter()
                    .map(model_python)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        Value::Object(map) => {
            let members: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}: {}",
                        model_python(&Value::String(k.clone())),
                        model_python(v)
                    )
                })
                .collect();
            format!("{{{}}}", members.join(", "))
        }
    }
}

proptest! {
    /// Converting a Python rendering gives back the value, and the output for each prefix is a
    /// prefix of the whole output (monotone).
    #[test]
    fn round_trips_and_is_monotone(value in super::heal::json_value()) {
        let text = model_python(&value);
        let whole = python_to_json(&text);
        let parsed: Value = serde_json::from_str(&whole).unwrap();
        prop_assert_eq!(parsed, value);
        let mut converter = PythonToJson::new();
        let mut out = String::new();
        for c in text.chars() {
            converter.push(c.encode_utf8(&mut [0; 4]), &mut out);
            prop_assert!(whole.starts_with(&out), "{:?} is not a prefix of {:?}", out, whole);
        }
        converter.finish(&mut out);
        prop_assert_eq!(out, whole);
    }
}
