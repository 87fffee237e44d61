//! Chat template cost: compiling, one render, and an analyzer-like batch of 20 renders
//! (the analyzer renders ~20 variations per template and must analyse one in <= 1 ms median).
//!
//! `cargo bench --bench template`; needs `../shared/templates` (skips the shared-template benches
//! otherwise).

use chatparse::shared_data::shared_path;
use chatparse::template::{ChatTemplate, Clock, RenderInput};
use serde_json::{json, Value};

const TEMPLATES: [&str; 5] = [
    "Qwen-Qwen3-0.6B.jinja",
    "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "openai-gpt-oss-120b.jinja",
    "Kimi-K2-Thinking.jinja",
    "deepseek-ai-DeepSeek-V3.2.jinja",
];

fn main() {
    divan::main();
}

fn source(name: &str) -> Option<String> {
    let path = shared_path(&format!("templates/{name}"))?;
    std::fs::read_to_string(path).ok()
}

fn tool() -> Value {
    json!({"type": "function", "function": {"name": "get_weather", "description": "Weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string",
        "description": "City."}}, "required": ["city"]}}})
}

/// Twenty inputs like the analyzer's variations: roles, tools, calls, thinking on/off.
fn variations() -> Vec<RenderInput> {
    let user = json!({"role": "user", "content": "Hello"});
    let system = json!({"role": "system", "content": "Be brief."});
    let assistant = json!({"role": "assistant", "content": "Hi there"});
    let call = json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c00000001",
        "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]});
    let result = json!({"role": "tool", "tool_call_id": "c00000001", "content": "sunny"});
    let conversations = [
        vec![user.clone()],
        vec![system.clone(), user.clone()],
        vec![user.clone(), assistant.clone()],
        vec![system, user.clone(), assistant, user.clone()],
        vec![user, call, result],
    ];
    let mut out = Vec::new();
    for messages in conversations {
        for (tools, thinking) in [(false, false), (false, true), (true, false), (true, true)] {
            out.push(
                RenderInput::new(messages.clone())
                    .with_tools(tools.then(|| vec![tool()]))
                    .with_generation_prompt(true)
                    .with_var("enable_thinking", thinking)
                    .with_var("bos_token", "<s>")
                    .with_var("eos_token", "</s>")
                    .with_clock(Clock::Fixed(0)),
            );
        }
    }
    out
}

#[divan::bench(args = TEMPLATES)]
fn compile(bencher: divan::Bencher, name: &str) {
    let Some(src) = source(name) else { return };
    bencher.bench(|| ChatTemplate::new(name, src.as_str()).unwrap());
}

#[divan::bench(args = TEMPLATES)]
fn render_one(bencher: divan::Bencher, name: &str) {
    let Some(src) = source(name) else { return };
    let template = ChatTemplate::new(name, src).unwrap();
    let input = variations().swap_remove(3);
    bencher.bench(|| template.render(&input).unwrap());
}

#[divan::bench(args = TEMPLATES)]
fn render_twenty_variations(bencher: divan::Bencher, name: &str) {
    let Some(src) = source(name) else { return };
    let template = ChatTemplate::new(name, src).unwrap();
    let inputs = variations();
    bencher.bench(|| {
        inputs
            .iter()
            .map(|i| template.render(i).map_or(0, |s| s.len()))
            .sum::<usize>()
    });
}

#[divan::bench(args = TEMPLATES)]
fn probe_capabilities(bencher: divan::Bencher, name: &str) {
    let Some(src) = source(name) else { return };
    let template = ChatTemplate::new(name, src).unwrap();
    bencher.bench(|| chatparse::template::Capabilities::probe(&template));
}
