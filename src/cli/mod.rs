//! The `chatparse` command line: argument parsing (clap) and one function per subcommand.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// chatparse: parse raw LLM output into chat messages, derived from the model's chat template.
#[derive(Debug, Parser)]
#[command(name = "chatparse", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {}

/// Runs the command line with the process arguments and returns the exit code.
#[allow(unreachable_code, unused_variables)]
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {}
}
