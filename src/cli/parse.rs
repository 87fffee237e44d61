//! `chatparse parse --template T.jinja [--request R.json] [INPUT|-]`: parses one model output
//! into a chat message (OpenAI JSON on stdout).

use clap::Args;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::analyze::analyze_cached;
use crate::generate::ChatParser;
use crate::message::ChatRequest;
use crate::template::ChatTemplate;

/// Parse model output into a chat message (content, reasoning, tool calls) for a chat template.
///
/// Prints the message as JSON. A part of the output that does not follow the format is kept
/// as content and reported on stderr (where, and what was expected).
#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The Jinja chat template file.
    #[arg(long, value_name = "T.jinja")]
    template: PathBuf,
    /// The chat request (messages, tools, options) as JSON; default: one user message, no tools.
    #[arg(long, value_name = "R.json")]
    request: Option<PathBuf>,
    /// The output was cut off (parse it as a prefix).
    #[arg(long)]
    partial: bool,
    /// Print the format and grammar details on stderr.
    #[arg(long)]
    verbose: bool,
    /// The model output file (`-` or nothing: stdin).
    input: Option<PathBuf>,
}

/// What both `parse` and `stream` load: the parser and the model output.
pub(crate) struct Loaded {
    pub parser: ChatParser,
    pub output: Vec<u8>,
}

pub(crate) fn load(
    template: &PathBuf,
    request: Option<&PathBuf>,
    input: Option<&PathBuf>,
) -> Result<Loaded, String> {
    let source = std::fs::read_to_string(template)
        .map_err(|e| format!("cannot read {}: {e}", template.display()))?;
    let name = template
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let template = ChatTemplate::new(name, source).map_err(|e| e.to_string())?;
    let request: ChatRequest = match request {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?
        }
        None => serde_json::from_value(serde_json::json!({
            "messages": [{"role": "user", "content": "Hi"}]
        }))
        .map_err(|e| e.to_string())?,
    };
    let output = match input {
        Some(path) if path.as_os_str() != "-" => {
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?
        }
        _ => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            buf
        }
    };
    let analysis = analyze_cached(&template);
    let parser = ChatParser::new(&template, &analysis, &request).map_err(|e| e.to_string())?;
    Ok(Loaded { parser, output })
}

/// Runs the subcommand.
pub fn run(args: &ParseArgs) -> ExitCode {
    let loaded = match load(&args.template, args.request.as_ref(), args.input.as_ref()) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("chatparse parse: {e}");
            return ExitCode::from(2);
        }
    };
    let output = String::from_utf8_lossy(&loaded.output);
    if args.verbose {
        eprintln!("prefill: {:?}", loaded.parser.prefill_text());
        eprintln!(
            "format: {}",
            serde_json::to_string_pretty(loaded.parser.format()).unwrap_or_default()
        );
        eprintln!("{}", loaded.parser.grammar().dump());
    }
    let message = if args.partial {
        loaded.parser.parse_partial(&output).to_message()
    } else {
        let parsed = loaded.parser.parse(&output);
        if let Some(problem) = &parsed.problem {
            eprintln!("chatparse parse: {problem}");
        }
        parsed.message
    };
    match serde_json::to_string_pretty(&message) {
        Ok(json) => {
            use std::io::Write;
            // A closed stdout (e.g. `| head`) is not an error worth a panic.
            let _ = writeln!(std::io::stdout().lock(), "{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("chatparse parse: {e}");
            ExitCode::from(2)
        }
    }
}
