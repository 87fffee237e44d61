//! Property: AST windows (`Session::ast_from`) are exact. For the grammar of every fixture case,
//! fed byte by byte (and in 7-byte chunks), after every feed and for several hints:
//! - the window starts at or before the hint and ends where the whole AST ends;
//! - every node it holds equals the whole AST's node with the same id (tag, span, partial,
//!   parent);
//! - the nodes it leaves out are final: they are exactly the first nodes of the AST at every
//!   later step, the end of input included (unless the parse fails, which ends the session).

use std::path::Path;

use chatparse::fixtures::{Case, Corpus, Model};
use chatparse::generate::ChatParser;
use chatparse::peg::{Ast, AstNode, Session, Status};

fn same(a: &AstNode, b: &AstNode) -> bool {
    a.tag_id() == b.tag_id()
        && a.span() == b.span()
        && a.is_partial() == b.is_partial()
        && a.parent() == b.parent()
}

/// Checks the windows of the session's current AST; keeps in `settled` the longest prefix of
/// the whole AST a window left out (all such prefixes must agree: checked by `check_final`).
fn check_windows(session: &Session<'_>, at: &str, settled: &mut Vec<AstNode>, cut: &mut usize) {
    let full: Ast<'_> = session.ast();
    for hint in [0, full.end() / 2, full.end().saturating_sub(1), full.end()] {
        let window = session.ast_from(hint);
        assert!(
            window.base() <= hint,
            "{at}: window base {} > hint {hint}",
            window.base()
        );
        assert_eq!(window.end(), full.end(), "{at}: window end");
        for i in window.base()..window.end() {
            let (w, f) = (window.get(i).unwrap(), full.get(i).unwrap());
            assert!(same(w, f), "{at}: node {i} differs: {w:?} vs {f:?}");
        }
        *cut += usize::from(window.base() > 0);
        if window.base() > settled.len() {
            *settled = full.nodes()[..window.base()].to_vec();
        }
    }
}

/// The nodes left out of a window so far are still the first nodes of the AST.
fn check_final(session: &Session<'_>, at: &str, settled: &[AstNode]) {
    let full = session.ast();
    for (i, node) in settled.iter().enumerate() {
        let now = full.get(i);
        assert!(
            now.is_some_and(|n| same(n, node)),
            "{at}: settled node {i} changed: {node:?} vs {now:?}"
        );
    }
}

/// Returns how many windows left nodes out.
fn run(parser: &ChatParser, output: &str, chunk: usize, id: &str) -> usize {
    let grammar = parser.grammar();
    let mut session = grammar.session();
    session.feed_str(parser.prefill_text());
    let mut settled = Vec::new();
    let mut cut = 0;
    for (n, piece) in output.as_bytes().chunks(chunk).enumerate() {
        session.feed(piece);
        if session.status() == Status::Failure {
            return cut;
        }
        let at = format!("{id} (chunk {chunk}, feed {n})");
        check_final(&session, &at, &settled);
        check_windows(&session, &at, &mut settled, &mut cut);
    }
    if session.finish() != Status::Failure {
        check_final(&session, &format!("{id} (chunk {chunk}, end)"), &settled);
    }
    cut
}

#[test]
fn windows_match_the_whole_ast_and_leave_out_only_final_nodes() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"));
    let corpus = Corpus::open(dir).unwrap();
    let (mut ran, mut cut) = (0, 0);
    for model_dir in &corpus.models {
        let Ok(model) = Model::load(model_dir) else {
            continue;
        };
        for path in Corpus::cases(model_dir) {
            let case = Case::load(&path).unwrap();
            let request = model.request(&case.overrides()).unwrap();
            let parser = ChatParser::new(model.template(), model.analysis(), &request).unwrap();
            let id = format!("{}/{}", model.name, case.name);
            for chunk in [1, 7] {
                cut += run(&parser, &case.output, chunk, &id);
            }
            ran += 1;
        }
    }
    eprintln!("AST windows checked on {ran} fixture cases; {cut} windows left nodes out");
    assert!(ran > 100, "only {ran} fixture cases ran");
    // The property is not vacuous: finished calls and text before an open part are left out.
    assert!(cut > 1000, "only {cut} windows left nodes out");
}
