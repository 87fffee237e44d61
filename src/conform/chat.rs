//! Chat-template cases (`llama-cpp-chat.jsonl`): build the parser for the case's template and
//! request, parse the output, and check the streaming rule.
//!
//! A case passes when (see `shared/cases/README.md`):
//! 1. the one-shot parse equals `expected` under [`compare()`];
//! 2. streaming the output in pieces (every UTF-8 boundary, and byte chunkings of 3 and 7 that
//!    cut code points), after each piece the accumulated deltas equal the parse of that prefix,
//!    and the final accumulation equals `expected`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::analyze::{analyze_cached, Analysis};
use crate::generate::ChatParser;
use crate::message::{compare, ChatMessage, ChatRequest, DeltaAccumulator};
use crate::template::ChatTemplate;

use super::runner::{str_field, CaseRunner, Context, Outcome};

/// Runs chat cases.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatRunner;

type Loaded = Arc<(ChatTemplate, Arc<Analysis>)>;

/// Loads (once per path) a template and its analysis.
pub fn load_template(path: &Path) -> Result<Loaded, String> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Loaded>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
        return Ok(Arc::clone(found));
    }
    let source = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read template {}: {e}", path.display()))?;
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let template = ChatTemplate::new(name, source).map_err(|e| e.to_string())?;
    let analysis = analyze_cached(&template);
    let loaded = Arc::new((template, analysis));
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(path.to_owned(), Arc::clone(&loaded));
    Ok(loaded)
}

impl CaseRunner for ChatRunner {
    fn run(&self, case: &Value, ctx: &Context) -> Outcome {
        match run_case(case, ctx) {
            Ok(()) => Outcome::Pass,
            Err(message) => Outcome::Fail(message),
        }
    }
}

fn run_case(case: &Value, ctx: &Context) -> Result<(), String> {
    let name = str_field(case, "template").map_err(fail_text)?;
    let output = str_field(case, "output").map_err(fail_text)?;
    let partial = case
        .get("partial")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let request: ChatRequest = serde_json::from_value(case["request"].clone())
        .map_err(|e| format!("malformed request: {e}"))?;
    let expected: ChatMessage = serde_json::from_value(case["expected"].clone())
        .map_err(|e| format!("malformed expected: {e}"))?;
    let dir = ctx
        .templates_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("../shared/templates"));
    let loaded = load_template(&dir.join(name))?;
    let (template, analysis) = (&loaded.0, &loaded.1);
    let parser = ChatParser::new(template, analysis, &request).map_err(|e| e.to_string())?;
    let actual = if partial {
        parser.parse_partial(output).to_message()
    } else {
        parser.parse(output).message
    };
    compare(&expected, &actual).map_err(|d| format!("parse: {d}"))?;
    check_streaming(&parser, output, partial, &expected)
}

fn fail_text(outcome: Outcome) -> String {
    match outcome {
        Outcome::Fail(m) => m,
        Outcome::NotApplicable(why) => why.to_owned(),
        Outcome::Pass => String::new(),
    }
}

/// The streaming rule, over several chunkings.
pub fn check_streaming(
    parser: &ChatParser,
    output: &str,
    partial: bool,
    expected: &ChatMessage,
) -> Result<(), String> {
    let char_cuts: Vec<usize> = output
        .char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .collect();
    let byte_cuts = |step: usize| -> Vec<usize> {
        (1..=output.len().div_ceil(step))
            .map(|i| (i * step).min(output.len()))
            .collect()
    };
    for (label, cuts) in [
        ("chars", char_cuts),
        ("3 bytes", byte_cuts(3)),
        ("7 bytes", byte_cuts(7)),
    ] {
        let mut stream = parser.stream();
        let mut acc = DeltaAccumulator::new();
        let mut from = 0;
        for &cut in &cuts {
            if let Some(delta) = stream.feed(&output.as_bytes()[from..cut]) {
                acc.apply(&delta)
                    .map_err(|e| format!("stream ({label}) at byte {cut}: {e}"))?;
            }
            from = cut;
            if output.is_char_boundary(cut) {
                let prefix = parser.parse_partial(&output[..cut]).stable_message();
                if acc.message() != &prefix {
                    return Err(format!(
                        "stream ({label}) at byte {cut}: deltas {:?} differ from the prefix parse {:?}",
                        acc.message().to_case_value(),
                        prefix.to_case_value()
                    ));
                }
            }
        }
        if !partial {
            let (delta, _) = stream.finish();
            if let Some(delta) = delta {
                acc.apply(&delta)
                    .map_err(|e| format!("stream ({label}) finish: {e}"))?;
            }
        }
        let final_message = acc.into_message();
        if !partial {
            compare(expected, &final_message)
                .map_err(|d| format!("stream ({label}) final: {d}"))?;
        }
    }
    Ok(())
}
