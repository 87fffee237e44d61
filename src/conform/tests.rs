//! Tests of kind detection and reporting.

use super::*;
use serde_json::json;

#[test]
fn kinds_are_told_apart_by_fields() {
    let cases = [
        (
            json!({"a": "", "b": "", "prefix": "", "left": "", "right": "", "suffix": ""}),
            Some(CaseKind::DiffSplit),
        ),
        (
            json!({"input": "", "segments": []}),
            Some(CaseKind::Segments),
        ),
        (
            json!({"fn": "until_common_prefix", "full": "", "left": "", "right": "", "result": ""}),
            Some(CaseKind::CommonAffix),
        ),
        (
            json!({"template": "t", "request": {}, "output": "", "expected": {}}),
            Some(CaseKind::Chat),
        ),
        (
            json!({"kind": "parse", "template": {}, "text": ""}),
            Some(CaseKind::ResponseTemplate),
        ),
        (
            json!({"kind": "unit_coerce", "input": {}, "expected": 1}),
            Some(CaseKind::ResponseTemplate),
        ),
        (
            json!({"template": "t", "production_handler": "autoparser", "analysis": {}}),
            Some(CaseKind::Analysis),
        ),
        (json!({"something": "else"}), None),
    ];
    for (case, kind) in cases {
        assert_eq!(CaseKind::detect(&case), kind, "{case}");
    }
}

#[test]
fn cases_that_do_not_apply_are_skipped_not_passed() {
    let jsonl = r#"{"template": "t", "production_handler": "specialized:x", "analysis": {}}"#;
    let report = run_str("analysis.jsonl", jsonl, &Context::default());
    assert_eq!(
        (report.passed, report.failed(), report.skipped_total()),
        (0, 0, 1)
    );
    let mut out = Vec::new();
    report.write_to(&mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "skipped 1 analysis cases: llama.cpp does not use its own analysis for them \
         (specialized handler)\n0 passed, 0 failed\n"
    );
}

#[test]
fn an_analysis_case_of_a_missing_template_fails() {
    let jsonl =
        r#"{"template": "no-such.jinja", "production_handler": "autoparser", "analysis": {}}"#;
    let ctx = Context {
        templates_dir: Some("/nonexistent".into()),
        ..Context::default()
    };
    let report = run_str("analysis.jsonl", jsonl, &ctx);
    assert_eq!((report.passed, report.failed()), (0, 1));
    assert!(report.failures[0].message.contains("cannot read template"));
}

#[test]
fn failures_name_the_case_and_show_a_short_diff() {
    let jsonl = concat!(
        r#"{"id": "s1", "input": "a<b>", "segments": [{"kind": "TEXT", "value": "a<b>"}]}"#,
        "\n\n",
        r#"{"a": "x", "b": "y", "prefix": "", "left": "x", "right": "z", "suffix": ""}"#,
        "\n",
        r#"{"a": 1}"#,
    );
    let report = run_str("f.jsonl", jsonl, &Context::default());
    let locations: Vec<_> = report
        .failures
        .iter()
        .map(|f| f.location.as_str())
        .collect();
    assert_eq!(locations, ["s1", "f.jsonl:3", "f.jsonl:4"]);
    assert_eq!(
        report.failures[1].message,
        r#"right: at byte 0: expected "z" got "y""#
    );
}

#[test]
fn short_diff_shows_context_around_the_first_difference() {
    let long = "x".repeat(100);
    let diff = short_diff(&format!("{long}A"), &format!("{long}B"));
    let context = "x".repeat(24);
    assert_eq!(
        diff,
        format!("at byte 100: expected …\"{context}A\" got …\"{context}B\"")
    );
    assert_eq!(escape("日本語", 2), "\"日本\"…");
}
