//! Runner for `{fn: until_common_prefix | after_common_suffix, full, left, right, result}`.

use super::report::short_diff;
use super::runner::{str_field, CaseRunner, Context, Outcome};
use crate::diff::{after_common_suffix, until_common_prefix};
use serde_json::Value;

/// Runs the named helper and compares its result.
#[derive(Debug, Clone, Copy, Default)]
pub struct CommonAffixRunner;

impl CaseRunner for CommonAffixRunner {
    fn run(&self, case: &Value, _ctx: &Context) -> Outcome {
        run(case).unwrap_or_else(|malformed| malformed)
    }
}

fn run(case: &Value) -> Result<Outcome, Outcome> {
    let full = str_field(case, "full")?;
    let left = str_field(case, "left")?;
    let right = str_field(case, "right")?;
    let expected = str_field(case, "result")?;
    let actual = match str_field(case, "fn")? {
        "until_common_prefix" => until_common_prefix(full, left, right),
        "after_common_suffix" => after_common_suffix(full, left, right),
        other => return Ok(Outcome::Fail(format!("unknown fn `{other}`"))),
    };
    Ok(Outcome::check(expected == actual, || {
        short_diff(expected, actual)
    }))
}
