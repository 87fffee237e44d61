//! Body of the `render_template` fuzz target: arbitrary chat template text compiled, rendered
//! and capability-probed under resource limits.
//!
//! Input encoding: the bytes before the first NUL are the template source (decoded as UTF-8
//! with invalid sequences replaced). After the NUL, an optional flags byte and an optional JSON
//! array of messages follow (`<template>\0<flags><json>`); without them, or when the JSON is not
//! an array of objects, a fixed conversation (system, user, assistant tool call, tool result,
//! assistant with reasoning) is rendered. Flags: bit 0 `add_generation_prompt`, bit 1 pass
//! tools, bit 2 `enable_thinking`, bit 3 continue the final message (`Continuation::Content`).
//! Seeds live in `corpus/render_template/` (generated from real chat templates).
//!
//! Checked: no panic escapes chatparse, no stack overflow, no hang (fuel and recursion limits,
//! libFuzzer `-timeout`); compiling and rendering give a result or an error that names the
//! template; a render is deterministic (same input, same result); probing capabilities never
//! fails. A panic raised inside minijinja during a render is caught by `ChatTemplate::render`
//! (it becomes a render error), so this body tells the panic hook to let those through instead
//! of aborting as libFuzzer's hook does; any other panic still aborts.
//!
//! Shared by `fuzz/fuzz_targets/render_template.rs` and the regression replay in
//! `tests/fuzz_regressions.rs` (see `fuzz/README.md`).

use chatparse::template::{
    Capabilities, ChatTemplate, Clock, Continuation, Limits, RenderInput, TemplateError,
};
use serde_json::{json, Value};

/// Template name used in error messages.
const NAME: &str = "fuzz";

/// Fuzzing limits: the default recursion depth (what protects the stack) and less fuel than the
/// default, so that runaway loops end quickly (real templates need well under 100k).
fn limits() -> Limits {
    Limits {
        fuel: 200_000,
        ..Limits::default()
    }
}

fn default_messages() -> Vec<Value> {
    vec![
        json!({"role": "system", "content": "You are helpful."}),
        json!({"role": "user", "content": "What is the weather in Paris?"}),
        json!({
            "role": "assistant",
            "content": "",
            "tool_calls": [{
                "id": "call0001a",
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}}
            }]
        }),
        json!({"role": "tool", "tool_call_id": "call0001a", "name": "get_weather", "content": "18C"}),
        json!({"role": "assistant", "content": "It is 18C.", "reasoning_content": "Look it up."}),
    ]
}

fn tools() -> Vec<Value> {
    vec![json!({
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"]
            }
        }
    })]
}

/// Splits `<flags><json>` into the render input; anything unusable falls back to defaults.
fn render_input(rest: &[u8]) -> RenderInput {
    let (flags, json) = match rest.split_first() {
        Some((&flags, json)) => (flags, json),
        None => (0b0001, &[][..]),
    };
    let messages = match serde_json::from_slice::<Value>(json) {
        Ok(Value::Array(items)) if items.iter().all(Value::is_object) => items,
        _ => default_messages(),
    };
    let mut input = RenderInput::new(messages)
        .with_generation_prompt(flags & 1 != 0)
        .with_var("bos_token", "<s>")
        .with_var("eos_token", "</s>")
        .with_var("enable_thinking", flags & 4 != 0)
        .with_clock(Clock::Fixed(1_700_000_000));
    if flags & 2 != 0 {
        input = input.with_tools(Some(tools()));
    }
    if flags & 8 != 0 {
        input = input.with_continuation(Continuation::Content);
    }
    input
}

fn check_error(error: &TemplateError) {
    assert_eq!(error.template(), NAME);
    assert!(!error.to_string().is_empty());
}

/// Installs (once) a panic hook that ignores panics located in minijinja's source, which
/// `ChatTemplate::render` turns into errors, and hands any other to the previous hook.
fn let_engine_panics_unwind() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_engine = info
                .location()
                .is_some_and(|at| at.file().contains("minijinja"));
            if !in_engine {
                previous(info);
            }
        }));
    });
}

/// Runs one fuzz input; panics on a violated property.
pub fn run(data: &[u8]) {
    let_engine_panics_unwind();
    let (source, rest) = match data.iter().position(|&byte| byte == 0) {
        Some(nul) => (&data[..nul], &data[nul + 1..]),
        None => (data, &[][..]),
    };
    let source = String::from_utf8_lossy(source);
    let template = match ChatTemplate::with_limits(NAME, source.as_ref(), limits()) {
        Ok(template) => template,
        Err(error) => return check_error(&error),
    };
    assert_eq!(template.source(), source.as_ref());

    let input = render_input(rest);
    let first = template.render(&input);
    if let Err(error) = &first {
        check_error(error);
    }
    let second = template.render(&input);
    match (&first, &second) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "render is not deterministic"),
        (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "render is not deterministic"),
        _ => panic!("render is not deterministic: {first:?} then {second:?}"),
    }

    let capabilities = Capabilities::probe(&template);
    // A probe that fails is recorded, never raised.
    for note in &capabilities.notes {
        assert!(!note.is_empty());
    }
}
