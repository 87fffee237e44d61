//! `chatparse bench MANIFEST.jsonl [--chunk N] [--json]`: every input of a benchmark manifest
//! (like `shared/bench/llama-cpp/manifest.jsonl`) in-process: parser build time, one-shot
//! throughput, streaming total time, and whether the result equals the manifest's `parsed`.

use clap::Args;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// `println!` that ignores a closed stdout instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

use crate::analyze::analyze_cached;
use crate::generate::ChatParser;
use crate::message::{compare, ChatMessage, ChatRequest};
use crate::template::ChatTemplate;

/// Benchmark the parser on every input of a manifest (`file`, `template`, `params`, `parsed`
/// per line): build time, one-shot MB/s, streaming total time in `--chunk`-byte feeds, and
/// correctness against `parsed`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The manifest (JSON lines).
    #[arg(value_name = "MANIFEST.jsonl")]
    manifest: PathBuf,
    /// Streaming chunk size in bytes (0: no streaming, one-shot only, e.g. for profiling).
    #[arg(long, default_value_t = 4)]
    chunk: usize,
    /// Template directory (default: `../../templates` from the manifest, or `../templates`).
    #[arg(long, value_name = "DIR")]
    templates: Option<PathBuf>,
    /// Print one JSON object per input instead of a table.
    #[arg(long)]
    json: bool,
    /// Only inputs whose file name contains this text.
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
    /// Repeat each input this many times (1 MB / 10 MB inputs from the 100 KB ones). A scaled
    /// input has no recorded expectation: "correct" then means one shot and stream agree (and,
    /// for content inputs, that the content is the expected one repeated).
    #[arg(long, default_value_t = 1)]
    scale: usize,
    /// Fixed number of one-shot and streaming runs (default: one-shot runs for at least 100 ms,
    /// best of 3 streams). `--runs 1` suits profilers.
    #[arg(long)]
    runs: Option<usize>,
}

/// Runs the subcommand.
pub fn run(args: &BenchArgs) -> ExitCode {
    let text = match std::fs::read_to_string(&args.manifest) {
        Ok(text) => text,
        Err(e) => {
            eprintln!(
                "chatparse bench: cannot read {}: {e}",
                args.manifest.display()
            );
            return ExitCode::from(2);
        }
    };
    let dir = args.manifest.parent().unwrap_or(Path::new("."));
    let templates = args.templates.clone().unwrap_or_else(|| {
        let up = dir.join("../../templates");
        if up.is_dir() {
            up
        } else {
            dir.join("../templates")
        }
    });
    if !args.json {
        outln!(
            "{:<44} {:>8} {:>9} {:>11} {:>12} {:>8}",
            "input",
            "bytes",
            "build ms",
            "1-shot MB/s",
            "stream ms",
            "correct"
        );
    }
    let mut wrong = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(only) = &args.only {
            let file = serde_json::from_str::<Value>(line).ok();
            if !file.is_some_and(|f| {
                f["file"]
                    .as_str()
                    .is_some_and(|f| f.contains(only.as_str()))
            }) {
                continue;
            }
        }
        let row = match bench_one(line, dir, &templates, args) {
            Ok(row) => row,
            Err(e) => json!({"error": e}),
        };
        if row["correct"] != json!(true) {
            wrong += 1;
        }
        if args.json {
            outln!("{row}");
        } else if let Some(e) = row.get("error") {
            outln!("error: {e}");
        } else {
            outln!(
                "{:<44} {:>8} {:>9.2} {:>11.1} {:>12.3} {:>8}",
                row["file"].as_str().unwrap_or_default(),
                row["bytes"],
                row["build_ms"].as_f64().unwrap_or_default(),
                row["oneshot_mb_s"].as_f64().unwrap_or_default(),
                row["stream_ms"].as_f64().unwrap_or_default(),
                if row["correct"] == json!(true) {
                    "yes"
                } else {
                    "NO"
                },
            );
        }
    }
    if wrong == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn bench_one(line: &str, dir: &Path, templates: &Path, args: &BenchArgs) -> Result<Value, String> {
    let chunk = args.chunk.max(1);
    let stream_runs = if args.chunk == 0 {
        0
    } else {
        args.runs.unwrap_or(3)
    };
    let scale = args.scale.max(1);
    let entry: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let file = entry["file"].as_str().ok_or("no `file`")?;
    let template_name = entry["template"].as_str().ok_or("no `template`")?;
    let output = std::fs::read_to_string(dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
    let output = output.repeat(scale);
    let source = std::fs::read_to_string(templates.join(template_name))
        .map_err(|e| format!("{template_name}: {e}"))?;
    let template = ChatTemplate::new(template_name, source).map_err(|e| e.to_string())?;
    let request: ChatRequest =
        serde_json::from_value(entry["params"].clone()).map_err(|e| e.to_string())?;
    let mut expected: Option<ChatMessage> = serde_json::from_value(entry["parsed"].clone()).ok();
    if scale > 1 {
        // Plain content (the whole file, trimmed) repeated is the expected content; anything
        // else is checked as one shot against stream.
        let raw = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        expected = expected
            .filter(|e| e.tool_calls.is_empty() && e.content == raw.trim())
            .map(|mut e| {
                e.content = raw.repeat(scale).trim().to_owned();
                e
            });
    }
    let analysis = analyze_cached(&template);
    let started = Instant::now();
    let parser = ChatParser::new(&template, &analysis, &request).map_err(|e| e.to_string())?;
    let build = started.elapsed();

    // One shot: repeat until 100 ms have passed (at least 3 runs), best run counts.
    let mut best = Duration::MAX;
    let mut runs = 0;
    let begin = Instant::now();
    let mut message = ChatMessage::assistant();
    while args.runs.map_or(
        runs < 3 || begin.elapsed() < Duration::from_millis(100),
        |n| runs < n,
    ) {
        let t = Instant::now();
        message = std::hint::black_box(parser.parse(std::hint::black_box(&output))).message;
        best = best.min(t.elapsed());
        runs += 1;
    }
    // Streaming: best of 3 total times.
    let mut stream_best = Duration::MAX;
    let mut streamed = ChatMessage::assistant();
    if stream_runs == 0 {
        stream_best = Duration::ZERO;
    }
    for _ in 0..stream_runs {
        let t = Instant::now();
        let mut stream = parser.stream();
        let mut deltas = 0usize;
        for piece in output.as_bytes().chunks(chunk) {
            deltas += usize::from(stream.feed(piece).is_some());
        }
        let (_, parsed) = stream.finish();
        std::hint::black_box(deltas);
        stream_best = stream_best.min(t.elapsed());
        streamed = parsed.message;
    }
    let correct = if scale > 1 && expected.is_none() {
        stream_runs == 0 || compare(&message, &streamed).is_ok()
    } else {
        expected.as_ref().is_some_and(|e| {
            compare(e, &message).is_ok() && (stream_runs == 0 || compare(e, &streamed).is_ok())
        })
    };
    Ok(json!({
        "file": file,
        "bytes": output.len(),
        "build_ms": build.as_secs_f64() * 1e3,
        "oneshot_mb_s": output.len() as f64 / best.as_secs_f64() / 1e6,
        "stream_ms": stream_best.as_secs_f64() * 1e3,
        "chunk": chunk,
        "correct": correct,
    }))
}
