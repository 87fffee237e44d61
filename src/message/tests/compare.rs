use crate::message::compare::arguments_equal;
use crate::message::{compare, ChatMessage, ToolCall};

fn message(content: &str, reasoning: &str, calls: &[(&str, &str, &str)]) -> ChatMessage {
    ChatMessage {
        content: content.into(),
        reasoning_content: reasoning.into(),
        tool_calls: calls
            .iter()
            .map(|(id, name, args)| ToolCall::new(*id, *name, *args))
            .collect(),
        ..ChatMessage::assistant()
    }
}

#[test]
fn text_is_compared_after_trimming() {
    let expected = message("Hello", "think", &[]);
    assert_eq!(
        compare(&expected, &message("\n Hello \n", " think\n", &[])),
        Ok(())
    );
    let diff = compare(&expected, &message("Hello!", "think", &[])).unwrap_err();
    assert_eq!(
        diff.to_string(),
        r#"content: expected "Hello", got "Hello!""#
    );
    assert!(compare(&expected, &message("Hel lo", "think", &[])).is_err());
}

#[test]
fn role_is_not_compared() {
    let mut other = message("a", "", &[]);
    other.role = "user".into();
    assert_eq!(compare(&message("a", "", &[]), &other), Ok(()));
}

#[test]
fn arguments_are_compared_as_json() {
    let expected = message("", "", &[("1", "f", r#"{"a": 1, "b": [true]}"#)]);
    let reordered = message("", "", &[("1", "f", r#"{"b":[true],"a":1}"#)]);
    assert_eq!(compare(&expected, &reordered), Ok(()));
    let different = message("", "", &[("1", "f", r#"{"a": 2, "b": [true]}"#)]);
    let diff = compare(&expected, &different).unwrap_err();
    assert_eq!(diff.mismatches()[0].field, "tool_calls[0].arguments");
    assert!(!arguments_equal("1", "1.0"));
}

#[test]
fn partial_arguments_are_compared_as_text() {
    assert!(arguments_equal(r#"{"arg1": "#, r#"{"arg1": "#));
    assert!(!arguments_equal(r#"{"arg1": "#, r#"{"arg1":"#));
    assert!(arguments_equal("", ""));
    assert!(!arguments_equal("", "{}"));
}

#[test]
fn names_and_ids_are_exact_and_calls_ordered() {
    let expected = message("", "", &[("a", "f", "{}"), ("b", "g", "{}")]);
    let diff = compare(
        &expected,
        &message("", "", &[("a", "f ", "{}"), ("B", "g", "{}")]),
    )
    .unwrap_err();
    let fields: Vec<&str> = diff.mismatches().iter().map(|m| m.field.as_str()).collect();
    assert_eq!(fields, ["tool_calls[0].name", "tool_calls[1].id"]);
    let swapped = message("", "", &[("b", "g", "{}"), ("a", "f", "{}")]);
    assert!(compare(&expected, &swapped).is_err());
    let missing = compare(&expected, &message("", "", &[("a", "f", "{}")])).unwrap_err();
    assert_eq!(
        missing.to_string(),
        r#"tool_calls.len(): expected 2 ["f", "g"], got 1 ["f"]"#
    );
}

#[test]
fn long_values_are_excerpted_around_the_difference() {
    let long = "x".repeat(200);
    let expected = message(&format!("{long}A{long}"), "", &[]);
    let actual = message(&format!("{long}B{long}"), "", &[]);
    let text = compare(&expected, &actual).unwrap_err().to_string();
    assert!(text.len() < 200, "{text}");
    assert!(
        text.contains('A') && text.contains('B') && text.contains('…'),
        "{text}"
    );
}
