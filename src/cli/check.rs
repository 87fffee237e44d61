//! `chatparse check [DIR] [--templates DIR]`: runs a fixture corpus outside `cargo test`, or
//! analyses and round-trips every template of a directory; prints a summary table and ends
//! with `N passed, M failed`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use std::collections::BTreeMap;

use crate::fixtures::summary::{check_corpus, check_templates, TemplateRow};
use crate::fixtures::template_check::Verdict;
use crate::fixtures::turn::MessagePart;

/// Run a fixture corpus (default `fixtures`): every case one shot and streamed, plus sample
/// round trips per model. With `--templates DIR`: analyse every `*.jinja` in DIR and round-trip
/// the sample messages through it (thinking off and on), each rendered output also followed by
/// its turn end, parsed with reasoning kept inline and streamed in pieces, with a verdict per
/// part: reasoning, content, tool calls.
///
/// Units: one per case (or per template with `--templates`). A case passes when its one-shot
/// parse and its streaming both match the expectation; cases listed in `known_failures.txt`
/// count as failed but do not make the exit status fail. Exit status 1 when a case fails
/// unlisted, a listed case passes, or (with `--templates`) a template fails: a part parses back
/// differently, or the analysis cannot express a part the template renders (tool calls
/// unsupported while the template renders tool definitions or calls). A template whose tool
/// calls the analysis refuses as broken is reported as refused, and one of which no example
/// message renders as a model output as unchecked (`--verbose` says why); neither is a
/// failure.
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
    /// With `--templates`: also print why samples were skipped and which parts of them the
    /// templates do not render (counts per reason).
    #[arg(long, short)]
    verbose: bool,
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
        Some(dir) => run_templates(dir, args.verbose),
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

/// Width of a reason in a table cell.
const REASON_WIDTH: usize = 34;

/// Failed samples listed per template without `--verbose`.
const FAILURES_SHOWN: usize = 4;

fn run_templates(dir: &std::path::Path, verbose: bool) -> ExitCode {
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
            let mut cells = vec![
                r.template.clone(),
                match r.verdict() {
                    Verdict::Passed => "pass",
                    Verdict::Refused => "REFUSED",
                    Verdict::Unchecked => "UNCHECKED",
                    Verdict::Failed => "FAIL",
                }
                .to_owned(),
            ];
            cells.extend(
                MessagePart::ALL
                    .iter()
                    .map(|p| r.status(*p).cell(REASON_WIDTH)),
            );
            cells.push(r.rendered.to_string());
            cells.push(r.skipped_count().to_string());
            cells
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "template",
                "verdict",
                "reasoning",
                "content",
                "tool calls",
                "rendered",
                "skipped",
            ],
            &cells
        )
    );
    let mut sections: [(&str, Vec<String>); 3] = [
        ("refused", Vec::new()),
        ("unchecked", Vec::new()),
        ("failures", Vec::new()),
    ];
    for r in &rows {
        let shown = if verbose {
            r.failures.len()
        } else {
            FAILURES_SHOWN
        };
        let mut lines: Vec<String> = r
            .problems()
            .into_iter()
            .chain(r.failures.iter().take(shown).cloned())
            .map(|line| format!("{}: {line}", r.template))
            .collect();
        if r.failures.len() > shown {
            lines.push(format!(
                "{}: … {} more failed samples (--verbose shows them)",
                r.template,
                r.failures.len() - shown
            ));
        }
        let at = match r.verdict() {
            Verdict::Refused => 0,
            Verdict::Unchecked => {
                if let Some((why, n)) = r.skipped.iter().max_by_key(|(_, n)| **n) {
                    lines.push(format!(
                        "{}: no example renders as a model output; skipped ×{n}: {why}",
                        r.template
                    ));
                }
                1
            }
            _ => 2,
        };
        sections[at].1.extend(lines);
    }
    for (title, lines) in &sections {
        if !lines.is_empty() {
            println!("\n{title}:");
            for line in lines {
                println!("  {line}");
            }
        }
    }
    if verbose {
        print_skips(&rows);
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict() == v).count();
    let (passed, refused, unchecked, failed) = (
        count(Verdict::Passed),
        count(Verdict::Refused),
        count(Verdict::Unchecked),
        count(Verdict::Failed),
    );
    println!("{passed} passed, {refused} refused, {unchecked} unchecked, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `--verbose`: why samples were skipped and which parts were not rendered, per template,
/// then the skip reasons over all templates.
fn print_skips(rows: &[TemplateRow]) {
    let mut totals: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    println!("\nskipped samples and parts not rendered, per template:");
    for r in rows {
        let not_rendered: Vec<String> = MessagePart::ALL
            .iter()
            .filter_map(|p| r.parts.get(p).map(|t| (p, t)))
            .flat_map(|(p, t)| {
                t.not_rendered
                    .iter()
                    .map(move |(how, n)| format!("{} {how} ×{n}", p.name()))
            })
            .collect();
        if r.skipped.is_empty() && not_rendered.is_empty() {
            continue;
        }
        println!("  {}:", r.template);
        for (why, n) in &r.skipped {
            println!("    skipped ×{n}: {why}");
            let total = totals.entry(why.as_str()).or_default();
            total.0 += n;
            total.1 += 1;
        }
        if !not_rendered.is_empty() {
            println!("    not rendered: {}", not_rendered.join("; "));
        }
    }
    if !totals.is_empty() {
        println!("\nskip reasons over all templates (samples, templates):");
        let mut totals: Vec<_> = totals.into_iter().collect();
        totals.sort_by_key(|t| std::cmp::Reverse(t.1));
        for (why, (n, templates)) in totals {
            println!("  {n:>4} in {templates:>2}: {why}");
        }
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
