//! PEG engine benchmarks over `shared/bench/llama-cpp/Qwen2.5-7B/{content,tool}-{1k,10k,100k}.txt`
//! (Hermes-style `<tool_call>` JSON). Skipped with a notice when the data is absent.
//!
//! Run: `cargo bench --bench peg`.

use chatparse::peg::{Grammar, GrammarBuilder, Status};
use chatparse::shared_data::shared_path_or_skip;
use divan::counter::BytesCount;
use divan::{black_box, Bencher};

fn main() {
    divan::main();
}

const MODEL: &str = "bench/llama-cpp/Qwen2.5-7B";
const SIZES: [&str; 3] = ["1k", "10k", "100k"];

fn load(variant: &str, size: &str) -> Option<String> {
    let rel = format!("{MODEL}/{variant}-{size}.txt");
    let path = shared_path_or_skip(&rel, "benches/peg.rs")?;
    std::fs::read_to_string(path).ok()
}

/// `content until <tool_call>`, then an optional tool call with JSON arguments, then end.
fn grammar() -> Grammar {
    let b = GrammarBuilder::new().name("hermes");
    let call = b.trigger_rule(
        "tool-call",
        b.seq([
            b.literal("<tool_call>"),
            b.space(),
            b.tag(
                "tool",
                b.seq([
                    b.literal("{"),
                    b.space(),
                    b.json_member("name", b.tag("tool_name", b.json_string())),
                    b.space(),
                    b.literal(","),
                    b.space(),
                    b.json_member("arguments", b.tag("tool_args", b.json())),
                    b.space(),
                    b.literal("}"),
                ]),
            ),
            b.space(),
            b.literal("</tool_call>"),
        ]),
    );
    let root = b.seq([
        b.tag("content", b.until("<tool_call>")),
        b.optional(call),
        b.space(),
        b.end(),
    ]);
    b.build(root).expect("bench grammar builds")
}

fn oneshot(bencher: Bencher, variant: &str, size: &str) {
    let Some(text) = load(variant, size) else {
        return;
    };
    let g = grammar();
    assert!(g.parse(&text).is_success(), "{variant}-{size} parses");
    bencher
        .counter(BytesCount::new(text.len()))
        .bench(|| g.parse(black_box(&text)).status);
}

#[divan::bench(args = SIZES)]
fn content_oneshot(bencher: Bencher, size: &str) {
    oneshot(bencher, "content", size);
}

#[divan::bench(args = SIZES)]
fn tool_oneshot(bencher: Bencher, size: &str) {
    oneshot(bencher, "tool", size);
}

fn stream(bencher: Bencher, variant: &str, chunk: usize) {
    let Some(text) = load(variant, "100k") else {
        return;
    };
    let text = match variant {
        // About 1 MB of content.
        "content" => text.repeat(10),
        _ => text,
    };
    let g = grammar();
    bencher.counter(BytesCount::new(text.len())).bench(|| {
        let mut s = g.session();
        for piece in text.as_bytes().chunks(chunk) {
            s.feed(piece);
        }
        let status = s.finish();
        debug_assert!(matches!(status, Status::Success { .. }));
        status
    });
}

#[divan::bench]
fn content_stream_1mb_4byte_chunks(bencher: Bencher) {
    stream(bencher, "content", 4);
}

#[divan::bench]
fn tool_stream_100k_4byte_chunks(bencher: Bencher) {
    stream(bencher, "tool", 4);
}

#[divan::bench(args = SIZES)]
fn json_validate_tool_args(bencher: Bencher, size: &str) {
    let Some(text) = load("tool", size) else {
        return;
    };
    let start = text.find('{').unwrap_or(0);
    let end = text.rfind('}').map_or(text.len(), |e| e + 1);
    let doc = &text.as_bytes()[start..end];
    bencher
        .counter(BytesCount::new(doc.len()))
        .bench(|| chatparse::json::validate(black_box(doc), chatparse::json::Flavour::Json, false));
}
