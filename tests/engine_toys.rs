//! The harness catches broken engines: deliberately broken toy engines, run as subprocesses
//! through the engine protocol, must each be caught by the check meant for their defect; and
//! the comparison report (table, JSON, HTML) shows them. The HTML page is also loaded in
//! headless Chromium when it is installed (else a NOTICE says the headless check was skipped).
//!
//! A toy is this test binary run again with `--toy-engine MODE`: it answers with the built-in
//! engine, then breaks the answer:
//! - `drop`: loses the second chunk of every stream (one-shot answers stay right);
//! - `retract`: streams a content delta its final message does not hold;
//! - `hang`: never answers a stream request (the per-request timeout must stop it);
//! - `error`: answers every request with an error value;
//! - `garbage`: answers every request with a line that is not JSON;
//! - `split`: streams half a code point (a lone UTF-16 surrogate escape).
//!
//! `harness = false` (in Cargo.toml): `main` either serves a toy or runs the checks below.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use chatparse::engine::corpus::{compare_engines, Comparison, Totals};
use chatparse::engine::protocol::{ErrorKind, Request, Response};
use chatparse::engine::serve::answer;
use chatparse::engine::{ChatParserEngine, Engine, SubprocessEngine};
use chatparse::report::{html, json, table};

/// The cases copied into the test corpus (from `fixtures/qwen3`, whose template is local).
const CASES: [&str; 4] = [
    "think-then-call",
    "content-then-call",
    "multibyte-content",
    "partial-call",
];

fn toy(mode: &str) {
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let Ok(line) = line else { return };
        let Ok(mut request) = serde_json::from_str::<Request>(&line) else {
            return;
        };
        let streaming = request.chunks.is_some();
        let out = match (mode, streaming) {
            ("error", _) => serde_json::to_string(&Response::error(
                &request.id,
                ErrorKind::Failed,
                "toy: always fails",
            ))
            .unwrap(),
            ("garbage", _) => "this is not JSON".to_owned(),
            ("hang", true) => {
                std::thread::sleep(Duration::from_secs(3600));
                return;
            }
            ("drop", true) => {
                let chunks = request.chunks.as_mut().unwrap();
                let dropped = chunks.len() > 1;
                if dropped {
                    chunks[1].clear();
                }
                serde_json::to_string(&answer(&ChatParserEngine, &request)).unwrap()
            }
            ("retract", true) => {
                let mut response = answer(&ChatParserEngine, &request);
                if let Some(first) = response.deltas.as_mut().and_then(|d| d.first_mut()) {
                    first.push(chatparse::message::ChatDelta {
                        content: Some("~oops~".to_owned()),
                        ..Default::default()
                    });
                }
                // The engine's own view no longer matches what it streamed.
                response.snapshots = None;
                serde_json::to_string(&response).unwrap()
            }
            ("split", true) => {
                let mut response = answer(&ChatParserEngine, &request);
                response.snapshots = None;
                let text = serde_json::to_string(&response).unwrap();
                // Half of U+1F600 in front of the first chunk's deltas.
                text.replacen(
                    "\"deltas\":[[",
                    "\"deltas\":[[{\"content\":\"\\ud83d\"},",
                    1,
                )
            }
            _ => serde_json::to_string(&answer(&ChatParserEngine, &request)).unwrap(),
        };
        if writeln!(stdout, "{out}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}

/// A corpus of one model with [`CASES`], in a fresh temporary directory.
fn corpus() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/qwen3");
    let dir = std::env::temp_dir().join(format!("chatparse-engine-toys-{}", std::process::id()));
    let model = dir.join("qwen3");
    std::fs::create_dir_all(&model).unwrap();
    for file in ["model.json", "template.jinja"] {
        std::fs::copy(root.join(file), model.join(file)).unwrap();
    }
    for case in CASES {
        for ext in ["txt", "json"] {
            let name = format!("{case}.{ext}");
            std::fs::copy(root.join(&name), model.join(&name)).unwrap();
        }
    }
    dir
}

fn toy_engine(mode: &str, timeout: Duration) -> Box<dyn Engine> {
    let exe = std::env::current_exe().unwrap().display().to_string();
    Box::new(SubprocessEngine::new(
        format!("toy-{mode}"),
        vec![exe, "--toy-engine".into(), mode.into()],
        timeout,
    ))
}

fn reference_engine() -> Box<dyn Engine> {
    Box::new(SubprocessEngine::new(
        "chatparse-engine",
        vec![env!("CARGO_BIN_EXE_chatparse").into(), "engine".into()],
        Duration::from_secs(30),
    ))
}

fn run(corpus: &Path, engines: Vec<Box<dyn Engine>>) -> Comparison {
    compare_engines(corpus, &engines, None, |_, _, _| {}).unwrap()
}

fn totals(comparison: &Comparison, engine: usize) -> Totals {
    comparison.totals()[engine]
}

fn reasons(comparison: &Comparison, engine: &str) -> Vec<String> {
    comparison
        .cases
        .iter()
        .filter(|c| c.engine == engine)
        .flat_map(|c| [c.stream_failure.clone(), c.one_shot_failure.clone()])
        .flatten()
        .collect()
}

type Check = fn(&Path) -> Result<(), String>;

fn ensure(ok: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(why())
    }
}

/// The built-in engine, through the protocol, passes every case: the toys' defects are theirs.
fn the_reference_engine_passes(corpus: &Path) -> Result<(), String> {
    let c = run(corpus, vec![reference_engine()]);
    let t = totals(&c, 0);
    ensure(
        t.passed == CASES.len() && t.retractions + t.errors + t.timeouts == 0,
        || format!("{t:?}\n{}", table::render(&c)),
    )
}

fn a_dropped_chunk_fails_streaming_only(corpus: &Path) -> Result<(), String> {
    let c = run(corpus, vec![toy_engine("drop", Duration::from_secs(30))]);
    let t = totals(&c, 0);
    ensure(
        t.one_shot == CASES.len() && t.streamed == 0 && t.errors + t.timeouts == 0,
        || format!("{t:?}\n{:?}", reasons(&c, "toy-drop")),
    )
}

fn a_retracted_delta_is_counted(corpus: &Path) -> Result<(), String> {
    let c = run(corpus, vec![toy_engine("retract", Duration::from_secs(30))]);
    let t = totals(&c, 0);
    let why = reasons(&c, "toy-retract");
    ensure(
        t.one_shot == CASES.len()
            && t.retractions == CASES.len()
            && t.streamed == 0
            && why
                .iter()
                .any(|w| w.contains("retraction: content streamed")),
        || format!("{t:?}\n{why:?}"),
    )
}

fn a_hanging_engine_times_out(corpus: &Path) -> Result<(), String> {
    let c = run(
        corpus,
        vec![toy_engine("hang", Duration::from_millis(1500))],
    );
    let t = totals(&c, 0);
    ensure(
        t.timeouts == CASES.len() && t.one_shot == CASES.len() && t.streamed == 0,
        || format!("{t:?}\n{:?}", reasons(&c, "toy-hang")),
    )
}

fn error_values_are_errors(corpus: &Path) -> Result<(), String> {
    let c = run(corpus, vec![toy_engine("error", Duration::from_secs(30))]);
    let t = totals(&c, 0);
    let why = reasons(&c, "toy-error");
    ensure(
        t.errors == CASES.len()
            && t.one_shot == 0
            && t.streamed == 0
            && why.iter().any(|w| w.contains("toy: always fails")),
        || format!("{t:?}\n{why:?}"),
    )
}

fn protocol_breaks_are_errors(corpus: &Path) -> Result<(), String> {
    let c = run(corpus, vec![toy_engine("garbage", Duration::from_secs(30))]);
    let t = totals(&c, 0);
    let why = reasons(&c, "toy-garbage");
    ensure(
        t.errors == CASES.len()
            && t.passed == 0
            && why
                .iter()
                .any(|w| w.contains("protocol error: unreadable answer")),
        || format!("{t:?}\n{why:?}"),
    )
}

fn a_split_code_point_fails_streaming(corpus: &Path) -> Result<(), String> {
    let c = run(corpus, vec![toy_engine("split", Duration::from_secs(30))]);
    let t = totals(&c, 0);
    let why = reasons(&c, "toy-split");
    ensure(
        t.streamed == 0
            && t.one_shot == CASES.len()
            && why
                .iter()
                .any(|w| w.contains("a delta splits a code point")),
        || format!("{t:?}\n{why:?}"),
    )
}

/// The report of a comparison with a broken engine: the table, the JSON and the HTML page.
fn the_report_shows_the_failures(corpus: &Path) -> Result<(), String> {
    let c = run(
        corpus,
        vec![
            reference_engine(),
            toy_engine("retract", Duration::from_secs(30)),
        ],
    );
    let text = table::render(&c);
    ensure(
        text.lines()
            .next()
            .is_some_and(|l| l.contains("chatparse-engine") && l.contains("toy-retract")),
        || text.clone(),
    )?;
    let value = json::to_json(&c);
    ensure(
        value["totals"][1]["totals"]["retractions"] == CASES.len(),
        || value["totals"].to_string(),
    )?;
    let page = html::render(&c);
    for needle in [
        "id=\"summary\"",
        "id=\"failures-0\">chatparse-engine: 0 failing cases",
        "id=\"failures-1\">toy-retract: 4 failing cases",
        "<details class=\"failure\"><summary><code>qwen3/think-then-call</code>",
        "retraction: content streamed",
    ] {
        ensure(page.contains(needle), || {
            format!("the page lacks {needle:?}")
        })?;
    }
    ensure(
        !page.contains("<script") && !page.contains("http://") && !page.contains("https://"),
        || "the page is not self-contained".to_owned(),
    )?;
    headless(&page)
}

/// Loads the page in headless Chromium and checks the DOM it built.
fn headless(page: &str) -> Result<(), String> {
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        println!("NOTICE: skipping the headless check of the report: no chromium installed (apt-get install chromium)");
        return Ok(());
    };
    let dir = std::env::temp_dir().join(format!("chatparse-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join("report.html");
    std::fs::write(&file, page).map_err(|e| e.to_string())?;
    let output = std::process::Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu"])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", file.display()))
        .output()
        .map_err(|e| format!("cannot run {chromium}: {e}"))?;
    let dom = String::from_utf8_lossy(&output.stdout);
    let _ = std::fs::remove_dir_all(&dir);
    let rows = dom.matches("<tr").count();
    ensure(
        output.status.success()
            && dom.contains("<table id=\"summary\">")
            && rows >= 4
            && dom.matches("<details class=\"failure\">").count() == CASES.len()
            && dom.contains("<tr class=\"total\">")
            && dom.contains("retraction: content streamed"),
        || {
            format!(
                "headless {chromium} did not build the expected page (status {}, {rows} rows):\n{}",
                output.status,
                dom.chars().take(2000).collect::<String>()
            )
        },
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--toy-engine") {
        toy(args.get(i + 1).map(String::as_str).unwrap_or(""));
        return;
    }
    let filter: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    let checks: [(&str, Check); 8] = [
        ("the_reference_engine_passes", the_reference_engine_passes),
        (
            "a_dropped_chunk_fails_streaming_only",
            a_dropped_chunk_fails_streaming_only,
        ),
        ("a_retracted_delta_is_counted", a_retracted_delta_is_counted),
        ("a_hanging_engine_times_out", a_hanging_engine_times_out),
        ("error_values_are_errors", error_values_are_errors),
        ("protocol_breaks_are_errors", protocol_breaks_are_errors),
        (
            "a_split_code_point_fails_streaming",
            a_split_code_point_fails_streaming,
        ),
        (
            "the_report_shows_the_failures",
            the_report_shows_the_failures,
        ),
    ];
    let corpus = corpus();
    let (mut passed, mut failed) = (0, 0);
    for (name, check) in checks {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        match check(&corpus) {
            Ok(()) => {
                println!("test {name} ... ok");
                passed += 1;
            }
            Err(why) => {
                println!("test {name} ... FAILED\n{why}");
                failed += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&corpus);
    println!(
        "\ntest result: {}. {passed} passed; {failed} failed",
        if failed == 0 { "ok" } else { "FAILED" }
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
