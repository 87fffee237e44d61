//! An engine run as a subprocess speaking the JSON-lines [`protocol`](super::protocol).
//!
//! The process is started on the first request and kept for the next ones. Each request waits
//! at most the timeout for its answer: past it the process is killed (and started again for
//! the next request) and the request is reported as timed out. A process that exits, writes a
//! line that is not a response, or answers another id is reported as a protocol error and
//! restarted. The last lines it wrote on standard error are quoted in those errors.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::protocol::{
    message_from_value, ErrorKind, Mode, Request, Response, TemplateRef, PROTOCOL_VERSION,
};
use super::{Engine, EngineCase, EngineError, EngineSession, OneShot, StreamRun};

/// How many lines of the engine's standard error are kept for error reports.
const STDERR_LINES: usize = 20;

/// A subprocess engine.
#[derive(Debug)]
pub struct SubprocessEngine {
    name: String,
    command: Vec<String>,
    timeout: Duration,
    process: RefCell<Option<Process>>,
    requests: Cell<u64>,
}

#[derive(Debug)]
struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<String>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Process {
    fn stderr_tail(&self) -> String {
        let lines = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        if lines.is_empty() {
            String::new()
        } else {
            let joined: Vec<&str> = lines.iter().map(String::as_str).collect();
            format!("; its standard error ends with: {}", joined.join(" | "))
        }
    }

    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stderr_tail()
    }
}

impl SubprocessEngine {
    /// An engine named `name` running `command` (program and arguments), waiting at most
    /// `timeout` for each answer.
    pub fn new(name: impl Into<String>, command: Vec<String>, timeout: Duration) -> Self {
        SubprocessEngine {
            name: name.into(),
            command,
            timeout,
            process: RefCell::new(None),
            requests: Cell::new(0),
        }
    }

    /// The command line.
    pub fn command(&self) -> &[String] {
        &self.command
    }

    fn start(&self) -> Result<Process, EngineError> {
        let (program, args) = self
            .command
            .split_first()
            .ok_or_else(|| EngineError::Protocol("an empty engine command".into()))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| EngineError::Protocol(format!("cannot start `{program}`: {e}")))?;
        let stdin = child.stdin.take().ok_or_else(|| closed("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| closed("stdout"))?;
        let stderr_pipe = child.stderr.take().ok_or_else(|| closed("stderr"))?;
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let stop = line.is_err();
                if sender.send(line).is_err() || stop {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
                let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
                if kept.len() == STDERR_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
        Ok(Process {
            child,
            stdin,
            lines,
            stderr,
        })
    }

    /// Sends `request` and waits for its response (see the module docs).
    pub fn call(&self, request: &Request) -> Result<Response, EngineError> {
        let mut slot = self.process.borrow_mut();
        if slot.is_none() {
            *slot = Some(self.start()?);
        }
        let Some(process) = slot.as_mut() else {
            return Err(closed("process"));
        };
        let mut line = serde_json::to_string(request)
            .map_err(|e| EngineError::Protocol(format!("cannot encode the request: {e}")))?;
        line.push('\n');
        let sent = process
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| process.stdin.flush());
        let answer = match sent {
            Err(e) => Err(format!("cannot write to the engine ({e})")),
            Ok(()) => match process.lines.recv_timeout(self.timeout) {
                Ok(Ok(line)) => Ok(line),
                Ok(Err(e)) => Err(format!("cannot read the engine's answer ({e})")),
                Err(RecvTimeoutError::Timeout) => {
                    if let Some(process) = slot.take() {
                        process.stop();
                    }
                    return Err(EngineError::Timeout(self.timeout));
                }
                Err(RecvTimeoutError::Disconnected) => Err("the engine exited".to_owned()),
            },
        };
        let failure = match answer {
            Ok(line) => match parse_response(&line, &request.id) {
                Ok(response) => return Ok(response),
                Err(why) => why,
            },
            Err(why) => why,
        };
        let tail = slot.take().map(Process::stop).unwrap_or_default();
        Err(EngineError::Protocol(format!("{failure}{tail}")))
    }

    fn next_id(&self, case: &EngineCase<'_>, what: &str) -> String {
        let n = self.requests.get() + 1;
        self.requests.set(n);
        format!("{}#{what}{n}", case.id)
    }
}

impl Drop for SubprocessEngine {
    fn drop(&mut self) {
        if let Some(process) = self.process.get_mut().take() {
            process.stop();
        }
    }
}

fn closed(what: &str) -> EngineError {
    EngineError::Protocol(format!("the engine's {what} is not available"))
}

/// Parses a response line for `id`. Lone UTF-16 surrogate escapes (half a code point) are read
/// as U+FFFD, which the stream checks report as a split code point.
fn parse_response(line: &str, id: &str) -> Result<Response, String> {
    let parsed: Result<Response, _> = serde_json::from_str(line);
    let response = match parsed {
        Ok(response) => response,
        Err(e) => {
            let fixed = replace_lone_surrogates(line);
            if fixed == line {
                return Err(format!("unreadable answer ({e}): {}", excerpt(line)));
            }
            serde_json::from_str(&fixed)
                .map_err(|e| format!("unreadable answer ({e}): {}", excerpt(line)))?
        }
    };
    if response.v != PROTOCOL_VERSION {
        return Err(format!(
            "the engine answers protocol version {}, the harness speaks {PROTOCOL_VERSION}",
            response.v
        ));
    }
    if response.id != id {
        return Err(format!(
            "the engine answered id {:?} to request {id:?}",
            response.id
        ));
    }
    Ok(response)
}

fn excerpt(line: &str) -> String {
    let short: String = line.chars().take(120).collect();
    if short.len() < line.len() {
        format!("{short}...")
    } else {
        short
    }
}

/// `line` with every `\uXXXX` escape of a lone surrogate replaced by `\uFFFD`.
fn replace_lone_surrogates(line: &str) -> String {
    fn escape_at(bytes: &[u8], i: usize) -> Option<u16> {
        let hex = bytes.get(i + 2..i + 6)?;
        if bytes.get(i..i + 2)? != b"\\u" {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
    }
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        match escape_at(bytes, i) {
            Some(high @ 0xD800..=0xDBFF)
                if escape_at(bytes, i + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) =>
            {
                let _ = high;
                i += 12;
            }
            Some(0xD800..=0xDFFF) => {
                out.push_str(&line[copied..i]);
                out.push_str("\\uFFFD");
                i += 6;
                copied = i;
            }
            _ => i += 2,
        }
    }
    out.push_str(&line[copied..]);
    out
}

struct Session<'s> {
    engine: &'s SubprocessEngine,
    case: &'s EngineCase<'s>,
    base: Request,
}

impl Engine for SubprocessEngine {
    fn name(&self) -> &str {
        &self.name
    }

    fn open<'s>(
        &'s self,
        case: &'s EngineCase<'_>,
    ) -> Result<Box<dyn EngineSession + 's>, EngineError> {
        let base = Request {
            v: PROTOCOL_VERSION,
            id: String::new(),
            model: case.model.clone(),
            template: case.chat.map(|chat| TemplateRef {
                name: chat.template.name().to_owned(),
                path: chat.path.map(|p| {
                    std::fs::canonicalize(p)
                        .unwrap_or_else(|_| p.to_owned())
                        .display()
                        .to_string()
                }),
            }),
            response_template: case.response_template.clone(),
            request: serde_json::to_value(&case.request).unwrap_or(Value::Null),
            prompt: case.prompt().map(str::to_owned),
            mode: Mode::OneShot,
            partial: false,
            output: None,
            chunks: None,
            finish: None,
        };
        Ok(Box::new(Session {
            engine: self,
            case,
            base,
        }))
    }
}

fn answer_error(response: &Response) -> Option<EngineError> {
    response.error.as_ref().map(|e| match e.kind {
        ErrorKind::Unsupported => EngineError::Unsupported(e.message.clone()),
        ErrorKind::Failed => EngineError::Failed(e.message.clone()),
    })
}

fn message(value: &Value) -> Result<crate::message::ChatMessage, EngineError> {
    message_from_value(value).map_err(|e| EngineError::Protocol(format!("bad message: {e}")))
}

impl EngineSession for Session<'_> {
    fn one_shot(&mut self, output: &str, partial: bool) -> Result<OneShot, EngineError> {
        let request = Request {
            id: self.engine.next_id(self.case, "one_shot"),
            mode: Mode::OneShot,
            partial,
            output: Some(output.to_owned()),
            ..self.base.clone()
        };
        let response = self.engine.call(&request)?;
        if let Some(error) = answer_error(&response) {
            return Err(error);
        }
        let value = response
            .message
            .as_ref()
            .ok_or_else(|| EngineError::Protocol("a one_shot answer without `message`".into()))?;
        let problem = response.problem.as_ref().map(|p| match p {
            Value::Null | Value::Bool(false) => None,
            Value::String(text) => Some(text.clone()),
            other => Some(other.to_string()),
        });
        Ok(OneShot {
            message: message(value)?,
            problem,
        })
    }

    fn stream(&mut self, chunks: &[&[u8]], finish: bool) -> Result<StreamRun, EngineError> {
        let request = Request {
            id: self.engine.next_id(self.case, "stream"),
            mode: Mode::Stream,
            partial: !finish,
            chunks: Some(
                chunks
                    .iter()
                    .map(|c| String::from_utf8_lossy(c).into_owned())
                    .collect(),
            ),
            finish: Some(finish),
            ..self.base.clone()
        };
        let response = self.engine.call(&request)?;
        if let Some(error) = answer_error(&response) {
            return Err(error);
        }
        let deltas = response
            .deltas
            .ok_or_else(|| EngineError::Protocol("a stream answer without `deltas`".into()))?;
        let snapshots = response
            .snapshots
            .unwrap_or_default()
            .iter()
            .map(|s| s.as_ref().map(message).transpose())
            .collect::<Result<_, _>>()?;
        Ok(StreamRun {
            deltas,
            snapshots,
            message: response.message.as_ref().map(message).transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let line = r#"{"a": "x\ud83d", "b": "\ud83d\ude00", "c": "\\ud83d", "d": "\udc00y"}"#;
        let fixed = replace_lone_surrogates(line);
        let value: Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(value["a"], "x\u{FFFD}");
        assert_eq!(value["b"], "😀");
        assert_eq!(value["c"], "\\ud83d");
        assert_eq!(value["d"], "\u{FFFD}y");
    }

    #[test]
    fn responses_must_carry_the_version_and_the_id() {
        assert!(parse_response(r#"{"v": 1, "id": "a", "message": {}}"#, "a").is_ok());
        assert!(parse_response(r#"{"v": 2, "id": "a"}"#, "a").is_err());
        assert!(parse_response(r#"{"v": 1, "id": "b"}"#, "a").is_err());
        assert!(parse_response("hello", "a").is_err());
    }
}
