//! `chatparse check [DIR] [--templates DIR]`: runs a fixture corpus outside `cargo test`, or
//! analyses and round-trips every template of a directory; prints a summary table and ends
//! with `N passed, M failed`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::fixtures::summary::{check_corpus, check_templates};

/// Run a fixture corpus (default `fixtures`): every case one shot and streamed, plus sample
/// round trips per model. With `--templates DIR`: analyse every `*.jinja` in DIR and round-trip
/// the sample messages through it.
///
/// Units: one per case (or per template with `--templates`). A case passes when its one-shot
/// parse and its streaming both match the expectation; cases listed in `known_failures.txt`
/// count as failed but do not make the exit status fail. Exit status 1 when a case fails
/// unlisted, a listed case passes, or (with `--templates`) a template fails.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The fixture corpus directory.
    #[arg(default_value = "fixtures")]
    dir: PathBuf,
    /// Check every template in this directory instead (analysis + round trip).
    #[arg(long, value_name = "DIR")]
    templates: Option<PathBuf>,
    /// Engines to run the corpus against instead of the built-in parser alone.
    #[command(flatten)]
    engines: super::check_engines::EngineArgs,
}

/// Formats rows as a left-aligned table with a header.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_owned() + "\n"
    };
    let mut out = line(header.iter().map(|h| (*h).to_owned()).collect());
    for row in rows {
        out.push_str(&line(row.clone()));
    }
    out
}

/// Runs the subcommand.
pub fn run(args: &CheckArgs) -> ExitCode {
    match &args.templates {
        Some(dir) => run_templates(dir),
        None if args.engines.active() => super::check_engines::run(&args.dir, &args.engines),
        None => run_corpus(args),
    }
}

fn run_corpus(args: &CheckArgs) -> ExitCode {
    let rows = match check_corpus(&args.dir) {
        Ok(rows) => rows,
        Err(why) => {
            eprintln!("chatparse check: {why}");
            return ExitCode::from(2);
        }
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.model.clone(),
                r.cases.to_string(),
                r.passed.to_string(),
                r.known.to_string(),
                r.streaming_ok.to_string(),
                r.round_trips.show(),
                match r.differential {
                    (_, 0) => "-".to_owned(),
                    (agree, n) => format!("{agree}/{n}"),
                },
                r.note.clone(),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "model",
                "cases",
                "passed",
                "known",
                "streaming ok",
                "round trip ok",
                "differential ok",
                "",
            ],
            &cells
        )
    );
    let unexpected: Vec<&String> = rows.iter().flat_map(|r| &r.unexpected).collect();
    if !unexpected.is_empty() {
        println!("\nunexpected:");
        for line in &unexpected {
            println!("  {line}");
        }
    }
    let cases: usize = rows.iter().map(|r| r.cases).sum();
    let passed: usize = rows.iter().map(|r| r.passed).sum();
    println!("{passed} passed, {} failed", cases - passed);
    if unexpected.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn run_templates(dir: &std::path::Path) -> ExitCode {
    let rows = match check_templates(dir) {
        Ok(rows) => rows,
        Err(why) => {
            eprintln!("chatparse check: {why}");
            return ExitCode::from(2);
        }
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.template.clone(),
                r.unsupported.to_string(),
                r.round_trips.show(),
                r.round_trips.skipped.to_string(),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "template",
                "unsupported parts",
                "round trip ok",
                "not renderable"
            ],
            &cells
        )
    );
    let failures: Vec<&String> = rows.iter().flat_map(|r| &r.failures).collect();
    if !failures.is_empty() {
        println!("\nfailures:");
        for line in &failures {
            println!("  {line}");
        }
    }
    let passed = rows.iter().filter(|r| r.passed()).count();
    println!("{passed} passed, {} failed", rows.len() - passed);
    if passed == rows.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::table;

    #[test]
    fn table_aligns_columns() {
        let rows = vec![vec!["qwen3".to_owned(), "20".to_owned()]];
        assert_eq!(
            table(&["model", "cases"], &rows),
            "model  cases\nqwen3  20\n"
        );
    }
}
