//! Body of the `stream` fuzz target: one of the repository's fixture templates (chosen by an
//! input byte) with its request, arbitrary model output and arbitrary chunking; streaming must
//! agree with the one-shot parse.
//!
//! Input encoding: `[fixture][n][c1 .. cn][output ...]`: byte 0 picks the fixture (modulo the
//! number of fixtures with their own `template.jinja`, embedded at compile time with
//! `include_str!` so the binary needs no files at run time), byte 1 is the number `n` (modulo
//! 16) of chunk lengths that follow (each 1..=255, a 0 counts as 1, at least 1/128 of the
//! output; they repeat cyclically), and
//! the rest is the model output (decoded as UTF-8 with invalid sequences replaced; chunks may
//! still cut inside a character). Seeds live in `corpus/stream/` (`scripts/fuzz-seeds.sh`).
//!
//! Checked, for the parser `ChatParser::new` builds from the fixture's template, its analysis
//! and its request (an input picking a fixture whose parser cannot be built is skipped):
//! - the deltas of `ChatStream::feed`/`finish`, accumulated, equal the one-shot
//!   `ChatParser::parse` message, and so does the `Parsed` that `finish` returns;
//! - after every chunk that ends on a character boundary, the accumulated deltas equal the
//!   stable part of the parse of that prefix (`parse_partial(..).stable_message()`), so nothing
//!   streamed is ever retracted;
//! - the prefix parses, fed to `message::check_stream`, keep the delta invariants.
//!
//! Shared by `fuzz/fuzz_targets/stream.rs` and the regression replay in
//! `tests/fuzz_regressions.rs` (see `fuzz/README.md`).

use std::sync::OnceLock;

use chatparse::analyze::analyze;
use chatparse::generate::ChatParser;
use chatparse::message::{check_stream, ChatRequest, DeltaAccumulator};
use chatparse::template::ChatTemplate;

/// The fixtures with their own template: (name, template, model.json).
pub const FIXTURES: &[(&str, &str, &str)] = &[
    (
        "answer-wrapped",
        include_str!("../../../fixtures/answer-wrapped/template.jinja"),
        include_str!("../../../fixtures/answer-wrapped/model.json"),
    ),
    (
        "call-id-first",
        include_str!("../../../fixtures/call-id-first/template.jinja"),
        include_str!("../../../fixtures/call-id-first/model.json"),
    ),
    (
        "call-id-last",
        include_str!("../../../fixtures/call-id-last/template.jinja"),
        include_str!("../../../fixtures/call-id-last/model.json"),
    ),
    (
        "pydict-calls",
        include_str!("../../../fixtures/pydict-calls/template.jinja"),
        include_str!("../../../fixtures/pydict-calls/model.json"),
    ),
    (
        "qwen3",
        include_str!("../../../fixtures/qwen3/template.jinja"),
        include_str!("../../../fixtures/qwen3/model.json"),
    ),
    (
        "r1-style",
        include_str!("../../../fixtures/r1-style/template.jinja"),
        include_str!("../../../fixtures/r1-style/model.json"),
    ),
];

/// The fixtures' parsers, in the order of [`FIXTURES`], built once per process (analysis is the
/// slow part); `None` for a fixture whose parser cannot be built.
fn parsers() -> &'static [Option<(&'static str, ChatParser)>] {
    static PARSERS: OnceLock<Vec<Option<(&'static str, ChatParser)>>> = OnceLock::new();
    PARSERS.get_or_init(|| {
        FIXTURES
            .iter()
            .map(|(name, source, model)| {
                let template =
                    ChatTemplate::new(*name, *source).expect("fixture template compiles");
                let model: serde_json::Value =
                    serde_json::from_str(model).expect("fixture model.json is JSON");
                let request: ChatRequest = serde_json::from_value(model["request"].clone())
                    .expect("fixture request deserialises");
                let analysis = analyze(&template);
                // A fixture whose parser cannot be built (a known generator limitation, listed
                // in fixtures/known_failures.txt: call-id-last) is left out.
                let parser = ChatParser::new(&template, &analysis, &request).ok()?;
                Some((*name, parser))
            })
            .collect()
    })
}

/// Runs one input (see the module docs); panics on a disagreement.
pub fn run(data: &[u8]) {
    let [pick, n, rest @ ..] = data else {
        return;
    };
    let n = usize::from(*n % 16).min(rest.len());
    let (lengths, output) = rest.split_at(n);
    let lengths: Vec<usize> = if lengths.is_empty() {
        vec![usize::MAX]
    } else {
        lengths.iter().map(|&b| usize::from(b.max(1))).collect()
    };
    let Some((name, parser)) = &parsers()[usize::from(*pick) % FIXTURES.len()] else {
        return;
    };
    let text = String::from_utf8_lossy(output);
    let bytes = text.as_bytes();

    let one_shot = parser.parse(&text).message;
    let mut stream = parser.stream();
    let mut accumulated = DeltaAccumulator::new();
    let mut snapshots = Vec::new();
    let mut at = 0;
    for length in lengths.iter().cycle() {
        if at >= bytes.len() {
            break;
        }
        // At most ~128 chunks, so that the prefix parses stay cheap on long outputs.
        let length = (*length).max(bytes.len() / 128);
        let end = at.saturating_add(length).min(bytes.len());
        if let Some(delta) = stream.feed(&bytes[at..end]) {
            accumulated
                .apply(&delta)
                .unwrap_or_else(|e| panic!("{name}: a delta does not apply: {e}"));
        }
        at = end;
        if text.is_char_boundary(at) {
            let partial = parser.parse_partial(&text[..at]);
            assert_eq!(
                accumulated.message(),
                &partial.stable_message(),
                "{name}: streamed deltas differ from the parse of the prefix of {at} bytes"
            );
            snapshots.push(partial);
        }
    }
    let (delta, parsed) = stream.finish();
    if let Some(delta) = delta {
        accumulated
            .apply(&delta)
            .unwrap_or_else(|e| panic!("{name}: the final delta does not apply: {e}"));
    }
    assert_eq!(
        parsed.message, one_shot,
        "{name}: the stream's final parse differs from the one-shot parse"
    );
    assert_eq!(
        accumulated.into_message(),
        one_shot,
        "{name}: the accumulated deltas differ from the one-shot parse"
    );
    if let Err(mismatch) = check_stream(&snapshots) {
        panic!("{name}: the prefix parses break the delta invariants: {mismatch}");
    }
}
