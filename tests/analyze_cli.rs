//! `chatparse analyze` end to end on a hand-written template.

use std::process::Command;

const TEMPLATE: &str = "{%- for m in messages -%}<|{{ m.role }}|>\
    {%- if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif -%}\
    {{ m.content }}<|end|>\n{% endfor -%}{%- if add_generation_prompt %}<|assistant|>{% endif -%}";

fn run(args: &[&str]) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.jinja");
    std::fs::write(&path, TEMPLATE).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_chatparse"))
        .arg("analyze")
        .arg(&path)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn readable_report_shows_markers_with_visible_whitespace() {
    let (ok, out) = run(&[]);
    assert!(ok);
    assert!(out.contains("Reasoning: tagged"), "{out}");
    assert!(
        out.contains("«<think>»") && out.contains("«</think>»"),
        "{out}"
    );
    assert!(out.contains("turn end              «<|end|>⏎»"), "{out}");
}

#[test]
fn json_output_parses() {
    let (ok, out) = run(&["--json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["reasoning"]["end"], "</think>");
    assert_eq!(v["content"]["mode"], "plain");
}

#[test]
fn missing_file_fails() {
    let out = Command::new(env!("CARGO_BIN_EXE_chatparse"))
        .args(["analyze", "/nonexistent/template.jinja"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}
