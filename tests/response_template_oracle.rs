//! Differential testing of response templates against transformers itself.
//!
//! Generates random cases (`chatparse::response_template::case_gen`), has
//! `scripts/hf_response_oracle.py` record what transformers 5.23.0 does with each (load,
//! parse, events, streams in several chunkings), and runs every recorded case through
//! [`run_conformance_case`]. A case that differs only as a deliberate deviation of the README's
//! table allows (the oracle's `deviation` record, see [`with_deviation`]) is counted per row;
//! any other difference fails the test. The differing cases are written to
//! `target/hf-oracle-differences.jsonl` for inspection.
//!
//! Skipped (with a NOTICE) unless `CHATPARSE_HF_ORACLE=1`; then the oracle must be installed
//! (`pip install transformers==5.23.0`, no torch):
//!
//! ```text
//! CHATPARSE_HF_ORACLE=1 cargo test --release --test response_template_oracle -- --nocapture
//! ```
//!
//! `CHATPARSE_HF_ORACLE_CASES` (default 5000) and `CHATPARSE_HF_ORACLE_SEED` (default 1) choose
//! the draw; `CHATPARSE_PYTHON` the interpreter (default `python3`).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use chatparse::response_template::case_gen::generate_cases;
use chatparse::response_template::conformance::{
    deviation_rows, run_conformance_case, with_deviation,
};
use serde_json::Value;

const DRIVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/hf_response_oracle.py");

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs the driver over `cases`; returns the recorded cases.
fn record(python: &str, cases: Vec<Value>) -> Vec<Value> {
    let mut child = Command::new(python)
        .arg(DRIVER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the oracle driver");
    let mut stdin = child.stdin.take().expect("driver stdin");
    let writer = std::thread::spawn(move || {
        for case in cases {
            writeln!(stdin, "{case}").expect("write a case to the driver");
        }
    });
    let stdout = child.stdout.take().expect("driver stdout");
    let recorded: Vec<Value> = BufReader::new(stdout)
        .lines()
        .map(|l| serde_json::from_str(&l.expect("driver output")).expect("driver writes JSON"))
        .collect();
    writer.join().expect("writer thread");
    assert!(
        child.wait().expect("driver exit").success(),
        "the driver failed"
    );
    recorded
}

/// A short name for the kind of a difference, from the runner's description.
fn kind(case: &Value, diff: &str) -> String {
    let phase = |v: Option<&Value>| {
        v.and_then(|e| e.get("phase"))
            .and_then(Value::as_str)
            .unwrap_or("-")
            .to_owned()
    };
    let head = diff.split(':').next().unwrap_or("").trim();
    if let Some(rest) = diff.split("error in phase ").nth(1) {
        let got = rest.split_whitespace().next().unwrap_or("?");
        let want = rest.rsplit("expected phase ").next().unwrap_or("?");
        return format!("{head}: error in phase {got}, reference in phase {want}");
    }
    if diff.contains("unexpected error") {
        let got = diff
            .split("unexpected error: ")
            .nth(1)
            .and_then(|e| e.split_whitespace().next())
            .unwrap_or("?");
        return format!("{head}: {got} error, reference none");
    }
    if diff.starts_with("expected a") || diff.contains(": expected a") {
        return format!(
            "{head}: no error, reference error in phase {}",
            phase(case.get("expected_error"))
        );
    }
    if head.starts_with("stream") {
        let what = diff.split(' ').nth(1).unwrap_or("");
        return format!("stream: {}", what.trim_end_matches(':'));
    }
    head.to_owned()
}

#[test]
fn generated_cases_match_transformers() {
    if std::env::var_os("CHATPARSE_HF_ORACLE").is_none() {
        eprintln!(
            "NOTICE: skipping response_template_oracle: set CHATPARSE_HF_ORACLE=1 to run the \
             transformers oracle (pip install transformers==5.23.0; see the file docs)"
        );
        return;
    }
    let python = std::env::var("CHATPARSE_PYTHON").unwrap_or_else(|_| "python3".into());
    let check = Command::new(&python).arg(DRIVER).arg("--check").output();
    match check {
        Ok(out) if out.status.success() => {
            eprintln!("oracle: {}", String::from_utf8_lossy(&out.stdout).trim());
        }
        Ok(out) => panic!(
            "CHATPARSE_HF_ORACLE is set but the oracle is not usable: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => panic!("CHATPARSE_HF_ORACLE is set but {python} cannot run: {e}"),
    }
    let count = env_u64("CHATPARSE_HF_ORACLE_CASES", 5000);
    let seed = env_u64("CHATPARSE_HF_ORACLE_SEED", 1);
    let recorded = record(&python, generate_cases(seed, count).collect());
    assert_eq!(recorded.len() as u64, count, "one record per case");

    let mut agree = 0usize;
    let mut deviations: BTreeMap<String, usize> = BTreeMap::new();
    let mut kinds: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut differing = Vec::new();
    for case in &recorded {
        let id = case["id"].as_str().unwrap_or("?").to_owned();
        let Err(diff) = run_conformance_case(case) else {
            agree += 1;
            continue;
        };
        if let Some(adjusted) = with_deviation(case) {
            if run_conformance_case(&adjusted).is_ok() {
                for row in deviation_rows(case) {
                    *deviations.entry(row).or_default() += 1;
                }
                continue;
            }
        }
        kinds.entry(kind(case, &diff)).or_default().push(format!(
            "{id}: {}",
            diff.chars().take(300).collect::<String>()
        ));
        differing.push(case.to_string());
    }
    let out = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/hf-oracle-differences.jsonl"
    );
    std::fs::write(out, differing.join("\n") + "\n").expect("write the differences");
    println!("{count} generated cases (seed {seed}): {agree} agree with transformers");
    for (row, n) in &deviations {
        println!("  {n} differ only by the deliberate deviation '{row}'");
    }
    let total: usize = kinds.values().map(Vec::len).sum();
    println!("  {total} differ otherwise (written to {out}):");
    for (kind, ids) in &kinds {
        println!("    {:5}  {kind}", ids.len());
        for example in ids.iter().take(3) {
            println!("             e.g. {example}");
        }
    }
    assert_eq!(
        total, 0,
        "differences from transformers outside the deviation table"
    );
}
