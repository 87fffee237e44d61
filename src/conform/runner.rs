//! The interface every case kind implements, and the helpers runners share.

use serde_json::Value;
use std::path::PathBuf;
use std::rc::Rc;

use crate::engine::Engine;

/// Settings shared by all runners.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Where the chat templates named by chat cases live (`--templates`); `None`: the default
    /// `shared/templates`.
    pub templates_dir: Option<PathBuf>,
    /// The engine chat cases run against (`--engine`); `None`: the generated parser. With an
    /// engine, the other kinds of vectors (chatparse's own analyzer helpers and response-
    /// template internals) are skipped.
    pub engine: Option<EngineRef>,
}

/// A shared engine handle.
#[derive(Clone)]
pub struct EngineRef(pub Rc<dyn Engine>);

impl EngineRef {
    /// The engine.
    pub fn get(&self) -> &dyn Engine {
        &*self.0
    }
}

impl std::fmt::Debug for EngineRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EngineRef({})", self.0.name())
    }
}

/// The result of running one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The case passed.
    Pass,
    /// The case failed; the message is a short, one-line diff.
    Fail(String),
    /// The case does not apply (counted as skipped, with this reason; never as passed).
    NotApplicable(&'static str),
}

impl Outcome {
    /// `Pass` when `ok`, else `Fail` with the message `why` builds.
    pub fn check(ok: bool, why: impl FnOnce() -> String) -> Outcome {
        if ok {
            Outcome::Pass
        } else {
            Outcome::Fail(why())
        }
    }
}

/// Runs the cases of one kind.
pub trait CaseRunner {
    /// Runs one case (a parsed JSONL line) and says whether it passed.
    fn run(&self, case: &Value, ctx: &Context) -> Outcome;
}

/// Reads the string field `name` of `case`, or explains why it cannot.
pub fn str_field<'a>(case: &'a Value, name: &str) -> Result<&'a str, Outcome> {
    case.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| Outcome::Fail(format!("malformed case: missing string field `{name}`")))
}
