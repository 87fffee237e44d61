//! The generation property: texts produced from a request's grammar (random walks of its
//! rules, with schema-valid argument values) parse back with the PEG parser to calls whose
//! names and arguments equal the generated ones, so the grammar never allows what the parser
//! misreads. Over every fixture model's request (parallel calls on and off) and, when
//! `../shared` is present, every template with a tool format under the default tools.

mod grammar_support;

use std::sync::OnceLock;

use chatparse::analyze::analyze_cached;
use chatparse::fixtures::samples::default_request;
use chatparse::fixtures::{Corpus, Model};
use chatparse::generate::ChatParser;
use chatparse::grammar::sample::sample;
use chatparse::grammar::{constraint, Constraint};
use chatparse::template::ChatTemplate;
use proptest::prelude::*;

struct Subject {
    id: String,
    parser: ChatParser,
    constraint: Constraint,
}

fn subjects() -> &'static Vec<Subject> {
    static SUBJECTS: OnceLock<Vec<Subject>> = OnceLock::new();
    SUBJECTS.get_or_init(|| {
        let mut out = Vec::new();
        let mut add = |id: String, parser: ChatParser| {
            if let Ok(constraint) = constraint(&parser) {
                out.push(Subject {
                    id,
                    parser,
                    constraint,
                });
            }
        };
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        for dir in Corpus::open(&corpus).map(|c| c.models).unwrap_or_default() {
            let Ok(model) = Model::load(&dir) else {
                println!("NOTICE: skipping {} (template not found)", dir.display());
                continue;
            };
            let Ok(mut request) = model.request(&Default::default()) else {
                continue;
            };
            if request.tools.is_empty() {
                continue;
            }
            for parallel in [true, false] {
                request.parallel_tool_calls = parallel;
                if let Ok(parser) = ChatParser::new(model.template(), model.analysis(), &request) {
                    add(
                        format!("fixtures/{} parallel={parallel}", model.name),
                        parser,
                    );
                }
            }
        }
        match chatparse::shared_data::shared_path_or_skip("templates", "grammar_roundtrip") {
            None => {}
            Some(dir) => {
                let mut files: Vec<_> = std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
                    .collect();
                files.sort();
                for path in files {
                    let Ok(source) = std::fs::read_to_string(&path) else {
                        continue;
                    };
                    let name = path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let Ok(template) = ChatTemplate::new(name.clone(), source) else {
                        continue;
                    };
                    let analysis = analyze_cached(&template);
                    if analysis.tools.is_none() {
                        continue;
                    }
                    let mut request = default_request();
                    request.parallel_tool_calls = analysis.capabilities.parallel_tool_calls;
                    if let Ok(parser) = ChatParser::new(&template, &analysis, &request) {
                        add(format!("templates/{name}"), parser);
                    }
                }
            }
        }
        out
    })
}

/// Checks one generated text; `Err` says what differs.
fn check(subject: &Subject, seed: u64) -> Result<(), String> {
    let generated = sample(&subject.constraint.rules, seed);
    // A prompt that opened the reasoning: the model closes it before the calls.
    let mut output = String::new();
    if subject.parser.options().reasoning_open {
        output.push_str(subject.parser.format().reasoning.end.trim());
        output.push('\n');
    }
    output.push_str(&generated.text);
    let parsed = subject.parser.parse(&output);
    let calls = &parsed.message.tool_calls;
    let explain = |why: String| {
        format!(
            "{} seed {seed}: {why}\n--- text ---\n{output}\n--- generated ---\n{:?}\n--- parsed ---\n{:?}",
            subject.id, generated.calls, parsed.message
        )
    };
    if calls.len() != generated.calls.len() {
        return Err(explain(format!(
            "{} calls parsed, {} generated",
            calls.len(),
            generated.calls.len()
        )));
    }
    for (got, want) in calls.iter().zip(&generated.calls) {
        if got.name != want.name {
            return Err(explain(format!("name {} != {}", got.name, want.name)));
        }
        let args: serde_json::Value = serde_json::from_str(&got.arguments)
            .map_err(|e| explain(format!("arguments not JSON: {e}")))?;
        if !json_equal(&args, &want.arguments) {
            return Err(explain(format!("arguments {args} != {}", want.arguments)));
        }
    }
    Ok(())
}

/// JSON equality with numbers compared by value (`1.0` and `1` are equal).
fn json_equal(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn there_are_subjects() {
    let n = subjects().len();
    println!("{n} grammars under the round-trip property");
    assert!(n > 0);
}

/// The committed known failures: subject id to reason.
fn known() -> Vec<(String, String)> {
    include_str!("grammar_roundtrip_known_failures.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t'))
        .map(|(id, why)| (id.to_owned(), why.to_owned()))
        .collect()
}

fn is_known(id: &str) -> bool {
    known().iter().any(|(k, _)| k == id)
}

proptest! {
    // A fixed seed: CI runs the same cases every time (a failure is reproducible).
    #![proptest_config(ProptestConfig {
        cases: 512,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_c4a7),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Subjects not listed as known failures, picked at random, with random seeds.
    #[test]
    fn generated_calls_parse_back_equal(pick in any::<prop::sample::Index>(), seed in any::<u64>()) {
        let subjects: Vec<&Subject> = subjects().iter().filter(|s| !is_known(&s.id)).collect();
        prop_assume!(!subjects.is_empty());
        let subject = subjects[pick.index(subjects.len())];
        if let Err(e) = check(subject, seed) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// How many seeds a listed subject is tried on before it counts as round-tripping.
const FAILURE_SEARCH: u64 = 1024;

/// Every subject on fixed seeds: unlisted ones must round-trip on 24, listed ones must still
/// fail within [`FAILURE_SEARCH`] (the ratchet).
#[test]
fn every_grammar_round_trips_on_fixed_seeds() {
    let mut problems = Vec::new();
    let (mut passed, mut known_failing) = (0, 0);
    for subject in subjects() {
        // A listed subject may fail only on rarer draws: look for its failure further.
        let known = is_known(&subject.id);
        let seeds = if known { 0..FAILURE_SEARCH } else { 0..24 };
        let failure = seeds
            .into_iter()
            .find_map(|seed| check(subject, seed).err());
        match (failure, known) {
            (None, false) => passed += 1,
            (Some(_), true) => known_failing += 1,
            (Some(e), false) => problems.push(e),
            (None, true) => problems.push(format!(
                "{} is listed as a known failure but round-trips: unlist it",
                subject.id
            )),
        }
    }
    println!(
        "{passed} grammars round-trip on 24 seeds each; {known_failing} known failures (each fails within {FAILURE_SEARCH} seeds)"
    );
    assert!(passed > 0);
    assert!(
        problems.is_empty(),
        "{} problems:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// Where the template writes containers as elements, the grammar writes them so too (besides
/// JSON): some sample of each such fixture holds an array item element, and (by the test
/// above) parses back to the arguments it was drawn with.
#[test]
fn element_formats_sample_elements() {
    let mut checked = 0;
    for subject in subjects() {
        let Some(e) = subject
            .parser
            .format()
            .tools
            .as_ref()
            .and_then(|t| t.arguments.element_values.clone())
        else {
            continue;
        };
        let item = format!("{}{}{}", e.open.trim(), e.item, e.name_value.trim());
        let written = (0..256).any(|seed| {
            sample(&subject.constraint.rules, seed).text.contains(&item)
                && check(subject, seed).is_ok()
        });
        assert!(
            written,
            "{}: no sample writes an item element «{item}»",
            subject.id
        );
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} fixtures write elements");
}
