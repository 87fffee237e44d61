//! The conformance pass rule for parsed messages, with a short readable diff.
//!
//! Two messages match when (the rule of the chat cases' README):
//! - `content` and `reasoning_content` are equal after trimming whitespace at both ends;
//! - they have the same number of tool calls and, in order, each call's `name` and `id` are equal
//!   exactly and its `arguments` are equal as JSON values (object key order ignored). Arguments
//!   that are not valid JSON on either side (a partial call cut mid-object) are compared as
//!   exact text.
//!
//! The role is not compared.

use std::fmt;

use super::chat_message::{ChatMessage, ToolCall};

/// Why two messages do not match: one entry per differing field, in field order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageDiff {
    mismatches: Vec<Mismatch>,
}

/// One differing field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The field path, e.g. `content` or `tool_calls[1].arguments`.
    pub field: String,
    /// The expected value (as compared: trimmed text, or the JSON text).
    pub expected: String,
    /// The actual value.
    pub actual: String,
    /// Whether the values are shown as they are rather than as quoted strings.
    verbatim: bool,
}

impl MessageDiff {
    /// The differing fields.
    pub fn mismatches(&self) -> &[Mismatch] {
        &self.mismatches
    }
}

/// Longest excerpt of a value shown in a diff, in characters, around the first difference.
const EXCERPT_CHARS: usize = 60;

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.verbatim {
            return write!(
                f,
                "{}: expected {}, got {}",
                self.field, self.expected, self.actual
            );
        }
        let at = first_difference(&self.expected, &self.actual);
        write!(
            f,
            "{}: expected {}, got {}",
            self.field,
            excerpt(&self.expected, at),
            excerpt(&self.actual, at)
        )
    }
}

impl fmt::Display for MessageDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, mismatch) in self.mismatches.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{mismatch}")?;
        }
        Ok(())
    }
}

impl std::error::Error for MessageDiff {}

/// Compares `actual` with `expected` under the conformance rule (see the module docs).
pub fn compare(expected: &ChatMessage, actual: &ChatMessage) -> Result<(), MessageDiff> {
    let mut mismatches = Vec::new();
    let mut text = |field: &str, e: &str, a: &str| {
        if e.trim() != a.trim() {
            mismatches.push(Mismatch {
                field: field.to_owned(),
                expected: e.trim().to_owned(),
                actual: a.trim().to_owned(),
                verbatim: false,
            });
        }
    };
    text("content", &expected.content, &actual.content);
    text(
        "reasoning_content",
        &expected.reasoning_content,
        &actual.reasoning_content,
    );
    if expected.tool_calls.len() != actual.tool_calls.len() {
        mismatches.push(Mismatch {
            field: "tool_calls.len()".to_owned(),
            expected: call_names(&expected.tool_calls),
            actual: call_names(&actual.tool_calls),
            verbatim: true,
        });
    }
    for (i, (e, a)) in expected
        .tool_calls
        .iter()
        .zip(&actual.tool_calls)
        .enumerate()
    {
        let mut exact = |field: &str, e: &str, a: &str| {
            if e != a {
                mismatches.push(Mismatch {
                    field: format!("tool_calls[{i}].{field}"),
                    expected: e.to_owned(),
                    actual: a.to_owned(),
                    verbatim: false,
                });
            }
        };
        exact("name", &e.name, &a.name);
        exact("id", &e.id, &a.id);
        if !arguments_equal(&e.arguments, &a.arguments) {
            exact("arguments", &e.arguments, &a.arguments);
        }
    }
    if mismatches.is_empty() {
        Ok(())
    } else {
        Err(MessageDiff { mismatches })
    }
}

/// Whether two argument texts are equal as JSON values, or as text when either is not JSON.
pub fn arguments_equal(expected: &str, actual: &str) -> bool {
    let parse = |s: &str| serde_json::from_str::<serde_json::Value>(s).ok();
    match (parse(expected), parse(actual)) {
        (Some(e), Some(a)) => e == a,
        _ => expected == actual,
    }
}

fn call_names(calls: &[ToolCall]) -> String {
    let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    format!("{} {names:?}", calls.len())
}

/// The char offset of the first difference between `a` and `b`.
fn first_difference(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// `value` quoted, cut to about [`EXCERPT_CHARS`] characters around char offset `at`.
fn excerpt(value: &str, at: usize) -> String {
    let total = value.chars().count();
    let start = at.saturating_sub(EXCERPT_CHARS / 2);
    let shown: String = value.chars().skip(start).take(EXCERPT_CHARS).collect();
    let prefix = if start > 0 { "…" } else { "" };
    let suffix = if start + EXCERPT_CHARS < total {
        "…"
    } else {
        ""
    };
    format!("{prefix}{shown:?}{suffix}")
}
