use proptest::prelude::*;

use crate::message::{MessageBuilder, PartialMessage};

#[test]
fn content_and_reasoning_append() {
    let mut builder = MessageBuilder::new();
    builder.push_reasoning("I'm ");
    builder.push_reasoning("thinking");
    builder.push_content("Hello");
    let snapshot = builder.finish(false);
    assert_eq!(snapshot.reasoning_content, "I'm thinking");
    assert_eq!(snapshot.content, "Hello");
    assert!(snapshot.tool_calls.is_empty());
}

#[test]
fn arguments_wait_for_the_name() {
    let mut builder = MessageBuilder::new();
    builder.start_tool_call();
    builder.push_arguments(r#"{"a": "#);
    let before = builder.snapshot();
    assert_eq!(before.tool_calls[0].arguments, "");
    assert!(!before.tool_calls[0].is_announceable());
    builder.set_name("f");
    builder.push_arguments("1}");
    let after = builder.finish(false);
    assert_eq!(after.tool_calls[0].arguments, r#"{"a": 1}"#);
    assert!(after.tool_calls[0].arguments_final);
}

#[test]
fn partial_names_are_not_final_and_keep_arguments_buffered() {
    let mut builder = MessageBuilder::new();
    builder.set_partial_name("get_wea");
    builder.push_arguments("{");
    let snapshot = builder.finish(true);
    let call = &snapshot.tool_calls[0];
    assert_eq!((call.name.as_str(), call.name_final), ("get_wea", false));
    assert_eq!(call.arguments, "");
    assert_eq!(snapshot.stable_message().tool_calls.len(), 0);
    assert_eq!(snapshot.to_message().tool_calls[0].name, "get_wea");
}

#[test]
fn expected_ids_hold_the_call_back_until_set() {
    let mut builder = MessageBuilder::new();
    builder.start_tool_call();
    builder.expect_id();
    builder.set_name("f");
    assert!(!builder.snapshot().tool_calls[0].is_announceable());
    builder.set_id("call_0");
    let snapshot = builder.finish(true);
    assert!(snapshot.tool_calls[0].is_announceable());
    assert_eq!(snapshot.tool_calls[0].id, "call_0");
}

#[test]
fn partial_finish_heals_apart_from_the_arguments() {
    let mut builder = MessageBuilder::new();
    builder.set_name("f");
    builder.push_arguments(r#"{"city": "Par"#);
    let snapshot = builder.finish(true);
    let call = &snapshot.tool_calls[0];
    assert_eq!(call.arguments, r#"{"city": "Par"#);
    assert!(!call.arguments_final);
    assert_eq!(call.healed_arguments.as_deref(), Some(r#"{"city": "Par"}"#));
    assert_eq!(
        snapshot.healed_message().tool_calls[0].arguments,
        r#"{"city": "Par"}"#
    );
    assert_eq!(
        snapshot.to_message().tool_calls[0].arguments,
        r#"{"city": "Par"#
    );
    assert_eq!(
        snapshot.stable_message().tool_calls[0].arguments,
        r#"{"city": "Par"#
    );
}

#[test]
fn ending_a_call_closes_open_braces() {
    let mut builder = MessageBuilder::new();
    builder.set_name("f");
    builder.push_arguments(r#"{"a": {"b": [1"#);
    builder.end_tool_call();
    builder.set_name("g");
    builder.push_arguments(r#"{"a": 1, "#);
    let snapshot = builder.finish(false);
    assert_eq!(snapshot.tool_calls[0].arguments, r#"{"a": {"b": [1]}}"#);
    // Closing would need the dangling comma dropped: left as is.
    assert_eq!(snapshot.tool_calls[1].arguments, r#"{"a": 1, "#);
    assert!(snapshot
        .tool_calls
        .iter()
        .all(|c| c.arguments_final && c.healed_arguments.is_none()));
}

#[test]
fn starting_a_call_ends_the_previous_one() {
    let mut builder = MessageBuilder::new();
    builder.set_name("f");
    builder.push_arguments("{");
    assert!(builder.in_tool_call());
    builder.start_tool_call();
    builder.set_name("g");
    let snapshot = builder.finish(true);
    assert_eq!(snapshot.tool_calls[0].arguments, "{}");
    assert!(snapshot.tool_calls[0].arguments_final);
    assert!(!snapshot.tool_calls[1].arguments_final);
}

#[test]
fn string_content_is_escaped() {
    let mut builder = MessageBuilder::new();
    builder.set_name("f");
    builder.push_arguments(r#"{"code": ""#);
    builder.push_json_string_content("print(\"hi\")\n\\");
    builder.push_arguments(r#""}"#);
    let snapshot = builder.finish(false);
    let value: serde_json::Value = serde_json::from_str(&snapshot.tool_calls[0].arguments).unwrap();
    assert_eq!(value["code"], "print(\"hi\")\n\\");
}

#[test]
fn python_arguments_are_normalised() {
    let mut builder = MessageBuilder::new();
    builder.set_name("f");
    builder.push_python_arguments("{'a': 'x', 'b': Tr");
    assert_eq!(
        builder.snapshot().tool_calls[0].arguments,
        r#"{"a": "x", "b": "#
    );
    builder.push_python_arguments("ue, 'c': None");
    let snapshot = builder.finish(false);
    assert_eq!(
        snapshot.tool_calls[0].arguments,
        r#"{"a": "x", "b": true, "c": null}"#
    );
}

/// Builds the snapshot of a call whose JSON arguments text is cut at `end`.
fn call_snapshot(id: Option<&str>, name: &str, arguments: &str, end: usize) -> PartialMessage {
    let mut builder = MessageBuilder::new();
    builder.push_content("Sure.");
    builder.start_tool_call();
    if let Some(id) = id {
        builder.expect_id();
        builder.set_id(id);
    }
    builder.push_arguments(&arguments[..end]);
    builder.set_name(name);
    builder.finish(end < arguments.len())
}

proptest! {
    /// Snapshots of growing prefixes extend each other in every text field, and the healed
    /// arguments of each prefix parse.
    #[test]
    fn snapshots_of_growing_prefixes_are_monotone(value in super::heal::json_value()) {
        let arguments = serde_json::json!({"v": value}).to_string();
        let ends: Vec<usize> = arguments.char_indices().map(|(i, _)| i).chain([arguments.len()]).collect();
        let mut previous: Option<PartialMessage> = None;
        for &end in &ends {
            let snapshot = call_snapshot(Some("id"), "f", &arguments, end);
            let call = &snapshot.tool_calls[0];
            if let Some(healed) = &call.healed_arguments {
                prop_assert!(serde_json::from_str::<serde_json::Value>(healed).is_ok(), "{}", healed);
            } else {
                prop_assert!(end <= 1 || end == arguments.len(), "no healing at {}", end);
            }
            if let Some(previous) = &previous {
                let before = &previous.tool_calls[0];
                prop_assert!(call.arguments.starts_with(&before.arguments));
                prop_assert_eq!(&call.name, &before.name);
                prop_assert_eq!(&call.id, &before.id);
                prop_assert!(snapshot.content.starts_with(&previous.content));
            }
            previous = Some(snapshot);
        }
    }
}

#[test]
fn tagged_arguments_build_json() {
    let mut builder = MessageBuilder::new();
    builder.set_name("special_function");
    builder.push_argument_key("arg1");
    // Snapshot mid-way: the shape the recorded partial cases expect.
    assert_eq!(builder.snapshot().tool_calls[0].arguments, r#"{"arg1": "#);
    builder.push_arguments("1");
    builder.end_argument_value();
    builder.push_argument_key("note");
    builder.open_string_value();
    builder.push_json_string_content("say \"hi\"");
    let partial = builder.snapshot();
    assert_eq!(
        partial.tool_calls[0].arguments,
        r#"{"arg1": 1, "note": "say \"hi\""#
    );
    assert_eq!(
        partial.tool_calls[0].healed_arguments.as_deref(),
        Some(r#"{"arg1": 1, "note": "say \"hi\""}"#)
    );
    builder.push_json_string_content("!");
    // Ending the call writes the pending quote, then the brace.
    builder.end_tool_call();
    let snapshot = builder.finish(false);
    let value: serde_json::Value = serde_json::from_str(&snapshot.tool_calls[0].arguments).unwrap();
    assert_eq!(value, serde_json::json!({"arg1": 1, "note": "say \"hi\"!"}));
}

#[test]
fn a_new_key_closes_an_open_string_value() {
    let mut builder = MessageBuilder::new();
    builder.set_name("f");
    builder.push_argument_key("a");
    builder.open_string_value();
    builder.push_json_string_content("x");
    builder.push_argument_key("b");
    builder.push_arguments("true");
    let snapshot = builder.finish(false);
    assert_eq!(snapshot.tool_calls[0].arguments, r#"{"a": "x", "b": true}"#);
}

#[test]
fn tagged_keys_before_the_name_are_buffered() {
    let mut builder = MessageBuilder::new();
    builder.start_tool_call();
    builder.push_argument_key("a");
    builder.push_arguments("1");
    builder.push_argument_key("b");
    assert_eq!(builder.snapshot().tool_calls[0].arguments, "");
    builder.set_name("f");
    builder.push_arguments("2");
    assert_eq!(
        builder.finish(false).tool_calls[0].arguments,
        r#"{"a": 1, "b": 2}"#
    );
}

#[test]
fn prefill_starts_the_message() {
    let prefill = crate::message::Prefill {
        content: "Hello, ".into(),
        reasoning_content: "I'm thinking".into(),
    };
    let mut builder = MessageBuilder::with_prefill(&prefill);
    builder.push_content("world!");
    let snapshot = builder.finish(false);
    assert_eq!(snapshot.content, "Hello, world!");
    assert_eq!(snapshot.reasoning_content, "I'm thinking");
}
