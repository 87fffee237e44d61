//! Analysis time over the real templates in `../shared/templates`: uncached (capability probes
//! and all analysis renders) and cached lookup.
//!
//! `cargo bench --bench analyze`; the median column is the per-template figure.

use std::sync::OnceLock;

use chatparse::analyze::{analyze, AnalysisCache};
use chatparse::shared_data::shared_path;
use chatparse::template::ChatTemplate;
use divan::Bencher;

fn main() {
    divan::main();
}

/// The templates, compiled once.
fn templates() -> &'static [(String, ChatTemplate)] {
    static TEMPLATES: OnceLock<Vec<(String, ChatTemplate)>> = OnceLock::new();
    TEMPLATES.get_or_init(|| {
        let Some(dir) = shared_path("templates") else {
            eprintln!("NOTICE: ../shared/templates not found, nothing to benchmark");
            return Vec::new();
        };
        let mut out: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
            .map(|p| {
                let name = p.file_stem().unwrap().to_string_lossy().into_owned();
                let template =
                    ChatTemplate::new(name.clone(), std::fs::read_to_string(&p).unwrap()).unwrap();
                (name, template)
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    })
}

fn names() -> Vec<&'static str> {
    templates().iter().map(|(n, _)| n.as_str()).collect()
}

fn template(name: &str) -> &'static ChatTemplate {
    &templates().iter().find(|(n, _)| n == name).unwrap().1
}

#[divan::bench(args = names(), sample_count = 30)]
fn uncached(bencher: Bencher, name: &str) {
    let t = template(name);
    bencher.bench(|| analyze(t));
}

#[divan::bench(args = names())]
fn cached(bencher: Bencher, name: &str) {
    let t = template(name);
    let cache = AnalysisCache::new();
    cache.get(t);
    bencher.bench(|| cache.get(t));
}
