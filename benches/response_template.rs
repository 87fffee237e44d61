//! Response-template parsing speed on `shared/bench/hf-response` (skipped with a notice when
//! absent): one-shot `parse_response`, and streaming in 4-byte feeds, for the 1 KB, 10 KB and
//! 100 KB inputs plus a 1 MB input made by repeating the 100 KB one in memory.
//!
//! Both groups list the same inputs (`<template> <size>`) in the same order, so the streaming
//! cost relative to one-shot (goal: at most 2×) reads off one run: compare the `stream_4_bytes`
//! and `one_shot` rows of an input (fastest and median).
//!
//! The 10 MB inputs (the 100 KB one repeated 100 times) check that both paths stay linear.
//!
//! Profiling: with `RESPONSE_TEMPLATE_PROFILE="<one_shot|stream_4_bytes> <template> <size>"`
//! the binary runs that case once in [`profiled`] (no divan) and exits, so that
//! `valgrind --tool=callgrind --toggle-collect='*profiled*'` counts only the parse (the
//! template load and input split are outside the toggle).
//!
//! Ratios: with `RESPONSE_TEMPLATE_RATIO=<rounds>` the binary times every input one-shot and
//! streamed in turn, `rounds` times (interleaved, so that both see the same machine state on a
//! shared host), and prints the fastest and median of each and the stream ÷ one-shot ratios.

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
    "gpt_oss 10MB",
    "qwen3 1KB",
    "qwen3 10KB",
    "qwen3 100KB",
    "qwen3 1MB",
    "qwen3 10MB",
    "smollm 1KB",
    "smollm 10KB",
    "smollm 100KB",
    "smollm 1MB",
    "smollm 10MB",
];

fn main() {
    if let Ok(case) = std::env::var("RESPONSE_TEMPLATE_PROFILE") {
        let (mode, input) = case.split_once(' ').unwrap_or((case.as_str(), ""));
        let Some((template, text)) = load(input) else {
            eprintln!("RESPONSE_TEMPLATE_PROFILE: unknown input {input:?}");
            return;
        };
        let pieces = feeds(&text);
        let stream = mode == "stream_4_bytes";
        // Warm up (the regex caches, the allocator) outside the counted call, as divan does.
        divan::black_box(run_case(stream, &template, &text, &pieces));
        let out = profiled(stream, &template, &text, &pieces);
        println!("{case}: {} bytes, {out} result items", text.len());
        return;
    }
    if let Ok(rounds) = std::env::var("RESPONSE_TEMPLATE_RATIO") {
        ratios(rounds.parse().unwrap_or(200));
        return;
    }
    divan::main();
}

/// Interleaved one-shot and streaming timings of every input (see the module docs).
fn ratios(rounds: usize) {
    println!(
        "{:<14} {:>10} {:>10} {:>10} {:>10} {:>7} {:>7}",
        "input", "one fast", "one med", "str fast", "str med", "fast x", "med x"
    );
    for input in INPUTS {
        let Some((template, text)) = load(input) else {
            return;
        };
        let pieces = feeds(&text);
        // Fewer rounds for the large inputs: the same total time per input.
        let n = (rounds * 100_000 / text.len().max(100_000)).max(5);
        let mut one = Vec::with_capacity(n);
        let mut streamed = Vec::with_capacity(n);
        for _ in 0..n {
            for (stream, times) in [(false, &mut one), (true, &mut streamed)] {
                let start = std::time::Instant::now();
                divan::black_box(run_case(stream, &template, &text, &pieces));
                times.push(start.elapsed().as_secs_f64());
            }
        }
        let (one_fast, one_med) = fastest_and_median(&mut one);
        let (str_fast, str_med) = fastest_and_median(&mut streamed);
        let mbps = |secs: f64| text.len() as f64 / secs / 1e6;
        println!(
            "{input:<14} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>7.2} {:>7.2}",
            mbps(one_fast),
            mbps(one_med),
            mbps(str_fast),
            mbps(str_med),
            str_fast / one_fast,
            str_med / one_med
        );
    }
    println!("(MB/s; ratios are stream time ÷ one-shot time)");
}

/// The fastest and the median of `times`.
fn fastest_and_median(times: &mut [f64]) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    let fast = times.first().copied().unwrap_or(0.0);
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    (fast, median)
}

/// The parse counted by callgrind (see the module docs).
#[inline(never)]
fn profiled(stream: bool, template: &ResponseTemplate, text: &str, pieces: &[&str]) -> usize {
    run_case(stream, template, text, pieces)
}

/// One parse: one-shot, or streaming `pieces`. Returns a count so the work is not optimized
/// away.
#[inline(never)]
fn run_case(stream: bool, template: &ResponseTemplate, text: &str, pieces: &[&str]) -> usize {
    if stream {
        run_stream(template, pieces).map_or(0, |(_, n)| n)
    } else {
        parse_response(template, text, None, None)
            .map_or(0, |m| m.as_object().map_or(0, serde_json::Map::len))
    }
}

/// Streams `pieces` through a fresh parser; returns the message and the number of events.
fn run_stream(template: &ResponseTemplate, pieces: &[&str]) -> Option<(serde_json::Value, usize)> {
    let mut parser = ResponseParser::new(template, None, None).ok()?;
    let mut events = Vec::new();
    let mut count = 0usize;
    for piece in pieces {
        parser
            .feed_into(divan::black_box(piece), &mut events)
            .ok()?;
        count += events.len();
        events.clear();
    }
    let (message, last) = parser.finalize().ok()?;
    Some((message, count + last.len()))
}

/// Loads a template and an input (`<template> <size>`), or `None` (with a notice) when the
/// data is absent.
fn load(input: &str) -> Option<(ResponseTemplate, String)> {
    let (name, size) = input.split_once(' ')?;
    let dir = shared_path_or_skip("bench/hf-response", "benches/response_template")?;
    let template = ResponseTemplate::from_path(dir.join(format!("{name}.template.json"))).ok()?;
    let repeat = match size {
        "1MB" => Some(10),
        "10MB" => Some(100),
        _ => None,
    };
    let text = if let Some(n) = repeat {
        let base = std::fs::read_to_string(dir.join(format!("{name}-100KB.txt"))).ok()?;
        base.repeat(n)
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

#[divan::bench(args = INPUTS, sample_count = 30)]
fn one_shot(bencher: Bencher, input: &str) {
    let Some((template, text)) = load(input) else {
        return;
    };
    bencher
        .counter(BytesCount::of_str(&text))
        .bench(|| parse_response(&template, divan::black_box(&text), None, None));
}

#[divan::bench(args = INPUTS, sample_count = 30)]
fn stream_4_bytes(bencher: Bencher, input: &str) {
    let Some((template, text)) = load(input) else {
        return;
    };
    let pieces = feeds(&text);
    bencher
        .counter(BytesCount::of_str(&text))
        .bench(|| run_stream(&template, &pieces));
}
