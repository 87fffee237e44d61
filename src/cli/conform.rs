//! `chatparse conform FILE.jsonl... [--templates DIR]`: runs conformance vector files.

use crate::conform::{run_file, Context, Report};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run conformance vectors (JSONL) and print one line per failing case, then `N passed, M failed`.
///
/// The kind of each case is told by its fields; kinds without a runner yet are reported as
/// skipped. With several files, a count line per file comes first. Exits with 1 when a case
/// fails.
#[derive(Debug, Args)]
pub struct ConformArgs {
    /// Vector files, one JSON case per line.
    #[arg(required = true, value_name = "FILE.jsonl")]
    files: Vec<PathBuf>,
    /// Directory of the chat templates named by chat cases (default: ../templates beside each cases file).
    #[arg(long, value_name = "DIR")]
    templates: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: &ConformArgs) -> ExitCode {
    let mut total = Report::default();
    let mut per_file = Vec::new();
    for path in &args.files {
        // Templates default to `../templates` beside the cases file.
        let templates_dir = args.templates.clone().or_else(|| {
            path.parent()
                .map(|dir| dir.join("..").join("templates"))
                .filter(|dir| dir.is_dir())
        });
        let ctx = Context { templates_dir };
        let report = run_file(path, &ctx);
        per_file.push(format!(
            "{}: {} passed, {} failed, {} skipped",
            path.display(),
            report.passed,
            report.failed(),
            report.skipped_total()
        ));
        total.merge(report);
    }
    let mut stdout = std::io::stdout().lock();
    let mut write = || -> std::io::Result<()> {
        if per_file.len() > 1 {
            for line in &per_file {
                writeln!(stdout, "{line}")?;
            }
        }
        total.write_to(&mut stdout)?;
        stdout.flush()
    };
    if write().is_err() {
        return ExitCode::from(2);
    }
    if total.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
