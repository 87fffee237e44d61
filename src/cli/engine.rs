//! `chatparse engine [--builtin NAME]`: serves a built-in engine over the engine protocol on
//! standard input and output (JSON lines), until standard input ends.
//!
//! `chatparse check --engine 'chatparse engine'` then tests the generated parser through the
//! same subprocess path as any other parser; adapter authors can diff their answers with its.

use std::process::ExitCode;

use clap::Args;

use crate::engine::serve::serve;
use crate::engine::{builtin, response_template, ChatParserEngine, Engine, ResponseTemplateEngine};

/// Serve a built-in engine over the engine protocol (JSON lines on stdin/stdout; see the
/// README, "Testing another parser").
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// The engine: `chatparse` (the parser generated from the chat template) or
    /// `chatparse-rt` (the request's response template).
    #[arg(long, value_name = "NAME", default_value = builtin::NAME)]
    builtin: String,
}

/// Runs the subcommand.
pub fn run(args: &EngineArgs) -> ExitCode {
    let engine: Box<dyn Engine> = match args.builtin.as_str() {
        builtin::NAME => Box::new(ChatParserEngine),
        response_template::NAME => Box::new(ResponseTemplateEngine),
        other => {
            eprintln!(
                "chatparse engine: unknown built-in engine {other:?} (use {} or {})",
                builtin::NAME,
                response_template::NAME
            );
            return ExitCode::from(2);
        }
    };
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    match serve(engine.as_ref(), stdin, stdout) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("chatparse engine: {e}");
            ExitCode::from(2)
        }
    }
}
