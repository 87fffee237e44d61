//! `chatparse response-cases [--seed N] [--count N] [--start N]`: random response-template
//! cases, one JSON line each, for `scripts/hf_response_oracle.py` (which records what
//! transformers does with them in the format `chatparse conform` runs).

use crate::response_template::case_gen::generate_case;
use clap::Args;
use std::io::Write;
use std::process::ExitCode;

/// Write random response-template cases (template, prefix, text, chunk sizes) as JSON lines.
///
/// Case `i` of a seed is always the same case (its id is `gen/SEED/i`), so one case can be
/// rebuilt with `--start i --count 1`.
#[derive(Debug, Args)]
pub struct ResponseCasesArgs {
    /// The seed of the draw.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How many cases.
    #[arg(long, default_value_t = 5000)]
    count: u64,
    /// The index of the first case.
    #[arg(long, default_value_t = 0)]
    start: u64,
}

/// Runs the subcommand.
pub fn run(args: &ResponseCasesArgs) -> ExitCode {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for i in args.start..args.start.saturating_add(args.count) {
        if writeln!(out, "{}", generate_case(args.seed, i)).is_err() {
            return ExitCode::from(2);
        }
    }
    if out.flush().is_err() {
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
