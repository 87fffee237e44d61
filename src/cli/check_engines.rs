//! `chatparse check --engine A [--engine B ...] [DIR]`: runs the fixture corpus against
//! engines and prints the comparison table; writes it as JSON and HTML.
//!
//! An engine is `chatparse` (the generated parser), `chatparse-rt` (the folders' response
//! templates), or a command speaking the engine protocol (`NAME=COMMAND` names it). Exit
//! status 1 when an engine fails a case it supports (for `chatparse`, unless the case is in
//! `known_failures.txt`) or a fuzz regression, 2 when the corpus cannot be read.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::engine::corpus::compare_engines;
use crate::engine::{engine_from_spec, Engine};
use crate::fixtures::summary::progress;
use crate::report::{html, json, table};

/// The engine options of `chatparse check`.
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// Run the corpus against this engine (repeat to compare): `chatparse`, `chatparse-rt`, or
    /// a command speaking the engine protocol (`NAME=COMMAND` names its column).
    #[arg(long = "engine", value_name = "ENGINE")]
    pub engines: Vec<String>,
    /// Seconds an engine may take to answer one request before it is stopped and the case
    /// counted as a timeout.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub timeout: f64,
    /// Where to write `report.json` and `report.html`.
    #[arg(long, value_name = "DIR", default_value = "target/engine-report")]
    pub out: PathBuf,
    /// The `stream` fuzz regressions to replay against each engine (default:
    /// `tests/regressions/stream` when it exists).
    #[arg(long, value_name = "DIR")]
    pub regressions: Option<PathBuf>,
}

impl EngineArgs {
    /// Whether engines were asked for.
    pub fn active(&self) -> bool {
        !self.engines.is_empty()
    }
}

/// Runs the comparison over the corpus at `dir`.
pub fn run(dir: &Path, args: &EngineArgs) -> ExitCode {
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        eprintln!("chatparse check: --timeout must be a positive number of seconds");
        return ExitCode::from(2);
    }
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut engines: Vec<Box<dyn Engine>> = Vec::new();
    for spec in &args.engines {
        match engine_from_spec(spec, timeout) {
            Ok(engine) => engines.push(engine),
            Err(why) => {
                eprintln!("chatparse check: --engine {spec}: {why}");
                return ExitCode::from(2);
            }
        }
    }
    let regressions = args
        .regressions
        .clone()
        .or_else(|| Some(PathBuf::from("tests/regressions/stream")).filter(|d| d.is_dir()));
    let comparison = match compare_engines(dir, &engines, regressions.as_deref(), progress) {
        Ok(comparison) => comparison,
        Err(why) => {
            eprintln!("chatparse check: {why}");
            return ExitCode::from(2);
        }
    };
    print!("{}", table::render(&comparison));
    println!();
    print!("{}", table::summary(&comparison));
    print!("{}", table::regressions(&comparison));
    let written = std::fs::create_dir_all(&args.out)
        .and_then(|()| std::fs::write(args.out.join("report.json"), json::to_string(&comparison)))
        .and_then(|()| std::fs::write(args.out.join("report.html"), html::render(&comparison)));
    match written {
        Ok(()) => println!(
            "report: {} and {}",
            args.out.join("report.json").display(),
            args.out.join("report.html").display()
        ),
        Err(e) => {
            eprintln!(
                "chatparse check: cannot write the report to {}: {e}",
                args.out.display()
            );
            return ExitCode::from(2);
        }
    }
    let runs: usize = comparison.cases.iter().filter(|c| !c.unsupported).count();
    let passed = comparison
        .cases
        .iter()
        .filter(|c| !c.unsupported && c.passed())
        .count();
    println!("{passed} passed, {} failed", runs - passed);
    let regression_failed = comparison
        .regressions
        .iter()
        .flat_map(|r| &r.results)
        .any(|r| !r.passed && !r.unsupported);
    if comparison.unexpected().next().is_none() && !regression_failed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
