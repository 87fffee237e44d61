//! Serving an engine over the JSON-lines [`protocol`](super::protocol): the other side of
//! [`SubprocessEngine`](super::SubprocessEngine), behind `chatparse engine`. It is the
//! reference implementation of the protocol for adapter authors, and lets the harness test its
//! own subprocess path with a known engine.
//!
//! Each request's chat template is read from `template.path` (loaded and analysed once per
//! path). A request that cannot be understood is answered with a `failed` error value (with
//! its id when it has one); the server stops at the end of its input.

use std::io::{BufRead, Write};
use std::path::Path;

use serde_json::Value;

use crate::conform::chat::load_template;
use crate::message::ChatRequest;

use super::check::panic_text;
use super::protocol::{message_to_value, ErrorKind, Mode, Request, Response, PROTOCOL_VERSION};
use super::{ChatSpec, Engine, EngineCase, EngineError};

/// Answers every request line of `input` on `output` with `engine`, until `input` ends.
pub fn serve(
    engine: &dyn Engine,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let response = match serde_json::from_str::<Request>(&line) {
            Ok(request) => answer(engine, &request),
            Err(e) => {
                let id = serde_json::from_str::<Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_default();
                Response::error(&id, ErrorKind::Failed, format!("bad request: {e}"))
            }
        };
        serde_json::to_writer(&mut output, &response)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(())
}

/// The response of `engine` to one request.
pub fn answer(engine: &dyn Engine, request: &Request) -> Response {
    if request.v != PROTOCOL_VERSION {
        return Response::error(
            &request.id,
            ErrorKind::Failed,
            format!(
                "protocol version {} is not supported (this engine speaks {PROTOCOL_VERSION})",
                request.v
            ),
        );
    }
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(engine, request))) {
        Ok(Ok(response)) => response,
        Ok(Err(EngineError::Unsupported(why))) => {
            Response::error(&request.id, ErrorKind::Unsupported, why)
        }
        Ok(Err(error)) => Response::error(&request.id, ErrorKind::Failed, error.to_string()),
        Err(payload) => Response::error(
            &request.id,
            ErrorKind::Failed,
            format!("the engine panicked: {}", panic_text(&*payload)),
        ),
    }
}

fn run(engine: &dyn Engine, request: &Request) -> Result<Response, EngineError> {
    let chat_request: ChatRequest = serde_json::from_value(request.request.clone())
        .map_err(|e| EngineError::Failed(format!("bad request: {e}")))?;
    let loaded = match request.template.as_ref().and_then(|t| t.path.as_deref()) {
        Some(path) => Some(load_template(Path::new(path)).map_err(EngineError::Failed)?),
        None => None,
    };
    let mut case = EngineCase::new(request.id.clone(), request.model.clone(), chat_request)
        .with_response_template(request.response_template.clone())
        .with_prompt(request.prompt.clone());
    if let Some(loaded) = &loaded {
        case = case.with_chat(ChatSpec {
            template: &loaded.0,
            analysis: &loaded.1,
            path: None,
        });
    }
    let mut session = engine.open(&case)?;
    let mut response = Response::to(&request.id);
    match request.mode {
        Mode::OneShot => {
            let output = request.output.as_deref().unwrap_or_default();
            let answer = session.one_shot(output, request.partial)?;
            response.message = Some(message_to_value(&answer.message));
            response.problem = answer.problem.map(|p| match p {
                None => Value::Bool(false),
                Some(text) => Value::String(text),
            });
        }
        Mode::Stream => {
            let chunks: Vec<&[u8]> = request
                .chunks
                .iter()
                .flatten()
                .map(|c| c.as_bytes())
                .collect();
            let run = session.stream(&chunks, request.finish.unwrap_or(!request.partial))?;
            response.deltas = Some(run.deltas);
            if !run.snapshots.is_empty() {
                response.snapshots = Some(
                    run.snapshots
                        .iter()
                        .map(|s| s.as_ref().map(message_to_value))
                        .collect(),
                );
            }
            response.message = run.message.as_ref().map(message_to_value);
        }
    }
    Ok(response)
}
