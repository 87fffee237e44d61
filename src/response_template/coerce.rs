//! Schema-driven coercion of tool-call argument values (`tools=`).
//!
//! When tools (OpenAI-style `{"type": "function", "function": {"name", "parameters"}}`) are
//! given, every region value shaped like a tool call
//! (`{"function": {"name": <str>, "arguments": <dict>}}`, or a list of those) has its string
//! argument values converted to the types its JSON schema declares. A value that does not
//! convert stays as it was; values that are already typed are left alone, and a list whose
//! schema does not allow `array` is coerced element by element.

use serde_json::{Map, Value};

use super::content::{parse_bool_word, parse_float, parse_int};
use super::json_value::from_str;
use super::util::py_strip;

/// The JSON-schema types a property allows: `type` (string or list), the types of each
/// `anyOf`/`oneOf` branch, and `null` when `nullable` is true. Order is kept, duplicates
/// dropped.
pub fn schema_types(schema: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |t: &str| {
        if !out.iter().any(|x| x == t) {
            out.push(t.to_owned());
        }
    };
    match schema.get("type") {
        Some(Value::String(t)) => push(t),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).for_each(&mut push),
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for branch in branches {
                for t in schema_types(branch) {
                    push(&t);
                }
            }
        }
    }
    if schema.get("nullable") == Some(&Value::Bool(true)) {
        push("null");
    }
    out
}

/// Coerces one value to the first of `types` it converts to (strings only; lists element-wise
/// unless `array` is allowed). Unconvertible values are returned unchanged.
pub fn coerce_value(raw: &Value, types: &[String]) -> Value {
    match raw {
        Value::String(s) => coerce_str(s, types).unwrap_or_else(|| raw.clone()),
        Value::Array(items) if !types.iter().any(|t| t == "array") => {
            Value::Array(items.iter().map(|v| coerce_value(v, types)).collect())
        }
        _ => raw.clone(),
    }
}

fn coerce_str(s: &str, types: &[String]) -> Option<Value> {
    let t = py_strip(s);
    for ty in types {
        let converted = match ty.as_str() {
            "integer" => parse_int(t).map(Value::from),
            "number" => parse_int(t).map(Value::from).or_else(|| {
                parse_float(t)
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
            }),
            "boolean" => parse_bool_word(t, &["true", "1"], &["false", "0"]).map(Value::Bool),
            "null" => matches!(t, "null" | "None").then_some(Value::Null),
            "object" => from_str(t).ok().filter(Value::is_object),
            "array" => from_str(t).ok().filter(Value::is_array),
            _ => None,
        };
        if converted.is_some() {
            return converted;
        }
    }
    None
}

/// Finds the `parameters.properties` of the tool named `name`.
fn properties<'a>(tools: &'a [Value], name: &str) -> Option<&'a Map<String, Value>> {
    tools.iter().find_map(|tool| {
        let func = tool.get("function").unwrap_or(tool);
        if func.get("name").and_then(Value::as_str) != Some(name) {
            return None;
        }
        func.get("parameters")?.get("properties")?.as_object()
    })
}

/// Coerces the arguments of a tool call (or a list of tool calls) against `tools`. Values
/// that are not tool calls, or name no known tool, are returned unchanged.
pub fn coerce_tool_calls(value: &Value, tools: &[Value]) -> Value {
    if let Value::Array(items) = value {
        return Value::Array(items.iter().map(|v| coerce_tool_calls(v, tools)).collect());
    }
    let Some(Value::Object(func)) = value.get("function") else {
        return value.clone();
    };
    let (Some(Value::String(name)), Some(Value::Object(args))) =
        (func.get("name"), func.get("arguments"))
    else {
        return value.clone();
    };
    let Some(props) = properties(tools, name) else {
        return value.clone();
    };
    let mut new_args = Map::new();
    for (key, arg) in args {
        let coerced = match props.get(key) {
            Some(schema) => coerce_value(arg, &schema_types(schema)),
            None => arg.clone(),
        };
        new_args.insert(key.clone(), coerced);
    }
    let mut out = value.clone();
    if let Some(Value::Object(f)) = out.get_mut("function") {
        f.insert("arguments".to_owned(), Value::Object(new_args));
    }
    out
}

#[cfg(test)]
#[path = "coerce_tests.rs"]
mod tests;
