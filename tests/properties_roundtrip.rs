//! Property: a random assistant message rendered by the template as the last turn and parsed
//! back gives the same message, wherever the template can render it.
//!
//! Messages: content and reasoning drawn from words, unicode, quotes, newlines, code blocks and
//! marker look-alikes; 0–3 tool calls with arguments drawn from the tool schemas. Templates:
//! every fixture model (with its manifest's tools) and every file of the templates directory
//! (`CHATPARSE_TEMPLATES`, else `../shared/templates`) no fixture references (with the default
//! tools). What a template cannot render is skipped and counted. A failure is shrunk and printed as a ready-to-commit fixture case.
//!
//! Ratchet: `tests/properties_roundtrip_known.txt` lists `template<TAB>reason` for templates
//! whose round trip is known to fail; the test fails when an unlisted template fails or a
//! listed one passes. The seed is fixed, so runs are reproducible.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chatparse::analyze::{analyze_cached, Analysis};
use chatparse::fixtures::manifest::templates_dir;
use chatparse::fixtures::round_trip::{check_turn, parse_request, prepare, RoundTrip};
use chatparse::fixtures::samples::default_request;
use chatparse::fixtures::{Corpus, Model, TemplateSource};
use chatparse::message::{ChatMessage, ChatRequest, Tool, ToolCall};
use chatparse::template::ChatTemplate;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use serde_json::{Map, Value};

const KNOWN: &str = include_str!("properties_roundtrip_known.txt");

/// Pieces of text: words, unicode, quotes, escapes, code and marker look-alikes.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-zA-Z]{1,8}",
        1 => Just("日本語".to_owned()),
        1 => Just("ünïcödé".to_owned()),
        1 => Just("🎉".to_owned()),
        1 => Just("\"quoted\"".to_owned()),
        1 => Just("it's".to_owned()),
        1 => Just("back\\slash".to_owned()),
        1 => Just("line\nbreak".to_owned()),
        1 => Just("```python\nx = {\"a\": [1, 2]}\n```".to_owned()),
        1 => Just("<tool".to_owned()),
        1 => Just("</thin".to_owned()),
        1 => Just("[TOOL".to_owned()),
        1 => Just("<|im_".to_owned()),
        1 => Just("＜tool_call＞".to_owned()),
        1 => Just("{\"name\"".to_owned()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(piece(), 1..6).prop_map(|p| p.join(" "))
}

/// A JSON value for one parameter schema.
fn value_for(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.is_empty() {
            return proptest::sample::select(options.clone()).boxed();
        }
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => (-1000i64..100_000).prop_map(Value::from).boxed(),
        Some("number") => (-1000i64..1000)
            .prop_map(|n| Value::from(n as f64 / 4.0))
            .boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        _ => text().prop_map(Value::from).boxed(),
    }
}

/// Arguments for `tool`: required parameters always, optional ones sometimes.
fn arguments_for(tool: &Tool) -> BoxedStrategy<Value> {
    let params: Vec<(String, Value, bool)> = tool
        .parameter_names()
        .map(|n| {
            (
                n.to_owned(),
                tool.parameter(n).cloned().unwrap_or(Value::Null),
                tool.is_required(n),
            )
        })
        .collect();
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = params
        .into_iter()
        .map(|(name, schema, required)| {
            let value = value_for(&schema).prop_map(move |v| (name.clone(), v));
            if required {
                value.prop_map(Some).boxed()
            } else {
                proptest::option::of(value).boxed()
            }
        })
        .collect();
    fields
        .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect::<Map<_, _>>()))
        .boxed()
}

fn call(tools: &[Tool]) -> BoxedStrategy<(String, Value)> {
    let per_tool: Vec<BoxedStrategy<(String, Value)>> = tools
        .iter()
        .map(|t| {
            let name = t.name().to_owned();
            arguments_for(t)
                .prop_map(move |a| (name.clone(), a))
                .boxed()
        })
        .collect();
    proptest::strategy::Union::new(per_tool).boxed()
}

fn message(tools: &[Tool]) -> BoxedStrategy<ChatMessage> {
    let calls = if tools.is_empty() {
        Just(Vec::new()).boxed()
    } else {
        proptest::collection::vec(call(tools), 0..=3).boxed()
    };
    (
        proptest::option::of(text()),
        proptest::option::of(text()),
        calls,
    )
        .prop_map(|(content, reasoning, calls)| {
            let mut m = ChatMessage::assistant();
            m.content = content.unwrap_or_default();
            m.reasoning_content = reasoning.unwrap_or_default();
            m.tool_calls = calls
                .into_iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    ToolCall::new(format!("c{i}x4k9Qz7"), name, args.to_string())
                })
                .collect();
            m
        })
        .boxed()
}

#[derive(Default, Debug)]
struct Counts {
    passed: Cell<usize>,
    skipped: Cell<usize>,
}

/// Runs the property for one template; `Err` is the shrunk failure as a fixture case.
fn run(
    template: &ChatTemplate,
    analysis: &Analysis,
    base: &ChatRequest,
    counts: &Counts,
) -> Result<(), String> {
    let config = Config {
        cases: 24,
        failure_persistence: None,
        max_shrink_iters: 200,
        ..Config::default()
    };
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(config, rng);
    runner
        .run(&message(&base.tools), |m| {
            match prepare(template, analysis, base, &m) {
                Err(_) => counts.skipped.set(counts.skipped.get() + 1),
                Ok((turn, expected)) => {
                    let request = parse_request(base, &m);
                    match check_turn(template, analysis, &request, &turn, &expected) {
                        RoundTrip::Failed(f) => {
                            return Err(TestCaseError::fail(f.explain(false)));
                        }
                        _ => counts.passed.set(counts.passed.get() + 1),
                    }
                }
            }
            Ok(())
        })
        .map_err(|e| match e {
            proptest::test_runner::TestError::Fail(reason, _) => reason.to_string(),
            other => other.to_string(),
        })
}

#[test]
fn round_trip_for_every_template() {
    let known: BTreeMap<&str, &str> = KNOWN
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split_once('\t').expect("template<TAB>reason"))
        .collect();
    let mut models: Vec<(String, Model, ChatRequest)> = Vec::new();
    let mut shared: Vec<(String, ChatTemplate, ChatRequest)> = Vec::new();
    let mut referenced = BTreeSet::new();
    let corpus = Corpus::open(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"))).unwrap();
    for dir in &corpus.models {
        let Ok(model) = Model::load(dir) else {
            continue;
        };
        if let TemplateSource::External(name) = &model.source {
            referenced.insert(name.clone());
        }
        let request = model.request(&Map::new()).unwrap();
        models.push((model.name.clone(), model, request));
    }
    if let Some(dir) = templates_dir().filter(|d| d.is_dir()) {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
            .collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if referenced.contains(&name) {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap();
            if let Ok(template) = ChatTemplate::new(name.clone(), source) {
                shared.push((name, template, default_request()));
            }
        }
    }
    let targets: Vec<(&str, &ChatTemplate, &ChatRequest)> = models
        .iter()
        .map(|(n, m, r)| (n.as_str(), m.template(), r))
        .chain(shared.iter().map(|(n, t, r)| (n.as_str(), t, r)))
        .collect();
    let mut failing = BTreeMap::new();
    let (mut passed, mut skipped) = (0, 0);
    for &(name, template, request) in &targets {
        let analysis = analyze_cached(template);
        let counts = Counts::default();
        if let Err(failure) = run(template, &analysis, request, &counts) {
            failing.insert(name.to_owned(), failure);
        }
        passed += counts.passed.get();
        skipped += counts.skipped.get();
    }
    eprintln!(
        "round-trip property: {} templates, {passed} messages parsed back equal, {skipped} not \
         renderable (skipped), {} templates failing ({} listed)",
        targets.len(),
        failing.len(),
        known.len()
    );
    let unlisted: Vec<String> = failing
        .iter()
        .filter(|(name, _)| !known.contains_key(name.as_str()))
        .map(|(name, failure)| format!("== {name}\n{failure}"))
        .collect();
    let names: BTreeSet<&str> = targets.iter().map(|t| t.0).collect();
    let fixed: Vec<&str> = known
        .keys()
        .filter(|k| names.contains(*k) && !failing.contains_key(**k))
        .copied()
        .collect();
    assert!(
        unlisted.is_empty() && fixed.is_empty(),
        "round-trip failures not in tests/properties_roundtrip_known.txt:\n{}\nlisted templates \
         that now pass (remove them): {fixed:?}",
        unlisted.join("\n")
    );
}
