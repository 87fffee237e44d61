//! Replays the committed fuzz regressions.
//!
//! Every file under `tests/regressions/<target>/` holds the raw bytes of one (minimised) input
//! that once crashed, hung or failed fuzz target `<target>`. Each runs through the same body
//! function the fuzz target calls (`fuzz/fuzz_targets/common/<target>.rs`, included here by
//! path), on a thread with the main thread's stack size, so a case that panics fails this test
//! with its file name. `scripts/fuzz.sh regress TARGET CRASH_FILE [NAME]` adds a case; see
//! `fuzz/README.md`. Runs on stable; an empty or missing directory is fine (0 cases).

use std::path::{Path, PathBuf};

#[path = "../fuzz/fuzz_targets/common/analyze.rs"]
mod analyze;
#[path = "../fuzz/fuzz_targets/common/diff.rs"]
mod diff;
#[path = "../fuzz/fuzz_targets/common/grammar.rs"]
mod grammar;
#[path = "../fuzz/fuzz_targets/common/json.rs"]
mod json;
#[path = "../fuzz/fuzz_targets/common/peg.rs"]
mod peg;
#[path = "../fuzz/fuzz_targets/common/render_template.rs"]
mod render_template;
#[path = "../fuzz/fuzz_targets/common/response_template.rs"]
mod response_template;
#[path = "../fuzz/fuzz_targets/common/stream.rs"]
mod stream;

/// A fuzz target's body: runs one input, panics on a violated property.
type Body = fn(&[u8]);

/// Fuzz targets whose body is shared with this replay: (target name, body).
const TARGETS: &[(&str, Body)] = &[
    ("analyze", analyze::run),
    ("diff", diff::run),
    ("grammar", grammar::run),
    ("json", json::run),
    ("peg", peg::run),
    ("render_template", render_template::run),
    ("response_template", response_template::run),
    ("stream", stream::run),
];

/// Stack size of a replay thread: what a fuzz target gets on the main thread (8 MiB).
const STACK: usize = 8 << 20;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions")
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(read) => read.map(|e| e.expect("readable entry").path()).collect(),
        Err(_) => Vec::new(),
    };
    entries.sort();
    entries
}

/// Case files: everything but hidden files and notes (`*.md`).
fn is_case(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    path.is_file() && !name.starts_with('.') && !name.ends_with(".md")
}

#[test]
fn replay_fuzz_regressions() {
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    let mut total = 0;
    for dir in sorted_entries(&root()).into_iter().filter(|p| p.is_dir()) {
        let target = dir.file_name().unwrap().to_string_lossy().into_owned();
        let Some(&(_, body)) = TARGETS.iter().find(|(name, _)| *name == target) else {
            panic!(
                "tests/regressions/{target}/: no fuzz target body registered; include \
                 fuzz/fuzz_targets/common/{target}.rs in tests/fuzz_regressions.rs"
            );
        };
        let cases: Vec<PathBuf> = sorted_entries(&dir)
            .into_iter()
            .filter(|p| is_case(p))
            .collect();
        for case in &cases {
            let data = std::fs::read(case).expect("readable case");
            let outcome = std::thread::Builder::new()
                .name(format!("{target}/{}", case.display()))
                .stack_size(STACK)
                .spawn(move || body(&data))
                .expect("spawn replay thread")
                .join();
            if outcome.is_err() {
                failures.push(
                    case.strip_prefix(root())
                        .unwrap_or(case)
                        .display()
                        .to_string(),
                );
            }
        }
        total += cases.len();
        counts.push(format!("{target}: {}", cases.len()));
    }
    eprintln!(
        "fuzz regressions: replayed {total} case(s) [{}]",
        counts.join(", ")
    );
    assert!(
        failures.is_empty(),
        "failing fuzz regressions: {failures:?}"
    );
}

/// The registered bodies are fuzz targets in `fuzz/Cargo.toml`, and targets without a shared
/// body are reported (they cannot have regressions replayed yet).
#[test]
fn registered_bodies_are_fuzz_targets() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/Cargo.toml"))
            .expect("fuzz/Cargo.toml");
    let bins: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.trim().strip_prefix("name = \""))
        .filter_map(|l| l.strip_suffix('"'))
        .filter(|name| *name != "chatparse-fuzz")
        .collect();
    for (name, _) in TARGETS {
        assert!(
            bins.contains(name),
            "{name} is registered but not a [[bin]] in fuzz/Cargo.toml"
        );
    }
    for bin in &bins {
        if !TARGETS.iter().any(|(name, _)| name == bin) {
            eprintln!("NOTICE: fuzz target {bin} has no shared body in the regression replay");
        }
    }
}

/// The engines' replay of the `stream` regressions (`chatparse check --engine`) decodes inputs
/// with the fixture list of the fuzz target's body: both lists must agree.
#[test]
fn engine_replay_picks_the_fixtures_the_stream_target_picks() {
    let names: Vec<&str> = stream::FIXTURES.iter().map(|(name, _, _)| *name).collect();
    assert_eq!(
        names,
        chatparse::engine::regressions::STREAM_FIXTURES,
        "update chatparse::engine::regressions::STREAM_FIXTURES"
    );
}
