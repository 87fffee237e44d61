//! Runner for Hugging Face response-template vectors (`{kind, template, ...}` and the
//! schema-coercion units): delegates to [`crate::response_template::conformance`].

use super::runner::{CaseRunner, Context, Outcome};
use crate::response_template::conformance::run_conformance_case;
use serde_json::Value;

/// Runs one response-template vector through the response-template engine.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponseTemplateRunner;

impl CaseRunner for ResponseTemplateRunner {
    fn run(&self, case: &Value, _ctx: &Context) -> Outcome {
        match run_conformance_case(case) {
            Ok(()) => Outcome::Pass,
            Err(diff) => Outcome::Fail(diff),
        }
    }
}
