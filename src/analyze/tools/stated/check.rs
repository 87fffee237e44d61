//! The check of a format read from a preamble: the parser generated from it
//! ([`ChatParser::from_format`]) must parse back the example's own calls (when it states
//! literal ones) and calls written the way the example writes them: one call, two calls, and
//! arguments of every JSON type under a dotted, dashed name.

use serde_json::{json, Value};

use crate::analyze::scenario::ProbeSet;
use crate::generate::{ChatParser, TurnFormat};
use crate::message::{ChatRequest, Tool};

use super::syntax::{CallSpec, Syntax};

/// The name of the check's typed tool (dotted and dashed, as real tool names can be).
const TYPED_TOOL: &str = "stated.check-types";

/// The arguments of the typed check: every JSON type, a string with quotes, a line break and
/// non-ASCII text.
fn typed_args() -> Vec<(&'static str, Value)> {
    vec![
        ("text", json!("say \"hi\"\nnext line ✓")),
        ("count", json!(42)),
        ("ratio", json!(1.5)),
        ("flag", json!(true)),
        ("nothing", Value::Null),
        ("items", json!(["a", 2])),
        ("options", json!({"k": "v", "on": false})),
    ]
}

/// A tool declaration whose parameters have the JSON types of `args`.
fn declare(name: &str, args: &[(String, Value)]) -> Value {
    let type_of = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let properties: serde_json::Map<String, Value> = args
        .iter()
        .map(|(k, v)| (k.clone(), json!({"type": type_of(v)})))
        .collect();
    json!({"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": properties}}})
}

/// The request of a check: the probe tools plus the tools of `calls`.
fn request(calls: &[CallSpec]) -> Result<ChatRequest, String> {
    let mut tools: Vec<Value> = ProbeSet::PRIMARY.tools();
    for c in calls {
        let declared = tools
            .iter()
            .any(|t| t["function"]["name"].as_str() == Some(c.name.as_str()));
        if !declared {
            tools.push(declare(&c.name, &c.args));
        }
    }
    let tools: Vec<Tool> = tools
        .into_iter()
        .map(serde_json::from_value)
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    Ok(ChatRequest {
        tools,
        parallel_tool_calls: true,
        ..ChatRequest::default()
    })
}

/// Parses `text` with the parser of `format` and compares its calls with `calls`.
pub fn parses_back(format: &TurnFormat, text: &str, calls: &[CallSpec]) -> Result<(), String> {
    let request = request(calls)?;
    let parser = ChatParser::from_format("stated", format.clone(), &request, String::new())
        .map_err(|e| format!("no parser: {}", e.message))?;
    let parsed = parser.parse(text);
    let got: Vec<(String, Value)> = parsed
        .message
        .tool_calls
        .iter()
        .map(|c| {
            let args = serde_json::from_str(&c.arguments).unwrap_or(Value::Null);
            (c.name.clone(), args)
        })
        .collect();
    let want: Vec<(String, Value)> = calls
        .iter()
        .map(|c| (c.name.clone(), c.args_object()))
        .collect();
    if got == want && parsed.message.content.trim().is_empty() && parsed.problem.is_none() {
        return Ok(());
    }
    let why = match &parsed.problem {
        Some(p) => format!("stops at byte {}: expected {}", p.offset, p.expected),
        None => format!(
            "gives calls {} and content {:?}",
            serde_json::to_string(&got).unwrap_or_default(),
            parsed.message.content
        ),
    };
    Err(format!("{text:?} does not parse back: it {why}"))
}

/// Checks `format` (derived from an example written in `syntax`; `literal`: the example's
/// text as the preamble states it, with its own calls, when they are literal).
pub fn check(
    format: &TurnFormat,
    syntax: &Syntax,
    literal: Option<(&str, &[CallSpec])>,
) -> Result<(), String> {
    if let Some((stated, calls)) = literal {
        parses_back(format, stated, calls)?;
    }
    let p = &ProbeSet::PRIMARY;
    let args = [
        (p.arg_first, Value::from(p.value_first)),
        (p.arg_second, Value::from(p.value_second)),
    ];
    let one = CallSpec::new(p.fn_first, &args);
    let two = CallSpec::new(p.fn_second, &args[..1]);
    let typed: Vec<(&str, Value)> = typed_args();
    let typed = CallSpec::new(TYPED_TOOL, &typed);
    for calls in [vec![one.clone()], vec![one, two], vec![typed]] {
        parses_back(format, &syntax.write(&calls), &calls)?;
    }
    Ok(())
}
