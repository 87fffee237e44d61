//! The engine protocol (version [`PROTOCOL_VERSION`]): JSON lines between the harness and an
//! engine running as a subprocess.
//!
//! The harness writes one [`Request`] per line on the engine's standard input and reads one
//! [`Response`] per line from its standard output, in order; the engine keeps running between
//! requests (it may cache parsers per model). Anything the engine writes on standard error is
//! kept for error reports. The schema is documented in the README ("Testing another parser").
//!
//! - `one_shot`: parse `output` whole; answer `message` (and optionally `problem`).
//! - `stream`: feed `chunks` in order (then finish the stream when `finish`); answer `deltas`,
//!   one list per chunk plus one for the finish, and optionally `message` (the engine's own
//!   final message for the stream) and `snapshots` (its view of the message after each chunk).
//! - Errors are values: `error: {kind: "unsupported" | "failed", message}`.
//!
//! Messages are OpenAI-style (`{role, content, reasoning_content, tool_calls: [{id, type,
//! function: {name, arguments}}]}`; the flat `{name, arguments, id}` call shape is accepted
//! too) and deltas are the `choices[].delta` of a chat-completion chunk.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::{ChatDelta, ChatMessage};

/// The protocol version this harness speaks (the `v` of every line).
pub const PROTOCOL_VERSION: u32 = 1;

/// What a request asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Parse the whole output at once.
    OneShot,
    /// Feed the output in chunks.
    Stream,
}

/// The chat template of a request's model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateRef {
    /// The template's file name (e.g. `Qwen3-Coder.jinja`).
    pub name: String,
    /// Where the template file is, when it is a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// One request line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The protocol version ([`PROTOCOL_VERSION`]).
    pub v: u32,
    /// An id the response must repeat (`model/case#chunking`).
    pub id: String,
    /// The model: a fixture folder name, or a template file name for conformance vectors.
    /// Adapters map it to their parser.
    pub model: String,
    /// The chat template, when the case has one.
    #[serde(default)]
    pub template: Option<TemplateRef>,
    /// The Hugging Face response template (a JSON object), when the case has one.
    #[serde(default)]
    pub response_template: Option<Value>,
    /// The OpenAI-style request (`messages`, `tools`, `tool_choice`, `enable_thinking`,
    /// `reasoning_format`, ...).
    pub request: Value,
    /// The prompt the model continued (the request rendered by the template with the
    /// generation prompt), when it could be rendered: what it already wrote of the assistant
    /// turn (an opened `<think>`) is part of the turn.
    #[serde(default)]
    pub prompt: Option<String>,
    /// `one_shot` or `stream`.
    pub mode: Mode,
    /// The output was cut off mid-generation: parse it as an unfinished stream.
    #[serde(default)]
    pub partial: bool,
    /// `one_shot`: the raw model output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// `stream`: the output in chunks (whole code points; joined they are the output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<Vec<String>>,
    /// `stream`: finish the stream after the last chunk (false for a cut-off output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<bool>,
}

/// An error reported by the engine, as a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorValue {
    /// `unsupported`: the engine has no parser for this model or request; `failed`: anything
    /// else (the parser raised, the input broke it).
    pub kind: ErrorKind,
    /// What happened.
    pub message: String,
    /// For response-template vectors: the phase that failed (`load`, `init`, `feed`,
    /// `finalize`), when the engine knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// The kinds of [`ErrorValue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// No parser for this model or request.
    Unsupported,
    /// The parse failed.
    Failed,
}

/// One response line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// The protocol version ([`PROTOCOL_VERSION`]).
    pub v: u32,
    /// The request's id.
    pub id: String,
    /// The parsed message: `one_shot`'s answer; for `stream`, optionally the engine's own final
    /// message of the stream (what it would return once the stream is over).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Value>,
    /// `one_shot`: whether the parse found a problem (`false`/`null`: none; `true` or a text:
    /// one). Absent: the engine does not report problems.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<Value>,
    /// `stream`: the deltas emitted after each chunk, then those the finish emitted (one list
    /// per chunk, plus one when `finish`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deltas: Option<Vec<Vec<ChatDelta>>>,
    /// `stream`, optional: the engine's message after each chunk (`null` where it has none).
    /// When given, the accumulated deltas must equal it after every chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<Vec<Option<Value>>>,
    /// The error, instead of an answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorValue>,
}

impl Response {
    /// An empty response to `id`.
    pub fn to(id: &str) -> Response {
        Response {
            v: PROTOCOL_VERSION,
            id: id.to_owned(),
            message: None,
            problem: None,
            deltas: None,
            snapshots: None,
            error: None,
        }
    }

    /// An error response to `id`.
    pub fn error(id: &str, kind: ErrorKind, message: impl Into<String>) -> Response {
        Response {
            error: Some(ErrorValue {
                kind,
                message: message.into(),
                phase: None,
            }),
            ..Response::to(id)
        }
    }
}

/// A protocol message value as a [`ChatMessage`] (OpenAI or flat shape; `thinking` and
/// `reasoning` are read as the reasoning).
pub fn message_from_value(value: &Value) -> Result<ChatMessage, String> {
    let mut value = value.clone();
    if let Some(map) = value.as_object_mut() {
        for alias in ["thinking", "reasoning"] {
            if let Some(text) = map.remove(alias) {
                map.entry("reasoning_content").or_insert(text);
            }
        }
    }
    serde_json::from_value(value).map_err(|e| format!("not a message: {e}"))
}

/// A [`ChatMessage`] as a protocol message value (OpenAI shape).
pub fn message_to_value(message: &ChatMessage) -> Value {
    serde_json::to_value(message).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_line_round_trips_and_omits_what_its_mode_does_not_use() {
        let request = Request {
            v: PROTOCOL_VERSION,
            id: "qwen3/a#chars".into(),
            model: "qwen3".into(),
            template: Some(TemplateRef {
                name: "Qwen3.jinja".into(),
                path: None,
            }),
            response_template: None,
            request: serde_json::json!({"messages": []}),
            prompt: Some("<|im_start|>assistant\n".into()),
            mode: Mode::Stream,
            partial: false,
            output: None,
            chunks: Some(vec!["a".into(), "é".into()]),
            finish: Some(true),
        };
        let line = serde_json::to_string(&request).unwrap();
        assert!(!line.contains("\"output\""), "{line}");
        assert!(line.contains("\"mode\":\"stream\""), "{line}");
        let back: Request = serde_json::from_str(&line).unwrap();
        assert_eq!(back, request);
    }

    #[test]
    fn messages_are_read_in_both_shapes() {
        let openai = serde_json::json!({"role": "assistant", "content": null, "thinking": "t",
            "tool_calls": [{"id": "1", "type": "function",
                            "function": {"name": "f", "arguments": "{}"}}]});
        let message = message_from_value(&openai).unwrap();
        assert_eq!(message.reasoning_content, "t");
        assert_eq!(message.tool_calls[0].name, "f");
        let flat = serde_json::json!({"content": "x", "tool_calls": [{"name": "f", "arguments": {"a": 1}}]});
        let message = message_from_value(&flat).unwrap();
        assert_eq!(message.tool_calls[0].arguments, r#"{"a":1}"#);
        assert!(message_from_value(&serde_json::json!(3)).is_err());
    }
}
