use super::*;
use crate::message::ChatRequest;

#[test]
fn reasoning_and_content() {
    let format = TurnFormat {
        reasoning: ReasoningFormat {
            start: "<think>".into(),
            end: "</think>".into(),
            tool_calls_only: false,
            block_join: None,
            opened_by_turn: false,
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

/// The commit rule (see `commit.rs`): a call whose name is complete is kept when the output
/// ends inside it or turns malformed, in one shot and streamed alike, with a problem.
#[test]
fn committed_calls_agree_between_one_shot_and_stream() {
    let template = crate::template::ChatTemplate::new(
        "qwen3",
        include_str!("../../fixtures/qwen3/template.jinja"),
    )
    .unwrap();
    let model: serde_json::Value =
        serde_json::from_str(include_str!("../../fixtures/qwen3/model.json")).unwrap();
    let request: ChatRequest = serde_json::from_value(model["request"].clone()).unwrap();
    let analysis = crate::analyze::analyze(&template);
    let parser = ChatParser::new(&template, &analysis, &request).unwrap();
    let call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ";
    let cases = [
        // Cut inside the arguments: the call with healed arguments.
        (
            format!("Hi {call}{{\"city\": \"Par"),
            "Hi",
            "{\"city\": \"Par\"}",
        ),
        // Cut after a key: the key gets null.
        (format!("{call}{{\"city\": "), "", "{\"city\": null}"),
        // Malformed: the rest is content.
        (
            format!("{call}{{\"city\": Paris}}}}\n</tool_call>"),
            "Paris}}\n</tool_call>",
            "{\"city\": null}",
        ),
    ];
    for (output, content, arguments) in cases {
        let parsed = parser.parse(&output);
        assert!(parsed.problem.is_some(), "{output}");
        assert_eq!(parsed.message.content, content, "{output}");
        assert_eq!(parsed.message.tool_calls.len(), 1, "{output}");
        assert_eq!(parsed.message.tool_calls[0].name, "get_weather");
        assert_eq!(
            parsed.message.tool_calls[0].arguments, arguments,
            "{output}"
        );
        for size in [1, 3, 7, output.len()] {
            let mut stream = parser.stream();
            let mut deltas = Vec::new();
            for chunk in output.as_bytes().chunks(size) {
                deltas.extend(stream.feed(chunk));
            }
            let (last, streamed) = stream.finish();
            deltas.extend(last);
            assert_eq!(streamed, parsed, "{output} in chunks of {size}");
            let accumulated = crate::message::accumulate(&deltas).unwrap();
            assert_eq!(accumulated, parsed.message, "{output} in chunks of {size}");
        }
    }
    // A call whose name never completed commits nothing.
    let parsed = parser.parse("<tool_call> tag, like HTML");
    assert!(parsed.message.tool_calls.is_empty());
    assert_eq!(parsed.message.content, "<tool_call> tag, like HTML");
}

/// The qwen3 fixture (authored template: `<think>`, JSON calls in `<tool_call>`).
fn qwen3_parser() -> ChatParser {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/qwen3"));
    let model = crate::fixtures::Model::load(dir).unwrap();
    let request = model.request(&Default::default()).unwrap();
    ChatParser::new(model.template(), model.analysis(), &request).unwrap()
}

#[test]
fn call_starts_left_in_content_are_found_from_content_node_starts() {
    let parser = qwen3_parser();
    // Content stops at `<tool_call>`: a call start can only begin a content node.
    assert!(parser.call_starts_begin_content);
    let parsed = parser.parse("<think>hm</think>A <tool_call> tag, like HTML.");
    assert_eq!(parsed.message.content, "A <tool_call> tag, like HTML.");
    let problem = parsed.problem.expect("a call start left in the content");
    assert_eq!(problem.offset, "<think>hm</think>A ".len());
    let parsed = parser.parse("<think>hm</think>A <tool tag.");
    assert_eq!(parsed.problem, None);
}

#[test]
fn wrapped_content_is_scanned_for_call_starts() {
    let format = TurnFormat {
        content: ContentFormat {
            start: "<answer>".into(),
            end: "</answer>".into(),
            block_join: None,
        },
        ..TurnFormat::default()
    };
    let parser =
        ChatParser::from_format("t", format, &ChatRequest::default(), String::new()).unwrap();
    assert!(!parser.call_starts_begin_content);
}

/// A parser for a reasoning block opened by a token and a label (`<|ch>thought`), with the
/// given turn header.
fn labelled_opener_parser(turn_start: &str) -> ChatParser {
    let format = TurnFormat {
        turn_start: turn_start.into(),
        reasoning: ReasoningFormat {
            start: "<|ch>thought".into(),
            end: "<ch|>".into(),
            tool_calls_only: false,
            block_join: None,
            opened_by_turn: false,
        },
        ..TurnFormat::default()
    };
    ChatParser::from_format("t", format, &ChatRequest::default(), String::new()).unwrap()
}

#[test]
fn an_opener_token_of_its_own_opens_the_block_without_its_label() {
    let parser = labelled_opener_parser("<|turn>model\n");
    let parsed = parser.parse("<|ch>thousand cases<ch|>ok");
    assert_eq!(parsed.message.reasoning_content, "thousand cases");
    assert_eq!(parsed.message.content, "ok");
    let parsed = parser.parse("<|ch>thought\nsure<ch|>ok");
    assert_eq!(parsed.message.reasoning_content, "sure");
}

#[test]
fn an_opener_token_the_header_also_uses_needs_its_label() {
    // The token also opens turns: alone, it is no reasoning opener.
    let parser = labelled_opener_parser("<|ch>model\n");
    let parsed = parser.parse("<|ch>thousand cases<ch|>ok");
    assert_eq!(parsed.message.reasoning_content, "");
    let parsed = parser.parse("<|ch>thought\nsure<ch|>ok");
    assert_eq!(parsed.message.reasoning_content, "sure");
}

#[test]
fn template_variables_of_the_request_pick_the_template_variant() {
    let source = "{% for m in messages %}{{ m.content }}{% endfor %}\
        {% if add_generation_prompt %}<{{ style | default('a') }}>{% endif %}";
    let template = crate::template::ChatTemplate::new("vars", source).unwrap();
    let request: ChatRequest = serde_json::from_value(serde_json::json!({
        "messages": [{"role": "user", "content": "Q"}],
        "chat_template_kwargs": {"style": "b"}
    }))
    .unwrap();
    let analysis = crate::analyze::analyze_cached(&template);
    // The parser serves the request with the template under its variables.
    let parser = ChatParser::new(&template, &analysis, &request).unwrap();
    let variant =
        crate::analyze::with_variables_cached(&template, &request.chat_template_kwargs).unwrap();
    assert_eq!(variant.0.variables(), &request.chat_template_kwargs);
    let direct = ChatParser::new(&variant.0, &variant.1, &request).unwrap();
    assert_eq!(
        format!("{:?}", parser.format()),
        format!("{:?}", direct.format())
    );
    let plain = ChatRequest {
        chat_template_kwargs: Default::default(),
        ..request.clone()
    };
    let without = ChatParser::new(&template, &analysis, &plain).unwrap();
    assert_ne!(
        format!("{:?}", parser.format()),
        format!("{:?}", without.format())
    );
    // Cached: the same variant again.
    let again =
        crate::analyze::with_variables_cached(&template, &request.chat_template_kwargs).unwrap();
    assert!(std::sync::Arc::ptr_eq(&variant, &again));
}
