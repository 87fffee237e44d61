//! The message layer against the recorded chat cases (`shared/cases/llama-cpp-chat.jsonl`):
//! every request and expected message deserialises, expected messages compare equal to
//! themselves and unequal after a perturbation, survive both JSON shapes, and stream exactly.

use chatparse::message::{
    compare, ChatMessage, ChatRequest, DeltaAccumulator, DeltaTracker, MessageBuilder,
};
use chatparse::shared_data::shared_path_or_skip;
use serde_json::Value;

const CASES: &str = "cases/llama-cpp-chat.jsonl";

/// `(id, request, expected)` of every case, or `None` when the shared data is absent.
fn cases(test: &str) -> Option<Vec<(String, Value, Value)>> {
    let path = shared_path_or_skip(CASES, test)?;
    let text = std::fs::read_to_string(path).expect("read the chat cases");
    let cases: Vec<_> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let mut case: Value = serde_json::from_str(line).expect("a case is JSON");
            let id = case["id"].as_str().unwrap_or_default().to_owned();
            (id, case["request"].take(), case["expected"].take())
        })
        .collect();
    assert_eq!(cases.len(), 340, "the chat case file has 340 cases");
    Some(cases)
}

fn expected_messages(test: &str) -> Option<Vec<(String, ChatMessage)>> {
    let cases = cases(test)?;
    Some(
        cases
            .into_iter()
            .map(|(id, _, expected)| {
                let message = serde_json::from_value(expected)
                    .unwrap_or_else(|e| panic!("{id}: expected does not deserialise: {e}"));
                (id, message)
            })
            .collect(),
    )
}

#[test]
fn every_request_deserialises_and_round_trips() {
    let Some(cases) = cases("every_request_deserialises_and_round_trips") else {
        return;
    };
    let mut with_tools = 0;
    for (id, request, _) in cases {
        let parsed: ChatRequest = serde_json::from_value(request.clone())
            .unwrap_or_else(|e| panic!("{id}: request does not deserialise: {e}"));
        assert!(!parsed.messages.is_empty(), "{id}");
        assert_eq!(
            parsed.tools.len(),
            request["tools"].as_array().map_or(0, Vec::len),
            "{id}"
        );
        assert_eq!(
            parsed.enable_thinking,
            request["enable_thinking"].as_bool().unwrap(),
            "{id}"
        );
        assert_eq!(
            parsed.json_schema.as_ref(),
            request["json_schema"]
                .as_object()
                .map(|_| &request["json_schema"]),
            "{id}"
        );
        for tool in &parsed.tools {
            assert!(!tool.name().is_empty(), "{id}");
            for name in tool.parameter_names() {
                let _ = tool.argument_kind(name);
            }
        }
        with_tools += usize::from(parsed.tools_enabled());
        let back: ChatRequest = serde_json::from_value(serde_json::to_value(&parsed).unwrap())
            .unwrap_or_else(|e| panic!("{id}: serialised request does not deserialise: {e}"));
        assert_eq!(back, parsed, "{id}");
    }
    assert!(with_tools > 0);
}

/// The recorded continuation cases start from [`ChatRequest::prefill`].
#[test]
fn expected_messages_start_with_the_prefill() {
    let Some(cases) = cases("expected_messages_start_with_the_prefill") else {
        return;
    };
    let mut continued = 0;
    for (id, request, expected) in cases {
        let request: ChatRequest = serde_json::from_value(request).unwrap();
        let expected: ChatMessage = serde_json::from_value(expected).unwrap();
        let prefill = request.prefill();
        continued += usize::from(request.continued_message().is_some());
        assert!(
            expected.content.starts_with(&prefill.content),
            "{id}: {prefill:?}"
        );
        assert!(
            expected
                .reasoning_content
                .starts_with(&prefill.reasoning_content),
            "{id}: {prefill:?}"
        );
    }
    assert_eq!(continued, 59, "38 content + 21 reasoning continuations");
}

#[test]
fn every_expected_compares_equal_to_itself_and_unequal_when_perturbed() {
    let Some(messages) = expected_messages("every_expected_compares_equal") else {
        return;
    };
    for (id, expected) in messages {
        assert_eq!(compare(&expected, &expected), Ok(()), "{id}");

        let mut changed = expected.clone();
        changed.content.push_str(" x");
        assert!(
            compare(&expected, &changed).is_err(),
            "{id}: content perturbation"
        );

        let mut changed = expected.clone();
        changed.reasoning_content.insert_str(0, "x ");
        assert!(
            compare(&expected, &changed).is_err(),
            "{id}: reasoning perturbation"
        );

        let mut changed = expected.clone();
        changed.tool_calls.push(Default::default());
        assert!(compare(&expected, &changed).is_err(), "{id}: extra call");

        for i in 0..expected.tool_calls.len() {
            let mut changed = expected.clone();
            changed.tool_calls[i].name.push('_');
            let diff = compare(&expected, &changed).unwrap_err();
            assert_eq!(
                diff.mismatches()[0].field,
                format!("tool_calls[{i}].name"),
                "{id}"
            );

            let mut changed = expected.clone();
            changed.tool_calls[i].id.push('0');
            assert!(
                compare(&expected, &changed).is_err(),
                "{id}: id perturbation"
            );

            let mut changed = expected.clone();
            let arguments = &mut changed.tool_calls[i].arguments;
            *arguments = match serde_json::from_str::<Value>(arguments) {
                Ok(Value::Object(mut map)) => {
                    map.insert("__perturbed".into(), Value::Bool(true));
                    Value::Object(map).to_string()
                }
                _ => format!("{arguments}x"),
            };
            assert!(
                compare(&expected, &changed).is_err(),
                "{id}: arguments perturbation"
            );

            // Re-serialising the arguments keeps them equal.
            if let Ok(value) = serde_json::from_str::<Value>(&expected.tool_calls[i].arguments) {
                let mut same = expected.clone();
                same.tool_calls[i].arguments = value.to_string();
                assert_eq!(
                    compare(&expected, &same),
                    Ok(()),
                    "{id}: re-serialised arguments"
                );
            }
        }
    }
}

#[test]
fn every_expected_survives_both_json_shapes() {
    let Some(messages) = expected_messages("every_expected_survives_both_json_shapes") else {
        return;
    };
    for (id, expected) in messages {
        let openai = serde_json::to_value(&expected).unwrap();
        let back: ChatMessage = serde_json::from_value(openai.clone()).unwrap();
        assert_eq!(back, expected, "{id}: OpenAI shape {openai}");
        let case: ChatMessage = serde_json::from_value(expected.to_case_value()).unwrap();
        assert_eq!(case, expected, "{id}: case shape");
    }
}

/// One mapper action.
type Step = Box<dyn Fn(&mut MessageBuilder)>;

/// Streams each expected message through the builder and tracker, revealing it one char at a
/// time (reasoning, content, then each call's name, id and arguments).
#[test]
fn every_expected_streams_exactly_char_by_char() {
    let Some(messages) = expected_messages("every_expected_streams_exactly") else {
        return;
    };
    for (id, expected) in messages {
        let mut steps: Vec<Step> = Vec::new();
        for c in expected.reasoning_content.chars() {
            steps.push(Box::new(move |b| {
                b.push_reasoning(c.encode_utf8(&mut [0; 4]))
            }));
        }
        for c in expected.content.chars() {
            steps.push(Box::new(move |b| {
                b.push_content(c.encode_utf8(&mut [0; 4]))
            }));
        }
        for call in &expected.tool_calls {
            let (name, call_id) = (call.name.clone(), call.id.clone());
            steps.push(Box::new(move |b| {
                b.start_tool_call();
                b.expect_id();
                b.set_name(&name);
            }));
            steps.push(Box::new(move |b| b.set_id(&call_id)));
            for c in call.arguments.chars() {
                steps.push(Box::new(move |b| {
                    b.push_arguments(c.encode_utf8(&mut [0; 4]))
                }));
            }
            steps.push(Box::new(|b| b.end_tool_call()));
        }
        let mut tracker = DeltaTracker::new();
        let mut client = DeltaAccumulator::new();
        for end in 0..=steps.len() {
            let mut builder = MessageBuilder::new();
            steps[..end].iter().for_each(|step| step(&mut builder));
            let snapshot = builder.finish(end < steps.len());
            let update = tracker.update(&snapshot);
            assert!(update.conflicts.is_empty(), "{id}: {:?}", update.conflicts);
            if let Some(delta) = &update.delta {
                client.apply(delta).unwrap();
            }
            assert_eq!(
                client.message(),
                &snapshot.stable_message(),
                "{id} at step {end}"
            );
        }
        // Arguments that were partial JSON get no closers: the expected text is kept verbatim.
        let streamed = client.into_message();
        assert_eq!(compare(&expected, &streamed), Ok(()), "{id}");
    }
}
