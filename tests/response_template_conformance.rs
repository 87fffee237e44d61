//! Conformance ratchets for response templates, run through `run_conformance_case`:
//!
//! - every vector of `shared/cases/hf-response-templates.jsonl`, with the known failures in
//!   `tests/response_template_known_failures.txt`;
//! - `tests/response_template_oracle_cases.jsonl`: cases the transformers oracle
//!   (`scripts/hf_response_oracle.py`, see `tests/response_template_oracle.rs`) recorded where
//!   chatparse differed from transformers 5.23.0, with the known failures in
//!   `tests/response_template_oracle_known.txt`: deliberate deviations of the README's table,
//!   each of which must pass the case's recorded `deviation` (what transformers does with the
//!   deviation applied).
//!
//! Known-failure lists are `id<TAB>reason` lines. A test fails when a case outside its list
//! fails, or a listed case passes.
//!
//! The oracle cases are the differences the oracle found over 5,000 cases of
//! `chatparse response-cases --seed 1` before the fixes (at commit e25b95d; the shortest ten of
//! each kind of difference, `found/seed1/...`; the `ops` cases it found once the generator
//! drew them, `found/seed1-ops/...`; and what later seeds found, `found/seed3/...`,
//! `found/seed7-ops/...`), and examples of each deliberate deviation found afterwards
//! (`deviation/<rows>/...`), recorded with
//! `scripts/hf_response_oracle.py`. Each case's `source` names where it came from and, for
//! `found/` cases, what chatparse did then.

use std::collections::BTreeMap;

use chatparse::response_template::conformance::{run_conformance_case, with_deviation};
use chatparse::shared_data::shared_path_or_skip;
use serde_json::Value;

fn known_list(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, reason) = l.split_once('\t').unwrap_or((l, ""));
            (id.trim().to_owned(), reason.trim().to_owned())
        })
        .collect()
}

/// Runs every case of `cases` against the known failures; returns the broken promises.
/// With `deviations`, a listed case must also pass its recorded deviation.
fn ratchet(cases: &str, known: &BTreeMap<String, String>, deviations: bool) -> Vec<String> {
    let (mut passed, mut failed) = (0, 0);
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    for line in cases.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).expect("vector is JSON");
        let id = case["id"].as_str().unwrap_or("?").to_owned();
        seen.push(id.clone());
        let result = run_conformance_case(&case);
        match (&result, known.get(&id)) {
            (Ok(()), None) => passed += 1,
            (Err(diff), Some(reason)) => {
                failed += 1;
                println!("known failure {id} ({reason}): {diff}");
                if deviations {
                    match with_deviation(&case).map(|c| run_conformance_case(&c)) {
                        Some(Ok(())) => {}
                        Some(Err(diff)) => problems.push(format!(
                            "{id}: listed as a deviation but differs from the deviation's record: \
                             {diff}"
                        )),
                        None => problems.push(format!("{id}: listed, but has no deviation record")),
                    }
                }
            }
            (Ok(()), Some(_)) => {
                passed += 1;
                problems.push(format!("{id}: listed as a known failure but passes now"));
            }
            (Err(diff), None) => {
                failed += 1;
                problems.push(format!("{id}: {diff}"));
            }
        }
    }
    for id in known.keys().filter(|id| !seen.contains(id)) {
        problems.push(format!(
            "{id}: listed as a known failure but not in the file"
        ));
    }
    println!("{passed} passed, {failed} failed");
    problems
}

#[test]
fn hf_response_template_vectors() {
    let Some(path) = shared_path_or_skip(
        "cases/hf-response-templates.jsonl",
        "hf_response_template_vectors",
    ) else {
        return;
    };
    let known = known_list(include_str!("response_template_known_failures.txt"));
    let text = std::fs::read_to_string(&path).expect("read vectors");
    let problems = ratchet(&text, &known, false);
    assert!(
        problems.is_empty(),
        "conformance ratchet broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn oracle_differences() {
    let known = known_list(include_str!("response_template_oracle_known.txt"));
    let problems = ratchet(
        include_str!("response_template_oracle_cases.jsonl"),
        &known,
        true,
    );
    assert!(
        problems.is_empty(),
        "oracle ratchet broken:\n{}",
        problems.join("\n")
    );
}
