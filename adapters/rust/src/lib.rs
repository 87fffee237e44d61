//! What the peer adapters share: the protocol loop, the model → parser tables, reading the
//! request, and building messages and deltas.
//!
//! Each adapter is a binary speaking chatparse's engine protocol (one JSON request per line on
//! stdin, one response per line on stdout; see the repository README, "Testing another
//! parser"). It answers with the peer crate's own parsers, used the way an inference server
//! uses them: the reasoning parser first (told, when the prompt already opened the reasoning
//! block, that reasoning has started), then the tool-call parser on the remaining text.
//!
//! The tables map a fixture folder (or a conformance vector's template file) to the peer's
//! parser names: that is the adapter's configuration, the one place that knows which of the
//! peer's parsers serves which model. A model without a row is answered `unsupported`.

use std::io::{BufRead, Write};

use chatparse::engine::protocol::{ErrorKind, Mode, Request, Response};
use chatparse::message::{ChatDelta, ChatMessage, FunctionDelta, ToolCall, ToolCallDelta};
use serde_json::Value;

/// A model's parsers in one peer: the tool-call parser and the reasoning parser (either may be
/// absent), and the reasoning block's markers as the prompt shows them (to tell whether the
/// prompt opened it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsers {
    /// The peer's tool-call parser name.
    pub tool: Option<&'static str>,
    /// The peer's reasoning parser name.
    pub reasoning: Option<&'static str>,
    /// The reasoning block's open and close markers.
    pub markers: (&'static str, &'static str),
}

/// `<think>` / `</think>`, the markers of most models.
pub const THINK: (&str, &str) = ("<think>", "</think>");

/// The row of a request's model in `table`: matched on the fixture folder name, else on the
/// chat template's file name (conformance vectors name no folder) by the row's templates.
pub fn lookup(table: &[Row], request: &Request) -> Option<Parsers> {
    let template = request.template.as_ref().map(|t| t.name.as_str());
    table
        .iter()
        .find(|row| row.folder == request.model)
        .or_else(|| {
            let template = template?;
            table.iter().find(|row| row.templates.contains(&template))
        })
        .map(|row| row.parsers)
}

/// One table row.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// The fixture folder.
    pub folder: &'static str,
    /// Template file names (conformance vectors) served by the same parsers.
    pub templates: &'static [&'static str],
    /// The parsers.
    pub parsers: Parsers,
}

/// Whether the prompt ends inside an opened reasoning block (`open` after the last `close`).
pub fn prompt_opens_reasoning(prompt: Option<&str>, (open, close): (&str, &str)) -> bool {
    let Some(prompt) = prompt else { return false };
    match prompt.rfind(open) {
        Some(at) => !prompt[at + open.len()..].contains(close),
        None => false,
    }
}

/// Whether the request keeps reasoning inline (`reasoning_format: none`).
pub fn reasoning_inline(request: &Value) -> bool {
    request.get("reasoning_format").and_then(Value::as_str) == Some("none")
}

/// The request's tools (OpenAI shape).
pub fn tools(request: &Value) -> Vec<Value> {
    request
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// What an adapter answers for one request.
pub trait Adapter {
    /// The parsers of the request's model, if the peer has them.
    fn parsers(&self, request: &Request) -> Option<Parsers>;
    /// Parses a whole output.
    fn one_shot(
        &mut self,
        parsers: Parsers,
        request: &Request,
        output: &str,
    ) -> Result<ChatMessage, String>;
    /// Feeds chunks; returns the deltas after each chunk, then (when `finish`) the finish's.
    fn stream(
        &mut self,
        parsers: Parsers,
        request: &Request,
        chunks: &[String],
        finish: bool,
    ) -> Result<Vec<Vec<ChatDelta>>, String>;
}

/// Answers requests from stdin on stdout until stdin ends.
pub fn serve(adapter: &mut dyn Adapter) {
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let Ok(line) = line else { return };
        if line.trim().is_empty() {
            continue;
        }
        let response = match serde_json::from_str::<Request>(&line) {
            Ok(request) => answer(adapter, &request),
            Err(e) => Response::error("", ErrorKind::Failed, format!("bad request: {e}")),
        };
        let text = serde_json::to_string(&response).unwrap_or_default();
        if writeln!(stdout, "{text}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}

fn answer(adapter: &mut dyn Adapter, request: &Request) -> Response {
    let Some(parsers) = adapter.parsers(request) else {
        return Response::error(
            &request.id,
            ErrorKind::Unsupported,
            format!("no parser configured for {}", request.model),
        );
    };
    let mut response = Response::to(&request.id);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match request.mode {
        Mode::OneShot => {
            let output = request.output.as_deref().unwrap_or_default();
            let message = if request.partial {
                // An unfinished output: what the stream shows so far.
                let deltas = adapter.stream(parsers, request, &[output.to_owned()], false)?;
                chatparse::message::accumulate(deltas.iter().flatten())
                    .map_err(|e| e.to_string())?
            } else {
                adapter.one_shot(parsers, request, output)?
            };
            Ok::<_, String>((Some(message), None))
        }
        Mode::Stream => {
            let chunks = request.chunks.clone().unwrap_or_default();
            let finish = request.finish.unwrap_or(!request.partial);
            Ok((
                None,
                Some(adapter.stream(parsers, request, &chunks, finish)?),
            ))
        }
    }));
    match result {
        Ok(Ok((message, deltas))) => {
            response.message = message.map(|m| serde_json::to_value(m).unwrap_or(Value::Null));
            response.deltas = deltas;
            response
        }
        Ok(Err(why)) => Response::error(&request.id, ErrorKind::Failed, why),
        Err(payload) => {
            let why = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "panic".to_owned());
            Response::error(
                &request.id,
                ErrorKind::Failed,
                format!("the peer panicked: {why}"),
            )
        }
    }
}

/// A message from parts.
pub fn message(content: String, reasoning: String, calls: Vec<ToolCall>) -> ChatMessage {
    ChatMessage {
        content,
        reasoning_content: reasoning,
        tool_calls: calls,
        ..ChatMessage::assistant()
    }
}

/// A content delta.
pub fn content(text: &str) -> Option<ChatDelta> {
    (!text.is_empty()).then(|| ChatDelta {
        content: Some(text.to_owned()),
        ..ChatDelta::default()
    })
}

/// A reasoning delta.
pub fn reasoning(text: &str) -> Option<ChatDelta> {
    (!text.is_empty()).then(|| ChatDelta {
        reasoning_content: Some(text.to_owned()),
        ..ChatDelta::default()
    })
}

/// A tool-call fragment delta.
pub fn call(
    index: usize,
    id: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
) -> ChatDelta {
    let first = name.is_some();
    ChatDelta {
        tool_calls: Some(vec![ToolCallDelta {
            index,
            id,
            kind: first.then(|| "function".to_owned()),
            function: FunctionDelta {
                name,
                arguments: arguments.filter(|a| !a.is_empty()),
            },
        }]),
        ..ChatDelta::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_opens_reasoning_when_its_last_open_is_unclosed() {
        assert!(prompt_opens_reasoning(Some("a<think>\n"), THINK));
        assert!(!prompt_opens_reasoning(Some("<think>x</think>"), THINK));
        assert!(!prompt_opens_reasoning(Some("plain"), THINK));
        assert!(!prompt_opens_reasoning(None, THINK));
    }
}
