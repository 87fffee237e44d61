//! `chatparse grammar --template T.jinja --request R.json [--lark] [--json]`: the
//! constrained-decoding grammar of a request (GBNF by default, llguidance Lark with `--lark`),
//! its lazy triggers and the preserved tokens.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::analyze::analyze_cached;
use crate::generate::ChatParser;
use crate::grammar::{GrammarFlavor, TriggerKind};
use crate::message::ChatRequest;
use crate::template::ChatTemplate;

/// Print the constrained-decoding grammar for a template and request: GBNF (llama.cpp) or,
/// with `--lark`, llguidance's Lark; then whether it is lazy, its triggers and the preserved
/// tokens.
///
/// Without `--json` the grammar is printed as is, followed by `#` comment lines (valid in both
/// flavours) for the rest.
#[derive(Debug, Args)]
pub struct GrammarArgs {
    /// The Jinja chat template file.
    #[arg(long, value_name = "T.jinja")]
    template: PathBuf,
    /// The chat request (tools, tool_choice, parallel_tool_calls, ...) as JSON.
    #[arg(long, value_name = "R.json")]
    request: PathBuf,
    /// Print llguidance Lark instead of GBNF.
    #[arg(long)]
    lark: bool,
    /// Print one JSON object: `{"flavor", "grammar", "lazy", "triggers", "preserved_tokens"}`.
    #[arg(long)]
    json: bool,
}

fn load(args: &GrammarArgs) -> Result<ChatParser, String> {
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let source = read(&args.template)?;
    let name = args
        .template
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let compiled = ChatTemplate::new(name, source).map_err(|e| e.to_string())?;
    let request: ChatRequest = serde_json::from_str(&read(&args.request)?)
        .map_err(|e| format!("{}: {e}", args.request.display()))?;
    let template = compiled;
    let analysis = analyze_cached(&template);
    ChatParser::new(&template, &analysis, &request).map_err(|e| e.to_string())
}

/// Runs `chatparse grammar`.
pub fn run(args: &GrammarArgs) -> ExitCode {
    let parser = match load(args) {
        Ok(parser) => parser,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let flavor = if args.lark {
        GrammarFlavor::Lark
    } else {
        GrammarFlavor::Gbnf
    };
    let grammar = match parser.decoding_grammar(flavor) {
        Ok(grammar) => grammar,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.json {
        println!("{}", grammar.to_json());
        return ExitCode::SUCCESS;
    }
    print!("{}", grammar.grammar);
    println!("# lazy: {}", grammar.lazy);
    for t in &grammar.triggers {
        let kind = match t.kind {
            TriggerKind::Word => "word",
            TriggerKind::Pattern => "pattern",
        };
        println!(
            "# trigger ({kind}): {}",
            serde_json::Value::from(t.value.as_str())
        );
    }
    println!(
        "# preserved tokens: {}",
        serde_json::Value::from(grammar.preserved_tokens.clone())
    );
    ExitCode::SUCCESS
}
