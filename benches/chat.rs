//! Parser benchmarks over `shared/bench/llama-cpp/` inputs (skipped with a notice when the data
//! is absent): one-shot parse and streaming in 4-byte chunks, for every 100 KB input of the
//! manifest (content, JSON tool calls such as Qwen2.5 / Hermes `<tool_call>`, tagged calls such
//! as Qwen3-Coder `<parameter>`), and for some of them repeated to 1 MB and 10 MB (growth per
//! decade). `chatparse bench MANIFEST.jsonl [--scale N]` reports the same inputs as a table.
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

/// Every 100 KB input of the manifest (8 templates, content and tool call).
const INPUTS: [&str; 16] = [
    "Qwen3-Coder/content-100k.txt",
    "Qwen3-Coder/tool-100k.txt",
    "Hermes-2-Pro/content-100k.txt",
    "Hermes-2-Pro/tool-100k.txt",
    "Qwen2.5-7B/content-100k.txt",
    "Qwen2.5-7B/tool-100k.txt",
    "DeepSeek-V3.1/content-100k.txt",
    "DeepSeek-V3.1/tool-100k.txt",
    "GLM-4.6/content-100k.txt",
    "GLM-4.6/tool-100k.txt",
    "Kimi-K2/content-100k.txt",
    "Kimi-K2/tool-100k.txt",
    "Mistral-Nemo/content-100k.txt",
    "Mistral-Nemo/tool-100k.txt",
    "Gemma-2/content-100k.txt",
    "Mistral-Nemo/content-10k.txt",
];

/// Inputs repeated 10 and 100 times (1 MB, 10 MB): growth per decade of output size.
const SCALED: [(&str, usize); 6] = [
    ("Hermes-2-Pro/content-100k.txt", 10),
    ("Hermes-2-Pro/content-100k.txt", 100),
    ("DeepSeek-V3.1/content-100k.txt", 10),
    ("Qwen2.5-7B/tool-100k.txt", 10),
    ("Qwen2.5-7B/tool-100k.txt", 100),
    ("Qwen3-Coder/tool-100k.txt", 10),
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

fn stream(parser: &ChatParser, output: &str) {
    let mut stream = parser.stream();
    for chunk in output.as_bytes().chunks(4) {
        black_box(stream.feed(chunk));
    }
    black_box(stream.finish());
}

#[divan::bench(args = INPUTS)]
fn stream_4_bytes(bencher: Bencher, file: &str) {
    let Some((parser, output)) = load(file) else {
        return;
    };
    bencher
        .counter(BytesCount::of_str(&output))
        .bench(|| stream(&parser, &output));
}

/// [`load`], with the output repeated `times` times.
fn load_repeated(file: &str, times: usize) -> Option<(ChatParser, String)> {
    load(file).map(|(parser, output)| (parser, output.repeat(times)))
}

#[divan::bench(args = SCALED, sample_count = 5, sample_size = 1)]
fn one_shot_scaled(bencher: Bencher, (file, times): (&str, usize)) {
    let Some((parser, output)) = load_repeated(file, times) else {
        return;
    };
    bencher
        .counter(BytesCount::of_str(&output))
        .bench(|| black_box(parser.parse(black_box(&output))));
}

#[divan::bench(args = SCALED, sample_count = 5, sample_size = 1)]
fn stream_4_bytes_scaled(bencher: Bencher, (file, times): (&str, usize)) {
    let Some((parser, output)) = load_repeated(file, times) else {
        return;
    };
    bencher
        .counter(BytesCount::of_str(&output))
        .bench(|| stream(&parser, &output));
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
