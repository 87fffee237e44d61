use serde_json::json;

use super::*;

fn types(ts: &[&str]) -> Vec<String> {
    ts.iter().map(|t| (*t).to_owned()).collect()
}

#[test]
fn scalar_coercions() {
    assert_eq!(
        coerce_value(&json!("5"), &types(&["integer", "null"])),
        json!(5)
    );
    assert_eq!(
        coerce_value(&json!("null"), &types(&["integer", "null"])),
        json!(null)
    );
    assert_eq!(coerce_value(&json!("x"), &types(&["integer"])), json!("x"));
    assert_eq!(coerce_value(&json!("1.5"), &types(&["number"])), json!(1.5));
    assert_eq!(
        coerce_value(&json!("NaN"), &types(&["number"])),
        json!("NaN")
    );
    assert_eq!(
        coerce_value(&json!("True"), &types(&["boolean"])),
        json!(true)
    );
    assert_eq!(
        coerce_value(&json!("[1]"), &types(&["object"])),
        json!("[1]")
    );
    assert_eq!(coerce_value(&json!("[1]"), &types(&["array"])), json!([1]));
    assert_eq!(
        coerce_value(&json!("1.50"), &types(&["string", "object"])),
        json!("1.50")
    );
    assert_eq!(
        coerce_value(&json!(["7", 9]), &types(&["integer"])),
        json!([7, 9])
    );
    assert_eq!(coerce_value(&json!(7), &types(&["string"])), json!(7));
}

#[test]
fn schema_type_lists() {
    assert_eq!(
        schema_types(&json!({"type": ["integer", "string"]})),
        types(&["integer", "string"])
    );
    assert_eq!(
        schema_types(&json!({"anyOf": [{"type": "boolean"}, {"type": "string"}]})),
        types(&["boolean", "string"])
    );
    assert_eq!(
        schema_types(&json!({"type": "integer", "nullable": true})),
        types(&["integer", "null"])
    );
    assert!(schema_types(&json!({"description": "none"})).is_empty());
}

#[test]
fn tool_calls() {
    let tools = vec![
        json!({"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}}),
    ];
    let call = json!({"type": "function", "function": {"name": "f", "arguments": {"n": "3", "other": "4"}}});
    let want =
        json!({"type": "function", "function": {"name": "f", "arguments": {"n": 3, "other": "4"}}});
    assert_eq!(coerce_tool_calls(&call, &tools), want);
    assert_eq!(coerce_tool_calls(&json!([call]), &tools), json!([want]));
    assert_eq!(coerce_tool_calls(&json!("hello"), &tools), json!("hello"));
    let unknown = json!({"function": {"name": "g", "arguments": {"n": "3"}}});
    assert_eq!(coerce_tool_calls(&unknown, &tools), unknown);
}
