//! JSON-native calls: the JSON layout of a call and the text around the JSON.

use serde_json::{Map, Value};

use crate::analyze::scenario::ProbeSet;

use super::json_scan::{holds_string, json_at, json_covering};
use super::layout::CallLayout;
use super::tagged::{split_calls, CallSplit};
use super::{
    ArgumentMarkers, CallIdMarkers, FunctionMarkers, JsonLayout, ToolAnalysis, ToolFormat,
};

/// The path of keys to the first string equal to `needle` (or, with `key`, to the key).
fn path_to(value: &Value, needle: &str, key: bool) -> Option<Vec<String>> {
    let map = value.as_object()?;
    for (k, v) in map {
        if key && k == needle || !key && v.as_str() == Some(needle) {
            return Some(vec![k.clone()]);
        }
        if let Some(mut rest) = path_to(v, needle, key) {
            rest.insert(0, k.clone());
            return Some(rest);
        }
    }
    None
}

/// The JSON layout of one call object.
pub fn layout_of(
    call: &Map<String, Value>,
    python: bool,
    p: &ProbeSet,
) -> Result<JsonLayout, String> {
    let value = Value::Object(call.clone());
    let mut layout = JsonLayout {
        python_dicts: python,
        field_order: call.keys().cloned().collect(),
        ..JsonLayout::default()
    };
    let args = if let Some(args) = call.get(p.fn_first) {
        layout.name_is_key = true;
        args
    } else {
        let path = path_to(&value, p.fn_first, false)
            .ok_or("the function name is not a JSON string value")?;
        let (inner, name_field) = match path.as_slice() {
            [name] => (call, name.clone()),
            [outer, name] => {
                layout.function_field = Some(outer.clone());
                (
                    call[outer].as_object().ok_or("unexpected nesting")?,
                    name.clone(),
                )
            }
            _ => {
                return Err(format!(
                    "the function name is nested too deep: {}",
                    path.join(".")
                ))
            }
        };
        layout.name_field = Some(name_field);
        let (args_field, args) = inner
            .iter()
            .find(|(_, v)| {
                holds_string(v, p.arg_first) || v.as_str().is_some_and(|s| s.contains(p.arg_first))
            })
            .ok_or("the arguments are not a field of the call object")?;
        layout.arguments_field = Some(args_field.clone());
        args
    };
    match args {
        Value::Object(o) if o.get(p.arg_first).and_then(Value::as_str) == Some(p.value_first) => {}
        Value::String(s) if s.contains(p.arg_first) && s.contains(p.value_first) => {
            layout.arguments_as_string = true;
        }
        _ => return Err("the arguments do not hold the given values".into()),
    }
    if let Some(path) = path_to(&value, p.id_first, false) {
        layout.id_field = path.last().cloned();
    }
    let known = [
        &layout.name_field,
        &layout.arguments_field,
        &layout.id_field,
        &layout.function_field,
    ];
    let scope = match &layout.function_field {
        Some(f) => vec![call, call[f].as_object().unwrap_or(call)],
        None => vec![call],
    };
    layout.generated_id_field = scope
        .iter()
        .flat_map(|m| m.iter())
        .find(|(k, v)| {
            !known.iter().any(|f| f.as_deref() == Some(k.as_str()))
                && (v.is_number()
                    || v.as_str()
                        .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())))
        })
        .map(|(k, _)| k.clone());
    // Top-level text values that hold no probe (the name, the arguments and the id do).
    layout.constant_fields = call
        .iter()
        .filter(|(k, _)| {
            !known.iter().any(|f| f.as_deref() == Some(k.as_str()))
                && layout.generated_id_field.as_deref() != Some(k.as_str())
        })
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
        .filter(|(_, v)| {
            let probes = [
                p.fn_first,
                p.fn_second,
                p.arg_first,
                p.arg_second,
                p.value_first,
                p.value_second,
                p.id_first,
                p.id_second,
                p.content,
                p.reasoning,
            ];
            !v.is_empty() && !probes.iter().any(|probe| v.contains(probe))
        })
        .collect();
    Ok(layout)
}

/// Analyses a JSON-native call. `two` is the two-call text when parallel calls render.
pub fn analyze(one: &str, two: Option<&str>, layout: &CallLayout) -> Result<ToolAnalysis, String> {
    let p = &ProbeSet::PRIMARY;
    let json = layout.json.as_ref().ok_or("no JSON value")?;
    let (call, array_wrapped) = match &json.value {
        Value::Array(items) => (items.first().and_then(Value::as_object), true),
        Value::Object(o) => (Some(o), false),
        _ => (None, false),
    };
    let call = call.ok_or("the call is not a JSON object")?;
    let mut json_layout = layout_of(call, json.python, p)?;
    json_layout.array_wrapped = array_wrapped;
    let mut t = ToolAnalysis {
        format: ToolFormat::JsonNative,
        section_start: String::new(),
        section_end: String::new(),
        per_call_start: String::new(),
        per_call_end: String::new(),
        call_separator: String::new(),
        parallel_calls: two.is_some(),
        function: FunctionMarkers::default(),
        arguments: ArgumentMarkers::default(),
        call_id: CallIdMarkers::default(),
        json: None,
        counter_base: None,
        name_in_id: false,
        stated_wrapper: None,
    };
    if array_wrapped {
        t.section_start = one[..json.start].to_owned();
        t.section_end = one[json.end..].to_owned();
        if let Some(two) = two {
            t.call_separator = array_separator(two, json.start)?;
        }
    } else {
        let split = match two {
            Some(two) => {
                let n2 = two
                    .find(p.fn_second)
                    .ok_or("the second call does not render")?;
                if !two.starts_with(&one[..json.end]) {
                    return Err("the first call renders differently when a second follows".into());
                }
                let second =
                    json_covering(two, json.end, n2).ok_or("the second call is not JSON")?;
                split_calls(one, two, json.start, json.end, second.start)
            }
            None => CallSplit::single(one, json.start, json.end),
        };
        t.section_start = split.section_start;
        t.section_end = split.section_end;
        t.per_call_start = split.open;
        t.per_call_end = split.close;
        t.call_separator = split.separator;
    }
    t.json = Some(json_layout);
    Ok(t)
}

/// The text between the first two elements of the JSON array starting at `start`.
fn array_separator(two: &str, start: usize) -> Result<String, String> {
    let first = two[start + 1..]
        .find(['{', '['])
        .map(|i| start + 1 + i)
        .ok_or("empty call array")?;
    let a = json_at(two, first).ok_or("unparsable call")?;
    let rest = &two[a.end..];
    let next = rest
        .find(['{', '['])
        .ok_or("the second call is not in the array")?;
    Ok(rest[..next].to_owned())
}
