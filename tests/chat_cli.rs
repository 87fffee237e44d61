//! `chatparse parse` and `chatparse stream` on the bundled example (no shared data needed).

use std::process::Command;

const ARGS: [&str; 4] = [
    "--template",
    "examples/chatml-tools.jinja",
    "--request",
    "examples/chatml-tools.request.json",
];

fn run(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_chatparse"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
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

#[test]
fn parse_prints_the_message() {
    let mut args = vec!["parse"];
    args.extend(ARGS);
    args.push("examples/chatml-tools.output.txt");
    let message: serde_json::Value = serde_json::from_str(&run(&args)).unwrap();
    assert_eq!(message["content"], "Let me look up both cities.");
    assert!(message["reasoning_content"]
        .as_str()
        .unwrap()
        .starts_with("Two cities"));
    let calls = message["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1]["function"]["name"], "current_temperature");
    assert_eq!(
        calls[1]["function"]["arguments"],
        r#"{"city": "Oslo", "unit": "celsius"}"#
    );
}

#[test]
fn stream_prints_deltas_then_the_message() {
    let mut args = vec!["stream", "--chunk", "3"];
    args.extend(ARGS);
    args.push("examples/chatml-tools.output.txt");
    let stdout = run(&args);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (last, deltas) = lines.split_last().unwrap();
    assert!(deltas.len() > 10);
    assert_eq!(deltas[0]["role"], "assistant");
    let content: String = deltas
        .iter()
        .filter_map(|d| d["content"].as_str())
        .collect();
    assert_eq!(content, "Let me look up both cities.");
    assert_eq!(last["message"]["tool_calls"].as_array().unwrap().len(), 2);
}
