//! The comparison as one self-contained HTML page (inline style, no script, nothing fetched):
//! the table with a column group per engine, the fuzz regressions, and per engine every failing
//! case in a `<details>` block with why it failed, a diff of the expected and the one-shot
//! message, and the raw output.
//!
//! Element ids the page guarantees (its tests look for them): `summary` (the table),
//! `regressions`, and `failures-<n>` for the `n`-th engine's failures (0-based).

use std::fmt::Write;

use crate::engine::corpus::{CaseResult, Totals};
use crate::fixtures::diff::unified;

use super::table::COLUMNS;
use super::Comparison;

/// `text` escaped for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td:first-child { white-space: nowrap; }
th.engine { background: #eef; }
td.all { background: #dfd; } td.some { background: #ffd; } td.none { background: #fdd; }
td.bad { background: #fdd; } td.na { color: #999; text-align: center; }
tr.total td { font-weight: bold; border-top: 2px solid #888; }
details { margin: .3em 0; border: 1px solid #ddd; padding: .2em .5em; }
summary { cursor: pointer; }
pre { background: #f7f7f7; padding: .5em; overflow-x: auto; white-space: pre-wrap; }
.add { color: #070; } .del { color: #a00; } .why { color: #a00; }
";

fn ratio_class(passed: usize, of: usize) -> &'static str {
    if of == 0 || passed == of {
        "all"
    } else if passed == 0 {
        "none"
    } else {
        "some"
    }
}

fn engine_cells(out: &mut String, t: &Totals) {
    let runnable = t.cases - t.unsupported;
    if t.cases > 0 && runnable == 0 {
        let _ = write!(
            out,
            "<td class=\"na\" colspan=\"{}\">unsupported</td>",
            COLUMNS.len()
        );
        return;
    }
    for (value, class) in [
        (t.one_shot, ratio_class(t.one_shot, runnable)),
        (t.streamed, ratio_class(t.streamed, runnable)),
        (t.retractions, if t.retractions > 0 { "bad" } else { "" }),
        (t.errors, if t.errors > 0 { "bad" } else { "" }),
        (t.timeouts, if t.timeouts > 0 { "bad" } else { "" }),
    ] {
        let _ = write!(out, "<td class=\"n {class}\">{value}</td>");
    }
}

fn diff_block(expected: &str, actual: &str) -> String {
    let mut out = String::from("<pre class=\"diff\">");
    for line in unified(expected, actual, 3, false).lines() {
        let class = match line.chars().next() {
            Some('+') if !line.starts_with("+++") => "add",
            Some('-') if !line.starts_with("---") => "del",
            _ => "",
        };
        let _ = writeln!(out, "<span class=\"{class}\">{}</span>", escape(line));
    }
    out.push_str("</pre>");
    out
}

fn pretty(value: Option<&serde_json::Value>) -> String {
    value
        .map(|v| serde_json::to_string_pretty(v).unwrap_or_default() + "\n")
        .unwrap_or_default()
}

fn what_failed(case: &CaseResult) -> String {
    let mut parts = Vec::new();
    if !case.one_shot_passed {
        parts.push("one shot");
    }
    if !case.streamed_passed {
        parts.push("streamed");
    }
    if case.retraction.is_some() {
        parts.push("retraction");
    }
    if case.error.is_some() {
        parts.push("error");
    }
    if case.timeout {
        parts.push("timeout");
    }
    parts.join(", ")
}

fn failure(out: &mut String, case: &CaseResult) {
    let known = case
        .known
        .as_ref()
        .map(|k| format!(" <em>(known failure: {})</em>", escape(k)))
        .unwrap_or_default();
    let _ = write!(
        out,
        "<details class=\"failure\"><summary><code>{}/{}</code>: {}{known}</summary>",
        escape(&case.model),
        escape(&case.case),
        escape(&what_failed(case))
    );
    if !case.note.is_empty() {
        let _ = write!(out, "<p>note: {}</p>", escape(&case.note));
    }
    for (label, text) in [
        ("one shot", &case.one_shot_failure),
        ("streamed", &case.stream_failure),
        ("retraction", &case.retraction),
        ("error", &case.error),
    ] {
        if let Some(text) = text {
            let _ = write!(out, "<p class=\"why\"><b>{label}:</b> {}</p>", escape(text));
        }
    }
    if case.expected.is_some() && case.actual.is_some() {
        out.push_str("<p>expected (−) vs one-shot message (+):</p>");
        out.push_str(&diff_block(
            &pretty(case.expected.as_ref()),
            &pretty(case.actual.as_ref()),
        ));
    } else if case.expected.is_some() {
        out.push_str("<p>expected:</p><pre>");
        out.push_str(&escape(&pretty(case.expected.as_ref())));
        out.push_str("</pre>");
    }
    let _ = writeln!(
        out,
        "<p>raw output{}:</p><pre class=\"output\">{}</pre></details>",
        if case.partial { " (cut off)" } else { "" },
        escape(&case.output)
    );
}

/// The page.
pub fn render(comparison: &Comparison) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<title>chatparse engine comparison</title><style>");
    out.push_str(STYLE);
    out.push_str("</style></head><body>\n<h1>Engine comparison</h1>\n");
    let _ = writeln!(
        out,
        "<p>Corpus <code>{}</code>, engine protocol version {}. Per model and engine: cases \
         passed one shot (<b>1shot</b>), passed streamed in every chunking (<b>stream</b>), and \
         cases with a retraction (<b>retr</b>), an engine error (<b>err</b>) or a timeout \
         (<b>t/o</b>).</p>",
        escape(&comparison.corpus),
        comparison.protocol
    );
    out.push_str(
        "<table id=\"summary\"><thead><tr><th rowspan=\"2\">model</th><th rowspan=\"2\">cases</th>",
    );
    for engine in &comparison.engines {
        let _ = write!(
            out,
            "<th class=\"engine\" colspan=\"{}\">{}</th>",
            COLUMNS.len(),
            escape(engine)
        );
    }
    out.push_str("</tr><tr>");
    for _ in &comparison.engines {
        for column in COLUMNS {
            let _ = write!(out, "<th>{column}</th>");
        }
    }
    out.push_str("</tr></thead><tbody>\n");
    for model in &comparison.models {
        let _ = write!(
            out,
            "<tr><td title=\"{}\"><code>{}</code>{}</td><td class=\"n\">{}</td>",
            escape(&model.family),
            escape(&model.model),
            if model.note.is_empty() {
                String::new()
            } else {
                format!(" <small>{}</small>", escape(&model.note))
            },
            model.cases
        );
        for t in &model.totals {
            engine_cells(&mut out, t);
        }
        out.push_str("</tr>\n");
    }
    let _ = write!(
        out,
        "<tr class=\"total\"><td>total</td><td class=\"n\">{}</td>",
        comparison.models.iter().map(|m| m.cases).sum::<usize>()
    );
    for t in comparison.totals() {
        engine_cells(&mut out, &t);
    }
    out.push_str("</tr></tbody></table>\n");

    if !comparison.regressions.is_empty() {
        out.push_str("<h2>Fuzz regressions (stream target)</h2><table id=\"regressions\"><tr><th>engine</th><th>replayed</th><th>passed</th><th>errors</th><th>timeouts</th><th>unsupported</th></tr>\n");
        for run in &comparison.regressions {
            let n = |f: fn(&crate::engine::regressions::RegressionResult) -> bool| {
                run.results.iter().filter(|r| f(r)).count()
            };
            let passed = n(|r| r.passed);
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n {}\">{passed}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                escape(&run.engine),
                run.results.len(),
                ratio_class(passed, run.results.len()),
                n(|r| r.error),
                n(|r| r.timeout),
                n(|r| r.unsupported)
            );
        }
        out.push_str("</table>\n");
        for run in &comparison.regressions {
            for r in run.results.iter().filter(|r| !r.passed && !r.unsupported) {
                let _ = writeln!(
                    out,
                    "<details class=\"regression\"><summary>{}: <code>{}</code> ({})</summary><p class=\"why\">{}</p></details>",
                    escape(&run.engine),
                    escape(&r.file),
                    escape(&r.fixture),
                    escape(r.why.as_deref().unwrap_or_default())
                );
            }
        }
    }

    for (n, engine) in comparison.engines.iter().enumerate() {
        let failing: Vec<&CaseResult> = comparison
            .cases
            .iter()
            .filter(|c| &c.engine == engine && !c.passed() && !c.unsupported)
            .collect();
        let _ = writeln!(
            out,
            "<h2 id=\"failures-{n}\">{}: {} failing case{}</h2>",
            escape(engine),
            failing.len(),
            if failing.len() == 1 { "" } else { "s" }
        );
        for case in failing {
            failure(&mut out, case);
        }
    }
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_case_shows_its_reasons_diff_and_output() {
        use crate::engine::corpus::ModelResults;
        let case = CaseResult {
            engine: "peer".into(),
            model: "qwen3".into(),
            case: "tool-call".into(),
            one_shot_failure: Some("content: expected \"\", got \"<tool_call>\"".into()),
            stream_failure: Some("stream (chars) final: ...".into()),
            output: "<tool_call>{}</tool_call>".into(),
            expected: Some(serde_json::json!({"tool_calls": [{"name": "f", "arguments": {}}]})),
            actual: Some(serde_json::json!({"content": "<tool_call>{}</tool_call>"})),
            ..CaseResult::default()
        };
        let comparison = Comparison {
            engines: vec!["peer".into()],
            models: vec![ModelResults {
                model: "qwen3".into(),
                cases: 1,
                totals: vec![Totals {
                    cases: 1,
                    ..Totals::default()
                }],
                ..ModelResults::default()
            }],
            cases: vec![case],
            ..Comparison::default()
        };
        let page = render(&comparison);
        for needle in [
            "<td class=\"n none\">0</td>",
            "<code>qwen3/tool-call</code>: one shot, streamed",
            "<b>one shot:</b> content: expected &quot;&quot;, got &quot;&lt;tool_call&gt;&quot;",
            "<span class=\"del\">-",
            "<span class=\"add\">+",
            "<pre class=\"output\">&lt;tool_call&gt;{}&lt;/tool_call&gt;</pre>",
        ] {
            assert!(page.contains(needle), "{needle}\n{page}");
        }
    }

    #[test]
    fn escaping_covers_markup() {
        assert_eq!(
            escape(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
