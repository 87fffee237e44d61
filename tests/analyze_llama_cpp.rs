//! Compares the analysis with llama.cpp's (`../shared/cases/llama-cpp-analysis.jsonl`) where
//! llama.cpp trusts its own analysis (`production_handler` = `autoparser`). Every field that
//! differs must be explained in `fixtures/analysis/DIFFERENCES.md` by a line starting with
//! `` - `<template>` / `<field>`: ``.

use std::fs;

use chatparse::analyze::analyze;
use chatparse::conform::analysis::{llama_fields, llama_value};
use chatparse::shared_data::shared_path_or_skip;
use chatparse::template::ChatTemplate;
use serde_json::Value;

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
        for (field, ours) in llama_fields(&analysis) {
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
