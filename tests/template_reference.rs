//! Renders every chat case of `shared/cases/llama-cpp-chat.jsonl` and compares the prompt with
//! `reference.prompt` (what llama.cpp rendered; llama.cpp aims to match Python Jinja2).
//!
//! Ratchet: `tests/template_reference_known.txt` lists the case ids known to mismatch, each with
//! a reason. The test fails when an unlisted case mismatches or a listed case starts matching.
//! `CHATPARSE_SHOW_DIFF=1` prints the first difference of every mismatch.

use std::collections::BTreeMap;

use chatparse::shared_data::shared_path_or_skip;
use chatparse::template::{
    ArgumentsForm, Capabilities, ChatTemplate, Clock, Continuation, RenderInput,
};
use serde_json::Value;

/// 2026-11-22 00:00:00 UTC: the references were recorded that day, with `strftime_now` on the
/// wall clock.
const FIXED_NOW: i64 = 1_795_305_600;

fn known_mismatches() -> BTreeMap<String, String> {
    include_str!("template_reference_known.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, reason) = l.split_once('\t').unwrap_or((l, ""));
            (id.trim().to_string(), reason.trim().to_string())
        })
        .collect()
}

/// Parses JSON-string tool-call arguments into objects, as llama.cpp does for templates that
/// only accept object arguments.
fn arguments_as_objects(messages: &mut [Value]) {
    for message in messages {
        let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) else {
            continue;
        };
        for call in calls {
            let Some(args) = call.pointer_mut("/function/arguments") else {
                continue;
            };
            if let Some(parsed) = args.as_str().and_then(|s| serde_json::from_str(s).ok()) {
                *args = parsed;
            }
        }
    }
}

/// The request as a render input.
fn render_input(request: &Value, object_arguments: bool) -> RenderInput {
    let continuation = match request["continue_final_message"].as_str() {
        Some("content") => Continuation::Content,
        Some("reasoning") => Continuation::Reasoning,
        _ => Continuation::None,
    };
    let mut messages = request["messages"].as_array().cloned().unwrap_or_default();
    if object_arguments {
        arguments_as_objects(&mut messages);
    }
    // llama.cpp passes no tools (`none`) for an empty list.
    let tools = request["tools"]
        .as_array()
        .filter(|t| !t.is_empty())
        .cloned();
    RenderInput::new(messages)
        .with_tools(tools)
        .with_generation_prompt(request["add_generation_prompt"].as_bool().unwrap_or(false))
        .with_var(
            "enable_thinking",
            request["enable_thinking"].as_bool().unwrap_or(true),
        )
        .with_var("bos_token", "")
        .with_var("eos_token", "")
        .with_clock(Clock::Fixed(FIXED_NOW))
        .with_continuation(continuation)
}

fn first_difference(a: &str, b: &str) -> String {
    let at = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i);
    let window = |s: &str| -> String {
        let from = at.saturating_sub(40);
        s.char_indices()
            .filter(|(i, _)| *i >= from && *i < at + 60)
            .map(|(_, c)| c)
            .collect()
    };
    format!(
        "at byte {at}:\n      got: {:?}\n     want: {:?}",
        window(a),
        window(b)
    )
}

#[test]
fn renders_match_llama_cpp_reference() {
    let Some(cases) = shared_path_or_skip("cases/llama-cpp-chat.jsonl", "template_reference")
    else {
        return;
    };
    let templates_dir = cases.parent().unwrap().parent().unwrap().join("templates");
    let text = std::fs::read_to_string(&cases).unwrap();
    let known = known_mismatches();
    let show = std::env::var_os("CHATPARSE_SHOW_DIFF").is_some();
    let mut compiled: BTreeMap<String, (ChatTemplate, bool)> = BTreeMap::new();
    let (mut total, mut matched) = (0, 0);
    let mut unexpected = Vec::new();
    let mut fixed = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let id = case["id"].as_str().unwrap().to_string();
        let name = case["template"].as_str().unwrap().to_string();
        let (template, object_arguments) = compiled.entry(name.clone()).or_insert_with(|| {
            let source = std::fs::read_to_string(templates_dir.join(&name)).unwrap();
            let template = ChatTemplate::new(name.clone(), source).unwrap();
            let object_arguments =
                Capabilities::probe(&template).arguments == ArgumentsForm::Object;
            (template, object_arguments)
        });
        let want = case["reference"]["prompt"].as_str().unwrap();
        total += 1;
        let outcome = template.render(&render_input(&case["request"], *object_arguments));
        let ok = matches!(&outcome, Ok(got) if got == want);
        if ok {
            matched += 1;
        }
        match (ok, known.contains_key(&id)) {
            (false, false) => {
                let detail = match &outcome {
                    Ok(got) => first_difference(got, want),
                    Err(e) => format!("error: {e}"),
                };
                unexpected.push(format!("{id} ({name}): {detail}"));
            }
            (true, true) => fixed.push(id.clone()),
            (false, true) if show => {
                let detail = match &outcome {
                    Ok(got) => first_difference(got, want),
                    Err(e) => format!("error: {e}"),
                };
                eprintln!("known {id} ({name}): {detail}");
            }
            _ => {}
        }
    }
    eprintln!("template_reference: {matched}/{total} renders match reference.prompt");
    assert!(
        unexpected.is_empty() && fixed.is_empty(),
        "{} unexpected mismatches:\n{}\n{} listed cases now match (remove them from \
         template_reference_known.txt):\n{}",
        unexpected.len(),
        unexpected.join("\n"),
        fixed.len(),
        fixed.join("\n")
    );
}
