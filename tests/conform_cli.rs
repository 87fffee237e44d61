//! End-to-end checks of `chatparse conform` and `chatparse diff` through the built binary.

use std::path::PathBuf;
use std::process::{Command, Output};

fn chatparse(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chatparse"))
        .args(args)
        .output()
        .expect("the chatparse binary runs")
}

/// Writes `contents` to a file in the temp dir that is unique to this test process.
fn temp_file(name: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("chatparse-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn conform_prints_failures_skips_and_totals() {
    let jsonl = concat!(
        r#"{"a": "x<1>", "b": "x<2>", "prefix": "x", "left": "<1>", "right": "<2>", "suffix": ""}"#,
        "\n",
        r#"{"id": "wrong", "fn": "until_common_prefix", "full": "p<a>", "left": "<a>1", "right": "<a>2", "result": "q"}"#,
        "\n",
        r#"{"template": "t", "production_handler": "specialized:x", "analysis": {}}"#,
        "\n{not json\n",
    );
    let path = temp_file("cases.jsonl", jsonl);
    let output = chatparse(&["conform", path.to_str().unwrap()]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    let file = path.display();
    assert_eq!(
        lines,
        [
            r#"FAIL wrong: at byte 0: expected "q" got "p""#.to_owned(),
            format!("FAIL {file}:4: malformed JSON: key must be a string at line 1 column 2"),
            "skipped 1 analysis cases: llama.cpp does not use its own analysis for them \
             (specialized handler)"
                .to_owned(),
            "1 passed, 2 failed".to_owned(),
        ]
    );
    assert_eq!(output.status.code(), Some(1));
    std::fs::remove_file(path).unwrap();
}

#[test]
fn conform_succeeds_when_nothing_fails() {
    let path = temp_file(
        "ok.jsonl",
        r#"{"input": "<a>b", "segments": [{"kind": "MARKER", "value": "<a>"}, {"kind": "TEXT", "value": "b"}]}"#,
    );
    let output = chatparse(&["conform", path.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "1 passed, 0 failed\n"
    );
    assert!(output.status.success());
    std::fs::remove_file(path).unwrap();
}

#[test]
fn diff_json_and_pair_file() {
    let output = chatparse(&["diff", "--json", "a<b1>c", "a<b2>c"]);
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "{\"prefix\":\"a\",\"left\":\"<b1>\",\"right\":\"<b2>\",\"suffix\":\"c\"}\n"
    );
    let pair = temp_file("pair", "<p>x\n</p>\0<p>y\n</p>");
    let output = chatparse(&["diff", "--pair", pair.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "── prefix: common start, 3 bytes, 1 marker ──\n<p>\n\
         ── left: only in A, 1 bytes, 0 markers ──\nx\n\
         ── right: only in B, 1 bytes, 0 markers ──\ny\n\
         ── suffix: common end, 5 bytes, 1 marker ──\n⏎\n</p>\n"
    );
    std::fs::remove_file(pair).unwrap();
}
