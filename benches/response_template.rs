//! Response-template parsing speed on `shared/bench/hf-response` (skipped with a notice when
//! absent): one-shot `parse_response`, and streaming in 4-byte feeds, for the 1 KB, 10 KB and
//! 100 KB inputs plus 1 MB and 10 MB inputs made by repeating the 100 KB one in memory (they
//! check that both paths stay linear).
//!
//! Streaming is measured through both event APIs: `stream_4_bytes` hands each event to a
//! closure ([`ResponseParser::feed_with`]); `stream_4_bytes_vec` collects each feed's events
//! into a reused `Vec` ([`ResponseParser::feed_into`]) and clears it. Every group lists the
//! same inputs (`<template> <size>`) in the same order, so the streaming cost relative to
//! one-shot (goal: at most 2×) reads off one run.
//!
//! Profiling: with `RESPONSE_TEMPLATE_PROFILE="<one_shot|stream_4_bytes|stream_4_bytes_vec>
//! <template> <size>"` the binary runs that case once in [`profiled`] (no divan) and exits, so
//! that `valgrind --tool=callgrind --toggle-collect='*profiled*'` counts only the parse (the
//! template load and input split are outside the toggle).
//!
//! Ratios: with `RESPONSE_TEMPLATE_RATIO=<rounds>` the binary times every input one-shot and
//! streamed through both APIs in turn, `rounds` times (interleaved, so that all three see the
//! same machine state on a shared host), and prints the fastest and median speeds and the
//! stream ÷ one-shot ratios (`RESPONSE_TEMPLATE_ONLY=<text>` keeps the inputs whose name
//! contains it).

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

/// How a case is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `parse_response` on the whole text.
    OneShot,
    /// 4-byte feeds through `feed_with` (events handed to a closure).
    Sink,
    /// 4-byte feeds through `feed_into` (events collected into a reused `Vec`).
    Vec,
}

impl Mode {
    fn parse(name: &str) -> Option<Mode> {
        match name {
            "one_shot" => Some(Mode::OneShot),
            "stream_4_bytes" => Some(Mode::Sink),
            "stream_4_bytes_vec" => Some(Mode::Vec),
            _ => None,
        }
    }
}

fn main() {
    if let Ok(case) = std::env::var("RESPONSE_TEMPLATE_PROFILE") {
        let (mode, input) = case.split_once(' ').unwrap_or((case.as_str(), ""));
        let (Some(mode), Some((template, text))) = (Mode::parse(mode), load(input)) else {
            eprintln!("RESPONSE_TEMPLATE_PROFILE: unknown mode or input in {case:?}");
            return;
        };
        let pieces = feeds(&text);
        // Warm up (the regex caches, the allocator) outside the counted call, as divan does.
        divan::black_box(run_case(mode, &template, &text, &pieces));
        let out = profiled(mode, &template, &text, &pieces);
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
        "{:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6} {:>6} {:>6} {:>6}",
        "input",
        "one fast",
        "one med",
        "sink fst",
        "sink med",
        "vec fst",
        "vec med",
        "sink",
        "x med",
        "vec",
        "x med"
    );
    let only = std::env::var("RESPONSE_TEMPLATE_ONLY").unwrap_or_default();
    for input in INPUTS.iter().filter(|i| i.contains(only.as_str())) {
        let Some((template, text)) = load(input) else {
            return;
        };
        let pieces = feeds(&text);
        // Fewer rounds for the large inputs: about the same total time per input.
        let n = (rounds * 100_000 / text.len().max(100_000)).max(5);
        let modes = [Mode::OneShot, Mode::Sink, Mode::Vec];
        let mut times: Vec<Vec<f64>> = modes.iter().map(|_| Vec::with_capacity(n)).collect();
        // Warm-up rounds, untimed (caches, allocator, clock speed), as divan does.
        for _ in 0..n.div_ceil(5) {
            for mode in modes {
                divan::black_box(run_case(mode, &template, &text, &pieces));
            }
        }
        for _ in 0..n {
            for (mode, samples) in modes.iter().zip(times.iter_mut()) {
                let start = std::time::Instant::now();
                divan::black_box(run_case(*mode, &template, &text, &pieces));
                samples.push(start.elapsed().as_secs_f64());
            }
        }
        let stats: Vec<(f64, f64)> = times.iter_mut().map(|t| fastest_and_median(t)).collect();
        let (Some(one), Some(sink), Some(vec)) = (stats.first(), stats.get(1), stats.get(2)) else {
            return;
        };
        let mbps = |secs: f64| text.len() as f64 / secs / 1e6;
        println!(
            "{input:<14} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>6.2} {:>6.2} {:>6.2} {:>6.2}",
            mbps(one.0),
            mbps(one.1),
            mbps(sink.0),
            mbps(sink.1),
            mbps(vec.0),
            mbps(vec.1),
            sink.0 / one.0,
            sink.1 / one.1,
            vec.0 / one.0,
            vec.1 / one.1
        );
    }
    println!(
        "(MB/s, fastest and median; ratios are stream time ÷ one-shot time, fastest and median)"
    );
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
fn profiled(mode: Mode, template: &ResponseTemplate, text: &str, pieces: &[&str]) -> usize {
    run_case(mode, template, text, pieces)
}

/// One parse. Returns a count so the work is not optimized away.
#[inline(never)]
fn run_case(mode: Mode, template: &ResponseTemplate, text: &str, pieces: &[&str]) -> usize {
    match mode {
        Mode::OneShot => parse_response(template, text, Some(""), None)
            .map_or(0, |m| m.as_object().map_or(0, serde_json::Map::len)),
        Mode::Sink => stream_sink(template, pieces).map_or(0, |(_, n)| n),
        Mode::Vec => stream_vec(template, pieces).map_or(0, |(_, n)| n),
    }
}

/// Streams `pieces` through a fresh parser with `feed_with`; returns the message and the
/// number of events (each one is looked at, as a caller would).
fn stream_sink(template: &ResponseTemplate, pieces: &[&str]) -> Streamed {
    let mut parser = ResponseParser::new(template, Some(""), None).ok()?;
    let mut count = 0usize;
    for piece in pieces {
        parser
            .feed_with(piece, |event| {
                divan::black_box(&event);
                count += 1;
            })
            .ok()?;
    }
    let (message, last) = parser.finalize().ok()?;
    Some((message, count + last.len()))
}

/// Streams `pieces` through a fresh parser with `feed_into` and one reused event buffer;
/// returns the message and the number of events.
fn stream_vec(template: &ResponseTemplate, pieces: &[&str]) -> Streamed {
    let mut parser = ResponseParser::new(template, Some(""), None).ok()?;
    let mut events = Vec::new();
    let mut count = 0usize;
    for piece in pieces {
        parser.feed_into(piece, &mut events).ok()?;
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
        .bench(|| parse_response(&template, divan::black_box(&text), Some(""), None));
}

#[divan::bench(args = INPUTS, sample_count = 30)]
fn stream_4_bytes(bencher: Bencher, input: &str) {
    bench_stream(bencher, input, stream_sink);
}

#[divan::bench(args = INPUTS, sample_count = 30)]
fn stream_4_bytes_vec(bencher: Bencher, input: &str) {
    bench_stream(bencher, input, stream_vec);
}

/// The message and the number of events of a streamed parse.
type Streamed = Option<(serde_json::Value, usize)>;

/// Times `stream` over `input` in 4-byte feeds.
fn bench_stream(bencher: Bencher, input: &str, stream: fn(&ResponseTemplate, &[&str]) -> Streamed) {
    let Some((template, text)) = load(input) else {
        return;
    };
    let pieces = feeds(&text);
    bencher
        .counter(BytesCount::of_str(&text))
        .bench(|| stream(&template, &pieces));
}
