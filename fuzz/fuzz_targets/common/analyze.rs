//! Body of the `analyze` fuzz target: arbitrary chat template text (seeded with mutations of
//! real templates) compiled, analysed and turned into a parser, under fuel and memory limits.
//!
//! Input encoding: the whole input is the template source (decoded as UTF-8 with invalid
//! sequences replaced). Seeds live in `corpus/analyze/` (`scripts/fuzz-seeds.sh`: the shared
//! templates and the fixtures' own `template.jinja`).
//!
//! Checked: no panic escapes chatparse, no stack overflow, no hang (fuel, recursion and memory
//! limits, libFuzzer `-timeout`); compiling gives a template or an error naming it; the
//! analysis of a compiled template always completes (failures are recorded in it as unsupported
//! parts), serialises to JSON, and is deterministic; the parser built from it parses a sample
//! output without panicking.
//!
//! Shared by `fuzz/fuzz_targets/analyze.rs` and the regression replay in
//! `tests/fuzz_regressions.rs` (see `fuzz/README.md`).

use chatparse::analyze::analyze;
use chatparse::generate::ChatParser;
use chatparse::message::ChatRequest;
use chatparse::template::{ChatTemplate, Limits};

/// Template name used in error messages.
const NAME: &str = "fuzz";

/// Less fuel and memory than the defaults, so that runaway templates end quickly (real
/// templates need well under 100k instructions and a few KiB per render; analysis renders a
/// template a few dozen times).
fn limits() -> Limits {
    Limits {
        fuel: 200_000,
        max_value_bytes: 1 << 20,
        max_output_bytes: 4 << 20,
        ..Limits::default()
    }
}

/// Model output parsed by the parser the analysis yields.
const SAMPLE_OUTPUT: &str = "<think>Plan.</think>Hello <tool_call>\n{\"name\": \"get_weather\", \
                             \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

/// Runs one input (see the module docs); panics on a violated property.
pub fn run(data: &[u8]) {
    let source = String::from_utf8_lossy(data);
    let template = match ChatTemplate::with_limits(NAME, source.as_ref(), limits()) {
        Ok(template) => template,
        Err(e) => {
            assert_eq!(e.template(), NAME, "compile errors name the template: {e}");
            return;
        }
    };
    let analysis = analyze(&template);
    let json = serde_json::to_string(&analysis).expect("an analysis serialises");
    let again = serde_json::to_string(&analyze(&template)).expect("an analysis serialises");
    assert_eq!(json, again, "analysis is deterministic");
    let request: ChatRequest = serde_json::from_value(serde_json::json!({
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    }))
    .expect("the request deserialises");
    if let Ok(parser) = ChatParser::new(&template, &analysis, &request) {
        let _ = parser.parse(SAMPLE_OUTPUT);
    }
}
