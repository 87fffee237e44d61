//! The conformance runner: runs recorded vector files (`shared/cases/*.jsonl`) against
//! chatparse and reports what fails.
//!
//! Input: JSONL files, one case per line. The kind of each case is told by its fields
//! ([`CaseKind::detect`]), and each kind has a [`CaseRunner`] ([`CaseKind::runner`]). Cases
//! that do not apply (llama.cpp analyses it does not use itself) are counted as skipped, with
//! the reason, never as passed. Output: a [`Report`]
//! with the pass count, one [`Failure`] per failing case (its id, or `file:line`, and a short
//! diff) and the skipped counts; [`Report::write_to`] prints it ending with `N passed, M failed`.
//! Malformed lines are failures, never panics.
//!
//! The `chatparse conform` subcommand and the tests share [`run_file`] / [`run_str`].
//!
//! ```
//! use chatparse::conform::{run_str, Context};
//! let jsonl = r#"{"a": "x<1>", "b": "x<2>", "prefix": "x", "left": "<1>", "right": "<2>", "suffix": ""}
//! {"fn": "after_common_suffix", "full": "<o>v</i></o>", "left": "1</i>", "right": "2</i>", "result": "</o>"}
//! not json"#;
//! let report = run_str("example.jsonl", jsonl, &Context::default());
//! assert_eq!((report.passed, report.failed()), (2, 1));
//! assert_eq!(report.failures[0].location, "example.jsonl:3");
//! ```
//!
//! To add a kind of vector: implement [`CaseRunner`] in a file of this module, detect it in
//! [`CaseKind::detect`] and return the runner from [`CaseKind::runner`].

pub mod analysis;
pub mod chat;
mod common_affix;
mod diff_split;
mod kind;
mod report;
mod response_template;
mod runner;
mod segments;
#[cfg(test)]
mod tests;

pub use chat::ChatRunner;
pub use common_affix::CommonAffixRunner;
pub use diff_split::DiffSplitRunner;
pub use kind::CaseKind;
pub use report::{escape, short_diff, Failure, Report};
pub use runner::{CaseRunner, Context, EngineRef, Outcome};
pub use segments::SegmentsRunner;

use serde_json::Value;
use std::path::Path;

/// Runs every case of the JSONL file at `path`. An unreadable file is reported as one failure.
pub fn run_file(path: &Path, ctx: &Context) -> Report {
    let name = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => run_str(&name, &text, ctx),
        Err(error) => {
            let mut report = Report::default();
            report.fail(name, format!("cannot read file: {error}"));
            report
        }
    }
}

/// Runs every case of `jsonl`, the contents of the file called `name` (used in locations).
/// Blank lines are ignored.
pub fn run_str(name: &str, jsonl: &str, ctx: &Context) -> Report {
    let mut report = Report::default();
    for (index, line) in jsonl.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line_location = format!("{name}:{}", index + 1);
        let case: Value = match serde_json::from_str(line) {
            Ok(case) => case,
            Err(error) => {
                report.fail(line_location, format!("malformed JSON: {error}"));
                continue;
            }
        };
        let location = match case.get("id").and_then(Value::as_str) {
            Some(id) => id.to_owned(),
            None => line_location,
        };
        let Some(kind) = CaseKind::detect(&case) else {
            report.fail(location, "unrecognised case: no known set of fields");
            continue;
        };
        if ctx.engine.is_some() && kind != CaseKind::Chat {
            *report
                .skipped
                .entry((kind, "not a parser case: engines run chat-template vectors"))
                .or_default() += 1;
            continue;
        }
        match kind.runner().run(&case, ctx) {
            Outcome::Pass => report.passed += 1,
            Outcome::Fail(message) => report.fail(location, message),
            Outcome::NotApplicable(why) => *report.skipped.entry((kind, why)).or_default() += 1,
        }
    }
    report
}
