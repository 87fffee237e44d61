//! `chatparse parse --response-template` and `chatparse stream --response-template` (no shared
//! data needed: the template and the output are written to a temporary directory).

use std::path::PathBuf;
use std::process::Command;

use chatparse::response_template::{parse_response, ResponseTemplate};
use serde_json::{json, Value};

const TEMPLATE: &str = r#"{
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": true,
                       "content": "json",
                       "transform": {"type": "function", "function": "{content}"}},
        "content": {"close": "<|im_end|>"}
    }
}"#;

const OUTPUT: &str = "<think>Which city? é</think>Checking.\n<tool_call>{\"name\": \"f\", \
                      \"arguments\": {\"city\": \"Zürich\"}}</tool_call><|im_end|>";

/// Writes the template and the output to a fresh directory; returns their paths.
fn files() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("rt.json");
    let output = dir.path().join("output.txt");
    std::fs::write(&template, TEMPLATE).unwrap();
    std::fs::write(&output, OUTPUT).unwrap();
    (dir, template, output)
}

fn run(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_chatparse"))
        .args(args)
        .output()
        .expect("the chatparse binary runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn expected() -> Value {
    let tpl = ResponseTemplate::from_json_str(TEMPLATE).unwrap();
    parse_response(&tpl, OUTPUT, Some(""), None).unwrap()
}

#[test]
fn parse_with_a_response_template_prints_the_dict() {
    let (_dir, template, output) = files();
    let printed = run(&[
        "parse",
        "--response-template",
        template.to_str().unwrap(),
        output.to_str().unwrap(),
    ]);
    let message: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(message, expected());
    assert_eq!(message["thinking"], "Which city? é");
    assert_eq!(message["content"], "Checking.");
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"]["city"],
        "Zürich"
    );
}

#[test]
fn stream_with_a_response_template_prints_events_then_the_dict() {
    let (_dir, template, output) = files();
    let printed = run(&[
        "stream",
        "--response-template",
        template.to_str().unwrap(),
        "--chunk",
        "3",
        output.to_str().unwrap(),
    ]);
    let lines: Vec<Value> = printed
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (last, events) = lines.split_last().unwrap();
    assert_eq!(last, &json!({ "message": expected() }));
    // Chunks of a field, merged, give its raw text; every event has the reference's shape.
    let thinking: String = events
        .iter()
        .filter(|e| e["type"] == "region_chunk" && e["field"] == "thinking")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(thinking, "Which city? é");
    let closes: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "region_close")
        .collect();
    let fields: Vec<&str> = closes.iter().filter_map(|e| e["field"].as_str()).collect();
    assert_eq!(fields, ["thinking", "content", "tool_calls"]);
    assert_eq!(closes[2]["value"]["function"]["name"], "f");
    assert!(events.len() > 6, "small chunks give many events");
}
