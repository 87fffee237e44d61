//! Schema-driven coercion of tool-call argument values (`tools=`).
//!
//! When tools (OpenAI-style `{"type": "function", "function": {"name", "parameters"}}`) are
//! given, every region value shaped like a tool call
//! (`{"function": {"name": <str>, "arguments": <dict>}}`, or a list of those) has its string
//! argument values converted to the types its JSON schema declares. A value that does not
//! convert stays as it was; values that are already typed are left alone, and a list whose
//! schema does not allow `array` is coerced element by element.

use serde_json::{Map, Value};

use super::json_value::from_str;
use super::py_number::{py_float, py_int};
use super::util::py_strip;

/// The JSON-schema types a property allows, as the reference lists them: `type` (a string,
/// or the strings of a list), the types of each `anyOf` then `oneOf` branch, and `null` when
/// `nullable` is set (any true value) and `null` is not listed yet.
pub fn schema_types(schema: &Value) -> Vec<String> {
    let Value::Object(schema) = schema else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t.clone()),
        Some(Value::Array(ts)) => {
            out.extend(ts.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for branch in branches {
                out.extend(schema_types(branch));
            }
        }
    }
    if schema.get("nullable").is_some_and(py_truthy) && !out.iter().any(|t| t == "null") {
        out.push("null".to_owned());
    }
    out
}

/// Python truthiness of a JSON value.
fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Coerces one argument value: a string to the first of `types` it converts to; the string
/// items of a list (one level) likewise, unless `array` is allowed. Anything else, and
/// strings that convert to none of the types, are returned unchanged.
pub fn coerce_value(raw: &Value, types: &[String]) -> Value {
    match raw {
        Value::String(s) => coerce_str(s, types).unwrap_or_else(|| raw.clone()),
        Value::Array(items) if !types.iter().any(|t| t == "array") => Value::Array(
            items
                .iter()
                .map(|v| match v {
                    Value::String(s) => coerce_str(s, types).unwrap_or_else(|| v.clone()),
                    other => other.clone(),
                })
                .collect(),
        ),
        _ => raw.clone(),
    }
}

/// A whole `f64` as an integer, when it fits in an `i64`.
fn whole(x: f64) -> Option<Value> {
    // The bounds are exact powers of two: every whole `f64` between them fits.
    (x.fract() == 0.0 && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&x))
        .then(|| Value::from(x as i64))
}

/// The reference's `_coerce` of one string, for the first type it converts to.
fn coerce_str(s: &str, types: &[String]) -> Option<Value> {
    for ty in types {
        let converted = match ty.as_str() {
            // Whole numbers written as floats count (`3.0`, `1e3`).
            "integer" => py_int(s)
                .map(Value::from)
                .or_else(|| py_float(s).and_then(whole)),
            // Whole numbers stay integers unless written with a `.`.
            "number" => py_float(s).and_then(|x| {
                let int = (!s.contains('.')).then(|| whole(x)).flatten();
                int.or_else(|| serde_json::Number::from_f64(x).map(Value::Number))
            }),
            "boolean" => match py_strip(s).to_lowercase().as_str() {
                "true" | "1" => Some(Value::Bool(true)),
                "false" | "0" => Some(Value::Bool(false)),
                _ => None,
            },
            "null" => matches!(py_strip(s), "null" | "None").then_some(Value::Null),
            "object" => from_str(s).ok().filter(Value::is_object),
            "array" => from_str(s).ok().filter(Value::is_array),
            _ => None,
        };
        if converted.is_some() {
            return converted;
        }
    }
    None
}

/// The `parameters.properties` of the tool named `name` (the last tool of that name, as in
/// the reference), when it has some.
fn properties<'a>(tools: &'a [Value], name: &str) -> Option<&'a Map<String, Value>> {
    let tool = tools.iter().rev().find_map(|tool| {
        let func = match tool.get("function") {
            Some(f) => f,
            None if tool.is_object() => tool,
            None => return None,
        };
        let func = func.as_object()?;
        (func.get("name").and_then(Value::as_str) == Some(name)).then_some(func)
    })?;
    tool.get("parameters")?
        .get("properties")?
        .as_object()
        .filter(|p| !p.is_empty())
}

/// Coerces the arguments of a tool call (or of the tool calls of a list, at any depth)
/// against `tools`. Values that are not tool calls, or name no known tool, are returned
/// unchanged.
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
        let coerced = match props.get(key).map(schema_types) {
            Some(types) if !types.is_empty() => coerce_value(arg, &types),
            _ => arg.clone(),
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
