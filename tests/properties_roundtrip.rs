//! Property: a random assistant message rendered by the template as the last turn and parsed
//! back gives the same message, wherever the template can render it.
//!
//! Messages: content and reasoning drawn from words, unicode, quotes, newlines, code blocks and
//! marker look-alikes; 0–3 tool calls with arguments drawn from the tool schemas (every JSON
//! type a schema declares: strings, negative and fractional numbers, booleans, null, nested
//! objects, arrays); thinking on or off. Templates: every fixture model (with its manifest's
//! request and tools) and every file of the templates directory (`CHATPARSE_TEMPLATES`, else
//! `../shared/templates`) and of `../shared/templates-extra` that no fixture references (with
//! the round-trip tools, whose names include dots and dashes; a NOTICE is printed for a
//! directory that is absent). Each output that parses back is also checked in its model-like
//! variants ([`check_variants`]: followed by its turn end, reasoning kept inline, streamed). The model output and the expected message are what the template
//! renders ([`chatparse::fixtures::turn`]); a message it cannot render as an output is skipped
//! and counted by reason. Where the analysis refuses a template's tool calls as broken
//! ([`chatparse::fixtures::template_check::refusal`]), a message with calls must parse into no
//! calls. Each rendered output, and prefixes of it read as finished and as unfinished outputs
//! (a generation stopped early), also streams in chunks to its one-shot parse, with nothing
//! retracted. A failure is shrunk and printed as a ready-to-commit fixture case.
//!
//! Ratchet: `tests/properties_roundtrip_known.txt` lists `template<TAB>reason` for templates
//! whose round trip is known to fail; the test fails when an unlisted template fails or a
//! listed one passes. The seed is fixed, so runs are reproducible.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chatparse::analyze::{analyze_cached, Analysis};
use chatparse::fixtures::manifest::templates_dir;
use chatparse::fixtures::round_trip::{check_turn, parse_request, RoundTrip};
use chatparse::fixtures::samples::{declarable, name_ids, round_trip_request};
use chatparse::fixtures::template_check::{jinja_files, refusal};
use chatparse::fixtures::turn::{RenderedTurn, TurnRenderer, Unrenderable};
use chatparse::fixtures::variants::check_variants;
use chatparse::fixtures::{Corpus, Model, TemplateSource};
use chatparse::generate::ChatParser;
use chatparse::message::{ChatMessage, ChatRequest, Tool, ToolCall};
use chatparse::shared_data::shared_path;
use chatparse::template::ChatTemplate;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use serde_json::{Map, Value};

mod stream_support;
use stream_support::{check, cuts_from_sizes};

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

/// A JSON value for one parameter schema: every JSON type the schema declares (a type list
/// such as `["string", "null"]` draws from each), nested objects and arrays from their
/// `properties` and `items`, negative and fractional numbers.
fn value_for(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.is_empty() {
            return proptest::sample::select(options.clone()).boxed();
        }
    }
    if let Some(types) = schema.get("type").and_then(Value::as_array) {
        let each: Vec<BoxedStrategy<Value>> = types
            .iter()
            .map(|t| {
                let mut one = schema.clone();
                one["type"] = t.clone();
                value_for(&one)
            })
            .collect();
        if !each.is_empty() {
            return proptest::strategy::Union::new(each).boxed();
        }
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => (-1000i64..100_000).prop_map(Value::from).boxed(),
        Some("number") => (-1000i64..1000)
            .prop_map(|n| Value::from(n as f64 / 4.0))
            .boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        Some("null") => Just(Value::Null).boxed(),
        Some("object") => object_for(schema),
        Some("array") => {
            let items = schema.get("items").cloned().unwrap_or(Value::Null);
            proptest::collection::vec(value_for(&items), 0..3)
                .prop_map(Value::Array)
                .boxed()
        }
        _ => text().prop_map(Value::from).boxed(),
    }
}

/// An object for an object schema: required properties always, the others sometimes.
fn object_for(schema: &Value) -> BoxedStrategy<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, property)| {
            let name = name.clone();
            let keep = required.contains(&name.as_str());
            let value = value_for(property).prop_map(move |v| (name.clone(), v));
            if keep {
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
            object_for(t.parameters())
                .prop_map(move |a| (name.clone(), a))
                .boxed()
        })
        .collect();
    proptest::strategy::Union::new(per_tool).boxed()
}

/// A message (content, reasoning, 0–3 calls, each part sometimes absent) and whether
/// thinking is on.
/// `naming_ids`: the template writes ids where names go (calls get ids naming them).
fn message(tools: &[Tool], naming_ids: bool) -> BoxedStrategy<(ChatMessage, bool)> {
    let calls = if tools.is_empty() {
        Just(Vec::new()).boxed()
    } else {
        proptest::collection::vec(call(tools), 0..=3).boxed()
    };
    (
        proptest::option::of(text()),
        proptest::option::of(text()),
        calls,
        any::<bool>(),
    )
        .prop_map(move |(content, reasoning, calls, thinking)| {
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
            if naming_ids {
                name_ids(&mut m);
            }
            (m, thinking)
        })
        .boxed()
}

#[derive(Default, Debug)]
struct Counts {
    passed: Cell<usize>,
    skipped: RefCell<BTreeMap<String, usize>>,
}

/// Runs the property for one template; `Err` is the shrunk failure as a fixture case.
/// `listed`: the template is in the known list; its failure is not shrunk (only whether it
/// fails matters).
fn run(
    template: &ChatTemplate,
    analysis: &Analysis,
    base: &ChatRequest,
    counts: &Counts,
    listed: bool,
) -> Result<(), String> {
    let config = Config {
        cases: 24,
        failure_persistence: None,
        max_shrink_iters: if listed { 0 } else { 200 },
        ..Config::default()
    };
    let naming_ids = analysis.tools.as_ref().is_some_and(|t| t.name_in_id);
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let bases = [false, true].map(|thinking| ChatRequest {
        enable_thinking: thinking,
        ..base.clone()
    });
    let renderers = bases
        .each_ref()
        .map(|base| TurnRenderer::new(template, analysis, base));
    runner
        .run(&message(&base.tools, naming_ids), |(m, thinking)| {
            let base = &bases[usize::from(thinking)];
            match renderers[usize::from(thinking)].render(&m) {
                Err(Unrenderable(why)) => {
                    *counts.skipped.borrow_mut().entry(why).or_default() += 1;
                }
                Ok(RenderedTurn {
                    output: turn,
                    expected,
                    ..
                }) => {
                    let request = parse_request(base, &expected);
                    if refusal(analysis).is_some() && !expected.tool_calls.is_empty() {
                        // A refused template's calls stay text: never parsed into calls.
                        let parser = ChatParser::new(template, analysis, &request)
                            .map_err(|e| TestCaseError::fail(e.to_string()))?;
                        let calls = parser.parse(&turn).message.tool_calls;
                        if !calls.is_empty() {
                            return Err(TestCaseError::fail(format!(
                                "the analysis refuses the tool calls, yet {turn:?} parsed into \
                                 {calls:?}"
                            )));
                        }
                        counts.passed.set(counts.passed.get() + 1);
                        return Ok(());
                    }
                    match check_turn(template, analysis, &request, &turn, &expected) {
                        RoundTrip::Failed(f) => {
                            return Err(TestCaseError::fail(format!(
                                "(enable_thinking {thinking}) {}",
                                f.explain(false)
                            )));
                        }
                        _ => counts.passed.set(counts.passed.get() + 1),
                    }
                    if let Some(v) = check_variants(template, analysis, &request, &turn, &expected)
                        .into_iter()
                        .next()
                    {
                        return Err(TestCaseError::fail(format!(
                            "(enable_thinking {thinking}) {turn:?} [{}]: {}",
                            v.variant, v.reason
                        )));
                    }
                    let parser = ChatParser::new(template, analysis, &request)
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                    for (output, partial) in stream_inputs(&turn) {
                        let cuts = cuts_from_sizes(output.len(), &[3, 1, 7, 2, 11, 5]);
                        check(&parser, output, partial, &cuts).map_err(|e| {
                            TestCaseError::fail(format!(
                                "(enable_thinking {thinking}) streaming {output:?} \
                                 (partial: {partial}): {e}"
                            ))
                        })?;
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

/// What is streamed of a rendered output: the output, and its first half and five sixths read
/// as finished (a generation stopped early: a reasoning block or a call left open) and as
/// unfinished outputs.
fn stream_inputs(output: &str) -> Vec<(&str, bool)> {
    let mut inputs = vec![(output, false)];
    for cut in [output.len() / 2, output.len() * 5 / 6] {
        let cut = (0..=cut)
            .rev()
            .find(|&c| output.is_char_boundary(c))
            .unwrap_or(0);
        if cut > 0 && cut < output.len() {
            inputs.extend([(&output[..cut], false), (&output[..cut], true)]);
        }
    }
    inputs
}

/// The `*.jinja` files of `dir` no fixture references, with the round-trip request (the
/// tools the template can declare).
fn templates_in(
    dir: &Path,
    referenced: &BTreeSet<String>,
) -> Vec<(String, ChatTemplate, ChatRequest)> {
    let mut out = Vec::new();
    for path in jinja_files(dir).unwrap() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if referenced.contains(&name) {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        if let Ok(template) = ChatTemplate::new(name.clone(), source) {
            let (request, _) = declarable(&template, &round_trip_request(false));
            out.push((name, template, request));
        }
    }
    out
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
    match templates_dir().filter(|d| d.is_dir()) {
        Some(dir) => shared.extend(templates_in(&dir, &referenced)),
        None => eprintln!(
            "NOTICE: round-trip property: the templates directory is absent (set \
             CHATPARSE_TEMPLATES or place shared/ beside the checkout); its templates are skipped"
        ),
    }
    match shared_path("templates-extra") {
        Some(dir) => shared.extend(templates_in(&dir, &referenced)),
        None => eprintln!(
            "NOTICE: round-trip property: shared/templates-extra is absent; its templates are \
             skipped"
        ),
    }
    let targets: Vec<(&str, &ChatTemplate, &ChatRequest)> = models
        .iter()
        .map(|(n, m, r)| (n.as_str(), m.template(), r))
        .chain(shared.iter().map(|(n, t, r)| (n.as_str(), t, r)))
        .collect();
    let mut failing = BTreeMap::new();
    let mut passed = 0;
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    for &(name, template, request) in &targets {
        let analysis = analyze_cached(template);
        let counts = Counts::default();
        let listed = known.contains_key(name);
        if let Err(failure) = run(template, &analysis, request, &counts, listed) {
            let unsupported: Vec<String> = analysis
                .unsupported
                .iter()
                .map(|u| format!("{:?}: {}", u.part, u.reason))
                .collect();
            let failure = if unsupported.is_empty() {
                failure
            } else {
                format!("analysis unsupported: {unsupported:?}\n{failure}")
            };
            failing.insert(name.to_owned(), failure);
        }
        passed += counts.passed.get();
        for (why, n) in counts.skipped.into_inner() {
            *skipped.entry(why).or_default() += n;
        }
    }
    eprintln!(
        "round-trip property: {} templates, {passed} messages parsed back equal, {} not \
         renderable (skipped), {} templates failing ({} listed)",
        targets.len(),
        skipped.values().sum::<usize>(),
        failing.len(),
        known.len()
    );
    for (why, n) in &skipped {
        eprintln!("  skipped ×{n}: {why}");
    }
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
