//! Collecting outcomes and printing them: one line per failure, skipped kinds, totals.

use super::kind::CaseKind;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// How many characters of context [`short_diff`] shows around the first difference.
const CONTEXT_CHARS: usize = 24;

/// One failing case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The case id, or `file:line` when the case has none.
    pub location: String,
    /// A short, one-line description of the difference.
    pub message: String,
}

/// The outcome of running one or more vector files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed, including malformed lines, in file order.
    pub failures: Vec<Failure>,
    /// Cases not run, by kind and reason (no runner for the kind yet, or the case does not
    /// apply).
    pub skipped: BTreeMap<(CaseKind, &'static str), usize>,
}

impl Report {
    /// Number of failed cases.
    pub fn failed(&self) -> usize {
        self.failures.len()
    }

    /// Number of skipped cases (all kinds).
    pub fn skipped_total(&self) -> usize {
        self.skipped.values().sum()
    }

    /// Whether no case failed.
    pub fn is_success(&self) -> bool {
        self.failures.is_empty()
    }

    /// Records a failure at `location`.
    pub fn fail(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.failures.push(Failure {
            location: location.into(),
            message: message.into(),
        });
    }

    /// Adds another report's counts and failures to this one.
    pub fn merge(&mut self, other: Report) {
        self.passed += other.passed;
        self.failures.extend(other.failures);
        for (kind, count) in other.skipped {
            *self.skipped.entry(kind).or_default() += count;
        }
    }

    /// Writes one line per failure, one line per skipped kind, then `N passed, M failed`.
    pub fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        for failure in &self.failures {
            writeln!(out, "FAIL {}: {}", failure.location, failure.message)?;
        }
        for ((kind, why), count) in &self.skipped {
            writeln!(out, "skipped {count} {} cases: {why}", kind.name())?;
        }
        writeln!(out, "{} passed, {} failed", self.passed, self.failed())
    }
}

/// A one-line description of how `actual` differs from `expected`: the byte offset of the first
/// difference and both strings around it, JSON-escaped.
pub fn short_diff(expected: &str, actual: &str) -> String {
    let at = crate::diff::common_prefix_len(expected, actual);
    let start = floor_char_boundary(expected, at.saturating_sub(CONTEXT_CHARS));
    let lead = if start > 0 { "…" } else { "" };
    format!(
        "at byte {at}: expected {lead}{} got {lead}{}",
        escape(&expected[start..], 2 * CONTEXT_CHARS),
        escape(&actual[start..], 2 * CONTEXT_CHARS),
    )
}

/// `text` as a JSON string literal, cut after `max_chars` characters (marked with `…`).
pub fn escape(text: &str, max_chars: usize) -> String {
    let cut = text
        .char_indices()
        .nth(max_chars)
        .map_or(text.len(), |(at, _)| at);
    let quoted = serde_json::Value::from(&text[..cut]).to_string();
    if cut < text.len() {
        format!("{quoted}…")
    } else {
        quoted
    }
}

/// The largest char boundary of `text` not after `index`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    (0..=index.min(text.len()))
        .rev()
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(0)
}
