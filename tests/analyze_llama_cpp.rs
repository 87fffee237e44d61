//! Compares the analysis with llama.cpp's (`../shared/cases/llama-cpp-analysis.jsonl`) where
//! llama.cpp trusts its own analysis (`production_handler` = `autoparser`). Every field that
//! differs must be explained in `fixtures/analysis/DIFFERENCES.md` by a line starting with
//! `` - `<template>` / `<field>`: ``.

use std::fs;

use chatparse::analyze::{
    analyze, Analysis, CallIdPosition, ContentMode, ReasoningMode, ReasoningScope, ToolFormat,
};
use chatparse::shared_data::shared_path_or_skip;
use chatparse::template::ChatTemplate;
use serde_json::Value;

/// Our analysis as llama.cpp's field names and values.
fn as_llama_fields(a: &Analysis) -> Vec<(&'static str, String)> {
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
            }
            .to_owned(),
        ),
        ("content_start", c.start.clone()),
        ("content_end", c.end.clone()),
    ];
    let t = a.tools.as_ref();
    let s = |get: fn(&chatparse::analyze::ToolAnalysis) -> String| t.map(get).unwrap_or_default();
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
    let j = |get: fn(&chatparse::analyze::JsonLayout) -> Option<String>, default: &str| {
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

/// llama.cpp's value of `field`, as a string.
fn llama_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[test]
fn agrees_with_llama_cpp_or_documents_why() {
    let Some(path) = shared_path_or_skip("cases/llama-cpp-analysis.jsonl", "llama_cpp_analysis")
    else {
        return;
    };
    let differences = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/analysis/DIFFERENCES.md"
    ))
    .unwrap_or_default();
    let (mut compared, mut agreeing, mut documented) = (0, 0, 0);
    let mut undocumented = Vec::new();
    let mut templates = 0;
    let mut differing = Vec::new();
    for line in fs::read_to_string(path).unwrap().lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        if case["production_handler"] != "autoparser" {
            continue;
        }
        templates += 1;
        let name = case["template"].as_str().unwrap();
        let source = fs::read_to_string(
            shared_path_or_skip(&format!("templates/{name}"), "llama_cpp_analysis").unwrap(),
        )
        .unwrap();
        let analysis = analyze(&ChatTemplate::new(name, source).unwrap());
        let stem = name.trim_end_matches(".jinja");
        for (field, ours) in as_llama_fields(&analysis) {
            let Some(theirs) = case["analysis"].get(field) else {
                continue;
            };
            compared += 1;
            let theirs = llama_value(theirs);
            if theirs != ours {
                differing.push(format!("- `{stem}` / `{field}`:"));
            }
            if theirs == ours {
                agreeing += 1;
            } else if differences.contains(&format!("- `{stem}` / `{field}`:")) {
                documented += 1;
            } else {
                undocumented.push(format!(
                    "- `{stem}` / `{field}`: llama.cpp {theirs:?}, ours {ours:?}"
                ));
            }
        }
    }
    eprintln!(
        "llama.cpp autoparser analyses: {templates} templates, {compared} fields compared, \
         {agreeing} agree, {documented} differ with a documented reason"
    );
    let stale: Vec<&str> = differences
        .lines()
        .filter(|l| l.starts_with("- `"))
        .filter(|l| !differing.iter().any(|d| l.starts_with(d.as_str())))
        .collect();
    assert!(
        stale.is_empty(),
        "DIFFERENCES.md documents fields that no longer differ:\n{}",
        stale.join("\n")
    );
    assert!(
        undocumented.is_empty(),
        "{} differences are not documented in fixtures/analysis/DIFFERENCES.md:\n{}",
        undocumented.len(),
        undocumented.join("\n")
    );
}
