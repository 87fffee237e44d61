use super::*;
use proptest::prelude::*;

fn full(s: &str) -> Scan {
    validate(s.as_bytes(), Flavour::Json, false)
}

fn partial(s: &str) -> Scan {
    validate(s.as_bytes(), Flavour::Json, true)
}

#[test]
fn accepts_and_rejects_like_json() {
    for ok in [
        "0",
        "-0",
        "1.5e-3",
        "-12E+4",
        "true",
        "false",
        "null",
        r#""""#,
        r#""\u00e9\n\"""#,
        r#""\ud83d\ude00""#,
        "[]",
        "{}",
        " [1, [2, {}], {\"a\": null}] ",
        "\"日本\"",
    ] {
        assert!(matches!(full(ok), Scan::Complete(_)), "{ok}");
        assert!(serde_json::from_str::<serde_json::Value>(ok).is_ok());
    }
    for bad in [
        "",
        "01",
        "1.",
        "-",
        "1e",
        ".5",
        "[1,]",
        "{\"a\"}",
        "{\"a\":1,}",
        "tru",
        "nul",
        "\"\\x41\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"a\nb\"",
        "[1 2]",
        "{1: 2}",
        "'a'",
        "True",
        "[]]",
        "{} x",
    ] {
        assert!(matches!(full(bad), Scan::Fail { .. }), "{bad}");
        assert!(serde_json::from_str::<serde_json::Value>(bad).is_err());
    }
}

#[test]
fn fail_offsets_and_expectations() {
    assert_eq!(
        full("[1, }"),
        Scan::Fail {
            offset: 4,
            expected: "JSON value"
        }
    );
    assert_eq!(
        full("{\"a\" 1}"),
        Scan::Fail {
            offset: 5,
            expected: "`:`"
        }
    );
    assert_eq!(
        full("[1"),
        Scan::Fail {
            offset: 2,
            expected: "`,` or `]`"
        }
    );
    assert_eq!(
        full("[1] 2"),
        Scan::Fail {
            offset: 4,
            expected: "end of input"
        }
    );
    assert_eq!(
        validate(b"\"\xff\"", Flavour::Json, false),
        Scan::Fail {
            offset: 1,
            expected: "valid UTF-8"
        }
    );
}

#[test]
fn a_number_followed_by_a_word_starting_with_e_ends_before_it() {
    assert_eq!(partial("-17enabled"), Scan::Complete(3));
    assert_eq!(partial("2.5e-x"), Scan::Complete(3));
    assert_eq!(partial("3e"), Scan::NeedMore);
    assert_eq!(partial("3e5,"), Scan::Complete(3));
    // Inside a container the exponent must come.
    assert!(matches!(partial("[1ex]"), Scan::Fail { .. }));
}

#[test]
fn partial_prefixes_need_more() {
    let doc = r#"{"a": [1, -2.5e+3, "x\"\u00e9", true, null, {}], "b": false}"#;
    for k in 0..doc.len() {
        assert_eq!(partial(&doc[..k]), Scan::NeedMore, "{}", &doc[..k]);
    }
    assert_eq!(partial(doc), Scan::Complete(doc.len()));
    assert_eq!(partial("12"), Scan::NeedMore);
    assert_eq!(partial("12 "), Scan::Complete(2));
    assert_eq!(validate(b"\"\xe6\x97", Flavour::Json, true), Scan::NeedMore);
}

#[test]
fn scanner_resumes() {
    let doc = br#"{"key": ["value", 12345, {"n": null}]}"#;
    let mut s = Scanner::new(Flavour::Json, Target::Value, 0);
    for k in 1..doc.len() {
        assert_eq!(s.resume(&doc[..k], false), Scan::NeedMore);
    }
    assert_eq!(s.resume(doc, false), Scan::Complete(doc.len()));
    assert!(s.work() <= 2 * doc.len() as u64);
}

#[test]
fn targets() {
    let t = |target, s: &str| scan(s.as_bytes(), Flavour::Json, target, false);
    assert_eq!(t(Target::Object, "{}"), Scan::Complete(2));
    assert!(matches!(
        t(Target::Object, "[]"),
        Scan::Fail { offset: 0, .. }
    ));
    assert_eq!(t(Target::Number, "12,"), Scan::Complete(2));
    assert_eq!(t(Target::StringContent, r#"ab\"c"d"#), Scan::Complete(5));
    assert_eq!(t(Target::Bool, "false"), Scan::Complete(5));
    assert!(matches!(t(Target::Null, "true"), Scan::Fail { .. }));
}

#[test]
fn depth_is_bounded() {
    let deep = "[".repeat(1 << 20);
    assert_eq!(
        validate(deep.as_bytes(), Flavour::Json, true),
        Scan::Fail {
            offset: DEFAULT_MAX_DEPTH,
            expected: "at most the maximum nesting depth"
        }
    );
    let ok = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert_eq!(full(&ok), Scan::Complete(200));
    let s = Scanner::new(Flavour::Json, Target::Value, 0)
        .with_max_depth(2)
        .resume(b"[[[]]]", true);
    assert!(matches!(s, Scan::Fail { offset: 2, .. }));
}

#[test]
fn python_flavour() {
    let py = |s: &str| validate(s.as_bytes(), Flavour::Python, false);
    let doc = "{'a': [True, False, None], \"b\": 'it\\'s \\x41'}";
    assert_eq!(py(doc), Scan::Complete(doc.len()));
    assert!(matches!(py("{'a': tru}"), Scan::Fail { .. }));
    assert_eq!(python_to_json("'say \"hi\"'").unwrap(), r#""say \"hi\"""#);
    assert_eq!(
        python_to_json("[1, 'a\\x41']").unwrap(),
        r#"[1, "a\u0041"]"#
    );
    assert!(python_to_json("{'a'").is_err());
    // Tuples are arrays; Python allows a comma before a closer.
    assert_eq!(
        python_to_json("{'a': (1, 'x'), 'b': (2,), 'c': [3,], 'd': {'e': 4,}}").unwrap(),
        r#"{"a": [1, "x"], "b": [2], "c": [3], "d": {"e": 4}}"#
    );
    assert!(python_to_json("(1, 2]").is_err());
    assert!(python_to_json("[1, 2)").is_err());
    assert!(python_to_json("(,)").is_err());
}

#[test]
fn heal_cases() {
    let h = |s: &str| heal(s, Flavour::Json);
    assert_eq!(h("{\"a\": \"b\\").unwrap(), "{\"a\": \"b\"}");
    assert_eq!(h("{\"a\": \"b\\u00").unwrap(), "{\"a\": \"b\"}");
    assert_eq!(h("{\"a\": 1,").unwrap(), "{\"a\": 1}");
    assert_eq!(h("{\"a\": 1, \"b\":").unwrap(), "{\"a\": 1}");
    assert_eq!(h("{\"a\":").unwrap(), "{}");
    assert_eq!(h("[1, 2.").unwrap(), "[1]");
    assert_eq!(h("[1, 2.5").unwrap(), "[1, 2.5]");
    assert_eq!(h("[-").unwrap(), "[]");
    assert_eq!(h("[[{\"x\": nu").unwrap(), "[[{\"x\": null}]]");
    assert_eq!(h("  \"ab").unwrap(), "\"ab\"");
    assert_eq!(h("{\"a\": 1} ").unwrap(), "{\"a\": 1}");
    assert_eq!(h("").unwrap_err(), HealError::Empty);
    assert_eq!(h("-").unwrap_err(), HealError::Empty);
    assert!(matches!(
        h("[1 2"),
        Err(HealError::Invalid { offset: 3, .. })
    ));
    assert_eq!(
        heal("{'a': 'x', 'b': Non", Flavour::Python).unwrap(),
        r#"{"a": "x", "b": null}"#
    );
}

fn arb_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        (-1e6f64..1e6).prop_map(|f| serde_json::json!(f)),
        any::<i32>().prop_map(|i| serde_json::json!(i)),
        "[a-z\"\\\\\u{e9}\u{1F600}\n]{0,6}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-z]{0,3}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn prop_valid_documents(v in arb_json(), pretty in any::<bool>()) {
        let doc = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
        prop_assert_eq!(full(&doc), Scan::Complete(doc.len()));
        for k in 0..doc.len() {
            let p = validate(&doc.as_bytes()[..k], Flavour::Json, true);
            prop_assert!(p == Scan::NeedMore || matches!(p, Scan::Complete(_)), "{:?} at {}", p, k);
            if doc.is_char_boundary(k) && p == Scan::NeedMore && k > 0 {
                let healed = heal(&doc[..k], Flavour::Json);
                if let Ok(healed) = healed {
                    prop_assert!(serde_json::from_str::<serde_json::Value>(&healed).is_ok(), "{}", healed);
                }
            }
        }
    }

    #[test]
    fn prop_agrees_with_serde(bytes in prop::collection::vec(prop::sample::select(
        b"{}[]\":,01-.eE+tfnrula\\ \n\xc3\xa9".to_vec()), 0..24)) {
        let ours = validate(&bytes, Flavour::Json, false);
        let theirs = serde_json::from_slice::<serde_json::Value>(&bytes);
        prop_assert_eq!(matches!(ours, Scan::Complete(_)), theirs.is_ok(), "{:?} {:?}", ours, theirs);
        let mut s = Scanner::new(Flavour::Json, Target::Value, 0);
        let mut last = Scan::NeedMore;
        for k in 0..=bytes.len() {
            last = s.resume(&bytes[..k], k == bytes.len());
            if last != Scan::NeedMore { break; }
        }
        prop_assert_eq!(last, scan(&bytes, Flavour::Json, Target::Value, false));
    }
}

/// A Python `repr()`-like rendering of a JSON value.
fn py_repr(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let mut out = String::from("'");
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\'' => out.push_str("\\'"),
                    '\n' => out.push_str("\\n"),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
                    c => out.push(c),
                }
            }
            out.push('\'');
            out
        }
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", py_repr(&Value::String(k.clone())), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

proptest! {
    #[test]
    fn prop_python_repr_normalises_to_the_same_value(v in arb_json()) {
        let repr = py_repr(&v);
        prop_assert_eq!(validate(repr.as_bytes(), Flavour::Python, false), Scan::Complete(repr.len()));
        let json = python_to_json(&repr).unwrap();
        // Compare with serde's own text round trip (its float parsing is not exact).
        let expected: serde_json::Value = serde_json::from_str(&v.to_string()).unwrap();
        prop_assert_eq!(serde_json::from_str::<serde_json::Value>(&json).unwrap(), expected);
        for k in (0..repr.len()).filter(|&k| repr.is_char_boundary(k)) {
            let p = validate(&repr.as_bytes()[..k], Flavour::Python, true);
            prop_assert!(!matches!(p, Scan::Fail { .. }), "{:?} at {}", p, k);
            if let Ok(healed) = heal(&repr[..k], Flavour::Python) {
                prop_assert!(serde_json::from_str::<serde_json::Value>(&healed).is_ok(), "{}", healed);
            }
        }
    }
}
