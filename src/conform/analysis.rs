//! Runner for llama.cpp's analysis reference (`{template, production_handler, analysis}`):
//! analyses the named template and compares every field llama.cpp reports, by llama.cpp's
//! field names and values ([`llama_fields`]).
//!
//! llama.cpp does not trust its own analysis where `production_handler` is `specialized:*` (it
//! routes those templates to hand-written parsers), so those cases are not applicable. The file
//! is a reference, not ground truth (see `shared/cases/README.md`): a differing field is
//! reported as a failure with both values; `fixtures/analysis/DIFFERENCES.md` explains each
//! known one, and `tests/analyze_llama_cpp.rs` keeps that list exact.

use super::chat::load_template;
use super::runner::{str_field, CaseRunner, Context, Outcome};
use std::path::PathBuf;

use crate::analyze::{
    Analysis, CallIdPosition, ContentMode, JsonLayout, ReasoningMode, ReasoningScope, ToolAnalysis,
    ToolFormat,
};
use serde_json::Value;

/// Compares the analysis of a template with llama.cpp's.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnalysisRunner;

impl CaseRunner for AnalysisRunner {
    fn run(&self, case: &Value, ctx: &Context) -> Outcome {
        let handler = case.get("production_handler").and_then(Value::as_str);
        if handler != Some("autoparser") {
            return Outcome::NotApplicable(
                "llama.cpp does not use its own analysis for them (specialized handler)",
            );
        }
        let name = match str_field(case, "template") {
            Ok(name) => name,
            Err(outcome) => return outcome,
        };
        let dir = ctx
            .templates_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("../shared/templates"));
        let loaded = match load_template(&dir.join(name)) {
            Ok(loaded) => loaded,
            Err(message) => return Outcome::Fail(message),
        };
        let analysis = &loaded.1;
        let differing: Vec<String> = llama_fields(analysis)
            .into_iter()
            .filter_map(|(field, ours)| {
                let theirs = llama_value(case.get("analysis")?.get(field)?);
                (theirs != ours).then(|| format!("{field}: llama.cpp {theirs:?}, ours {ours:?}"))
            })
            .collect();
        Outcome::check(differing.is_empty(), || {
            format!(
                "{name}: {} field(s) differ: {}",
                differing.len(),
                differing.join("; ")
            )
        })
    }
}

/// llama.cpp's value of a field, as a string.
pub fn llama_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An analysis as llama.cpp's field names and values (`reasoning_mode`, `per_call_start`,
/// `call_id_pos`, ...).
pub fn llama_fields(a: &Analysis) -> Vec<(&'static str, String)> {
    let r = &a.reasoning;
    let c = &a.content;
    let mut f = vec![
        (
            "reasoning_mode",
            match (r.mode, r.scope) {
                (ReasoningMode::None, _) => "NONE",
                (_, ReasoningScope::ToolCallsOnly) => "TOOLS_ONLY",
                _ => "TAG_BASED",
            }
            .to_owned(),
        ),
        ("reasoning_start", r.start.clone()),
        ("reasoning_end", r.end.clone()),
        (
            "content_mode",
            match c.mode {
                ContentMode::Plain => "PLAIN",
                ContentMode::AlwaysWrapped => "ALWAYS_WRAPPED",
                ContentMode::WrappedWithReasoning => "WRAPPED_WITH_REASONING",
                ContentMode::WrappedBeforeCalls => "WRAPPED_BEFORE_CALLS",
            }
            .to_owned(),
        ),
        ("content_start", c.start.clone()),
        ("content_end", c.end.clone()),
    ];
    let t = a.tools.as_ref();
    let s = |get: fn(&ToolAnalysis) -> String| t.map(get).unwrap_or_default();
    f.push((
        "tool_mode",
        match t.map(|t| t.format) {
            None => "NONE",
            Some(ToolFormat::JsonNative) => "JSON_NATIVE",
            Some(ToolFormat::TagWithJson) => "TAG_WITH_JSON",
            Some(ToolFormat::TagWithTagged) => "TAG_WITH_TAGGED",
        }
        .to_owned(),
    ));
    f.push(("section_start", s(|t| t.section_start.clone())));
    f.push(("section_end", s(|t| t.section_end.clone())));
    f.push(("per_call_start", s(|t| t.per_call_start.clone())));
    f.push(("per_call_end", s(|t| t.per_call_end.clone())));
    f.push(("func_name_prefix", s(|t| t.function.name_prefix.clone())));
    f.push(("func_name_suffix", s(|t| t.function.name_suffix.clone())));
    f.push(("func_close", s(|t| t.function.close.clone())));
    f.push(("args_start", s(|t| t.arguments.start.clone())));
    f.push(("args_end", s(|t| t.arguments.end.clone())));
    f.push(("arg_name_prefix", s(|t| t.arguments.name_prefix.clone())));
    f.push(("arg_name_suffix", s(|t| t.arguments.name_suffix.clone())));
    f.push(("arg_value_prefix", s(|t| t.arguments.value_prefix.clone())));
    f.push(("arg_value_suffix", s(|t| t.arguments.value_suffix.clone())));
    f.push(("arg_separator", s(|t| t.arguments.separator.clone())));
    f.push((
        "call_id_pos",
        match t.map(|t| t.call_id.position) {
            Some(CallIdPosition::PreFuncName) => "PRE_FUNC_NAME",
            Some(CallIdPosition::BetweenFuncAndArgs) => "BETWEEN_FUNC_AND_ARGS",
            Some(CallIdPosition::PostArgs) => "POST_ARGS",
            _ => "NONE",
        }
        .to_owned(),
    ));
    f.push(("call_id_prefix", s(|t| t.call_id.prefix.clone())));
    f.push(("call_id_suffix", s(|t| t.call_id.suffix.clone())));
    let json = t
        .and_then(|t| t.json.clone())
        .filter(|_| t.is_some_and(|t| t.format == ToolFormat::JsonNative));
    let j = |get: fn(&JsonLayout) -> Option<String>, default: &str| {
        json.as_ref()
            .and_then(get)
            .unwrap_or_else(|| default.to_owned())
    };
    f.push(("name_field", j(|j| j.name_field.clone(), "name")));
    f.push(("args_field", j(|j| j.arguments_field.clone(), "arguments")));
    f.push(("id_field", j(|j| j.id_field.clone(), "")));
    f.push(("gen_id_field", j(|j| j.generated_id_field.clone(), "")));
    f.push((
        "function_field",
        j(|j| j.function_field.clone(), "function"),
    ));
    f.push((
        "fun_name_is_key",
        json.as_ref().is_some_and(|j| j.name_is_key).to_string(),
    ));
    f.push((
        "tools_array_wrapped",
        json.as_ref().is_some_and(|j| j.array_wrapped).to_string(),
    ));
    f
}
