//! The `chatparse` command line: argument parsing (clap) and one file per subcommand.
//!
//! - `chatparse analyze TEMPLATE` ([`analyze`]): the differential analysis of a chat template.
//! - `chatparse bench MANIFEST.jsonl [--chunk N] [--json]` ([`bench`](mod@bench)): throughput and
//!   streaming time over a benchmark manifest.
//! - `chatparse diff A B` ([`diff`]): the diff split of two strings or files.
//! - `chatparse grammar --template T --request R [--lark] [--json]` ([`grammar`](mod@grammar)):
//!   the constrained-decoding grammar, its triggers and preserved tokens.
//! - `chatparse conform FILE.jsonl...` ([`conform`]): runs conformance vector files.
//! - `chatparse parse --template T [--request R] [INPUT]` ([`parse`]): one output to a message;
//!   with `--response-template RT` (instead of `--template`), the dict that Hugging Face
//!   response template parses.
//! - `chatparse stream --template T [--request R] [--chunk N] [INPUT]` ([`stream`]): deltas;
//!   with `--response-template RT`, the response template's events, then its dict.
//! - `chatparse check [DIR] [--templates DIR]` ([`check`]): runs a fixture corpus, or analysis +
//!   round trip over a template directory; with `--engine A --engine B ...`
//!   ([`check_engines`]), runs the corpus against those engines and writes the comparison.
//! - `chatparse engine [--builtin NAME]` ([`engine`](mod@engine)): serves a built-in engine
//!   over the engine protocol.
//! - `chatparse new MODEL --template T.jinja` ([`new`]): scaffolds a fixture folder.
//! - `chatparse response-cases [--seed N] [--count N]` ([`response_cases`]): random
//!   response-template cases for the transformers oracle (`scripts/hf_response_oracle.py`).

pub mod analyze;
pub mod bench;
pub mod check;
pub mod check_engines;
pub mod conform;
pub mod diff;
pub mod engine;
pub mod grammar;
pub mod new;
pub mod parse;
pub mod response_cases;
pub mod stream;

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
enum Command {
    Analyze(analyze::AnalyzeArgs),
    Bench(bench::BenchArgs),
    Diff(diff::DiffArgs),
    Engine(engine::EngineArgs),
    Grammar(grammar::GrammarArgs),
    Conform(conform::ConformArgs),
    Parse(parse::ParseArgs),
    Stream(stream::StreamArgs),
    Check(check::CheckArgs),
    New(new::NewArgs),
    ResponseCases(response_cases::ResponseCasesArgs),
}

/// Runs the command line with the process arguments and returns the exit code.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Analyze(args) => analyze::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Engine(args) => engine::run(&args),
        Command::Grammar(args) => grammar::run(&args),
        Command::Conform(args) => conform::run(&args),
        Command::Parse(args) => parse::run(&args),
        Command::Stream(args) => stream::run(&args),
        Command::Check(args) => check::run(&args),
        Command::New(args) => new::run(&args),
        Command::ResponseCases(args) => response_cases::run(&args),
    }
}
