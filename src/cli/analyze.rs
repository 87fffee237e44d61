//! `chatparse analyze TEMPLATE.jinja [--json]`: the differential analysis of a chat template.

use clap::Args;
use std::path::Path;
use std::process::ExitCode;

use crate::analyze::{analyze, report};
use crate::template::ChatTemplate;

/// Analyse a chat template: reasoning markers and prefill, content wrapping, tool-call format and
/// markers, and the parts that cannot be expressed (with reasons).
///
/// Markers are shown between « and » with visible whitespace: ⏎ line break, → tab, · space at
/// an end.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// The Jinja chat template file.
    template: String,
    /// Print the analysis as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs the subcommand.
pub fn run(args: &AnalyzeArgs) -> ExitCode {
    let source = match std::fs::read_to_string(&args.template) {
        Ok(source) => source,
        Err(e) => {
            eprintln!("chatparse analyze: cannot read {}: {e}", args.template);
            return ExitCode::from(2);
        }
    };
    let name = Path::new(&args.template).file_stem().map_or_else(
        || args.template.clone(),
        |s| s.to_string_lossy().into_owned(),
    );
    let template = match ChatTemplate::new(name.clone(), source) {
        Ok(template) => template,
        Err(e) => {
            eprintln!("chatparse analyze: {e}");
            return ExitCode::from(2);
        }
    };
    let analysis = analyze(&template);
    if args.json {
        match serde_json::to_string_pretty(&analysis) {
            Ok(json) => println!("{json}"),
            Err(e) => {
                eprintln!("chatparse analyze: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        print!("{}", report::render(&name, &analysis));
    }
    ExitCode::SUCCESS
}
