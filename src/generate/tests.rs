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

#[test]
fn request_problems_agree_between_one_shot_and_stream() {
    let format = TurnFormat {
        turn_end: "<|end|>\n</s>".into(),
        ..TurnFormat::default()
    };
    let request: ChatRequest = serde_json::from_value(serde_json::json!({
        "json_schema": {"type": "object", "required": ["a"]}
    }))
    .unwrap();
    let parser = ChatParser::from_format("t", format, &request, String::new()).unwrap();
    for (output, problem) in [
        ("{\"a\": 1}<|end|>", false),
        ("{\"b\": 1}", true),
        ("not json<|end|>", true),
    ] {
        let parsed = parser.parse(output);
        assert_eq!(parsed.problem.is_some(), problem, "{output}");
        assert!(!parsed.message.content.contains("<|end|>"), "{output}");
        let mut stream = parser.stream();
        for chunk in output.as_bytes().chunks(3) {
            let _ = stream.feed(chunk);
        }
        let (_, streamed) = stream.finish();
        assert_eq!(streamed, parsed, "{output}");
    }
}
