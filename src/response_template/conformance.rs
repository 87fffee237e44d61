//! Running one recorded conformance vector (a line of `hf-response-templates.jsonl`).
//!
//! Pass rules (from the vectors' README): the output equals `expected` as JSON (key order
//! ignored; numbers compared by value, an integer never equal to a float); an expected error is an error raised in the same
//! phase (messages are not compared); events are compared after merging consecutive
//! `region_chunk` events of the same field. For `streams`, the text is fed in pieces of
//! `chunk_size` characters and the whole merged event sequence and the output must match (or,
//! for a stream with an `expected_error`, the stream must fail in that phase).
//! For `ops` cases, a template error expected at `init` may be raised at load (this API
//! validates templates when they are loaded).

use serde_json::Value;

use super::coerce::{coerce_tool_calls, coerce_value, schema_types};
use super::events::{merge_chunks, Event};
use super::{Error, ResponseParser, ResponseTemplate};

/// Runs one vector. `Ok(())` when it passes, else a short description of the difference.
pub fn run_conformance_case(case: &Value) -> Result<(), String> {
    let kind = case.get("kind").and_then(Value::as_str).unwrap_or_else(|| {
        if case.get("ops").is_some() {
            "ops"
        } else {
            "parse"
        }
    });
    match kind {
        "parse" => run_parse(case),
        "ops" => run_ops(case),
        "unit_coerce" => {
            let input = field(case, "input")?;
            let raw = field(input, "raw")?;
            let types: Vec<String> = strings(field(input, "types")?);
            check_value(
                "coerce",
                &coerce_value(raw, &types),
                field(case, "expected")?,
            )
        }
        "unit_schema_types" => {
            let input = field(case, "input")?;
            let got: Vec<Value> = schema_types(field(input, "schema")?)
                .into_iter()
                .map(Value::String)
                .collect();
            check_value("schema_types", &Value::Array(got), field(case, "expected")?)
        }
        "unit_coerce_tool_calls" => {
            let input = field(case, "input")?;
            let tools = field(input, "tools")?
                .as_array()
                .cloned()
                .unwrap_or_default();
            let got = coerce_tool_calls(field(input, "value")?, &tools);
            check_value("coerce_tool_calls", &got, field(case, "expected")?)
        }
        other => Err(format!("unknown case kind {other:?}")),
    }
}

fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value, String> {
    v.get(key).ok_or_else(|| format!("case has no '{key}'"))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// JSON equality ignoring key order, with numbers compared by value and kind: an integer
/// never equals a float (`3` is not `3.0`, as in the reference's Python values).
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x.is_f64() == y.is_f64()
                && match (x.as_i64(), y.as_i64()) {
                    (Some(i), Some(j)) => i == j,
                    _ => x.as_f64() == y.as_f64(),
                }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn check_value(what: &str, got: &Value, expected: &Value) -> Result<(), String> {
    if json_equal(got, expected) {
        Ok(())
    } else {
        Err(format!("{what}: got {got}, expected {expected}"))
    }
}

fn events_json(events: &[Event]) -> Value {
    Value::Array(merge_chunks(events).iter().map(Event::to_json).collect())
}

/// Parses expected events (a JSON list) and merges their chunks.
fn expected_events(v: Option<&Value>) -> Value {
    let mut events = Vec::new();
    for e in v.and_then(Value::as_array).into_iter().flatten() {
        if let Some(ev) = event_from_json(e) {
            events.push(ev);
        }
    }
    events_json(&events)
}

fn event_from_json(e: &Value) -> Option<Event<'_>> {
    let field = e.get("field")?.as_str()?;
    match e.get("type")?.as_str()? {
        "region_open" => Some(Event::RegionOpen { field }),
        "region_chunk" => Some(Event::RegionChunk {
            field,
            text: e.get("text")?.as_str()?.into(),
            dirty: e.get("dirty")?.as_bool()?,
        }),
        "region_close" => Some(Event::RegionClose {
            field,
            value: std::sync::Arc::new(e.get("value")?.clone()),
        }),
        _ => None,
    }
}

fn check_events(what: &str, got: &[Event], expected: &Value) -> Result<(), String> {
    check_value(what, &events_json(got), expected)
}

fn check_error(what: &str, err: &Error, expected: Option<&Value>, ops: bool) -> Result<(), String> {
    let Some(exp) = expected else {
        return Err(format!("{what}: unexpected error: {err}"));
    };
    let phase = exp.get("phase").and_then(Value::as_str).unwrap_or("");
    let got = err.kind().as_str();
    if got == phase || (ops && phase == "init" && got == "load") {
        Ok(())
    } else {
        Err(format!(
            "{what}: error in phase {got} ({err}), expected phase {phase}"
        ))
    }
}

fn tools_of(case: &Value) -> Option<Vec<Value>> {
    case.get("tools").and_then(Value::as_array).cloned()
}

/// Runs a parser over `pieces`; returns (initial, per-feed events, final events, output).
type Run<'t> = (Vec<Event<'t>>, Vec<Vec<Event<'t>>>, Vec<Event<'t>>, Value);

fn run_pieces<'t>(
    tpl: &'t ResponseTemplate,
    prefix: Option<&str>,
    tools: Option<&[Value]>,
    pieces: &[&str],
) -> Result<Run<'t>, Error> {
    let mut parser = ResponseParser::new(tpl, prefix, tools)?;
    let initial = parser.initial_events().to_vec();
    let mut feeds = Vec::new();
    for piece in pieces {
        feeds.push(parser.feed(piece)?);
    }
    let (output, last) = parser.finalize()?;
    Ok((initial, feeds, last, output))
}

/// Splits text into pieces of `n` characters.
fn char_chunks(text: &str, n: usize) -> Vec<&str> {
    let n = n.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    for (count, (i, _)) in text.char_indices().enumerate() {
        if count > 0 && count % n == 0 {
            out.push(text.get(start..i).unwrap_or(""));
            start = i;
        }
    }
    if start < text.len() || out.is_empty() {
        out.push(text.get(start..).unwrap_or(""));
    }
    out
}

fn run_parse(case: &Value) -> Result<(), String> {
    let expected_error = case.get("expected_error");
    let tpl = match ResponseTemplate::from_value(field(case, "template")?) {
        Ok(t) => t,
        Err(e) => return check_error("load", &e, expected_error, false),
    };
    let text = case.get("text").and_then(Value::as_str).unwrap_or("");
    let prefix = case.get("prefix").and_then(Value::as_str);
    let tools = tools_of(case);
    let run = run_pieces(&tpl, prefix, tools.as_deref(), &[text]);
    let (initial, feeds, last, output) = match run {
        Err(e) => return check_error("parse", &e, expected_error, false),
        Ok(r) => r,
    };
    if let Some(exp) = expected_error {
        return Err(format!("expected a {exp} error, got output {output}"));
    }
    check_value("output", &output, field(case, "expected")?)?;
    if let Some(ev) = case.get("events") {
        check_events(
            "initial events",
            &initial,
            &expected_events(ev.get("initial")),
        )?;
        let fed: Vec<Event> = feeds.concat();
        check_events("feed events", &fed, &expected_events(ev.get("feed")))?;
        check_events("final events", &last, &expected_events(ev.get("final")))?;
    }
    for stream in case
        .get("streams")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let size = stream
            .get("chunk_size")
            .and_then(Value::as_u64)
            .unwrap_or(1);
        let size = usize::try_from(size).unwrap_or(1);
        let what = format!("stream chunk_size={size}");
        let pieces = char_chunks(text, size);
        let run = run_pieces(&tpl, prefix, tools.as_deref(), &pieces);
        let expected_error = stream.get("expected_error");
        let (initial, feeds, last, output) = match run {
            Err(e) => {
                check_error(&what, &e, expected_error, false)?;
                continue;
            }
            Ok(_) if expected_error.is_some() => {
                return Err(format!(
                    "{what}: expected a {} error, got none",
                    expected_error
                        .and_then(|e| e.get("phase"))
                        .unwrap_or(&Value::Null)
                ))
            }
            Ok(r) => r,
        };
        let mut all = initial;
        all.extend(feeds.concat());
        all.extend(last);
        let mut exp_all: Vec<Value> = Vec::new();
        exp_all.extend(
            stream
                .get("initial")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        );
        for f in stream
            .get("feeds")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            exp_all.extend(f.as_array().cloned().unwrap_or_default());
        }
        exp_all.extend(
            stream
                .get("final")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        );
        check_events(&what, &all, &expected_events(Some(&Value::Array(exp_all))))?;
        if let Some(exp_out) = stream.get("output") {
            check_value(&format!("{what} output"), &output, exp_out)?;
        }
    }
    Ok(())
}

fn run_ops(case: &Value) -> Result<(), String> {
    let expected_error = case.get("expected_error");
    let tpl = match ResponseTemplate::from_value(field(case, "template")?) {
        Ok(t) => t,
        Err(e) => return check_error("load", &e, expected_error, true),
    };
    let prefix = case.get("prefix").and_then(Value::as_str);
    let tools = tools_of(case);
    let mut parser = match ResponseParser::new(&tpl, prefix, tools.as_deref()) {
        Ok(p) => p,
        Err(e) => return check_error("init", &e, expected_error, true),
    };
    if let Some(exp) = expected_error {
        return Err(format!("expected a {exp} error at init"));
    }
    check_events(
        "initial events",
        parser.initial_events(),
        &expected_events(case.get("initial_events")),
    )?;
    let ops = field(case, "ops")?.as_array().cloned().unwrap_or_default();
    let results = field(case, "results")?
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (i, op) in ops.iter().enumerate() {
        let what = format!("op {i}");
        let exp = results.get(i).cloned().unwrap_or(Value::Null);
        let name = op.get(0).and_then(Value::as_str).unwrap_or("");
        let outcome = match name {
            "feed" => {
                let text = op.get(1).and_then(Value::as_str).unwrap_or("");
                parser.feed(text).map(|ev| (None, ev))
            }
            "finalize" => parser.finalize().map(|(out, ev)| (Some(out), ev)),
            other => return Err(format!("{what}: unknown op {other:?}")),
        };
        match outcome {
            Err(e) => check_error(&what, &e, exp.get("error"), true)?,
            Ok((output, events)) => {
                if let Some(err) = exp.get("error") {
                    return Err(format!("{what}: expected error {err}, got success"));
                }
                check_events(&what, &events, &expected_events(exp.get("events")))?;
                if let (Some(out), Some(exp_out)) = (output, exp.get("output")) {
                    check_value(&format!("{what} output"), &out, exp_out)?;
                }
            }
        }
    }
    Ok(())
}

/// The case as transformers behaves once chatparse's deliberate deviations (the README's table)
/// are applied to it: its `deviation` record (`{rows, ...}` with the expectations of a
/// `parse` case — `expected` or `expected_error`, `events`, `streams` — or of an `ops` case —
/// `initial_events`, `results` —, and a `kind` and `text` when the deviation turns an `ops`
/// case into the `parse` case of its text; written by `scripts/hf_response_oracle.py` when a
/// deviation changes the case) in place of the recorded expectations. `None` when the case has
/// no such record.
pub fn with_deviation(case: &Value) -> Option<Value> {
    let deviation = case.get("deviation")?.as_object()?;
    let mut out = case.as_object()?.clone();
    for key in [
        "expected",
        "expected_error",
        "events",
        "streams",
        "initial_events",
        "results",
        "deviation",
    ] {
        out.remove(key);
    }
    for (key, value) in deviation {
        if key != "rows" {
            out.insert(key.clone(), value.clone());
        }
    }
    Some(Value::Object(out))
}

/// The deviation rows a case's `deviation` record names (see [`with_deviation`]).
pub fn deviation_rows(case: &Value) -> Vec<String> {
    strings(case.pointer("/deviation/rows").unwrap_or(&Value::Null))
}
