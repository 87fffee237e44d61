//! Chat-template cases (`llama-cpp-chat.jsonl`): build the parser for the case's template and
//! request, parse the output, and check the streaming rule.
//!
//! A case passes when (see `shared/cases/README.md`):
//! 1. the one-shot parse equals `expected` under [`compare()`];
//! 2. streaming the output in pieces (every UTF-8 boundary, and byte chunkings of 3 and 7 that
//!    cut code points), after each piece the accumulated deltas equal the parse of that prefix,
//!    and the final accumulation equals `expected`.
//!
//! The parser is an [`Engine`]: the generated parser by default, or the one `--engine` names
//! ([`Context::engine`]), which is checked under the same rules
//! ([`check`](crate::engine::check)) with three seeded random chunkings more.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::analyze::{analyze_cached, Analysis};
use crate::engine::check::{check_streams, one_shot};
use crate::engine::chunking::{random, seed_of, standard};
use crate::engine::corpus::RANDOM_CHUNKINGS;
use crate::engine::{ChatParserEngine, ChatSpec, Engine, EngineCase, EngineError};
use crate::message::{compare, ChatMessage, ChatRequest};
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
            Err(CaseError::Unsupported) => {
                Outcome::NotApplicable("the engine has no parser for this template")
            }
            Err(CaseError::Failed(message)) => Outcome::Fail(message),
        }
    }
}

/// Why a case did not pass.
enum CaseError {
    /// The engine has no parser for the case's template.
    Unsupported,
    /// The case failed.
    Failed(String),
}

impl From<String> for CaseError {
    fn from(message: String) -> Self {
        CaseError::Failed(message)
    }
}

impl From<EngineError> for CaseError {
    fn from(error: EngineError) -> Self {
        match error {
            EngineError::Unsupported(_) => CaseError::Unsupported,
            other => CaseError::Failed(other.to_string()),
        }
    }
}

fn run_case(case: &Value, ctx: &Context) -> Result<(), CaseError> {
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
    let path = dir.join(name);
    let loaded = load_template(&path)?;
    let id = case.get("id").and_then(Value::as_str).unwrap_or(name);
    let engine_case = EngineCase::new(id, name, request).with_chat(ChatSpec {
        template: &loaded.0,
        analysis: &loaded.1,
        path: Some(&path),
    });
    let engine: &dyn Engine = match &ctx.engine {
        Some(engine) => engine.get(),
        None => &ChatParserEngine,
    };
    let mut session = engine.open(&engine_case)?;
    let answer = one_shot(&mut *session, output, partial)?;
    compare(&expected, &answer.message).map_err(|d| format!("parse: {d}"))?;
    let mut chunkings = standard(output);
    if ctx.engine.is_some() {
        chunkings.extend(random(output, seed_of(id), RANDOM_CHUNKINGS));
    }
    Ok(check_streams(
        &mut *session,
        engine.byte_chunks(),
        output,
        partial,
        &chunkings,
        Some(&expected),
        Some(&answer.message),
    )
    .result()?)
}

fn fail_text(outcome: Outcome) -> String {
    match outcome {
        Outcome::Fail(m) => m,
        Outcome::NotApplicable(why) => why.to_owned(),
        Outcome::Pass => String::new(),
    }
}
