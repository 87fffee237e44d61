//! Constrained-decoding grammar generation per template + request, beside the analysis bench:
//! for every template of `../shared/templates` with a tool format, the request of the round
//! trip (three tools, parallel calls where the template renders them), the internal form
//! (`constraint`: PEG translation, schemas, triggers) and each printed flavour.
//!
//! `cargo bench --bench grammar`; the median column is the per-template figure.

use std::sync::OnceLock;

use chatparse::analyze::analyze;
use chatparse::fixtures::samples::default_request;
use chatparse::generate::ChatParser;
use chatparse::grammar::{constraint, GrammarFlavor};
use chatparse::shared_data::shared_path;
use chatparse::template::ChatTemplate;
use divan::Bencher;

fn main() {
    divan::main();
}

/// The parsers of the templates with a tool format, built once.
fn parsers() -> &'static [(String, ChatParser)] {
    static PARSERS: OnceLock<Vec<(String, ChatParser)>> = OnceLock::new();
    PARSERS.get_or_init(|| {
        let Some(dir) = shared_path("templates") else {
            eprintln!("NOTICE: ../shared/templates not found, nothing to benchmark");
            return Vec::new();
        };
        let mut out = Vec::new();
        for path in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
            if path.extension().is_none_or(|e| e != "jinja") {
                continue;
            }
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let Ok(template) =
                ChatTemplate::new(name.clone(), std::fs::read_to_string(&path).unwrap())
            else {
                continue;
            };
            let analysis = analyze(&template);
            if analysis.tools.is_none() {
                continue;
            }
            let mut request = default_request();
            request.parallel_tool_calls = analysis.capabilities.parallel_tool_calls;
            if let Ok(parser) = ChatParser::new(&template, &analysis, &request) {
                if constraint(&parser).is_ok() {
                    out.push((name, parser));
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    })
}

fn names() -> Vec<&'static str> {
    parsers().iter().map(|(n, _)| n.as_str()).collect()
}

fn parser(name: &str) -> &'static ChatParser {
    &parsers().iter().find(|(n, _)| n == name).unwrap().1
}

/// The internal form: PEG translation, schema rules, triggers.
#[divan::bench(args = names())]
fn internal_form(bencher: Bencher, name: &str) {
    let p = parser(name);
    bencher.bench(|| constraint(p).unwrap());
}

/// The GBNF text, from the parser.
#[divan::bench(args = names())]
fn gbnf(bencher: Bencher, name: &str) {
    let p = parser(name);
    bencher.bench(|| p.decoding_grammar(GrammarFlavor::Gbnf).unwrap());
}

/// The Lark text, from the parser.
#[divan::bench(args = names())]
fn lark(bencher: Bencher, name: &str) {
    let p = parser(name);
    bencher.bench(|| p.decoding_grammar(GrammarFlavor::Lark).unwrap());
}
