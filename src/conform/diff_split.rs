//! Runner for diff-split vectors `{a, b, prefix, left, right, suffix}`.

use super::report::short_diff;
use super::runner::{str_field, CaseRunner, Context, Outcome};
use crate::diff::{check_split, diff_split};
use serde_json::Value;

/// Compares [`diff_split`] with the recorded split. Vectors marked `"quirk"` record a split
/// that breaks `prefix + left + suffix == a`; for those the split must satisfy
/// [`check_split`] instead.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiffSplitRunner;

impl CaseRunner for DiffSplitRunner {
    fn run(&self, case: &Value, _ctx: &Context) -> Outcome {
        run(case).unwrap_or_else(|malformed| malformed)
    }
}

fn run(case: &Value) -> Result<Outcome, Outcome> {
    let a = str_field(case, "a")?;
    let b = str_field(case, "b")?;
    let split = diff_split(a, b);
    if case.get("quirk").is_some() {
        return Ok(match check_split(a, b, &split) {
            Ok(()) => Outcome::Pass,
            Err(why) => Outcome::Fail(format!("quirk case: {why}")),
        });
    }
    let actual = [
        ("prefix", split.prefix),
        ("left", split.left),
        ("right", split.right),
        ("suffix", split.suffix),
    ];
    for (field, got) in actual {
        let expected = str_field(case, field)?;
        if expected != got {
            return Ok(Outcome::Fail(format!(
                "{field}: {}",
                short_diff(expected, got)
            )));
        }
    }
    Ok(Outcome::Pass)
}
