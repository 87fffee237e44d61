//! Property: for every fixture case, streaming the output in any chunking gives the one-shot
//! parse, and the deltas are a valid stream (`check_stream` over the prefix parses).
//!
//! Chunkings: 1 byte (cuts every code point), the whole output in one chunk (several calls in
//! one chunk), every cut inside each marker the analysis knows (a marker split across chunks),
//! and random chunkings of 1..=24 bytes (proptest, deterministic seed; a failure is shrunk to
//! the smallest chunking). Cases listed in `fixtures/known_failures.txt` are skipped (counted):
//! their one-shot parse is already known wrong. A finished non-empty output never parses to an
//! empty message.

use std::path::Path;

mod stream_support;
use stream_support::{check, cuts_from_sizes, one_shot};

use chatparse::fixtures::{Case, Corpus, KnownFailures, Model};
use chatparse::generate::ChatParser;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// Cuts inside every occurrence of every marker: `[.., start + k, len]` for each k.
fn marker_cuts(output: &str, markers: &[String]) -> Vec<Vec<usize>> {
    let mut all = Vec::new();
    for marker in markers.iter().filter(|m| m.len() > 1) {
        for (start, _) in output.match_indices(marker.as_str()) {
            for k in 1..marker.len() {
                all.push(vec![start + k, output.len()]);
            }
        }
    }
    all
}

#[test]
fn streaming_equals_one_shot_for_every_fixture_case() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"));
    let corpus = Corpus::open(dir).unwrap();
    let known = KnownFailures::read(dir).unwrap();
    let (mut ran, mut skipped_known, mut skipped_missing) = (0, 0, 0);
    let mut failures = Vec::new();
    for model_dir in &corpus.models {
        let Ok(model) = Model::load(model_dir) else {
            skipped_missing += 1;
            continue;
        };
        for path in Corpus::cases(model_dir) {
            let case = Case::load(&path).unwrap();
            if known.reason(&model.name, &case.name).is_some() {
                skipped_known += 1;
                continue;
            }
            let request = model.request(&case.overrides()).unwrap();
            let parser = ChatParser::new(model.template(), model.analysis(), &request).unwrap();
            let (output, partial) = (case.output.as_str(), case.partial());
            let id = format!("{}/{}", model.name, case.name);
            ran += 1;
            let message = one_shot(&parser, output, partial);
            // (Unless the case expects an empty message: an output that is only a stop marker.)
            let expects_empty = matches!(case.expected(), Some(Ok(m)) if m.is_empty());
            if !partial && !output.trim().is_empty() && message.is_empty() && !expects_empty {
                failures.push(format!(
                    "{id}: a non-empty output parsed to an empty message"
                ));
                continue;
            }
            let mut fixed = vec![(1..=output.len()).collect::<Vec<_>>(), vec![output.len()]];
            fixed.extend(marker_cuts(output, parser.preserved_tokens()));
            if let Some(err) = fixed.iter().find_map(|cuts| {
                check(&parser, output, partial, cuts)
                    .err()
                    .map(|e| (cuts, e))
            }) {
                failures.push(format!("{id}: cuts {:?}: {}", err.0, err.1));
                continue;
            }
            let config = Config {
                cases: 16,
                failure_persistence: None,
                ..Config::default()
            };
            let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
            let mut runner = TestRunner::new_with_rng(config, rng);
            let strategy = proptest::collection::vec(1usize..=24, 1..12);
            let result = runner.run(&strategy, |sizes| {
                let cuts = cuts_from_sizes(output.len(), &sizes);
                check(&parser, output, partial, &cuts).map_err(TestCaseError::fail)
            });
            if let Err(e) = result {
                failures.push(format!("{id}: chunk sizes (shrunk) {e}"));
            }
        }
    }
    eprintln!(
        "streaming property: {ran} cases checked, {skipped_known} known failures skipped, \
         {skipped_missing} models without their template"
    );
    assert!(
        failures.is_empty(),
        "{} cases stream differently from their one-shot parse:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
