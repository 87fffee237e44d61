//! The chat conformance ratchet: runs `shared/cases/llama-cpp-chat.jsonl` (one-shot parse and
//! the streaming rule) and compares the failures with `tests/chat_known_failures.txt`, a
//! committed list of `id<TAB>reason` lines. The test fails when a case outside the list fails
//! (a regression) or a listed case passes (tighten the list).

use std::collections::BTreeMap;

use chatparse::conform::{run_file, Context};
use chatparse::shared_data::shared_path_or_skip;

const KNOWN: &str = include_str!("chat_known_failures.txt");

#[test]
fn llama_cpp_chat_ratchet() {
    let Some(cases) = shared_path_or_skip("cases/llama-cpp-chat.jsonl", "llama_cpp_chat_ratchet")
    else {
        return;
    };
    let ctx = Context {
        templates_dir: cases.parent().map(|d| d.join("../templates")),
        ..Context::default()
    };
    let report = run_file(&cases, &ctx);
    let known: BTreeMap<&str, &str> = KNOWN
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split_once('\t').unwrap_or((l, "")))
        .collect();
    for (id, reason) in &known {
        assert!(
            !reason.trim().is_empty(),
            "known failure {id} has no reason"
        );
    }
    let failing: BTreeMap<&str, &str> = report
        .failures
        .iter()
        .map(|f| (f.location.as_str(), f.message.as_str()))
        .collect();
    let regressions: Vec<String> = failing
        .iter()
        .filter(|(id, _)| !known.contains_key(*id))
        .map(|(id, m)| format!("{id}: {m}"))
        .collect();
    let fixed: Vec<&str> = known
        .keys()
        .filter(|id| !failing.contains_key(*id))
        .copied()
        .collect();
    assert!(
        regressions.is_empty() && fixed.is_empty(),
        "{} passed, {} failed\nnew failures:\n{}\nlisted cases now passing (remove them from \
         tests/chat_known_failures.txt):\n{}",
        report.passed,
        report.failed(),
        regressions.join("\n"),
        fixed.join("\n")
    );
}
