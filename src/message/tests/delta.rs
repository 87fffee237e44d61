use serde_json::json;

use crate::message::{
    accumulate, AccumulateError, ChatDelta, DeltaAccumulator, FunctionDelta, ToolCallDelta,
};

#[test]
fn serialises_only_present_fields() {
    let delta = ChatDelta {
        content: Some("Hi".into()),
        ..ChatDelta::default()
    };
    assert_eq!(
        serde_json::to_value(&delta).unwrap(),
        json!({"content": "Hi"})
    );
    let call = ChatDelta {
        role: Some("assistant".into()),
        tool_calls: Some(vec![ToolCallDelta {
            index: 0,
            id: Some("c".into()),
            kind: Some("function".into()),
            function: FunctionDelta {
                name: Some("f".into()),
                arguments: None,
            },
        }]),
        ..ChatDelta::default()
    };
    assert_eq!(
        serde_json::to_value(&call).unwrap(),
        json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "c", "type": "function", "function": {"name": "f"}}]})
    );
    let back: ChatDelta = serde_json::from_value(serde_json::to_value(&call).unwrap()).unwrap();
    assert_eq!(back, call);
    assert!(ChatDelta::default().is_empty());
    assert!(ChatDelta {
        tool_calls: Some(vec![]),
        ..ChatDelta::default()
    }
    .is_empty());
}

#[test]
fn accumulates_openai_chunks() {
    let chunks: Vec<ChatDelta> = serde_json::from_value(json!([
        {"role": "assistant", "reasoning_content": "hm"},
        {"content": "Le"},
        {"content": "t me", "tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}, {"index": 1, "function": {"name": "g"}}]}
    ]))
    .unwrap();
    let message = accumulate(&chunks).unwrap();
    assert_eq!(message.content, "Let me");
    assert_eq!(message.reasoning_content, "hm");
    assert_eq!(message.tool_calls.len(), 2);
    assert_eq!(message.tool_calls[0].arguments, r#"{"x": 1}"#);
    assert_eq!(
        (
            message.tool_calls[0].id.as_str(),
            message.tool_calls[1].name.as_str()
        ),
        ("a", "g")
    );
}

#[test]
fn rejects_index_gaps() {
    let mut acc = DeltaAccumulator::new();
    let delta = ChatDelta {
        tool_calls: Some(vec![ToolCallDelta {
            index: 1,
            ..ToolCallDelta::default()
        }]),
        ..ChatDelta::default()
    };
    assert_eq!(
        acc.apply(&delta),
        Err(AccumulateError { index: 1, calls: 0 })
    );
    assert!(acc.message().tool_calls.is_empty());
}
