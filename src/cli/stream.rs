//! `chatparse stream --template T.jinja [--request R.json] [--chunk N] [INPUT|-]`: feeds the
//! output in chunks and prints each delta as a JSON line, then the final message. With
//! `--response-template RT.json` the response template's parser is fed instead: one JSON line
//! per event, then `{"message": ...}` with the parsed dict.

use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::parse::{load, load_response};
use crate::response_template::ResponseParser;

/// Stream model output through the parser in chunks: one JSON line per non-empty delta
/// (OpenAI `delta` shape), then a line `{"message": ...}` with the final message.
#[derive(Debug, Args)]
pub struct StreamArgs {
    /// The Jinja chat template file (not needed with `--response-template`).
    #[arg(
        long,
        value_name = "T.jinja",
        required_unless_present = "response_template"
    )]
    template: Option<PathBuf>,
    /// Stream through this Hugging Face response template's parser instead: one JSON line per
    /// event (`region_open`, `region_chunk`, `region_close`), then `{"message": ...}`.
    #[arg(long, value_name = "RT.json")]
    response_template: Option<PathBuf>,
    /// The chat request (messages, tools, options) as JSON.
    #[arg(long, value_name = "R.json")]
    request: Option<PathBuf>,
    /// Chunk size in bytes (chunks may cut UTF-8 sequences; the parser waits for the rest).
    #[arg(long, default_value_t = 4)]
    chunk: usize,
    /// The model output file (`-` or nothing: stdin).
    input: Option<PathBuf>,
}

/// `stream --response-template`: chunks never split a character (a cut moves forward to the
/// next character boundary).
fn run_response_template(args: &StreamArgs, template: &Path) -> ExitCode {
    let loaded = match load_response(template, args.request.as_ref(), args.input.as_ref()) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("chatparse stream: {e}");
            return ExitCode::from(2);
        }
    };
    let mut parser = match ResponseParser::new(&loaded.template, Some(""), loaded.tools.as_deref())
    {
        Ok(parser) => parser,
        Err(e) => {
            eprintln!("chatparse stream: {e}");
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout().lock();
    let mut lines: Vec<String> = parser
        .initial_events()
        .iter()
        .map(|e| e.to_json().to_string())
        .collect();
    let text = loaded.output.as_str();
    let step = args.chunk.max(1);
    let mut start = 0;
    let mut events = Vec::new();
    let mut failed = None;
    while start < text.len() {
        let mut end = (start + step).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let result = parser.feed_into(text.get(start..end).unwrap_or(""), &mut events);
        lines.extend(events.drain(..).map(|e| e.to_json().to_string()));
        if let Err(e) = result {
            failed = Some(e);
            break;
        }
        start = end;
    }
    let result = match failed {
        Some(e) => Err(e),
        None => parser.finalize(),
    };
    let code = match result {
        Ok((message, last)) => {
            lines.extend(last.iter().map(|e| e.to_json().to_string()));
            lines.push(serde_json::json!({ "message": message }).to_string());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("chatparse stream: {e}");
            ExitCode::from(1)
        }
    };
    for line in lines {
        if writeln!(out, "{line}").is_err() {
            return ExitCode::from(2);
        }
    }
    code
}

/// Runs the subcommand.
pub fn run(args: &StreamArgs) -> ExitCode {
    if let Some(response_template) = &args.response_template {
        return run_response_template(args, response_template);
    }
    let Some(template) = &args.template else {
        eprintln!("chatparse stream: --template or --response-template is required");
        return ExitCode::from(2);
    };
    let loaded = match load(template, args.request.as_ref(), args.input.as_ref()) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("chatparse stream: {e}");
            return ExitCode::from(2);
        }
    };
    let mut stream = loaded.parser.stream();
    let mut out = std::io::stdout().lock();
    let mut lines = Vec::new();
    for chunk in loaded.output.chunks(args.chunk.max(1)) {
        if let Some(delta) = stream.feed(chunk) {
            lines.push(serde_json::to_string(&delta).unwrap_or_default());
        }
    }
    let (delta, parsed) = stream.finish();
    if let Some(delta) = delta {
        lines.push(serde_json::to_string(&delta).unwrap_or_default());
    }
    if let Some(problem) = &parsed.problem {
        eprintln!("chatparse stream: {problem}");
    }
    lines.push(serde_json::json!({ "message": parsed.message }).to_string());
    for line in lines {
        if writeln!(out, "{line}").is_err() {
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
