//! The built-in engine `chatparse-rt`: the case's Hugging Face response template
//! ([`ResponseTemplate`]), with the prompt as prefix and the request's tools.
//!
//! A stream maps the parser's events to chat deltas the way a server would ([`EventDeltas`]):
//! text of a `content` region streams as content, of a `thinking` / `reasoning` /
//! `reasoning_content` region as reasoning; a `tool_calls` region streams nothing until it
//! closes, then its value is one whole call. Other fields are not part of a chat message. The
//! final message is the parser's dict.

use serde_json::Value;

use crate::message::{ChatDelta, DeltaAccumulator, FunctionDelta, ToolCallDelta};
use crate::response_template::{parse_response, Event, ResponseParser, ResponseTemplate};

use super::protocol::message_from_value;
use super::{Engine, EngineCase, EngineError, EngineSession, OneShot, StreamRun};

/// The engine's name.
pub const NAME: &str = "chatparse-rt";

/// Response templates as an engine (cases without one are unsupported).
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponseTemplateEngine;

struct Session {
    template: ResponseTemplate,
    prompt: String,
    tools: Vec<Value>,
}

impl Engine for ResponseTemplateEngine {
    fn name(&self) -> &str {
        NAME
    }

    fn open<'s>(
        &'s self,
        case: &'s EngineCase<'_>,
    ) -> Result<Box<dyn EngineSession + 's>, EngineError> {
        let value = case
            .response_template
            .as_ref()
            .ok_or_else(|| EngineError::Unsupported("the model has no response template".into()))?;
        let template = ResponseTemplate::from_value(value)
            .map_err(|e| EngineError::Failed(format!("response template: {e}")))?;
        let tools = case
            .request
            .tools
            .iter()
            .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
            .collect();
        Ok(Box::new(Session {
            template,
            prompt: case.prompt().unwrap_or_default().to_owned(),
            tools,
        }))
    }
}

impl Session {
    fn tools(&self) -> Option<&[Value]> {
        (!self.tools.is_empty()).then_some(self.tools.as_slice())
    }

    fn parser(&self) -> Result<ResponseParser<'_>, EngineError> {
        ResponseParser::new(&self.template, Some(&self.prompt), self.tools())
            .map_err(|e| EngineError::Failed(format!("response template: {e}")))
    }
}

fn failed(e: impl std::fmt::Display) -> EngineError {
    EngineError::Failed(format!("response template: {e}"))
}

impl EngineSession for Session {
    fn one_shot(&mut self, output: &str, partial: bool) -> Result<OneShot, EngineError> {
        let message = if partial {
            let mut parser = self.parser()?;
            let mut map = EventDeltas::default();
            let mut acc = DeltaAccumulator::new();
            let initial: Vec<ChatDelta> = parser
                .initial_events()
                .iter()
                .filter_map(|e| map.delta(e))
                .collect();
            let fed = parser.feed(output).map_err(failed)?;
            for delta in initial
                .iter()
                .chain(&fed.iter().filter_map(|e| map.delta(e)).collect::<Vec<_>>())
            {
                acc.apply(delta).map_err(failed)?;
            }
            acc.into_message()
        } else {
            let dict = parse_response(&self.template, output, Some(&self.prompt), self.tools())
                .map_err(failed)?;
            message_from_value(&dict).map_err(failed)?
        };
        Ok(OneShot {
            message,
            problem: None,
        })
    }

    fn stream(&mut self, chunks: &[&[u8]], finish: bool) -> Result<StreamRun, EngineError> {
        let mut parser = self.parser()?;
        let mut map = EventDeltas::default();
        let mut run = StreamRun::default();
        let initial: Vec<ChatDelta> = parser
            .initial_events()
            .iter()
            .filter_map(|e| map.delta(e))
            .collect();
        for (k, chunk) in chunks.iter().enumerate() {
            let text = std::str::from_utf8(chunk)
                .map_err(|_| EngineError::Failed("a chunk is not whole UTF-8 text".into()))?;
            let mut deltas = if k == 0 { initial.clone() } else { Vec::new() };
            for event in parser.feed(text).map_err(failed)? {
                deltas.extend(map.delta(&event));
            }
            run.deltas.push(deltas);
        }
        if finish {
            let (dict, events) = parser.finalize().map_err(failed)?;
            let mut deltas = if chunks.is_empty() {
                initial
            } else {
                Vec::new()
            };
            deltas.extend(events.iter().filter_map(|e| map.delta(e)));
            run.deltas.push(deltas);
            run.message = Some(message_from_value(&dict).map_err(failed)?);
        }
        Ok(run)
    }
}

/// Maps response-template events to chat deltas (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct EventDeltas {
    calls: usize,
}

/// What a field is in a chat message.
enum Role {
    Content,
    Reasoning,
    ToolCalls,
}

fn role(field: &str) -> Option<Role> {
    match field {
        "content" => Some(Role::Content),
        "thinking" | "reasoning" | "reasoning_content" => Some(Role::Reasoning),
        "tool_calls" => Some(Role::ToolCalls),
        _ => None,
    }
}

impl EventDeltas {
    /// The delta `event` makes, if any.
    pub fn delta<T: AsRef<str>>(&mut self, event: &Event<'_, T>) -> Option<ChatDelta> {
        match event {
            Event::RegionOpen { .. } => None,
            Event::RegionChunk { field, text, dirty } => {
                let text = text.as_ref();
                if *dirty || text.is_empty() {
                    return None;
                }
                match role(field)? {
                    Role::Content => Some(ChatDelta {
                        content: Some(text.to_owned()),
                        ..ChatDelta::default()
                    }),
                    Role::Reasoning => Some(ChatDelta {
                        reasoning_content: Some(text.to_owned()),
                        ..ChatDelta::default()
                    }),
                    Role::ToolCalls => None,
                }
            }
            Event::RegionClose { field, value } => match role(field)? {
                Role::ToolCalls => {
                    let calls: Vec<&Value> = match &**value {
                        Value::Array(items) => items.iter().collect(),
                        other => vec![other],
                    };
                    let fragments: Vec<ToolCallDelta> =
                        calls.into_iter().map(|call| self.call(call)).collect();
                    Some(ChatDelta {
                        tool_calls: Some(fragments),
                        ..ChatDelta::default()
                    })
                }
                _ => None,
            },
        }
    }

    fn call(&mut self, call: &Value) -> ToolCallDelta {
        let function = call.get("function").unwrap_or(call);
        let name = function.get("name").and_then(Value::as_str).unwrap_or("");
        let arguments = match function.get("arguments") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
        };
        let index = self.calls;
        self.calls += 1;
        ToolCallDelta {
            index,
            id: call.get("id").and_then(Value::as_str).map(str::to_owned),
            kind: Some("function".to_owned()),
            function: FunctionDelta {
                name: Some(name.to_owned()),
                arguments: Some(arguments),
            },
        }
    }
}
