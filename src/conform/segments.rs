//! Runner for segmentation vectors `{input, segments: [{kind, value}]}`.

use super::report::escape;
use super::runner::{str_field, CaseRunner, Context, Outcome};
use crate::diff::segments;
use serde_json::Value;

/// How many characters of a differing segment a failure shows.
const SHOWN_CHARS: usize = 40;

/// Compares [`segments`] with the recorded segmentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct SegmentsRunner;

impl CaseRunner for SegmentsRunner {
    fn run(&self, case: &Value, _ctx: &Context) -> Outcome {
        run(case).unwrap_or_else(|malformed| malformed)
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
                escape(value, SHOWN_CHARS),
                got.kind.as_str(),
                escape(got.text, SHOWN_CHARS),
            )));
        }
    }
    Ok(Outcome::check(expected.len() == actual.len(), || {
        format!("expected {} segments, got {}", expected.len(), actual.len())
    }))
}
