//! Streaming invariants of `ChatStream`, on hand-written formats (no shared data needed):
//! deltas reproduce the parse of every prefix, never retract or split a marker, announce tool
//! names only when complete; truncated or malformed output never panics and keeps its text;
//! and the work of a stream is linear in its length (work counters, not timing).

use chatparse::generate::{ChatParser, TurnFormat};
use chatparse::message::{ChatMessage, ChatRequest, DeltaAccumulator};
use proptest::prelude::*;
use serde_json::json;

const TAGGED_TOOLS: &str = r#"{"format": "tag_with_tagged", "section_start": "", "section_end": "", "per_call_start": "<tool_call>\n", "per_call_end": "</tool_call>", "call_separator": "\n", "parallel_calls": true, "function": {"name_prefix": "<function=", "name_suffix": ">\n", "close": "</function>\n"}, "arguments": {"start": "", "end": "", "name_prefix": "<parameter=", "name_suffix": ">\n", "value_prefix": "", "value_suffix": "\n</parameter>\n", "separator": "", "string_open": "", "string_close": "", "non_string_values": "same_markers"}, "call_id": {"position": "none", "prefix": "", "suffix": "", "counter": false}, "json": null}"#;

const JSON_TOOLS: &str = r#"{"format": "json_native", "section_start": "", "section_end": "", "per_call_start": "<tool_call>\n", "per_call_end": "\n</tool_call>", "call_separator": "\n", "parallel_calls": true, "function": {"name_prefix": "", "name_suffix": "", "close": ""}, "arguments": {"start": "", "end": "", "name_prefix": "", "name_suffix": "", "value_prefix": "", "value_suffix": "", "separator": "", "string_open": "", "string_close": "", "non_string_values": "unchecked"}, "call_id": {"position": "none", "prefix": "", "suffix": "", "counter": false}, "json": {"function_field": null, "name_field": "name", "arguments_field": "arguments", "id_field": null, "generated_id_field": null, "name_is_key": false, "array_wrapped": false, "python_dicts": false, "arguments_as_string": false, "field_order": ["name", "arguments"]}}"#;

fn format(tools: &str) -> TurnFormat {
    let mut format: TurnFormat = serde_json::from_value(json!({
        "reasoning": {"start": "<think>", "end": "</think>"},
        "content": {"start": "", "end": ""},
        "tools": null,
    }))
    .unwrap();
    format.tools = Some(serde_json::from_str(tools).unwrap());
    format
}

fn request() -> ChatRequest {
    serde_json::from_value(json!({
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {"type": "function", "function": {"name": "run", "parameters": {"type": "object",
              "properties": {"code": {"type": "string"}, "n": {"type": "integer"}}}}},
            {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
              "properties": {"city": {"type": "string"}}}}}
        ],
        "parallel_tool_calls": true
    }))
    .unwrap()
}

fn parser(tools: &str) -> ChatParser {
    ChatParser::from_format("test", format(tools), &request(), String::new()).unwrap()
}

const TAGGED_OUTPUT: &str = "<think>Plan: call run.</think>Sure — «ünïcödé» 👋 <tool_ca\n<tool_call>\n<function=run>\n<parameter=code>\nprint('<x>')\n</parameter>\n<parameter=n>\n42\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>";

const JSON_OUTPUT: &str = "<think>hmm 🤔</think>Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par\\u00eds 🗼\", \"n\": [1, 2, {\"k\": null}]}}\n</tool_call>";

/// Streams `output` cut at `cuts`; checks every invariant against the one-shot parses.
fn check(parser: &ChatParser, output: &str, cuts: &[usize]) -> ChatMessage {
    let final_message = parser.parse(output).message;
    let mut stream = parser.stream();
    let mut acc = DeltaAccumulator::new();
    let mut from = 0;
    let mut names: Vec<String> = Vec::new();
    for &cut in cuts.iter().chain(std::iter::once(&output.len())) {
        let cut = cut.clamp(from, output.len());
        if let Some(delta) = stream.feed(&output.as_bytes()[from..cut]) {
            for call in delta.tool_calls.iter().flatten() {
                if let Some(name) = &call.function.name {
                    names.push(name.clone());
                }
            }
            acc.apply(&delta).unwrap();
        }
        from = cut;
        let seen = acc.message();
        // No retraction and no split marker: what was streamed is a prefix of the final parse.
        assert!(final_message.content.starts_with(&seen.content), "{seen:?}");
        assert!(final_message
            .reasoning_content
            .starts_with(&seen.reasoning_content));
        for (streamed, last) in seen.tool_calls.iter().zip(&final_message.tool_calls) {
            assert_eq!(streamed.name, last.name, "names are whole");
            assert!(last.arguments.starts_with(&streamed.arguments));
        }
        if output.is_char_boundary(cut) {
            let prefix = parser.parse_partial(&output[..cut]).stable_message();
            assert_eq!(seen, &prefix, "deltas equal the parse of the prefix {cut}");
        }
    }
    let (delta, parsed) = stream.finish();
    if let Some(delta) = delta {
        for call in delta.tool_calls.iter().flatten() {
            if let Some(name) = &call.function.name {
                names.push(name.clone());
            }
        }
        acc.apply(&delta).unwrap();
    }
    let message = acc.into_message();
    assert_eq!(message, final_message);
    assert_eq!(parsed.message, final_message);
    let expected_names: Vec<String> = final_message
        .tool_calls
        .iter()
        .map(|c| c.name.clone())
        .collect();
    assert_eq!(names, expected_names, "each name announced once, whole");
    message
}

fn every_byte(output: &str) -> Vec<usize> {
    (1..output.len()).collect()
}

#[test]
fn tagged_calls_stream_byte_by_byte() {
    let p = parser(TAGGED_TOOLS);
    let message = check(&p, TAGGED_OUTPUT, &every_byte(TAGGED_OUTPUT));
    assert_eq!(message.reasoning_content, "Plan: call run.");
    assert!(
        message.content.ends_with("<tool_ca"),
        "a broken marker stays content"
    );
    assert_eq!(message.tool_calls.len(), 2);
    assert_eq!(
        message.tool_calls[0].arguments,
        r#"{"code": "print('<x>')", "n": 42}"#
    );
    assert_eq!(message.tool_calls[1].arguments, r#"{"city": "Paris"}"#);
}

#[test]
fn json_calls_stream_byte_by_byte() {
    let p = parser(JSON_TOOLS);
    let message = check(&p, JSON_OUTPUT, &every_byte(JSON_OUTPUT));
    assert_eq!(message.tool_calls.len(), 1);
    assert_eq!(message.tool_calls[0].name, "get_weather");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_chunking_keeps_the_invariants(mut cuts in prop::collection::vec(0usize..400, 0..40)) {
        cuts.sort_unstable();
        check(&parser(TAGGED_TOOLS), TAGGED_OUTPUT, &cuts);
        check(&parser(JSON_TOOLS), JSON_OUTPUT, &cuts);
    }

    #[test]
    fn truncated_or_malformed_output_never_panics_and_keeps_text(
        cut in 0usize..400,
        junk in "[<>{}\\[\\]\"a-z=/\n ]{0,40}",
    ) {
        for (tools, output) in [(TAGGED_TOOLS, TAGGED_OUTPUT), (JSON_TOOLS, JSON_OUTPUT)] {
            let p = parser(tools);
            let mut cut = cut.min(output.len());
            while !output.is_char_boundary(cut) {
                cut -= 1;
            }
            let text = format!("{}{junk}", &output[..cut]);
            let parsed = p.parse(&text);
            // Nothing is lost: every non-marker character of a malformed tail is still there.
            let m = &parsed.message;
            let total = m.content.len() + m.reasoning_content.len()
                + m.tool_calls.iter().map(|c| c.arguments.len()).sum::<usize>();
            prop_assert!(total > 0 || text.trim().is_empty() || text.trim_start().starts_with('<'));
            let _ = p.parse_partial(&text);
            let mut stream = p.stream();
            for chunk in text.as_bytes().chunks(3) {
                let _ = stream.feed(chunk);
            }
            let _ = stream.finish();
        }
    }
}

/// A call whose name is complete is committed (see `src/generate/stream.rs`, "Committing to a
/// call"): output that ends inside it keeps the call, and the problem is located at the end.
#[test]
fn call_cut_after_its_name_is_committed_with_a_located_problem() {
    let p = parser(TAGGED_TOOLS);
    let output = "Hi\n<tool_call>\n<function=run>\n<parameter=code>\nx\n</oops>";
    let parsed = p.parse(output);
    assert_eq!(parsed.message.content, "Hi");
    assert_eq!(parsed.message.tool_calls.len(), 1);
    assert_eq!(parsed.message.tool_calls[0].name, "run");
    let arguments: serde_json::Value =
        serde_json::from_str(&parsed.message.tool_calls[0].arguments).expect("healed JSON");
    assert!(arguments["code"]
        .as_str()
        .is_some_and(|c| c.starts_with('x')));
    let problem = parsed.problem.clone().expect("a problem is reported");
    assert_eq!(
        (problem.offset, problem.line, problem.column),
        (output.len(), 6, 8)
    );
    assert!(problem.to_string().contains("template test"));
    let mut stream = p.stream();
    for chunk in output.as_bytes().chunks(3) {
        let _ = stream.feed(chunk);
    }
    assert_eq!(stream.finish().1, parsed);
}

/// A call that never got its name stays content, with a located problem.
#[test]
fn malformed_call_before_its_name_stays_content_with_a_located_problem() {
    let p = parser(TAGGED_TOOLS);
    let output = "Hi\n<tool_call>\n<oops>";
    let parsed = p.parse(output);
    assert!(parsed.message.content.contains("<tool_call>"));
    assert!(parsed.message.tool_calls.is_empty());
    let problem = parsed.problem.expect("a problem is reported");
    assert_eq!((problem.offset, problem.line, problem.column), (3, 2, 1));
}

/// Work of streaming `output` in 4-byte chunks, per byte.
fn work_per_byte(parser: &ChatParser, output: &str) -> f64 {
    let mut stream = parser.stream();
    for chunk in output.as_bytes().chunks(4) {
        let _ = stream.feed(chunk);
    }
    let (parse, map) = stream.work();
    (parse + map) as f64 / output.len() as f64
}

#[test]
fn streaming_work_is_linear() {
    let p = parser(TAGGED_TOOLS);
    let content = |n: usize| "lorem ipsum <b>dolor</b> sit amet, ".repeat(n);
    let tagged = |n: usize| {
        format!(
            "<tool_call>\n<function=run>\n<parameter=code>\n{}\n</parameter>\n</function>\n</tool_call>",
            "print('<tool>')\n".repeat(n)
        )
    };
    let pj = parser(JSON_TOOLS);
    let json_call = |n: usize| {
        format!(
            "<tool_call>\n{{\"name\": \"run\", \"arguments\": {{\"code\": \"{}\"}}}}\n</tool_call>",
            "x = {\\\"a\\\": [1, 2]}; ".repeat(n)
        )
    };
    for (name, small, large) in [
        (
            "content",
            work_per_byte(&p, &content(3_000)),
            work_per_byte(&p, &content(30_000)),
        ),
        (
            "tagged",
            work_per_byte(&p, &tagged(700)),
            work_per_byte(&p, &tagged(7_000)),
        ),
        (
            "json",
            work_per_byte(&pj, &json_call(500)),
            work_per_byte(&pj, &json_call(5_000)),
        ),
    ] {
        // Linear: the work per byte does not grow with the length (and stays small).
        assert!(large < 16.0, "{name}: {large} units per byte");
        assert!(
            large < small * 1.5 + 1.0,
            "{name}: {small} -> {large} units per byte"
        );
    }
}

#[test]
fn a_call_inside_reasoning_is_held_back_until_decided() {
    let p = parser(TAGGED_TOOLS);
    let call = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>";
    // Closed later: the call text is reasoning.
    let closed = format!("<think>maybe {call} or not</think>Done.");
    let message = check(&p, &closed, &every_byte(&closed));
    assert!(message.reasoning_content.contains("<function=get_weather>"));
    assert!(message.tool_calls.is_empty());
    // Never closed: reasoning ends where the call starts.
    let open = format!("<think>I will call it {call}");
    let message = check(&p, &open, &every_byte(&open));
    assert_eq!(message.reasoning_content, "I will call it");
    assert_eq!(message.tool_calls.len(), 1);
}

/// The harmony channel layout, as `src/generate/families/harmony_channels.json` describes it.
fn harmony_parser() -> ChatParser {
    let format: TurnFormat = serde_json::from_value(json!({
        "reasoning": {"start": "", "end": ""},
        "content": {"start": "", "end": ""},
        "tools": null,
        "channels": {
            "header_start": "<|channel|>",
            "header_end": "<|message|>",
            "message_ends": ["<|end|>", "<|call|>", "<|return|>"],
            "reopen": "<|start|>assistant",
            "recipient": "to=",
            "tool_recipient": "functions.",
            "constrain": "<|constrain|>",
            "reasoning_channels": ["analysis"],
            "content_channels": ["final", "commentary"]
        }
    }))
    .unwrap();
    ChatParser::from_format("harmony", format, &request(), String::new()).unwrap()
}

#[test]
fn harmony_calls_are_announced_only_once_their_header_matched() {
    let p = harmony_parser();
    // The content type as templates render it (bare) and as models write it (<|constrain|>).
    for output in [
        " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>",
        "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
        "<|channel|>commentary to=functions.run json<|message|>{}<|call|>",
    ] {
        let message = check(&p, output, &every_byte(output));
        assert_eq!(message.tool_calls.len(), 1, "{output}");
        assert!(message.content.is_empty(), "{output}: {message:?}");
    }
    // A header that never reaches its message is no call: never announced, not even briefly.
    let output = " to=functions.get_weather<|channel|>commentary json, sorry";
    let message = check(&p, output, &every_byte(output));
    assert!(message.tool_calls.is_empty(), "{message:?}");
}
