//! The comparison as JSON: the [`Comparison`] as it is (engines, per-model totals in engine
//! order, every case run with its failures, and the fuzz regressions), plus the totals.

use serde_json::{json, Value};

use super::Comparison;

/// The report as a JSON value.
pub fn to_json(comparison: &Comparison) -> Value {
    let mut value = serde_json::to_value(comparison).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        let totals: Vec<Value> = comparison
            .engines
            .iter()
            .zip(comparison.totals())
            .map(|(engine, totals)| json!({"engine": engine, "totals": totals}))
            .collect();
        map.insert("totals".into(), Value::Array(totals));
    }
    value
}

/// The report as pretty JSON text.
pub fn to_string(comparison: &Comparison) -> String {
    serde_json::to_string_pretty(&to_json(comparison)).unwrap_or_default() + "\n"
}
