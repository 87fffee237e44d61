use serde_json::json;

use crate::message::request::declared_types;
use crate::message::{
    ArgumentKind, ChatRequest, ContinueFinalMessage, Prefill, ReasoningFormat, ToolChoice,
};

fn weather_request() -> ChatRequest {
    serde_json::from_value(json!({
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in "}, {"type": "text", "text": "Paris?"}]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
                {"function": {"name": "get_weather", "arguments": {"city": "Lyon"}}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"}
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": ["integer", "null"]},
                "unit": {"enum": ["c", "f"]},
                "note": {"type": ["string", "null"]},
                "any": {}
            },
            "required": ["city"]
        }}}],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}}
    }))
    .unwrap()
}

#[test]
fn defaults_for_absent_fields() {
    let request: ChatRequest = serde_json::from_value(json!({})).unwrap();
    assert_eq!(request, ChatRequest::default());
    assert!(request.enable_thinking && request.add_generation_prompt);
    assert_eq!(request.tool_choice, ToolChoice::Auto);
    assert_eq!(request.reasoning_format, ReasoningFormat::Auto);
    assert_eq!(request.continue_final_message, ContinueFinalMessage::None);
    let nulls: ChatRequest =
        serde_json::from_value(json!({"tools": null, "tool_choice": null, "json_schema": null}))
            .unwrap();
    assert_eq!(nulls, ChatRequest::default());
}

#[test]
fn messages_are_lenient() {
    let request = weather_request();
    assert_eq!(request.messages[0].text(), "Weather in Paris?");
    let calls = &request.messages[1].tool_calls;
    assert_eq!(
        calls[0].function.arguments_value(),
        json!({"city": "Paris"})
    );
    assert_eq!(calls[1].function.arguments_value(), json!({"city": "Lyon"}));
    assert_eq!(calls[1].function.arguments_text(), r#"{"city":"Lyon"}"#);
    assert_eq!(request.messages[2].tool_call_id.as_deref(), Some("c1"));
    assert_eq!(request.messages[1].text(), "");
}

#[test]
fn tool_helpers() {
    let request = weather_request();
    assert_eq!(request.tool_names().collect::<Vec<_>>(), ["get_weather"]);
    let tool = request.tool("get_weather").unwrap();
    assert!(request.tool("nope").is_none());
    assert_eq!(
        tool.parameter_names().collect::<Vec<_>>(),
        ["city", "days", "unit", "note", "any"]
    );
    assert!(tool.is_required("city") && !tool.is_required("days"));
    assert_eq!(tool.argument_kind("city"), ArgumentKind::String);
    assert_eq!(tool.argument_kind("note"), ArgumentKind::String);
    assert_eq!(tool.argument_kind("unit"), ArgumentKind::String);
    assert_eq!(tool.argument_kind("days"), ArgumentKind::Json);
    assert_eq!(tool.argument_kind("any"), ArgumentKind::Json);
    assert_eq!(tool.argument_kind("undeclared"), ArgumentKind::Json);
    assert_eq!(tool.parameters()["type"], "object");
    assert!(request.tools_enabled());
}

#[test]
fn declared_types_cover_type_arrays_alternatives_and_enums() {
    assert_eq!(declared_types(&json!({"type": "string"})), ["string"]);
    assert_eq!(
        declared_types(&json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})),
        ["integer", "null"]
    );
    assert_eq!(
        declared_types(&json!({"enum": [1, "a", 1.5]})),
        ["integer", "string", "number"]
    );
    assert_eq!(declared_types(&json!({"const": true})), ["boolean"]);
    assert!(declared_types(&json!({})).is_empty());
    assert_eq!(
        ArgumentKind::of_schema(&json!({"oneOf": [{"type": "string"}, {"type": "integer"}]})),
        ArgumentKind::Json
    );
}

#[test]
fn tool_choice_forms() {
    for (value, choice) in [
        (json!("auto"), ToolChoice::Auto),
        (json!("required"), ToolChoice::Required),
        (json!("none"), ToolChoice::None),
        (
            json!({"type": "function", "function": {"name": "f"}}),
            ToolChoice::Function("f".into()),
        ),
    ] {
        let parsed: ToolChoice = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(parsed, choice);
        assert_eq!(serde_json::to_value(&parsed).unwrap(), value);
    }
    assert!(serde_json::from_value::<ToolChoice>(json!("sometimes")).is_err());
    let none: ChatRequest = serde_json::from_value(json!({
        "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "none"
    }))
    .unwrap();
    assert!(!none.tools_enabled());
}

#[test]
fn enums_parse_lowercase() {
    let request: ChatRequest = serde_json::from_value(json!({
        "reasoning_format": "deepseek", "continue_final_message": "reasoning",
        "enable_thinking": false, "json_schema": {"type": "object"}
    }))
    .unwrap();
    assert_eq!(request.reasoning_format, ReasoningFormat::Deepseek);
    assert!(request.extracts_reasoning());
    assert_eq!(
        request.continue_final_message,
        ContinueFinalMessage::Reasoning
    );
    assert!(!request.enable_thinking);
    assert_eq!(request.json_schema, Some(json!({"type": "object"})));
}

#[test]
fn request_round_trips() {
    let request = weather_request();
    let back: ChatRequest =
        serde_json::from_value(serde_json::to_value(&request).unwrap()).unwrap();
    assert_eq!(back, request);
}

#[test]
fn prefill_follows_the_continuation_mode() {
    let request = |mode: &str, format: &str| -> ChatRequest {
        serde_json::from_value(json!({
            "messages": [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello, ", "reasoning_content": "I'm"}
            ],
            "continue_final_message": mode,
            "reasoning_format": format
        }))
        .unwrap()
    };
    let prefill = |content: &str, reasoning: &str| Prefill {
        content: content.into(),
        reasoning_content: reasoning.into(),
    };
    assert_eq!(
        request("content", "auto").prefill(),
        prefill("Hello, ", "I'm")
    );
    assert_eq!(request("content", "none").prefill(), prefill("Hello, ", ""));
    assert_eq!(
        request("reasoning", "deepseek").prefill(),
        prefill("", "I'm")
    );
    assert_eq!(request("none", "auto").prefill(), Prefill::default());
    assert!(request("none", "auto").continued_message().is_none());
    let mut user_last = request("content", "auto");
    user_last.messages.swap(0, 1);
    assert_eq!(user_last.prefill(), Prefill::default());
}
