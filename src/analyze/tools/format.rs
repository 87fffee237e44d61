//! T1: locating the call in the tool-call turn and classifying its format.

use crate::analyze::content::{ContentAnalysis, ContentMode};
use crate::analyze::reasoning::{strip_residue, ReasoningAnalysis};
use crate::analyze::scenario::ProbeSet;

use super::json_scan::{holds_string, json_covering};
use super::layout::{CallLayout, Span};
use super::ToolFormat;

/// The tool-call text of a turn body: without an empty reasoning block or an empty content
/// wrapper in front, and without leading whitespace.
pub fn call_text<'a>(
    body: &'a str,
    reasoning: &ReasoningAnalysis,
    content: &ContentAnalysis,
) -> &'a str {
    let mut text = body;
    text = strip_residue(text, reasoning);
    if matches!(
        content.mode,
        ContentMode::AlwaysWrapped | ContentMode::WrappedBeforeCalls
    ) {
        let empty = format!("{}{}", content.start, content.end);
        text = text.strip_prefix(empty.as_str()).unwrap_or(text);
    }
    text.trim_start()
}

fn span_of(text: &str, needle: &str, from: usize) -> Option<Span> {
    text[from..]
        .find(needle)
        .map(|at| (from + at, from + at + needle.len()))
}

/// Classifies the call in `text` (rendered with [`ProbeSet::PRIMARY`], one call, two
/// arguments) and locates its parts.
pub fn classify(text: &str) -> Result<CallLayout, String> {
    locate(text, &ProbeSet::PRIMARY)
}

/// [`classify`] for any probe set.
pub fn locate(text: &str, p: &ProbeSet) -> Result<CallLayout, String> {
    let name = span_of(text, p.fn_first, 0).ok_or("the function name does not render")?;
    let id = span_of(text, p.id_first, 0);
    let start = id.map_or(name.0, |id| id.0.min(name.0));
    if let Some(json) =
        json_covering(text, 0, name.0).filter(|j| holds_string(&j.value, p.fn_first))
    {
        let end = json.end;
        return Ok(CallLayout {
            format: ToolFormat::JsonNative,
            name,
            id,
            start: start.min(json.start),
            end,
            json: Some(json),
            args: Vec::new(),
        });
    }
    let arg = span_of(text, p.arg_first, name.1).ok_or("argument names do not render")?;
    let args_json = json_covering(text, name.1, arg.0).filter(|j| {
        j.value.get(p.arg_first).is_some() || j.python && holds_string(&j.value, p.arg_first)
    });
    if let Some(json) = args_json {
        let end = id.map_or(json.end, |id| id.1.max(json.end));
        return Ok(CallLayout {
            format: ToolFormat::TagWithJson,
            name,
            id,
            json: Some(json),
            args: Vec::new(),
            start,
            end,
        });
    }
    let v1 = span_of(text, p.value_first, arg.1).ok_or("argument values do not render")?;
    let a2 = span_of(text, p.arg_second, v1.1).ok_or("arguments do not render in order")?;
    let v2 = span_of(text, p.value_second, a2.1).ok_or("argument values do not render")?;
    let end = id.map_or(v2.1, |id| id.1.max(v2.1));
    Ok(CallLayout {
        format: ToolFormat::TagWithTagged,
        name,
        id,
        json: None,
        args: vec![(arg, v1), (a2, v2)],
        start,
        end,
    })
}
