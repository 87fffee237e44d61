//! Fuzzes response templates: an arbitrary template (structured, or raw JSON) + prefix + text +
//! chunking. Checks that nothing panics and that streaming the text in pieces gives the same
//! message (or the same error phase) and the same merged events as feeding it at once.
//!
//! Input formats:
//! - starts with `{`: `template JSON` NUL `prefix` NUL `text` NUL `cut bytes` (the seeds in
//!   `corpus/response_template/` use this one);
//! - otherwise: a structured template built with `arbitrary`.
//!
//! Body of the `response_template` fuzz target, shared with the regression replay in
//! `tests/fuzz_regressions.rs` (see `fuzz/README.md`).

use arbitrary::{Arbitrary, Unstructured};
use chatparse::response_template::{merge_chunks, Event, ResponseParser, ResponseTemplate};
use serde_json::{json, Map, Value};

#[derive(Debug, Arbitrary)]
enum Delim {
    Literal(String),
    List(Vec<String>),
    Pattern(String),
}

#[derive(Debug, Arbitrary)]
struct FieldSpec {
    open: Option<Delim>,
    close: Option<Delim>,
    content: u8,
    repeats: bool,
    join: bool,
    transform: bool,
    transform_each: bool,
    strip: bool,
}

#[derive(Debug, Arbitrary)]
struct Structured {
    anchor: String,
    fields: Vec<FieldSpec>,
    prefix: Option<String>,
    text: String,
    cuts: Vec<u16>,
}

const CONTENT: [&str; 7] = [
    "text",
    "int",
    "float",
    "bool",
    "json",
    "xml-inline",
    "kv-lines",
];

fn delim(d: &Delim, key: &str, out: &mut Map<String, Value>) {
    match d {
        Delim::Literal(s) => out.insert(key.into(), json!(s)),
        Delim::List(l) => out.insert(key.into(), json!(l)),
        Delim::Pattern(p) => out.insert(format!("{key}_pattern"), json!(p)),
    };
}

fn template_of(s: &Structured) -> Value {
    let mut fields = Map::new();
    for (i, f) in s.fields.iter().take(5).enumerate() {
        let mut spec = Map::new();
        if let Some(d) = &f.open {
            delim(d, "open", &mut spec);
        }
        if let Some(d) = &f.close {
            delim(d, "close", &mut spec);
        }
        let content = CONTENT[usize::from(f.content) % CONTENT.len()];
        spec.insert("content".into(), json!(content));
        let mut args = Map::new();
        if content != "xml-inline" {
            args.insert("strip".into(), json!(f.strip));
        }
        match content {
            "json" => {
                args.insert("unquoted_keys".into(), json!(f.strip));
                args.insert("allow_non_json".into(), json!(f.join));
                args.insert("string_delims".into(), json!([["<|", "|>"]]));
            }
            "xml-inline" => {
                args.insert(
                    "tag_pattern".into(),
                    json!(r"<(?P<key>\w+)>(?P<value>.*?)</\1>"),
                );
                args.insert("merge_duplicates".into(), json!(f.repeats));
            }
            _ => {}
        }
        spec.insert("content_args".into(), Value::Object(args));
        spec.insert("repeats".into(), json!(f.repeats));
        if f.join {
            spec.insert("join".into(), json!(" "));
        }
        if f.transform {
            spec.insert("transform".into(), json!({"v": "{content}", "k": "x"}));
            spec.insert("transform_each".into(), json!(f.transform_each));
        }
        fields.insert(format!("f{i}"), Value::Object(spec));
    }
    json!({"defaults": {"role": "assistant"}, "start_anchor": s.anchor, "fields": fields})
}

type Outcome<'t> = Result<(Value, Vec<Event<'t>>), String>;

fn run_pieces<'t>(tpl: &'t ResponseTemplate, prefix: Option<&str>, pieces: &[&str]) -> Outcome<'t> {
    let mut parser = ResponseParser::new(tpl, prefix, None).map_err(|e| e.kind().to_string())?;
    let mut events = parser.initial_events().to_vec();
    // The three event APIs in turn: mixing them must not change anything.
    for (i, piece) in pieces.iter().enumerate() {
        let fed = match i % 3 {
            0 => parser.feed(piece).map(|new| events.extend(new)),
            1 => parser.feed_into(piece, &mut events),
            _ => parser.feed_with(piece, |event| events.push(event.into_owned())),
        };
        fed.map_err(|e| e.kind().to_string())?;
    }
    let (message, last) = parser.finalize().map_err(|e| e.kind().to_string())?;
    events.extend(last);
    Ok((message, merge_chunks(&events)))
}

fn check(template: &Value, prefix: Option<&str>, text: &str, cuts: &[u16]) {
    let Ok(tpl) = ResponseTemplate::from_value(template) else {
        return;
    };
    let whole = run_pieces(&tpl, prefix, &[text]);
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| {
            let mut p = usize::from(*c) % (text.len() + 1);
            while !text.is_char_boundary(p) {
                p -= 1;
            }
            p
        })
        .collect();
    points.extend([0, text.len()]);
    points.sort_unstable();
    points.dedup();
    let pieces: Vec<&str> = points.windows(2).map(|w| &text[w[0]..w[1]]).collect();
    let chunked = run_pieces(&tpl, prefix, &pieces);
    assert_eq!(whole, chunked, "stream differs from one shot");
}

/// Runs one fuzz input; panics on a violated property.
pub fn run(data: &[u8]) {
    if data.first() == Some(&b'{') {
        let mut parts = data.splitn(4, |b| *b == 0);
        let (Some(t), Some(p), Some(x)) = (parts.next(), parts.next(), parts.next()) else {
            return;
        };
        let cuts: Vec<u16> = parts
            .next()
            .unwrap_or(&[])
            .iter()
            .map(|b| u16::from(*b))
            .collect();
        let (Ok(template), Ok(prefix), Ok(text)) = (
            serde_json::from_slice::<Value>(t),
            std::str::from_utf8(p),
            std::str::from_utf8(x),
        ) else {
            return;
        };
        check(&template, Some(prefix), text, &cuts);
        return;
    }
    let mut u = Unstructured::new(data);
    let Ok(s) = Structured::arbitrary(&mut u) else {
        return;
    };
    // A prefix is required (`None` is an init error): no prefix is the empty one.
    check(
        &template_of(&s),
        Some(s.prefix.as_deref().unwrap_or("")),
        &s.text,
        &s.cuts,
    );
}
