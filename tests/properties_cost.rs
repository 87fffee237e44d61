//! Pathological cost: large outputs (generated here, up to 1 MB), long almost-markers and deep
//! nesting must cost work linear in the output, measured with the stream's work counters
//! (`ChatStream::work`), not with timing. Uses the `qwen3` fixture (an authored template, always
//! present).

use std::path::Path;

use chatparse::fixtures::Model;
use chatparse::generate::ChatParser;

const CHUNK: usize = 4096;

fn parser() -> ChatParser {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/qwen3"));
    let model = Model::load(dir).unwrap();
    let request = model.request(&Default::default()).unwrap();
    ChatParser::new(model.template(), model.analysis(), &request).unwrap()
}

/// Streams `output` in `chunk`-byte chunks; returns total work units (parse, AST building
/// and mapping).
fn work(parser: &ChatParser, output: &str, chunk: usize) -> u64 {
    let mut stream = parser.stream();
    for chunk in output.as_bytes().chunks(chunk) {
        stream.feed(chunk);
    }
    let (parse, mapping) = stream.work();
    let _ = stream.finish();
    parse + mapping
}

/// `make(n)` builds an output of about `n` bytes; the work for 2n must stay about twice the
/// work for n, and below `per_byte` units per byte.
fn check_linear(name: &str, make: impl Fn(usize) -> String) {
    check_linear_from(name, 1 << 19, CHUNK, make);
}

/// [`check_linear`] from `n` bytes (to `2n`), streamed in `chunk`-byte chunks.
fn check_linear_from(name: &str, n: usize, chunk: usize, make: impl Fn(usize) -> String) {
    let parser = parser();
    let (small, large) = (make(n), make(2 * n));
    let (w_small, w_large) = (work(&parser, &small, chunk), work(&parser, &large, chunk));
    let ratio = w_large as f64 / w_small.max(1) as f64;
    let per_byte = w_large as f64 / large.len() as f64;
    eprintln!(
        "{name}: {} bytes, {w_large} work units ({per_byte:.1}/byte), 2x ratio {ratio:.2}",
        large.len()
    );
    assert!(
        ratio < 2.6,
        "{name}: work grows superlinearly (x{ratio:.2} for 2x input)"
    );
    assert!(per_byte < 64.0, "{name}: {per_byte:.1} work units per byte");
}

fn repeat_to(unit: &str, n: usize) -> String {
    unit.repeat(n / unit.len() + 1)
}

#[test]
fn long_content_is_linear() {
    check_linear("content", |n| repeat_to("plain words, ünïcödé 日本 ", n));
}

#[test]
fn long_almost_markers_are_linear() {
    check_linear("almost-markers", |n| {
        repeat_to("<tool_cal <think <|im_en ", n)
    });
}

#[test]
fn many_call_starts_in_prose_are_linear() {
    // Every `<tool_call>` here turns out to be text: the commit rule scans each one, and must
    // neither re-parse the output before it nor rebuild the whole tree each time (its scans
    // and the trees built count in the stream's work). 4-byte chunks: a check per call start.
    check_linear_from("call starts in prose", 1 << 15, 4, |n| {
        repeat_to("a <tool_call> tag, like HTML, in prose. ", n)
    });
}

#[test]
fn long_reasoning_is_linear() {
    check_linear("reasoning", |n| {
        format!("<think>\n{}\n</think>\n\nok", repeat_to("hmm ", n))
    });
}

#[test]
fn long_argument_is_linear() {
    check_linear("argument", |n| {
        format!(
            "<tool_call>\n{{\"name\": \"search\", \"arguments\": {{\"query\": \"{}\"}}}}\n</tool_call>",
            repeat_to("q\\\"x ", n)
        )
    });
}

#[test]
fn many_calls_are_linear() {
    check_linear("many calls", |n| {
        repeat_to(
            "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>\n",
            n,
        )
    });
}

#[test]
fn many_calls_streamed_in_tokens_are_linear() {
    // Every few bytes change the tree here (markers, names, values): reading it must not
    // rebuild the finished calls' nodes each time.
    check_linear_from("many calls, 4-byte chunks", 1 << 15, 4, |n| {
        repeat_to(
            "<tool_call>\n{\"name\": \"ping\", \"arguments\": {\"n\": 1}}\n</tool_call>\n",
            n,
        )
    });
}

fn nested_call(depth: usize) -> String {
    format!(
        "<tool_call>\n{{\"name\": \"search\", \"arguments\": {{\"query\": \"x\", \"deep\": {}1{}}}}}\n</tool_call>",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// Nesting within the JSON depth limit (128, `json::DEFAULT_MAX_DEPTH`) parses as a call.
#[test]
fn deep_nesting_within_the_limit_is_a_call() {
    let parsed = parser().parse(&nested_call(100));
    assert_eq!(parsed.message.tool_calls.len(), 1, "{:?}", parsed.problem);
}

/// Nesting far past the limit does not crash and loses no text: the call (its name is complete,
/// so it is committed: see `src/generate/stream.rs`, "Committing to a call") keeps the
/// arguments read up to the limit, the text from there on is content and the problem says
/// where, with work linear in the output.
#[test]
fn deep_nesting_past_the_limit_keeps_the_text() {
    let parser = parser();
    for depth in [2_000, 100_000] {
        let output = nested_call(depth);
        let parsed = parser.parse(&output);
        assert_eq!(parsed.message.tool_calls.len(), 1);
        assert_eq!(parsed.message.tool_calls[0].name, "search");
        let problem = parsed.problem.expect("a problem is reported");
        assert!(problem.offset > output.find("\"deep\"").unwrap_or(0));
        assert_eq!(
            parsed.message.content.trim(),
            output[problem.offset..].trim()
        );
        let units = work(&parser, &output, CHUNK);
        assert!(units < 64 * output.len() as u64, "{units} work units");
    }
}
