use serde_json::{json, Value};

use crate::message::{ChatMessage, ToolCall};

fn with_call() -> ChatMessage {
    ChatMessage {
        tool_calls: vec![ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"city": "Paris"}"#,
        )],
        ..ChatMessage::assistant()
    }
}

#[test]
fn serialises_openai_shape() {
    let message = with_call();
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}
            }]
        })
    );
}

#[test]
fn content_is_a_string_without_calls_and_reasoning_only_when_present() {
    let mut message = ChatMessage::assistant();
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        json!({"role": "assistant", "content": ""})
    );
    message.content = "Hi".into();
    message.reasoning_content = "hmm".into();
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        json!({"role": "assistant", "content": "Hi", "reasoning_content": "hmm"})
    );
    let mut both = with_call();
    both.content = "Checking".into();
    assert_eq!(serde_json::to_value(&both).unwrap()["content"], "Checking");
}

#[test]
fn round_trips_through_openai_json() {
    let mut message = with_call();
    message.reasoning_content = "think".into();
    let text = serde_json::to_string(&message).unwrap();
    let back: ChatMessage = serde_json::from_str(&text).unwrap();
    assert_eq!(back, message);
}

#[test]
fn deserialises_case_shape_and_lenient_forms() {
    let case: ChatMessage = serde_json::from_value(json!({
        "role": "assistant", "content": "", "reasoning_content": "r",
        "tool_calls": [{"name": "f", "arguments": "{\"a\": 1}", "id": ""}]
    }))
    .unwrap();
    assert_eq!(case.tool_calls, vec![ToolCall::new("", "f", r#"{"a": 1}"#)]);
    assert_eq!(case.reasoning_content, "r");

    let lenient: ChatMessage = serde_json::from_value(json!({
        "content": null,
        "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]
    }))
    .unwrap();
    assert_eq!(lenient.role, "assistant");
    assert_eq!(lenient.content, "");
    assert_eq!(
        lenient.tool_calls,
        vec![ToolCall::new("", "f", r#"{"a":1}"#)]
    );
}

#[test]
fn case_value_is_the_flat_shape() {
    let value: Value = with_call().to_case_value();
    assert_eq!(
        value,
        json!({"role": "assistant", "content": "", "reasoning_content": "",
               "tool_calls": [{"name": "get_weather", "arguments": "{\"city\": \"Paris\"}", "id": "call_1"}]})
    );
    let back: ChatMessage = serde_json::from_value(value).unwrap();
    assert_eq!(back, with_call());
}
