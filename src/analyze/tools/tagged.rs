//! T2/T3 for tag-based calls (and the call framing shared with JSON-native calls): section vs
//! per-call markers and the call separator from one call vs two calls, and the function name
//! markers.

use crate::analyze::markers::{
    aligned_prefix_len, aligned_suffix_len, element_prefix, trailing_marker, trailing_open_marker,
};
use crate::analyze::scenario::{Call, ProbeSet, Scenario};
use crate::diff::{segments, SegmentKind};

use super::json_scan::json_covering;
use super::layout::CallLayout;
use super::CallIdMarkers;
use super::{
    arguments, call_id, ArgumentMarkers, CallIdPosition, FunctionMarkers, JsonLayout, ToolAnalysis,
    ToolFormat,
};

/// `scenario` with an assistant turn making two calls (two arguments each).
pub fn two_calls(scenario: &Scenario) -> Scenario {
    let p = &ProbeSet::PRIMARY;
    scenario.with_calls(vec![Call::first(p, 2), Call::second(p, 2)], None)
}

/// The text around calls: section start/end, what opens and closes each call, and the
/// separator between calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallSplit {
    /// Before the first call's opening.
    pub section_start: String,
    /// After the last call's closing.
    pub section_end: String,
    /// Opens each call (up to the call's own text).
    pub open: String,
    /// Closes each call (after the call's own text).
    pub close: String,
    /// Between one call's closing and the next call's opening.
    pub separator: String,
}

impl CallSplit {
    /// Without a two-call render, everything before the call opens it and everything after
    /// closes it.
    pub fn single(one: &str, start: usize, end: usize) -> CallSplit {
        CallSplit {
            open: one[..start].to_owned(),
            close: one[end..].to_owned(),
            ..CallSplit::default()
        }
    }
}

/// T2: splits the text around calls. `one[start1..end1]` is the call in the one-call text;
/// the two-call text `two` starts with the same text up to `end1`, and its second call starts
/// at `start2`.
///
/// The text between the two calls is `close + separator + open`: `open` is its longest common
/// end with what precedes the call in `one`, `close` its longest common start with what
/// follows the call in `one`; what remains before/after in `one` is the section.
pub fn split_calls(one: &str, two: &str, start1: usize, end1: usize, start2: usize) -> CallSplit {
    let pre = &one[..start1];
    let post = &one[end1..];
    let between = &two[end1..start2.max(end1)];
    let open_len = aligned_suffix_len(between, pre);
    let rest = &between[..between.len() - open_len];
    let close_len = aligned_prefix_len(rest, post);
    CallSplit {
        section_start: pre[..pre.len() - open_len].to_owned(),
        section_end: post[close_len..].to_owned(),
        open: pre[pre.len() - open_len..].to_owned(),
        close: post[..close_len].to_owned(),
        separator: rest[close_len..].to_owned(),
    }
}

/// The function name prefix at the end of a call opening: an unclosed marker the name sits in
/// (`<function=`) or text glued to the name (`functions.`); a complete marker right before the
/// name opens the call instead (name prefix empty).
fn name_prefix_of(open: &str) -> &str {
    if trailing_open_marker(open).is_none() && trailing_marker(open).is_some() {
        ""
    } else {
        element_prefix(open)
    }
}

/// Splits what closes a call into the function close and the per-call end: with a per-call
/// opening, the last marker closes the call; without one, all of it closes the function.
fn split_close(close: &str, has_open: bool) -> (String, String) {
    if !has_open {
        return (close.to_owned(), String::new());
    }
    let markers: Vec<_> = segments(close)
        .filter(|s| s.kind == SegmentKind::Marker)
        .collect();
    match markers.last() {
        Some(last) if !close[..last.offset].trim().is_empty() => (
            close[..last.offset].to_owned(),
            close[last.offset..].to_owned(),
        ),
        _ => (String::new(), close.to_owned()),
    }
}

/// Analyses a tag-based call (tag + JSON or tagged arguments).
pub fn analyze(one: &str, two: Option<&str>, layout: &CallLayout) -> Result<ToolAnalysis, String> {
    let p = &ProbeSet::PRIMARY;
    let (arguments, args_start, json) = match layout.format {
        ToolFormat::TagWithTagged => {
            let (markers, start) = arguments::analyze(one, layout)?;
            (markers, start, None)
        }
        _ => {
            let j = layout.json.as_ref().ok_or("no argument JSON")?;
            let json = JsonLayout {
                python_dicts: j.python,
                ..JsonLayout::default()
            };
            (ArgumentMarkers::default(), j.start, Some(json))
        }
    };
    let (mut call_id, mut name_suffix) = call_id::analyze(one, layout, args_start)?;

    let split = match two {
        Some(two) => {
            if !two.starts_with(&one[..layout.end]) {
                return Err("the first call renders differently when a second follows".into());
            }
            let n2 = two[layout.end..]
                .find(p.fn_second)
                .map(|i| layout.end + i)
                .ok_or("the second call's name does not render")?;
            let start2 = match two[layout.end..n2].find(p.id_second) {
                Some(i) if call_id.position == CallIdPosition::PreFuncName => layout.end + i,
                _ => n2,
            };
            if call_id.position == CallIdPosition::None {
                let second = second_name_suffix(two, n2, layout.format, &arguments);
                if let Some((prefix, suffix)) = second
                    .and_then(|s| call_id::counter(&name_suffix, s))
                    .or_else(|| call_id::glued_counter(&name_suffix))
                {
                    call_id = CallIdMarkers {
                        position: CallIdPosition::BetweenFuncAndArgs,
                        prefix,
                        suffix,
                        counter: true,
                    };
                    name_suffix = String::new();
                }
            }
            split_calls(one, two, layout.start, layout.end, start2)
        }
        None => CallSplit::single(one, layout.start, layout.end),
    };

    let open_prefix = name_prefix_of(&split.open);
    let (per_call_start, name_prefix) = if call_id.position == CallIdPosition::PreFuncName {
        call_id.prefix = open_prefix.to_owned();
        let gap = &one[layout.id.map_or(layout.name.0, |id| id.1)..layout.name.0];
        let name_prefix = name_prefix_of(gap);
        call_id.suffix = gap[..gap.len() - name_prefix.len()].to_owned();
        (
            split.open[..split.open.len() - open_prefix.len()].to_owned(),
            name_prefix.to_owned(),
        )
    } else {
        (
            split.open[..split.open.len() - open_prefix.len()].to_owned(),
            open_prefix.to_owned(),
        )
    };
    let close = split
        .close
        .strip_prefix(arguments.value_suffix.as_str())
        .unwrap_or(&split.close);
    let (function_close, per_call_end) = split_close(close, !per_call_start.is_empty());

    Ok(ToolAnalysis {
        format: layout.format,
        section_start: split.section_start,
        section_end: split.section_end,
        per_call_start,
        per_call_end,
        call_separator: split.separator,
        parallel_calls: two.is_some(),
        function: FunctionMarkers {
            name_prefix,
            name_suffix,
            close: function_close,
        },
        arguments,
        call_id,
        json,
        counter_base: None,
        name_in_id: false,
        stated_wrapper: None,
    })
}

/// The text between the second call's name (at `n2` in `two`) and its arguments.
fn second_name_suffix<'a>(
    two: &'a str,
    n2: usize,
    format: ToolFormat,
    arguments: &ArgumentMarkers,
) -> Option<&'a str> {
    let p = &ProbeSet::PRIMARY;
    let name_end = n2 + p.fn_second.len();
    let arg = name_end + two[name_end..].find(p.arg_first)?;
    let args_start = match format {
        ToolFormat::TagWithJson => json_covering(two, name_end, arg)?.start,
        _ => arg.checked_sub(arguments.name_prefix.len())?,
    };
    two.get(name_end..args_start)
}
