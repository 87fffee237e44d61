//! Corpus coverage: the fixture folders, through their analysis snapshots and cases, cover
//! every reasoning mode, content mode, tool-call format, call-id position, Python-dict and
//! JSON-id-field arguments, both prefill states, and parallel calls. Removing the last folder
//! of a kind fails this test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chatparse::fixtures::{Case, Corpus};
use serde_json::Value;

fn text(value: &Value, path: &[&str]) -> Option<String> {
    let mut v = value;
    for key in path {
        v = v.get(key)?;
    }
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

#[test]
fn fixtures_cover_every_format_kind() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"));
    let corpus = Corpus::open(dir).unwrap();
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut note = |kind: &str, model: &str| {
        seen.entry(kind.to_owned())
            .or_default()
            .insert(model.to_owned());
    };
    for model_dir in &corpus.models {
        let model = model_dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let snapshot = std::fs::read_to_string(model_dir.join("analysis.json")).unwrap();
        let a: Value = serde_json::from_str(&snapshot).unwrap();
        for (label, path) in [
            ("reasoning", &["reasoning", "mode"][..]),
            ("prefill on", &["reasoning", "prefill_thinking_on"][..]),
            ("prefill off", &["reasoning", "prefill_thinking_off"][..]),
            ("content", &["content", "mode"][..]),
            ("tools", &["tools", "format"][..]),
            ("call id", &["tools", "call_id", "position"][..]),
        ] {
            if let Some(v) = text(&a, path) {
                note(&format!("{label}: {v}"), &model);
            }
        }
        if text(&a, &["tools", "json", "python_dicts"]).as_deref() == Some("true") {
            note("python-dict arguments", &model);
        }
        if text(&a, &["tools", "json", "id_field"]).is_some() {
            note("JSON id field", &model);
        }
        for path in Corpus::cases(model_dir) {
            let case = Case::load(&path).unwrap();
            let calls = case
                .spec
                .as_ref()
                .and_then(|s| s.expected.get("tool_calls"))
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            if calls >= 2 {
                note("parallel calls", &model);
            }
        }
    }
    let required = [
        "reasoning: none",
        "reasoning: tagged",
        "reasoning: delimited",
        "prefill on: none",
        "prefill on: reasoning_open",
        "prefill off: reasoning_closed",
        "prefill off: reasoning_open",
        "content: plain",
        "content: always_wrapped",
        "content: wrapped_with_reasoning",
        "tools: json_native",
        "tools: tag_with_json",
        "tools: tag_with_tagged",
        "call id: none",
        "call id: pre_func_name",
        "call id: between_func_and_args",
        "call id: post_args",
        "python-dict arguments",
        "JSON id field",
        "parallel calls",
    ];
    for (kind, models) in &seen {
        eprintln!(
            "{kind}: {} ({})",
            models.len(),
            models.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let missing: Vec<&str> = required
        .iter()
        .filter(|k| !seen.contains_key(**k))
        .copied()
        .collect();
    assert!(missing.is_empty(), "no fixture folder covers: {missing:?}");
    assert!(
        corpus.models.len() >= 25,
        "{} model folders",
        corpus.models.len()
    );
}
