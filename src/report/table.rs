//! The comparison as a text table: one row per model folder, a column group per engine
//! (`1shot`, `stream`, `retr`, `err`, `t/o`), a totals row, and the fuzz regressions.

use crate::engine::corpus::Totals;

use super::Comparison;

/// The sub-columns of an engine's group.
pub const COLUMNS: [&str; 5] = ["1shot", "stream", "retr", "err", "t/o"];

fn cells(totals: &Totals) -> Vec<String> {
    if totals.cases > 0 && totals.unsupported == totals.cases {
        return vec!["-".to_owned(); COLUMNS.len()];
    }
    [
        totals.one_shot,
        totals.streamed,
        totals.retractions,
        totals.errors,
        totals.timeouts,
    ]
    .iter()
    .map(usize::to_string)
    .collect()
}

/// The table text.
pub fn render(comparison: &Comparison) -> String {
    let engines = &comparison.engines;
    let mut header = vec!["model".to_owned(), "cases".to_owned()];
    for _ in engines {
        header.extend(COLUMNS.iter().map(|c| (*c).to_owned()));
    }
    header.push(String::new());
    let mut rows: Vec<Vec<String>> = Vec::new();
    for model in &comparison.models {
        let mut row = vec![model.model.clone(), model.cases.to_string()];
        for totals in &model.totals {
            row.extend(cells(totals));
        }
        row.push(model.note.clone());
        rows.push(row);
    }
    let totals = comparison.totals();
    let mut total_row = vec![
        "total".to_owned(),
        comparison
            .models
            .iter()
            .map(|m| m.cases)
            .sum::<usize>()
            .to_string(),
    ];
    for t in &totals {
        total_row.extend(cells(t));
    }
    total_row.push(String::new());
    rows.push(total_row);

    let columns = header.len();
    let mut widths = vec![0; columns];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // Each engine's name spans its group; widen the group's last column if the name is longer.
    for (e, name) in engines.iter().enumerate() {
        let group = 2 + e * COLUMNS.len()..2 + (e + 1) * COLUMNS.len();
        let span: usize = widths[group.clone()].iter().sum::<usize>() + 2 * (COLUMNS.len() - 1);
        let need = name.chars().count();
        if need > span {
            widths[group.end - 1] += need - span;
        }
    }
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i >= 1 && i + 1 < columns {
                    format!("{c:>w$}")
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        padded.join("  ").trim_end().to_owned() + "\n"
    };
    let mut groups = vec![String::new(), String::new()];
    for (e, name) in engines.iter().enumerate() {
        let group = 2 + e * COLUMNS.len()..2 + (e + 1) * COLUMNS.len();
        let span: usize = widths[group].iter().sum::<usize>() + 2 * (COLUMNS.len() - 1);
        groups.push(format!("{name:^span$}"));
    }
    let mut out = String::new();
    let group_widths: Vec<usize> = std::iter::once(widths[0])
        .chain(std::iter::once(widths[1]))
        .collect();
    let mut first = String::new();
    for (i, g) in groups.iter().enumerate() {
        if i > 0 {
            first.push_str("  ");
        }
        match group_widths.get(i) {
            Some(&w) => first.push_str(&format!("{g:<w$}")),
            None => first.push_str(g),
        }
    }
    out.push_str(first.trim_end());
    out.push('\n');
    out.push_str(&line(&header));
    for row in &rows {
        out.push_str(&line(row));
    }
    out
}

/// One summary line per engine.
pub fn summary(comparison: &Comparison) -> String {
    let mut out = String::new();
    for (engine, t) in comparison.engines.iter().zip(comparison.totals()) {
        out.push_str(&format!(
            "{engine}: {} of {} cases passed (one shot {}, streamed {}), {} with retractions, \
             {} errors, {} timeouts; {} unsupported\n",
            t.passed,
            t.cases - t.unsupported,
            t.one_shot,
            t.streamed,
            t.retractions,
            t.errors,
            t.timeouts,
            t.unsupported
        ));
    }
    out
}

/// The fuzz regressions table (empty when none were replayed).
pub fn regressions(comparison: &Comparison) -> String {
    if comparison.regressions.iter().all(|r| r.results.is_empty()) {
        return String::new();
    }
    let mut out = String::from("fuzz regressions (stream target), replayed:\n");
    for run in &comparison.regressions {
        let count = |f: fn(&crate::engine::regressions::RegressionResult) -> bool| {
            run.results.iter().filter(|r| f(r)).count()
        };
        out.push_str(&format!(
            "  {}: {} of {} passed, {} errors, {} timeouts, {} unsupported\n",
            run.engine,
            count(|r| r.passed),
            run.results.len(),
            count(|r| r.error),
            count(|r| r.timeout),
            count(|r| r.unsupported)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::corpus::ModelResults;

    #[test]
    fn the_table_groups_columns_per_engine() {
        let comparison = Comparison {
            engines: vec!["chatparse".into(), "peer".into()],
            models: vec![ModelResults {
                model: "qwen3".into(),
                cases: 2,
                totals: vec![
                    Totals {
                        cases: 2,
                        one_shot: 2,
                        streamed: 2,
                        passed: 2,
                        ..Totals::default()
                    },
                    Totals {
                        cases: 2,
                        unsupported: 2,
                        ..Totals::default()
                    },
                ],
                ..ModelResults::default()
            }],
            ..Comparison::default()
        };
        let text = render(&comparison);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(
            lines[0].contains("chatparse") && lines[0].contains("peer"),
            "{text}"
        );
        assert!(
            lines[1].starts_with("model  cases  1shot  stream"),
            "{text}"
        );
        assert!(lines[2].starts_with("qwen3"), "{text}");
        assert!(lines[2].trim_end().ends_with('-'), "{text}");
        assert!(lines[3].starts_with("total"), "{text}");
    }
}
