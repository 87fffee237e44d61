//! Runs the recorded helper vectors from `shared/cases` through the conformance runner (the
//! same code as `chatparse conform`) and pins the pass counts.

use chatparse::conform::{run_file, Context};
use chatparse::shared_data::shared_path_or_skip;

/// Runs one vector file and checks that every case passes and how many there are.
fn check(file: &str, expected_passed: usize) {
    let Some(path) = shared_path_or_skip(&format!("cases/{file}"), file) else {
        return;
    };
    let report = run_file(&path, &Context::default());
    let mut printed = Vec::new();
    report.write_to(&mut printed).unwrap();
    let printed = String::from_utf8(printed).unwrap();
    assert!(report.is_success(), "{file}:\n{printed}");
    assert_eq!(report.skipped_total(), 0, "{file}:\n{printed}");
    assert_eq!(report.passed, expected_passed, "{file}:\n{printed}");
    assert!(printed.ends_with(&format!("{expected_passed} passed, 0 failed\n")));
}

#[test]
fn diff_split_vectors() {
    // 457 exact matches plus the 2 `quirk` vectors, which pass by the split contract.
    check("llama-cpp-diff-split.jsonl", 459);
}

#[test]
fn segments_vectors() {
    check("llama-cpp-segments.jsonl", 549);
}

#[test]
fn common_affix_vectors() {
    check("llama-cpp-common-affix.jsonl", 20);
}
