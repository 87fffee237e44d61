//! Validation: markers must not contain probe strings, and must reproduce fresh renders made
//! with *other* probe values ([`ProbeSet::CHECK`]: other function names, argument names,
//! values, ids, content and reasoning). A part that fails is moved to
//! [`Analysis::unsupported`] and cleared, never returned with wrong markers.

use serde_json::Value;

use super::compare::Renderer;
use super::frame::Frame;
use super::markers::contains_probe;
use super::reasoning::{strip_residue, MarkerSource};
use super::scenario::{Call, ProbeSet, Scenario, Turn};
use super::slots::{self, Slot};
use super::tools::json_scan::json_at;
use super::tools::{call_text, CallIdPosition, JsonLayout, Slotting, ToolAnalysis, ToolFormat};
use super::{Analysis, ContentAnalysis, ContentMode, Part, ReasoningAnalysis};

/// The number value of the typed-marker check (not the analysis's probe number).
const CHECK_NUMBER: u64 = 8642;

/// Validates `analysis` in place.
pub fn validate(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: Option<&Scenario>,
    analysis: &mut Analysis,
) {
    let probes: Vec<&str> = ProbeSet::PRIMARY
        .all()
        .into_iter()
        .chain(ProbeSet::CHECK.all())
        .collect();
    let r = &analysis.reasoning;
    if contains_probe(&r.start, &probes) || contains_probe(&r.end, &probes) {
        analysis.reasoning = ReasoningAnalysis::none();
        analysis.mark_unsupported(
            Part::Reasoning,
            "a reasoning marker contains a probe string",
        );
    } else if let Err(reason) = check_reasoning(renderer, frame, tool_scenario, &analysis.reasoning)
    {
        analysis.reasoning = ReasoningAnalysis::none();
        analysis.mark_unsupported(Part::Reasoning, reason);
    }
    let c = &analysis.content;
    if contains_probe(&c.start, &probes) || contains_probe(&c.end, &probes) {
        analysis.content = ContentAnalysis::plain();
        analysis.mark_unsupported(Part::Content, "a content marker contains a probe string");
    } else if let Err(reason) = check_content(
        renderer,
        frame,
        tool_scenario,
        &analysis.reasoning,
        &analysis.content,
    ) {
        analysis.content = ContentAnalysis::plain();
        analysis.mark_unsupported(Part::Content, reason);
    }
    if let Some(t) = &analysis.tools {
        let result = if t.markers().iter().any(|m| contains_probe(m, &probes)) {
            Err("a tool marker contains a probe string".to_owned())
        } else {
            check_tools(renderer, frame, tool_scenario, analysis, t)
        };
        if let Err(reason) = result {
            analysis.tools = None;
            analysis.mark_unsupported(Part::Tools, reason);
        }
    }
}

fn body_of(
    renderer: &Renderer<'_>,
    frame: &Frame,
    scenario: &Scenario,
    tools: bool,
) -> Result<String, String> {
    renderer
        .render(scenario)
        .map(|r| frame.body(&r, tools))
        .map_err(|e| format!("validation render failed: {e}"))
}

/// Reasoning read from a turn must surround other reasoning text the same way.
fn check_reasoning(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: Option<&Scenario>,
    r: &ReasoningAnalysis,
) -> Result<(), String> {
    if r.source != MarkerSource::Turn {
        return Ok(());
    }
    let c = &ProbeSet::CHECK;
    let mut turn = Turn::content(c.content);
    turn.reasoning = Some(c.reasoning.to_owned());
    turn.reasoning_as_part = r.from_content_part;
    let tools = r.scope == super::ReasoningScope::ToolCallsOnly;
    let scenario = match (tools, tool_scenario) {
        (false, _) => Scenario::with_turn(turn),
        (true, Some(base)) => base.with_calls(vec![Call::first(c, 2)], Some(c.reasoning)),
        (true, None) => return Ok(()),
    };
    let body = body_of(renderer, frame, &scenario, tools)?;
    let expected = format!("{}{}{}", r.start, c.reasoning, r.end);
    if body.contains(&expected) {
        Ok(())
    } else {
        Err(format!(
            "reasoning markers do not hold on a fresh render: expected {expected:?} in {body:?}"
        ))
    }
}

/// Wrapped content must be wrapped the same way with other content.
fn check_content(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: Option<&Scenario>,
    r: &ReasoningAnalysis,
    content: &ContentAnalysis,
) -> Result<(), String> {
    if r.source == MarkerSource::Prompt {
        // A wrapper the prompt states with its reasoning (phase R4): no render writes it.
        return Ok(());
    }
    let c = &ProbeSet::CHECK;
    let mut turn = Turn::content(c.content);
    let mut scenario = None;
    match content.mode {
        ContentMode::Plain => return Ok(()),
        ContentMode::AlwaysWrapped => {}
        ContentMode::WrappedWithReasoning => {
            turn.reasoning = Some(c.reasoning.to_owned());
            turn.reasoning_as_part = r.from_content_part;
        }
        ContentMode::WrappedBeforeCalls => {
            let base = tool_scenario.ok_or("content wrapped before calls without tools")?;
            scenario = Some(base.with_content_and_calls(c.content, vec![Call::first(c, 2)]));
        }
    }
    let scenario = scenario.unwrap_or_else(|| Scenario::with_turn(turn));
    // The whole turn: a closer the turn end starts with is cut off the body.
    let body = renderer
        .render(&scenario)
        .map(|render| frame.after_header(&render))
        .map_err(|e| format!("validation render failed: {e}"))?;
    let body = strip_residue(&body, r);
    let expected = format!("{}{}{}", content.start, c.content, content.end);
    if body.contains(&expected) {
        Ok(())
    } else {
        Err(format!(
            "content markers do not hold on a fresh render: expected {expected:?} in {body:?}"
        ))
    }
}

/// Raw argument values end where their closing text starts: text that starts with a letter
/// or digit (a stray character the template writes after every value) cannot be told apart
/// from the value, so the template's calls are refused rather than parsed into cut values.
fn values_delimited(t: &ToolAnalysis) -> Result<(), String> {
    let a = &t.arguments;
    if t.format != ToolFormat::TagWithTagged
        || !a.string_open.is_empty()
        || a.non_string_values == super::NonStringValues::StringsQuoted
    {
        return Ok(());
    }
    // What follows a value: its suffix, else the separator, else the next argument's name.
    let end = [&a.value_suffix, &a.separator, &a.name_prefix]
        .into_iter()
        .find(|m| !m.is_empty())
        .map_or("", |m| m.as_str());
    if end.is_empty() {
        return Err(format!(
            "{}argument values run into the next argument's name with nothing written between \
             them: where a value ends cannot be found (its rendered arguments do not delimit \
             the values)",
            super::REFUSED
        ));
    }
    if [&t.function.name_suffix, &a.start, &a.name_prefix]
        .iter()
        .all(|m| m.is_empty())
    {
        return Err(format!(
            "{}the function name runs into the first argument's name with nothing written \
             between them: where the name ends cannot be found",
            super::REFUSED
        ));
    }
    match end.chars().next() {
        Some(c) if c.is_alphanumeric() => Err(format!(
            "{}argument values are followed by {end:?}, text a value may hold: where a value \
             ends cannot be found (its rendered arguments do not delimit the values)",
            super::REFUSED
        )),
        _ => Ok(()),
    }
}

/// A piece of an expected call text.
enum Piece {
    Text(String),
    /// A JSON value that must hold these arguments (tag + JSON).
    Args(Value),
    /// A JSON-native call (or array of calls) to check against the layout.
    Calls(Vec<Call>),
}

/// Tool calls rendered with other names, argument names, values and ids must match the
/// markers, for one call and (when parallel calls render) two.
fn check_tools(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: Option<&Scenario>,
    analysis: &Analysis,
    t: &ToolAnalysis,
) -> Result<(), String> {
    values_delimited(t)?;
    let Some(base) = tool_scenario else {
        return Ok(());
    };
    let c = &ProbeSet::CHECK;
    let mut sets = vec![vec![Call::first(c, 2)]];
    if t.parallel_calls {
        sets.push(vec![Call::first(c, 2), Call::second(c, 2)]);
    }
    if t.arguments.non_string.is_some() {
        // Typed markers: a number then a string argument, with other values than the probes.
        let mut call = Call::first(c, 2);
        call.args[0].1 = Value::from(CHECK_NUMBER);
        sets.push(vec![call]);
    }
    let check_base = Scenario {
        probes: ProbeSet::CHECK,
        ..base.clone()
    };
    let check_base = renderer
        .render(&check_base)
        .map_err(|e| format!("validation render failed: {e}"))?;
    let slotting = Slotting::find(
        renderer,
        frame,
        base,
        &analysis.reasoning,
        &analysis.content,
        t.format == ToolFormat::JsonNative,
    );
    for calls in sets {
        let scenario = Scenario {
            probes: ProbeSet::CHECK,
            ..base.with_calls(calls.clone(), None)
        };
        let render = renderer
            .render(&scenario)
            .map_err(|e| format!("validation render failed: {e}"))?;
        let body = frame.tool_body_against(&check_base, &render);
        let text = slotting.apply(call_text(&body, &analysis.reasoning, &analysis.content), c);
        let pieces = expected_pieces(t, &calls);
        match match_pieces(&text, &pieces, t.json.as_ref()) {
            Ok(()) => {}
            // One call reproduced (the first set), several calls match up to the end of the
            // section and then go on: the template closes its calls by their number.
            Err(Mismatch::Trailing(extra)) if calls.len() > 1 => {
                return Err(closing_by_count(t, calls.len(), &extra))
            }
            Err(e) => {
                return Err(format!(
                    "tool markers do not reproduce a fresh render of {} call(s): {e}",
                    calls.len()
                ))
            }
        }
    }
    Ok(())
}

/// The refusal of a template whose render of `count` calls writes `extra` after the section
/// end that one call ends with: its renders of one and of several calls contradict each other
/// (e.g. a section end written after every call but the first), so no one layout reads both.
fn closing_by_count(t: &ToolAnalysis, count: usize, extra: &str) -> String {
    format!(
        "{}the template closes its tool calls by their number: one call renders ending in \
         {:?}, {count} calls render {:?} after that (a section end written after later calls \
         only): its renders of one and several calls contradict each other",
        super::REFUSED,
        t.per_call_end.clone() + &t.section_end,
        snippet(extra, 40),
    )
}

fn expected_pieces(t: &ToolAnalysis, calls: &[Call]) -> Vec<Piece> {
    let mut out = vec![Piece::Text(t.section_start.clone())];
    if t.format == ToolFormat::JsonNative && t.json.as_ref().is_some_and(|j| j.array_wrapped) {
        out.push(Piece::Calls(calls.to_vec()));
        out.push(Piece::Text(t.section_end.clone()));
        return out;
    }
    let (f, a, id) = (&t.function, &t.arguments, &t.call_id);
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push(Piece::Text(t.call_separator.clone()));
        }
        out.push(Piece::Text(t.per_call_start.clone()));
        if t.format == ToolFormat::JsonNative {
            out.push(Piece::Calls(vec![call.clone()]));
            out.push(Piece::Text(t.per_call_end.clone()));
            continue;
        }
        // A counter is written as a slot in the slotted render.
        let id_text = if id.counter {
            Slot::Counter.char().to_string()
        } else {
            call.id.clone()
        };
        let id_piece = format!("{}{}{}", id.prefix, id_text, id.suffix);
        if id.position == CallIdPosition::PreFuncName {
            out.push(Piece::Text(id_piece.clone()));
        }
        out.push(Piece::Text(format!(
            "{}{}{}",
            f.name_prefix, call.name, f.name_suffix
        )));
        if id.position == CallIdPosition::BetweenFuncAndArgs {
            out.push(Piece::Text(id_piece.clone()));
        }
        match t.format {
            ToolFormat::TagWithTagged => {
                let mut args = a.start.clone();
                for (j, (k, v)) in call.args.iter().enumerate() {
                    if j > 0 {
                        args.push_str(&a.separator);
                    }
                    let (mut value, (name_suffix, value_prefix, value_suffix)) = match v {
                        Value::String(v) => (
                            format!("{}{v}{}", a.string_open, a.string_close),
                            (&a.name_suffix, &a.value_prefix, &a.value_suffix),
                        ),
                        v => (
                            v.to_string(),
                            a.non_string
                                .as_ref()
                                .map_or((&a.name_suffix, &a.value_prefix, &a.value_suffix), |n| {
                                    (&n.name_suffix, &n.value_prefix, &n.value_suffix)
                                }),
                        ),
                    };
                    // An unconditional wrapper (the probe values hold nothing that
                    // triggers a conditional one).
                    if let Some(w) = a.value_wrapper.as_ref().filter(|w| !w.conditional) {
                        if v.is_string() || !w.strings_only {
                            value = format!("{}{value}{}", w.open, w.close);
                        }
                    }
                    args.push_str(&format!(
                        "{}{k}{name_suffix}{value_prefix}{value}{value_suffix}",
                        a.name_prefix
                    ));
                }
                args.push_str(&a.end);
                out.push(Piece::Text(args));
            }
            _ => out.push(Piece::Args(call.args_object())),
        }
        out.push(Piece::Text(f.close.clone()));
        if id.position == CallIdPosition::PostArgs {
            out.push(Piece::Text(id_piece));
        }
        out.push(Piece::Text(t.per_call_end.clone()));
    }
    out.push(Piece::Text(t.section_end.clone()));
    out
}

/// Why a render does not match the expected pieces.
enum Mismatch {
    /// Every piece matched and this text is left over.
    Trailing(String),
    /// A piece did not match (what was expected, where).
    Piece(String),
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mismatch::Trailing(rest) => {
                write!(f, "unexpected trailing text {:?}", snippet(rest, 40))
            }
            Mismatch::Piece(why) => f.write_str(why),
        }
    }
}

/// Matches `text` against `pieces` exactly (whole text).
fn match_pieces(text: &str, pieces: &[Piece], layout: Option<&JsonLayout>) -> Result<(), Mismatch> {
    match_prefix(text, pieces, layout)
        .map_err(Mismatch::Piece)
        .and_then(|at| {
            if at == text.len() {
                Ok(())
            } else {
                Err(Mismatch::Trailing(text[at..].to_owned()))
            }
        })
}

/// Matches `pieces` at the start of `text`; returns where they end.
fn match_prefix(
    text: &str,
    pieces: &[Piece],
    layout: Option<&JsonLayout>,
) -> Result<usize, String> {
    let mut at = 0;
    for piece in pieces {
        match piece {
            Piece::Text(expected) => {
                at = match_text(text, at, expected).ok_or_else(|| {
                    format!(
                        "expected {expected:?} at {at}, found {:?}",
                        snippet(&text[at..], expected.len().max(16))
                    )
                })?;
            }
            Piece::Args(args) => {
                let json =
                    json_at(text, at).ok_or_else(|| format!("expected JSON arguments at {at}"))?;
                if !same_args(&json.value, args) {
                    return Err(format!("arguments {} differ from {args}", json.value));
                }
                at = json.end;
            }
            Piece::Calls(calls) => {
                let json =
                    json_at(text, at).ok_or_else(|| format!("expected a JSON call at {at}"))?;
                let layout = layout.ok_or("no JSON layout")?;
                check_json_calls(&json.value, calls, layout)?;
                at = json.end;
            }
        }
    }
    Ok(at)
}

/// Matches `expected` at `at` in `text`: literally, except that a type slot matches the word
/// the render writes there (renders carry no type slot). Returns where the match ends.
fn match_text(text: &str, at: usize, expected: &str) -> Option<usize> {
    let mut at = at;
    for piece in slots::pieces(expected) {
        match piece {
            slots::Piece::Slot(slots::Slot::Type) => {
                let word = text[at..]
                    .bytes()
                    .take_while(|b| b.is_ascii_alphabetic() || *b == b'_')
                    .count();
                if word == 0 {
                    return None;
                }
                at += word;
            }
            slots::Piece::Slot(slot) => {
                let c = slot.char();
                text[at..].starts_with(c).then_some(())?;
                at += c.len_utf8();
            }
            slots::Piece::Text(t) => {
                text[at..].starts_with(t).then_some(())?;
                at += t.len();
            }
        }
    }
    Some(at)
}

fn snippet(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

/// Arguments equal as objects, or as a JSON-encoded string.
fn same_args(found: &Value, args: &Value) -> bool {
    match found {
        Value::String(s) => serde_json::from_str::<Value>(s).is_ok_and(|v| &v == args),
        v => v == args,
    }
}

fn check_json_calls(value: &Value, calls: &[Call], layout: &JsonLayout) -> Result<(), String> {
    let objects: Vec<&Value> = if layout.array_wrapped {
        value
            .as_array()
            .ok_or("expected an array of calls")?
            .iter()
            .collect()
    } else {
        vec![value]
    };
    if objects.len() != calls.len() {
        return Err(format!(
            "expected {} calls, found {}",
            calls.len(),
            objects.len()
        ));
    }
    for (object, call) in objects.iter().zip(calls) {
        let obj = object.as_object().ok_or("a call is not an object")?;
        if layout.name_is_key {
            if !obj
                .get(&call.name)
                .is_some_and(|a| same_args(a, &call.args_object()))
            {
                return Err(format!(
                    "call {object} does not map {} to its arguments",
                    call.name
                ));
            }
            continue;
        }
        let inner = match &layout.function_field {
            Some(f) => obj
                .get(f)
                .and_then(Value::as_object)
                .ok_or("missing function object")?,
            None => obj,
        };
        let field = |name: &Option<String>| {
            name.as_ref()
                .and_then(|n| inner.get(n).or_else(|| obj.get(n)))
        };
        if field(&layout.name_field).and_then(Value::as_str) != Some(call.name.as_str()) {
            return Err(format!("call {object} does not name {}", call.name));
        }
        if !field(&layout.arguments_field).is_some_and(|a| same_args(a, &call.args_object())) {
            return Err(format!("call {object} does not hold the arguments"));
        }
        if layout.id_field.is_some()
            && field(&layout.id_field).and_then(Value::as_str) != Some(call.id.as_str())
        {
            return Err(format!("call {object} does not hold the id {}", call.id));
        }
    }
    Ok(())
}
