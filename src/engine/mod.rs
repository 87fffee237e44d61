//! Engines: any parser the harness can test, behind one trait.
//!
//! An [`Engine`] takes a case (the model's chat template or response template, the request,
//! the prompt) and either the whole raw output ([`EngineSession::one_shot`]) or the output
//! split into chunks ([`EngineSession::stream`]); it returns the message, and for a stream the
//! deltas emitted after each chunk. The harness ([`check`]) then applies the same rules to
//! every engine: the one-shot message equals the expectation, every chunking's accumulated
//! deltas equal it too, and a stream never emits what it later takes back (a *retraction*) nor
//! splits a code point.
//!
//! Engines:
//! - [`ChatParserEngine`] (`chatparse`): the parser generated from the chat template (the
//!   default of `chatparse check` and `chatparse conform`);
//! - [`ResponseTemplateEngine`] (`chatparse-rt`): the folder's Hugging Face response template;
//! - [`SubprocessEngine`]: any program speaking the JSON-lines [`protocol`], with a per-request
//!   timeout, so a hanging engine is reported and not waited on forever. The adapters under
//!   `adapters/` bring the peers (`tool-parser`, `dynamo-parsers`, transformers) this way, and
//!   `chatparse engine` ([`serve`]) serves a built-in engine over the same protocol.
//!
//! [`corpus`] runs a fixture corpus against several engines (the comparison `chatparse check
//! --engine A --engine B` reports with [`crate::report`]); [`regressions`] replays the
//! committed streaming fuzz regressions against an engine.

pub mod builtin;
pub mod check;
pub mod chunking;
pub mod corpus;
pub mod protocol;
pub mod regressions;
pub mod response_template;
pub mod serve;
pub mod subprocess;

use std::cell::OnceCell;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::analyze::Analysis;
use crate::generate::prompt::render_prompt;
use crate::message::{ChatDelta, ChatMessage, ChatRequest};
use crate::template::ChatTemplate;

pub use builtin::ChatParserEngine;
pub use response_template::ResponseTemplateEngine;
pub use subprocess::SubprocessEngine;

/// A chat template with its analysis.
#[derive(Debug, Clone, Copy)]
pub struct ChatSpec<'a> {
    /// The template.
    pub template: &'a ChatTemplate,
    /// Its analysis.
    pub analysis: &'a Analysis,
    /// The template file, when it is one.
    pub path: Option<&'a std::path::Path>,
}

/// What an engine is asked to parse: everything about a case but the output.
#[derive(Debug)]
pub struct EngineCase<'a> {
    /// The case id (`model/case`, or a vector id).
    pub id: String,
    /// The model: a fixture folder name, or a template file name for conformance vectors.
    pub model: String,
    /// The chat template, when the case has one.
    pub chat: Option<ChatSpec<'a>>,
    /// The response template (JSON), when the case has one.
    pub response_template: Option<Value>,
    /// The request.
    pub request: ChatRequest,
    prompt: OnceCell<Option<String>>,
}

impl<'a> EngineCase<'a> {
    /// A case for `model` with `request`; the prompt is rendered from the chat template when
    /// an engine asks for it.
    pub fn new(id: impl Into<String>, model: impl Into<String>, request: ChatRequest) -> Self {
        EngineCase {
            id: id.into(),
            model: model.into(),
            chat: None,
            response_template: None,
            request,
            prompt: OnceCell::new(),
        }
    }

    /// With a chat template.
    pub fn with_chat(mut self, chat: ChatSpec<'a>) -> Self {
        self.chat = Some(chat);
        self
    }

    /// With a response template.
    pub fn with_response_template(mut self, template: Option<Value>) -> Self {
        self.response_template = template;
        self
    }

    /// With an explicit prompt (instead of one rendered from the chat template).
    pub fn with_prompt(self, prompt: Option<String>) -> Self {
        let _ = self.prompt.set(prompt);
        self
    }

    /// The prompt the model continued: the explicit one, else the request rendered by the chat
    /// template with the generation prompt (`None` when there is no template or it fails).
    pub fn prompt(&self) -> Option<&str> {
        self.prompt
            .get_or_init(|| {
                let chat = self.chat?;
                render_prompt(chat.template, &self.request, true).ok()
            })
            .as_deref()
    }
}

/// Why an engine gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// The engine has no parser for this model or request.
    Unsupported(String),
    /// The engine reported an error (an error value), or panicked.
    Failed(String),
    /// The engine broke the protocol: an unreadable or mismatched line, or it exited.
    Protocol(String),
    /// No answer within the per-request timeout (the engine was stopped).
    Timeout(Duration),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Unsupported(why) => write!(f, "unsupported: {why}"),
            EngineError::Failed(why) => f.write_str(why),
            EngineError::Protocol(why) => write!(f, "protocol error: {why}"),
            EngineError::Timeout(after) => {
                write!(
                    f,
                    "timed out: no answer within {:.1} s",
                    after.as_secs_f64()
                )
            }
        }
    }
}

impl std::error::Error for EngineError {}

/// A one-shot parse.
#[derive(Debug, Clone, PartialEq)]
pub struct OneShot {
    /// The message.
    pub message: ChatMessage,
    /// Whether the parse found a problem: `None` when the engine does not say; `Some(None)`:
    /// none; `Some(Some(what))`: one.
    pub problem: Option<Option<String>>,
}

/// A stream run: what the engine emitted chunk by chunk.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamRun {
    /// The deltas emitted after each chunk, then (when the stream was finished) those the
    /// finish emitted.
    pub deltas: Vec<Vec<ChatDelta>>,
    /// The engine's own message after each chunk, where it has one (the accumulated deltas
    /// must equal it). Empty when the engine gives none.
    pub snapshots: Vec<Option<ChatMessage>>,
    /// The engine's own final message of the stream, when it has one.
    pub message: Option<ChatMessage>,
}

/// A case opened by an engine: parse its output one shot or streamed, as often as asked.
pub trait EngineSession {
    /// Parses the whole output (as a cut-off stream when `partial`).
    fn one_shot(&mut self, output: &str, partial: bool) -> Result<OneShot, EngineError>;

    /// Feeds `chunks` in order, then finishes the stream when `finish`.
    fn stream(&mut self, chunks: &[&[u8]], finish: bool) -> Result<StreamRun, EngineError>;
}

/// A parser under test.
pub trait Engine {
    /// The engine's name in reports.
    fn name(&self) -> &str;

    /// Whether the engine takes chunks that cut a code point (bytes); engines that take text
    /// get every chunking with its cuts moved to the next character boundary.
    fn byte_chunks(&self) -> bool {
        false
    }

    /// Prepares a case (the built-in engine builds its parser here).
    fn open<'s>(
        &'s self,
        case: &'s EngineCase<'_>,
    ) -> Result<Box<dyn EngineSession + 's>, EngineError>;
}

/// The engines `--engine` names: a built-in (`chatparse`, `chatparse-rt`) or a command line
/// run as a subprocess (`NAME=COMMAND` names it; else the program's file name does).
pub fn engine_from_spec(spec: &str, timeout: Duration) -> Result<Box<dyn Engine>, String> {
    match spec {
        builtin::NAME => return Ok(Box::new(ChatParserEngine)),
        response_template::NAME => return Ok(Box::new(ResponseTemplateEngine)),
        _ => {}
    }
    let (name, command) = match spec.split_once('=') {
        Some((name, command))
            if !name.is_empty() && !name.contains(char::is_whitespace) && !command.is_empty() =>
        {
            (Some(name.to_owned()), command)
        }
        _ => (None, spec),
    };
    let words = split_command(command)?;
    let program = words.first().ok_or("an empty engine command")?;
    let name = name.unwrap_or_else(|| {
        PathBuf::from(program)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| program.clone())
    });
    Ok(Box::new(SubprocessEngine::new(name, words, timeout)))
}

/// Splits a command line into words: whitespace separates, single and double quotes group.
pub fn split_command(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("unclosed quote in engine command `{command}`"));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_on_whitespace_with_quotes() {
        assert_eq!(
            split_command(r#"python3 'my dir/engine.py' --x "a b""#).unwrap(),
            ["python3", "my dir/engine.py", "--x", "a b"]
        );
        assert!(split_command("a 'b").is_err());
    }

    #[test]
    fn specs_name_builtins_and_subprocesses() {
        let t = Duration::from_secs(1);
        assert_eq!(
            engine_from_spec("chatparse", t).unwrap().name(),
            "chatparse"
        );
        assert_eq!(
            engine_from_spec("chatparse-rt", t).unwrap().name(),
            "chatparse-rt"
        );
        assert_eq!(
            engine_from_spec("adapters/x/tool-parser-engine --flag", t)
                .unwrap()
                .name(),
            "tool-parser-engine"
        );
        assert_eq!(
            engine_from_spec("tf=python3 engine.py", t).unwrap().name(),
            "tf"
        );
        assert!(engine_from_spec("", t).is_err());
    }
}
