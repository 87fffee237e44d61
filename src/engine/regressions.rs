//! The committed fuzz regressions of the `stream` target (`tests/regressions/stream/`),
//! replayed against any engine.
//!
//! Each file is one input of the target: `[fixture][n][c1 .. cn][output ...]` (see
//! `fuzz/fuzz_targets/common/stream.rs`): byte 0 picks one of [`STREAM_FIXTURES`], then `n`
//! (mod 16) chunk lengths (repeating; each at least 1/128 of the output), then the output
//! (UTF-8, invalid sequences replaced). Against an engine a regression passes when the engine
//! answers (no error, no timeout) and the stream, in those chunks, passes the streaming checks
//! with the engine's own one-shot parse as the expectation: the streamed message equals the
//! one-shot one and nothing streamed is retracted.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::fixtures::manifest::{LoadError, Model};
use crate::message::ChatRequest;

use super::check::{check_run, one_shot, panic_text};
use super::chunking::{to_char_boundaries, Chunking};
use super::{ChatSpec, Engine, EngineCase, EngineError};

/// The fixtures the `stream` fuzz target picks from, in its order (the folders embedded by
/// `fuzz/fuzz_targets/common/stream.rs`; a test checks both lists agree).
pub const STREAM_FIXTURES: [&str; 6] = [
    "answer-wrapped",
    "call-id-first",
    "call-id-last",
    "pydict-calls",
    "qwen3",
    "r1-style",
];

/// A decoded regression input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInput {
    /// The fixture folder name.
    pub fixture: &'static str,
    /// The output.
    pub output: String,
    /// Where its chunks end.
    pub cuts: Vec<usize>,
}

/// Decodes a `stream` target input (`None` when it is too short to pick anything).
pub fn decode(data: &[u8]) -> Option<StreamInput> {
    let [pick, n, rest @ ..] = data else {
        return None;
    };
    let n = usize::from(*n % 16).min(rest.len());
    let (lengths, output) = rest.split_at(n);
    let lengths: Vec<usize> = if lengths.is_empty() {
        vec![usize::MAX]
    } else {
        lengths.iter().map(|&b| usize::from(b.max(1))).collect()
    };
    let output = String::from_utf8_lossy(output).into_owned();
    let mut cuts = Vec::new();
    let mut at = 0;
    for length in lengths.iter().cycle() {
        if at >= output.len() {
            break;
        }
        let length = (*length).max(output.len() / 128);
        at = at.saturating_add(length).min(output.len());
        cuts.push(at);
    }
    Some(StreamInput {
        fixture: STREAM_FIXTURES[usize::from(*pick) % STREAM_FIXTURES.len()],
        output,
        cuts,
    })
}

/// What replaying one regression against an engine found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegressionResult {
    /// The regression file name.
    pub file: String,
    /// The fixture it picks.
    pub fixture: String,
    /// Whether it passed.
    pub passed: bool,
    /// The engine has no parser for the fixture.
    pub unsupported: bool,
    /// The engine did not answer in time.
    pub timeout: bool,
    /// The engine reported an error or broke the protocol.
    pub error: bool,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The regression files of `dir` (`tests/regressions/stream`), sorted.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            p.is_file() && !name.starts_with('.') && !name.ends_with(".md")
        })
        .collect();
    files.sort();
    files
}

/// Replays every regression of `dir` against `engine`, with the fixtures of `corpus`.
pub fn replay(engine: &dyn Engine, dir: &Path, corpus: &Path) -> Vec<RegressionResult> {
    files(dir)
        .iter()
        .map(|path| replay_one(engine, path, corpus))
        .collect()
}

fn replay_one(engine: &dyn Engine, path: &Path, corpus: &Path) -> RegressionResult {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut result = RegressionResult {
        file,
        fixture: String::new(),
        passed: false,
        unsupported: false,
        timeout: false,
        error: false,
        why: None,
    };
    let decoded = std::fs::read(path)
        .map_err(|e| format!("cannot read it: {e}"))
        .and_then(|data| decode(&data).ok_or_else(|| "too short to pick a fixture".to_owned()));
    let input = match decoded {
        Ok(input) => input,
        Err(why) => {
            result.error = true;
            result.why = Some(why);
            return result;
        }
    };
    result.fixture = input.fixture.to_owned();
    let model = match Model::load(&corpus.join(input.fixture)) {
        Ok(model) => model,
        Err(LoadError::Skip(why) | LoadError::Fail(why)) => {
            result.error = true;
            result.why = Some(format!("fixture {}: {why}", input.fixture));
            return result;
        }
    };
    let request: ChatRequest =
        match serde_json::from_value(Value::Object(model.manifest.request.clone())) {
            Ok(request) => request,
            Err(e) => {
                result.error = true;
                result.why = Some(format!("fixture {}: bad request: {e}", input.fixture));
                return result;
            }
        };
    let path = super::corpus::template_path(&model);
    let case = EngineCase::new(
        format!("regression/{}", result.file),
        model.name.clone(),
        request,
    )
    .with_chat(ChatSpec {
        template: model.template(),
        analysis: model.analysis(),
        path: path.as_deref(),
    })
    .with_response_template(super::corpus::response_template_value(&model.dir));
    match run(engine, &case, &input) {
        Ok(Ok(())) => result.passed = true,
        Ok(Err(why)) => result.why = Some(why),
        Err(error) => {
            match &error {
                EngineError::Unsupported(_) => result.unsupported = true,
                EngineError::Timeout(_) => result.timeout = true,
                EngineError::Failed(_) | EngineError::Protocol(_) => result.error = true,
            }
            result.why = Some(error.to_string());
        }
    }
    result
}

/// Runs one input: `Ok(Err(why))` when a check fails.
fn run(
    engine: &dyn Engine,
    case: &EngineCase<'_>,
    input: &StreamInput,
) -> Result<Result<(), String>, EngineError> {
    let mut session = engine.open(case)?;
    let expected = one_shot(&mut *session, &input.output, false)?.message;
    let chunking = Chunking {
        label: "fuzz chunks".to_owned(),
        cuts: input.cuts.clone(),
    };
    let chunking = if engine.byte_chunks() {
        chunking
    } else {
        to_char_boundaries(&input.output, &chunking)
    };
    let chunks = super::chunking::pieces(input.output.as_bytes(), &chunking.cuts);
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        session.stream(&chunks, true)
    }))
    .map_err(|p| EngineError::Failed(format!("the stream panicked: {}", panic_text(&*p))))??;
    let reference = run.message.clone().unwrap_or_else(|| expected.clone());
    Ok(check_run(
        &run,
        &chunking,
        &input.output,
        false,
        Some(&expected),
        Some(&reference),
    )
    .map_err(|p| p.why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_decode_like_the_fuzz_target() {
        let input = decode(&[4, 2, 3, 0, b'a', b'b', b'c', b'd', b'e']).unwrap();
        assert_eq!(input.fixture, "qwen3");
        assert_eq!(input.output, "abcde");
        assert_eq!(input.cuts, [3, 4, 5]);
        assert!(decode(&[1]).is_none());
        let whole = decode(&[0, 0, b'x', b'y']).unwrap();
        assert_eq!(whole.cuts, [2]);
    }
}
