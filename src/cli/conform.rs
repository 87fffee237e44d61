//! `chatparse conform FILE.jsonl... [--templates DIR]`: runs conformance vector files.

use crate::conform::{run_file, Context, Report};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run conformance vectors (JSONL) and print one line per failing case, then `N passed, M failed`.
///
/// The kind of each case is told by its fields; kinds without a runner yet are reported as
/// skipped. Exits with 1 when a case fails.
#[derive(Debug, Args)]
pub struct ConformArgs {
    /// Vector files, one JSON case per line.
    #[arg(required = true, value_name = "FILE.jsonl")]
    files: Vec<PathBuf>,
    /// Directory of the chat templates named by chat cases (default: shared/templates).
    #[arg(long, value_name = "DIR")]
    templates: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: &ConformArgs) -> ExitCode {
    let ctx = Context {
        templates_dir: args.templates.clone(),
    };
    let mut total = Report::default();
    for path in &args.files {
        total.merge(run_file(path, &ctx));
    }
    let mut stdout = std::io::stdout().lock();
    if total
        .write_to(&mut stdout)
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::from(2);
    }
    if total.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
