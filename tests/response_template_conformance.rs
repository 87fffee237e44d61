//! Runs every vector of `shared/cases/hf-response-templates.jsonl` through
//! `run_conformance_case`, with a ratchet: `tests/response_template_known_failures.txt` lists
//! the ids expected to fail (one per line, `id<TAB>reason`). The test fails when a case outside
//! the list fails, or a listed case passes.

use std::collections::BTreeMap;

use chatparse::response_template::conformance::run_conformance_case;
use chatparse::shared_data::shared_path_or_skip;

#[test]
fn hf_response_template_vectors() {
    let Some(path) = shared_path_or_skip(
        "cases/hf-response-templates.jsonl",
        "hf_response_template_vectors",
    ) else {
        return;
    };
    let known: BTreeMap<String, String> = include_str!("response_template_known_failures.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, reason) = l.split_once('\t').unwrap_or((l, ""));
            (id.trim().to_owned(), reason.trim().to_owned())
        })
        .collect();
    let text = std::fs::read_to_string(&path).expect("read vectors");
    let (mut passed, mut failed) = (0, 0);
    let mut problems = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: serde_json::Value = serde_json::from_str(line).expect("vector is JSON");
        let id = case["id"].as_str().unwrap_or("?").to_owned();
        let result = run_conformance_case(&case);
        match (&result, known.contains_key(&id)) {
            (Ok(()), false) => passed += 1,
            (Err(diff), true) => {
                failed += 1;
                println!("known failure {id}: {diff}");
            }
            (Ok(()), true) => {
                passed += 1;
                problems.push(format!("{id}: listed as a known failure but passes now"));
            }
            (Err(diff), false) => {
                failed += 1;
                problems.push(format!("{id}: {diff}"));
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    assert!(
        problems.is_empty(),
        "conformance ratchet broken:\n{}",
        problems.join("\n")
    );
}
