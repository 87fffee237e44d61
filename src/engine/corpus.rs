//! Running a fixture corpus against engines: every case of every model folder, one shot and
//! streamed in the standard chunkings plus three seeded random ones, under the checks of
//! [`check`](super::check); then the committed `stream` fuzz regressions. The result, a
//! [`Comparison`], is what `chatparse check --engine ...` prints and writes
//! ([`crate::report`]).
//!
//! `fixtures/known_failures.txt` describes the built-in engine: a listed case counts as failed
//! like any other, and is marked known only for the built-in engine `chatparse`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::fixtures::case::Case;
use crate::fixtures::corpus::Corpus;
use crate::fixtures::differential::RESPONSE_TEMPLATE;
use crate::fixtures::expect::to_value;
use crate::fixtures::known::KnownFailures;
use crate::fixtures::manifest::{templates_dir, LoadError, Model, TemplateSource};
use crate::message::ChatMessage;

use super::check::{check_streams, judge_one_shot, one_shot};
use super::chunking::{random, seed_of, standard};
use super::regressions::{replay, RegressionResult};
use super::{builtin, ChatSpec, Engine, EngineCase, EngineError};

/// How many seeded random chunkings each case gets (besides the standard ones).
pub const RANDOM_CHUNKINGS: usize = 3;

/// Counts for one engine over a set of cases.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Cases run.
    pub cases: usize,
    /// Cases whose one-shot message equals the expectation.
    pub one_shot: usize,
    /// Cases every chunking of which passes the streaming checks.
    pub streamed: usize,
    /// Cases that pass both.
    pub passed: usize,
    /// Cases where some chunking retracted streamed text.
    pub retractions: usize,
    /// Cases where the engine reported an error or broke the protocol.
    pub errors: usize,
    /// Cases where the engine did not answer in time.
    pub timeouts: usize,
    /// Cases the engine has no parser for.
    pub unsupported: usize,
}

impl Totals {
    fn add(&mut self, case: &CaseResult) {
        self.cases += 1;
        self.one_shot += usize::from(case.one_shot_passed);
        self.streamed += usize::from(case.streamed_passed);
        self.passed += usize::from(case.passed());
        self.retractions += usize::from(case.retraction.is_some());
        self.errors += usize::from(case.error.is_some());
        self.timeouts += usize::from(case.timeout);
        self.unsupported += usize::from(case.unsupported);
    }

    /// Adds `other` in.
    pub fn merge(&mut self, other: &Totals) {
        self.cases += other.cases;
        self.one_shot += other.one_shot;
        self.streamed += other.streamed;
        self.passed += other.passed;
        self.retractions += other.retractions;
        self.errors += other.errors;
        self.timeouts += other.timeouts;
        self.unsupported += other.unsupported;
    }
}

/// One case run by one engine.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CaseResult {
    /// The engine.
    pub engine: String,
    /// The model folder.
    pub model: String,
    /// The case name.
    pub case: String,
    /// The case's note.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// The output is cut off.
    pub partial: bool,
    /// The one-shot message equals the expectation.
    pub one_shot_passed: bool,
    /// Every chunking passes the streaming checks.
    pub streamed_passed: bool,
    /// Why the one-shot parse failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_shot_failure: Option<String>,
    /// The first streaming failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_failure: Option<String>,
    /// The first retraction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retraction: Option<String>,
    /// The engine error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The engine did not answer in time.
    pub timeout: bool,
    /// The engine has no parser for the model.
    pub unsupported: bool,
    /// Listed in `known_failures.txt` (built-in engine only): the reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known: Option<String>,
    /// The raw output.
    pub output: String,
    /// The expectation (flat shape), when the case failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// The engine's one-shot message (flat shape), when the case failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<Value>,
}

impl CaseResult {
    /// Whether the case passed one shot and streamed.
    pub fn passed(&self) -> bool {
        self.one_shot_passed && self.streamed_passed
    }
}

/// One model folder's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModelResults {
    /// The folder name.
    pub model: String,
    /// The manifest's `family` line.
    pub family: String,
    /// Cases in the folder.
    pub cases: usize,
    /// Per engine, in the comparison's engine order.
    pub totals: Vec<Totals>,
    /// Why the model did not run (skipped or broken folder).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// One engine's replay of the fuzz regressions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RegressionRun {
    /// The engine.
    pub engine: String,
    /// Every regression.
    pub results: Vec<RegressionResult>,
}

/// A corpus run against engines.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Comparison {
    /// The engine protocol version.
    pub protocol: u32,
    /// The corpus directory.
    pub corpus: String,
    /// The engines, in column order.
    pub engines: Vec<String>,
    /// Per model folder.
    pub models: Vec<ModelResults>,
    /// Every case run, per engine.
    pub cases: Vec<CaseResult>,
    /// The fuzz regressions, per engine (empty when none were replayed).
    pub regressions: Vec<RegressionRun>,
}

impl Comparison {
    /// Totals per engine over every model.
    pub fn totals(&self) -> Vec<Totals> {
        let mut totals = vec![Totals::default(); self.engines.len()];
        for model in &self.models {
            for (total, t) in totals.iter_mut().zip(&model.totals) {
                total.merge(t);
            }
        }
        totals
    }

    /// Failed cases not explained by the known-failures list (built-in engine), per engine.
    pub fn unexpected(&self) -> impl Iterator<Item = &CaseResult> {
        self.cases
            .iter()
            .filter(|c| !c.passed() && !c.unsupported && c.known.is_none())
    }
}

/// The template file of a model, when it is found.
pub fn template_path(model: &Model) -> Option<PathBuf> {
    match &model.source {
        TemplateSource::Local(path) => Some(path.clone()),
        TemplateSource::External(name) => templates_dir().map(|d| d.join(name)),
    }
}

/// The folder's `response_template.json`, as JSON, when it has a readable one.
pub fn response_template_value(dir: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join(RESPONSE_TEMPLATE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Runs every case of the corpus at `dir` against `engines`, then the `stream` fuzz
/// regressions of `regressions` (when given). `progress` is told each model as it starts.
pub fn compare_engines(
    dir: &Path,
    engines: &[Box<dyn Engine>],
    regressions: Option<&Path>,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<Comparison, String> {
    let corpus = Corpus::open(dir)?;
    let known = KnownFailures::read(dir)?;
    let mut comparison = Comparison {
        protocol: super::protocol::PROTOCOL_VERSION,
        corpus: dir.display().to_string(),
        engines: engines.iter().map(|e| e.name().to_owned()).collect(),
        ..Comparison::default()
    };
    for (i, model_dir) in corpus.models.iter().enumerate() {
        let name = model_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        progress(i, corpus.models.len(), &name);
        let cases = Corpus::cases(model_dir);
        let mut row = ModelResults {
            model: name.clone(),
            cases: cases.len(),
            totals: vec![Totals::default(); engines.len()],
            ..ModelResults::default()
        };
        let model = match Model::load(model_dir) {
            Ok(model) => model,
            Err(LoadError::Skip(why)) => {
                row.note = format!("skipped: {why}");
                comparison.models.push(row);
                continue;
            }
            Err(LoadError::Fail(why)) => {
                row.note = why;
                comparison.models.push(row);
                continue;
            }
        };
        row.family = model.manifest.family.clone();
        let path = template_path(&model);
        let response_template = response_template_value(model_dir);
        for case_path in &cases {
            let results = run_fixture_case(
                engines,
                &model,
                case_path,
                path.as_deref(),
                response_template.as_ref(),
            );
            for (k, mut result) in results.into_iter().enumerate() {
                if result.engine == builtin::NAME && !result.passed() {
                    result.known = known.reason(&name, &result.case).map(str::to_owned);
                }
                row.totals[k].add(&result);
                comparison.cases.push(result);
            }
        }
        comparison.models.push(row);
    }
    if let Some(regressions) = regressions {
        for engine in engines {
            comparison.regressions.push(RegressionRun {
                engine: engine.name().to_owned(),
                results: replay(engine.as_ref(), regressions, dir),
            });
        }
    }
    Ok(comparison)
}

/// Runs one case file against every engine (one result per engine, in order).
fn run_fixture_case(
    engines: &[Box<dyn Engine>],
    model: &Model,
    case_path: &Path,
    template_path: Option<&Path>,
    response_template: Option<&Value>,
) -> Vec<CaseResult> {
    let case_name = case_path
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = CaseResult {
        model: model.name.clone(),
        case: case_name.clone(),
        ..CaseResult::default()
    };
    let fail_all = |why: String| {
        engines
            .iter()
            .map(|e| CaseResult {
                engine: e.name().to_owned(),
                one_shot_failure: Some(why.clone()),
                ..base.clone()
            })
            .collect()
    };
    let case = match Case::load(case_path) {
        Ok(case) => case,
        Err(why) => return fail_all(why),
    };
    let expected = match case.expected() {
        Some(Ok(expected)) => expected,
        Some(Err(why)) => return fail_all(why),
        None => return fail_all(format!("no expectation in {}", case.spec_path().display())),
    };
    let request = match model.request(&case.overrides()) {
        Ok(request) => request,
        Err(why) => return fail_all(why),
    };
    let engine_case = EngineCase::new(
        format!("{}/{}", model.name, case.name),
        model.name.clone(),
        request,
    )
    .with_chat(ChatSpec {
        template: model.template(),
        analysis: model.analysis(),
        path: template_path,
    })
    .with_response_template(response_template.cloned());
    let base = CaseResult {
        note: case
            .spec
            .as_ref()
            .map(|s| s.note.clone())
            .unwrap_or_default(),
        partial: case.partial(),
        output: case.output.clone(),
        ..base
    };
    engines
        .iter()
        .map(|engine| {
            let mut result = CaseResult {
                engine: engine.name().to_owned(),
                ..base.clone()
            };
            run_engine_case(engine.as_ref(), &engine_case, &case, &expected, &mut result);
            if !result.passed() && !result.unsupported {
                result.expected = Some(to_value(&expected));
            }
            result
        })
        .collect()
}

fn record_error(result: &mut CaseResult, error: &EngineError) {
    match error {
        EngineError::Unsupported(_) => result.unsupported = true,
        EngineError::Timeout(_) => result.timeout = true,
        EngineError::Failed(_) | EngineError::Protocol(_) => {
            result.error.get_or_insert_with(|| error.to_string());
        }
    }
}

/// Runs one case with one engine into `result`.
fn run_engine_case(
    engine: &dyn Engine,
    engine_case: &EngineCase<'_>,
    case: &Case,
    expected: &ChatMessage,
    result: &mut CaseResult,
) {
    let partial = case.partial();
    let mut session = match engine.open(engine_case) {
        Ok(session) => session,
        Err(error) => {
            result.one_shot_failure = Some(error.to_string());
            record_error(result, &error);
            return;
        }
    };
    let answer = match one_shot(&mut *session, &case.output, partial) {
        Ok(answer) => {
            let verdict = judge_one_shot(expected, &answer, case.problem(), partial);
            result.one_shot_passed = verdict.is_ok();
            result.one_shot_failure = verdict.err();
            if !result.one_shot_passed {
                result.actual = Some(to_value(&answer.message));
            }
            Some(answer)
        }
        Err(error) => {
            result.one_shot_failure = Some(error.to_string());
            record_error(result, &error);
            if result.timeout || result.unsupported {
                return;
            }
            None
        }
    };
    let mut chunkings = standard(&case.output);
    chunkings.extend(random(
        &case.output,
        seed_of(&engine_case.id),
        RANDOM_CHUNKINGS,
    ));
    let verdict = check_streams(
        &mut *session,
        engine.byte_chunks(),
        &case.output,
        partial,
        &chunkings,
        Some(expected),
        answer.as_ref().map(|a| &a.message),
    );
    if let Some(error) = &verdict.error {
        record_error(result, error);
    }
    result.streamed_passed = verdict.failure.is_none();
    result.stream_failure = verdict.failure;
    result.retraction = verdict.retraction;
}
