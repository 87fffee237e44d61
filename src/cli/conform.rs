//! `chatparse conform FILE.jsonl... [--templates DIR] [--engine ENGINE]`: runs conformance
//! vector files (the chat-template ones against any engine).

use crate::conform::{run_file, Context, EngineRef, Report};
use crate::engine::engine_from_spec;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::Duration;

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
    /// Run the chat-template vectors against this engine instead of the generated parser:
    /// `chatparse`, or a command speaking the engine protocol (`NAME=COMMAND`). Other kinds of
    /// vectors are then skipped.
    #[arg(long, value_name = "ENGINE")]
    engine: Option<String>,
    /// Seconds an engine may take to answer one request (with `--engine`).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,
}

/// Runs the subcommand.
pub fn run(args: &ConformArgs) -> ExitCode {
    let engine = match &args.engine {
        None => None,
        Some(spec) => {
            if !(args.timeout > 0.0 && args.timeout.is_finite()) {
                eprintln!("chatparse conform: --timeout must be a positive number of seconds");
                return ExitCode::from(2);
            }
            match engine_from_spec(spec, Duration::from_secs_f64(args.timeout)) {
                Ok(engine) => Some(EngineRef(Rc::from(engine))),
                Err(why) => {
                    eprintln!("chatparse conform: --engine {spec}: {why}");
                    return ExitCode::from(2);
                }
            }
        }
    };
    let mut total = Report::default();
    let mut per_file = Vec::new();
    for path in &args.files {
        // Templates default to `../templates` beside the cases file.
        let templates_dir = args.templates.clone().or_else(|| {
            path.parent()
                .map(|dir| dir.join("..").join("templates"))
                .filter(|dir| dir.is_dir())
        });
        let ctx = Context {
            templates_dir,
            engine: engine.clone(),
        };
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
