use super::*;
use crate::message::ChatRequest;

#[test]
fn reasoning_and_content() {
    let format = TurnFormat {
        reasoning: ReasoningFormat {
            start: "<think>".into(),
            end: "</think>".into(),
            tool_calls_only: false,
        },
        ..TurnFormat::default()
    };
    let parser =
        ChatParser::from_format("t", format, &ChatRequest::default(), String::new()).unwrap();
    let parsed = parser.parse("<think>a</think>b");
    assert_eq!(parsed.message.reasoning_content, "a");
    assert_eq!(parsed.message.content, "b");
}
