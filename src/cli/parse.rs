//! `chatparse parse --template T.jinja [--request R.json] [INPUT|-]`: parses one model output
//! into a chat message (OpenAI JSON on stdout). With `--response-template RT.json` the output is
//! parsed by that Hugging Face response template instead (no chat template needed) and the
//! parsed dict is printed.

use clap::Args;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::analyze::analyze_cached;
use crate::generate::ChatParser;
use crate::message::ChatRequest;
use crate::response_template::{parse_response, ResponseTemplate};
use crate::template::ChatTemplate;

/// Parse model output into a chat message (content, reasoning, tool calls) for a chat template.
///
/// Prints the message as JSON. A part of the output that does not follow the format is kept
/// as content and reported on stderr (where, and what was expected).
#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The Jinja chat template file (not needed with `--response-template`).
    #[arg(
        long,
        value_name = "T.jinja",
        required_unless_present = "response_template"
    )]
    template: Option<PathBuf>,
    /// The chat request (messages, tools, options) as JSON; default: one user message, no tools.
    #[arg(long, value_name = "R.json")]
    request: Option<PathBuf>,
    /// Parse with this Hugging Face response template (its JSON, or a tokenizer_config.json
    /// with a `response_template` key) instead of the chat template's analysis; prints the
    /// parsed dict. The request's `tools`, if any, drive argument coercion.
    #[arg(long, value_name = "RT.json", conflicts_with_all = ["partial", "verbose"])]
    response_template: Option<PathBuf>,
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
    let compiled = ChatTemplate::new(name, source).map_err(|e| e.to_string())?;
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
    let output = read_input(input)?;
    let template = compiled;
    let analysis = analyze_cached(&template);
    let parser = ChatParser::new(&template, &analysis, &request).map_err(|e| e.to_string())?;
    Ok(Loaded { parser, output })
}

/// The model output: a file, or stdin for `-` or no path.
fn read_input(input: Option<&PathBuf>) -> Result<Vec<u8>, String> {
    match input {
        Some(path) if path.as_os_str() != "-" => {
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        }
        _ => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            Ok(buf)
        }
    }
}

/// What `--response-template` needs: the template, the request's tools (for argument
/// coercion) and the model output.
pub(crate) struct LoadedResponse {
    pub template: ResponseTemplate,
    pub tools: Option<Vec<serde_json::Value>>,
    pub output: String,
}

pub(crate) fn load_response(
    template: &Path,
    request: Option<&PathBuf>,
    input: Option<&PathBuf>,
) -> Result<LoadedResponse, String> {
    let template = ResponseTemplate::from_path(template).map_err(|e| e.to_string())?;
    let tools = match request {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let request: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            request
                .get("tools")
                .and_then(serde_json::Value::as_array)
                .cloned()
        }
        None => None,
    };
    let output = String::from_utf8_lossy(&read_input(input)?).into_owned();
    Ok(LoadedResponse {
        template,
        tools,
        output,
    })
}

/// `parse --response-template`: prints the parsed dict (exit 1 when the output does not parse).
fn run_response_template(args: &ParseArgs, template: &Path) -> ExitCode {
    let loaded = match load_response(template, args.request.as_ref(), args.input.as_ref()) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("chatparse parse: {e}");
            return ExitCode::from(2);
        }
    };
    match parse_response(
        &loaded.template,
        &loaded.output,
        Some(""),
        loaded.tools.as_deref(),
    ) {
        Ok(message) => print_json(&message),
        Err(e) => {
            eprintln!("chatparse parse: {e}");
            ExitCode::from(1)
        }
    }
}

/// Prints a value as pretty JSON on stdout.
fn print_json<T: serde::Serialize>(value: &T) -> ExitCode {
    match serde_json::to_string_pretty(value) {
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

/// Runs the subcommand.
pub fn run(args: &ParseArgs) -> ExitCode {
    if let Some(response_template) = &args.response_template {
        return run_response_template(args, response_template);
    }
    let Some(template) = &args.template else {
        eprintln!("chatparse parse: --template or --response-template is required");
        return ExitCode::from(2);
    };
    let loaded = match load(template, args.request.as_ref(), args.input.as_ref()) {
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
    print_json(&message)
}
