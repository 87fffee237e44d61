//! Parser benchmarks over `shared/bench/llama-cpp/` inputs (skipped with a notice when the data
//! is absent): one-shot parse and streaming in 4-byte chunks, for 100 KB content, a 100 KB JSON
//! tool call (Qwen2.5 / Hermes `<tool_call>`) and a 100 KB tagged call (Qwen3-Coder
//! `<parameter>`).
//!
//! Run: `cargo bench --bench chat`.

use chatparse::analyze::analyze;
use chatparse::generate::ChatParser;
use chatparse::message::ChatRequest;
use chatparse::shared_data::shared_path_or_skip;
use chatparse::template::ChatTemplate;
use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use serde_json::Value;

fn main() {
    divan::main();
}

/// The parser and output of one manifest input (`dir/file`, e.g. `Qwen2.5-7B/tool-100k.txt`).
fn load(file: &str) -> Option<(ChatParser, String)> {
    let manifest = shared_path_or_skip("bench/llama-cpp/manifest.jsonl", "benches/chat.rs")?;
    let text = std::fs::read_to_string(&manifest).ok()?;
    let entry: Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["file"] == file)?;
    let dir = manifest.parent()?;
    let output = std::fs::read_to_string(dir.join(file)).ok()?;
    let name = entry["template"].as_str()?;
    let source = std::fs::read_to_string(shared_path_or_skip(
        &format!("templates/{name}"),
        "benches/chat.rs",
    )?)
    .ok()?;
    let template = ChatTemplate::new(name, source).ok()?;
    let request: ChatRequest = serde_json::from_value(entry["params"].clone()).ok()?;
    let analysis = analyze(&template);
    let parser = ChatParser::new(&template, &analysis, &request).ok()?;
    Some((parser, output))
}

const INPUTS: [&str; 3] = [
    "Qwen2.5-7B/content-100k.txt",
    "Qwen2.5-7B/tool-100k.txt",
    "Qwen3-Coder/tool-100k.txt",
];

#[divan::bench(args = INPUTS)]
fn one_shot(bencher: Bencher, file: &str) {
    let Some((parser, output)) = load(file) else {
        return;
    };
    bencher
        .counter(BytesCount::of_str(&output))
        .bench(|| black_box(parser.parse(black_box(&output))));
}

#[divan::bench(args = INPUTS)]
fn stream_4_bytes(bencher: Bencher, file: &str) {
    let Some((parser, output)) = load(file) else {
        return;
    };
    bencher.counter(BytesCount::of_str(&output)).bench(|| {
        let mut stream = parser.stream();
        for chunk in output.as_bytes().chunks(4) {
            black_box(stream.feed(chunk));
        }
        black_box(stream.finish())
    });
}

#[divan::bench]
fn build_parser(bencher: Bencher) {
    let Some(path) = shared_path_or_skip("templates/Qwen3-Coder.jinja", "benches/chat.rs") else {
        return;
    };
    let Ok(source) = std::fs::read_to_string(path) else {
        return;
    };
    let Ok(template) = ChatTemplate::new("Qwen3-Coder", source) else {
        return;
    };
    let analysis = analyze(&template);
    let request: ChatRequest = serde_json::from_value(serde_json::json!({
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
          "properties": {"x": {"type": "string"}}}}}]
    }))
    .unwrap_or_default();
    bencher.bench(|| black_box(ChatParser::new(&template, &analysis, &request)));
}
