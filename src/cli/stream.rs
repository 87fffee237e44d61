//! `chatparse stream --template T.jinja [--request R.json] [--chunk N] [INPUT|-]`: feeds the
//! output in chunks and prints each delta as a JSON line, then the final message.

use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::parse::load;

/// Stream model output through the parser in chunks: one JSON line per non-empty delta
/// (OpenAI `delta` shape), then a line `{"message": ...}` with the final message.
#[derive(Debug, Args)]
pub struct StreamArgs {
    /// The Jinja chat template file.
    #[arg(long, value_name = "T.jinja")]
    template: PathBuf,
    /// The chat request (messages, tools, options) as JSON.
    #[arg(long, value_name = "R.json")]
    request: Option<PathBuf>,
    /// Chunk size in bytes (chunks may cut UTF-8 sequences; the parser waits for the rest).
    #[arg(long, default_value_t = 4)]
    chunk: usize,
    /// The model output file (`-` or nothing: stdin).
    input: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: &StreamArgs) -> ExitCode {
    let loaded = match load(&args.template, args.request.as_ref(), args.input.as_ref()) {
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
