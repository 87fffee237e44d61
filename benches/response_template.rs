//! Response-template parsing speed on `shared/bench/hf-response` (skipped with a notice when
//! absent): one-shot `parse_response`, and streaming in 4-byte feeds, for the 1 KB, 10 KB and
//! 100 KB inputs plus a 1 MB input made by repeating the 100 KB one in memory.
//!
//! Both groups list the same inputs (`<template> <size>`) in the same order, so the streaming
//! cost relative to one-shot (goal: at most 2×) reads off one run: compare the `stream_4_bytes`
//! and `one_shot` rows of an input (fastest and median).

use chatparse::response_template::{parse_response, ResponseParser, ResponseTemplate};
use chatparse::shared_data::shared_path_or_skip;
use divan::counter::BytesCount;
use divan::Bencher;

/// `<template> <size>`: every template at every size.
const INPUTS: &[&str] = &[
    "gpt_oss 1KB",
    "gpt_oss 10KB",
    "gpt_oss 100KB",
    "gpt_oss 1MB",
    "qwen3 1KB",
    "qwen3 10KB",
    "qwen3 100KB",
    "qwen3 1MB",
    "smollm 1KB",
    "smollm 10KB",
    "smollm 100KB",
    "smollm 1MB",
];

fn main() {
    divan::main();
}

/// Loads a template and an input (`<template> <size>`), or `None` (with a notice) when the
/// data is absent.
fn load(input: &str) -> Option<(ResponseTemplate, String)> {
    let (name, size) = input.split_once(' ')?;
    let dir = shared_path_or_skip("bench/hf-response", "benches/response_template")?;
    let template = ResponseTemplate::from_path(dir.join(format!("{name}.template.json"))).ok()?;
    let text = if size == "1MB" {
        let base = std::fs::read_to_string(dir.join(format!("{name}-100KB.txt"))).ok()?;
        base.repeat(10)
    } else {
        std::fs::read_to_string(dir.join(format!("{name}-{size}.txt"))).ok()?
    };
    Some((template, text))
}

/// Splits into 4-byte feeds, moving cuts back to character boundaries.
fn feeds(text: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / 4 + 1);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + 4).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

#[divan::bench(args = INPUTS)]
fn one_shot(bencher: Bencher, input: &str) {
    let Some((template, text)) = load(input) else {
        return;
    };
    bencher
        .counter(BytesCount::of_str(&text))
        .bench(|| parse_response(&template, divan::black_box(&text), None, None));
}

#[divan::bench(args = INPUTS)]
fn stream_4_bytes(bencher: Bencher, input: &str) {
    let Some((template, text)) = load(input) else {
        return;
    };
    let pieces = feeds(&text);
    bencher.counter(BytesCount::of_str(&text)).bench(|| {
        let mut parser = ResponseParser::new(&template, None, None).ok()?;
        let mut events = Vec::new();
        let mut count = 0usize;
        for piece in &pieces {
            parser
                .feed_into(divan::black_box(piece), &mut events)
                .ok()?;
            count += events.len();
            events.clear();
        }
        let (message, last) = parser.finalize().ok()?;
        Some((message, count + last.len()))
    });
}
