//! Runner for segmentation vectors `{input, segments: [{kind, value}]}`.

use super::report::short_diff;
use super::runner::{str_field, CaseRunner, Context, Outcome};
use crate::diff::segments;
use serde_json::Value;

/// Compares [`segments`] with the recorded segmentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct SegmentsRunner;

impl CaseRunner for SegmentsRunner {
    fn run(&self, case: &Value, _ctx: &Context) -> Outcome {
        match run(case) {
            Ok(outcome) | Err(outcome) => outcome,
        }
    }
}

fn run(case: &Value) -> Result<Outcome, Outcome> {
    let input = str_field(case, "input")?;
    let expected = case
        .get("segments")
        .and_then(Value::as_array)
        .ok_or_else(|| Outcome::Fail("malformed case: `segments` is not an array".into()))?;
    let actual: Vec<_> = segments(input).collect();
    for (index, (want, got)) in expected.iter().zip(&actual).enumerate() {
        let kind = str_field(want, "kind")?;
        let value = str_field(want, "value")?;
        if kind != got.kind.as_str() || value != got.text {
            return Ok(Outcome::Fail(format!(
                "segment {index}: expected {kind} {}, got {} {}",
                short_diff(value, got.text),
                got.kind.as_str(),
                crate::conform::report::escape(got.text, 40),
            )));
        }
    }
    Ok(Outcome::check(expected.len() == actual.len(), || {
        format!("expected {} segments, got {}", expected.len(), actual.len())
    }))
}
