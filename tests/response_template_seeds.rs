//! The fuzz seeds in `corpus/response_template/` (`template JSON` NUL `prefix` NUL `text` NUL
//! `cut bytes`) load, parse, and stream exactly like a one-shot parse. Only the named seeds are
//! read: the entries libFuzzer adds (named by their SHA-1) are arbitrary bytes, replayed by the
//! fuzz target itself; its crashes become regressions under `tests/regressions/`.

use chatparse::response_template::{merge_chunks, Event, ResponseParser, ResponseTemplate};
use serde_json::Value;

type Outcome<'t> = Result<(Value, Vec<Event<'t>>), String>;

fn run<'t>(tpl: &'t ResponseTemplate, prefix: &str, pieces: &[&str]) -> Outcome<'t> {
    let mut parser = ResponseParser::new(tpl, Some(prefix), None).map_err(|e| e.to_string())?;
    let mut events = parser.initial_events().to_vec();
    for piece in pieces {
        events.extend(parser.feed(piece).map_err(|e| e.to_string())?);
    }
    let (message, last) = parser.finalize().map_err(|e| e.to_string())?;
    events.extend(last);
    Ok((message, merge_chunks(&events)))
}

/// A corpus entry libFuzzer wrote: 40 hex digits (the SHA-1 of its content).
fn is_libfuzzer_entry(path: &std::path::Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.len() == 40 && n.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[test]
fn seeds_stream_like_one_shot() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/response_template");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("seed directory") {
        let path = entry.expect("entry").path();
        if is_libfuzzer_entry(&path) {
            continue;
        }
        let data = std::fs::read(&path).expect("seed");
        let mut parts = data.splitn(4, |b| *b == 0);
        let template: Value =
            serde_json::from_slice(parts.next().unwrap_or_default()).expect("template JSON");
        let prefix = std::str::from_utf8(parts.next().unwrap_or_default()).expect("prefix");
        let text = std::str::from_utf8(parts.next().unwrap_or_default()).expect("text");
        let cuts = parts.next().unwrap_or_default();
        let tpl = ResponseTemplate::from_value(&template)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let whole = run(&tpl, prefix, &[text]);
        assert!(whole.is_ok(), "{}: {whole:?}", path.display());
        let mut points: Vec<usize> = cuts
            .iter()
            .map(|c| usize::from(*c).min(text.len()))
            .collect();
        points.retain(|p| text.is_char_boundary(*p));
        points.extend([0, text.len()]);
        points.sort_unstable();
        points.dedup();
        let pieces: Vec<&str> = points.windows(2).map(|w| &text[w[0]..w[1]]).collect();
        assert_eq!(run(&tpl, prefix, &pieces), whole, "{}", path.display());
        seen += 1;
    }
    assert!(seen > 0);
}
