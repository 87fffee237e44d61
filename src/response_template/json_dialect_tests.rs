use super::*;

fn delims(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(o, c)| ((*o).to_owned(), (*c).to_owned()))
        .collect()
}

#[test]
fn keys_are_quoted_only_right_after_brace_or_comma() {
    assert_eq!(quote_keys("{a:1,b_c:2}"), r#"{"a":1,"b_c":2}"#);
    assert_eq!(quote_keys("{日本:1}"), r#"{"日本":1}"#);
    assert_eq!(quote_keys("{1:2}"), r#"{"1":2}"#);
    // Whitespace before the key or the colon: not the reference's pattern.
    assert_eq!(quote_keys("{ a:1, b :2}"), "{ a:1, b :2}");
    assert_eq!(quote_keys("{a:b:1}"), r#"{"a":b:1}"#);
    assert_eq!(quote_keys("{a:{b:1}}"), r#"{"a":{"b":1}}"#);
    // Never inside string literals.
    assert_eq!(quote_keys(r#"{"x":"{y:1,z:2}"}"#), r#"{"x":"{y:1,z:2}"}"#);
}

#[test]
fn string_delims_outside_string_literals() {
    let d = delims(&[("<|\"|>", "<|\"|>")]);
    assert_eq!(
        apply_string_delims(r#"{<|"|>k<|"|>: <|"|>say "hi"<|"|>}"#, &d),
        r#"{"k": "say \"hi\""}"#
    );
    let q = delims(&[("'", "'")]);
    assert_eq!(
        apply_string_delims(r#"{'a': "it's", 'b': 'x'}"#, &q),
        r#"{"a": "it's", "b": "x"}"#
    );
    // An open with no close after it stays as it is.
    assert_eq!(apply_string_delims("{'a: 1}", &q), "{'a: 1}");
}
