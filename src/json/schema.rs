//! A JSON Schema subset validator, for checking response-format content.
//!
//! Supported keywords (what response-format schemas use): boolean schemas, `type` (one name or
//! a list; `integer` is a number without a fractional part), `enum`, `const`, `properties`,
//! `required`, `additionalProperties` (boolean or schema), `minProperties`/`maxProperties`,
//! `items` (one schema) and `prefixItems`, `minItems`/`maxItems`, `minLength`/`maxLength` (in
//! characters), `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum` (numbers),
//! `allOf`/`anyOf`/`oneOf`/`not`, and local `$ref`s (`#`, `#/$defs/...`, any JSON pointer into
//! the root schema). Other keywords (`pattern`, `format`, `dependentSchemas`, remote refs, ...)
//! are ignored: a value the subset accepts may still break them. `$ref` chains deeper than
//! [`MAX_DEPTH`] fail rather than recurse forever.
//!
//! ```
//! use chatparse::json::schema::validate;
//! use serde_json::json;
//! let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
//! assert!(validate(&json!({"n": 2}), &schema).is_ok());
//! assert!(validate(&json!({"n": 2.5}), &schema).is_err());
//! assert!(validate(&json!({}), &schema).is_err());
//! ```

use serde_json::{Map, Value};

/// How deep schemas may nest (through `$ref`s and subschemas) before validation fails.
pub const MAX_DEPTH: usize = 64;

/// Checks `value` against `schema` (see the module docs for the subset); `Err` says where the
/// first violation is (a JSON pointer into the value) and why.
pub fn validate(value: &Value, schema: &Value) -> Result<(), String> {
    Validator { root: schema }.check(value, schema, "", 0)
}

struct Validator<'s> {
    root: &'s Value,
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "integer" => value
            .as_f64()
            .is_some_and(|n| n.fract() == 0.0 && n.is_finite()),
        "number" => value.is_number(),
        other => type_name(value) == other,
    }
}

fn number(schema: &Map<String, Value>, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

fn count(schema: &Map<String, Value>, key: &str) -> Option<usize> {
    schema
        .get(key)
        .and_then(Value::as_u64)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

impl Validator<'_> {
    fn check(&self, value: &Value, schema: &Value, at: &str, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("{at}: the schema nests deeper than {MAX_DEPTH}"));
        }
        let here = || if at.is_empty() { "/" } else { at };
        let schema = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Bool(false) => return Err(format!("{}: no value is allowed", here())),
            Value::Object(map) => map,
            _ => return Ok(()),
        };
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let target = reference
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer))
                .ok_or_else(|| format!("{}: unresolvable $ref {reference}", here()))?;
            self.check(value, target, at, depth + 1)?;
        }
        if let Some(types) = schema.get("type") {
            let names: Vec<&str> = match types {
                Value::String(name) => vec![name.as_str()],
                Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !names.is_empty() && !names.iter().any(|name| has_type(value, name)) {
                return Err(format!(
                    "{}: expected {}, found {}",
                    here(),
                    names.join(" or "),
                    type_name(value)
                ));
            }
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
            if !allowed.contains(value) {
                return Err(format!("{}: {value} is not one of the enum values", here()));
            }
        }
        if let Some(constant) = schema.get("const") {
            if constant != value {
                return Err(format!("{}: expected {constant}, found {value}", here()));
            }
        }
        match value {
            Value::Object(object) => self.check_object(object, schema, at, depth)?,
            Value::Array(items) => self.check_array(items, schema, at, depth)?,
            Value::String(text) => {
                let n = text.chars().count();
                if count(schema, "minLength").is_some_and(|min| n < min)
                    || count(schema, "maxLength").is_some_and(|max| n > max)
                {
                    return Err(format!("{}: string length {n} out of bounds", here()));
                }
            }
            Value::Number(_) => {
                let n = value.as_f64().unwrap_or(f64::NAN);
                let out = number(schema, "minimum").is_some_and(|m| n < m)
                    || number(schema, "maximum").is_some_and(|m| n > m)
                    || number(schema, "exclusiveMinimum").is_some_and(|m| n <= m)
                    || number(schema, "exclusiveMaximum").is_some_and(|m| n >= m);
                if out {
                    return Err(format!("{}: {value} out of bounds", here()));
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            for sub in all {
                self.check(value, sub, at, depth + 1)?;
            }
        }
        if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
            if !any.is_empty()
                && !any
                    .iter()
                    .any(|s| self.check(value, s, at, depth + 1).is_ok())
            {
                return Err(format!("{}: matches none of anyOf", here()));
            }
        }
        if let Some(one) = schema.get("oneOf").and_then(Value::as_array) {
            let matching = one
                .iter()
                .filter(|s| self.check(value, s, at, depth + 1).is_ok())
                .count();
            if !one.is_empty() && matching != 1 {
                return Err(format!("{}: matches {matching} of oneOf, not one", here()));
            }
        }
        if let Some(not) = schema.get("not") {
            if self.check(value, not, at, depth + 1).is_ok() {
                return Err(format!("{}: matches the schema under not", here()));
            }
        }
        Ok(())
    }

    fn check_object(
        &self,
        object: &Map<String, Value>,
        schema: &Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> Result<(), String> {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            if let Some(missing) = required
                .iter()
                .filter_map(Value::as_str)
                .find(|key| !object.contains_key(*key))
            {
                let at = if at.is_empty() { "/" } else { at };
                return Err(format!("{at}: missing required property {missing:?}"));
            }
        }
        let n = object.len();
        if count(schema, "minProperties").is_some_and(|min| n < min)
            || count(schema, "maxProperties").is_some_and(|max| n > max)
        {
            return Err(format!("{at}: {n} properties out of bounds"));
        }
        for (key, member) in object {
            let path = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
            match properties.and_then(|p| p.get(key)) {
                Some(sub) => self.check(member, sub, &path, depth + 1)?,
                None => {
                    if let Some(extra) = schema.get("additionalProperties") {
                        if extra == &Value::Bool(false) {
                            return Err(format!("{path}: property not allowed"));
                        }
                        self.check(member, extra, &path, depth + 1)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn check_array(
        &self,
        items: &[Value],
        schema: &Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> Result<(), String> {
        let n = items.len();
        if count(schema, "minItems").is_some_and(|min| n < min)
            || count(schema, "maxItems").is_some_and(|max| n > max)
        {
            return Err(format!("{at}: {n} items out of bounds"));
        }
        let prefix = schema
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for (i, item) in items.iter().enumerate() {
            let path = format!("{at}/{i}");
            if let Some(sub) = prefix.get(i) {
                self.check(item, sub, &path, depth + 1)?;
            } else if let Some(sub) = schema.get("items") {
                self.check(item, sub, &path, depth + 1)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::validate;
    use serde_json::json;

    #[test]
    fn subset_keywords() {
        let schema = json!({
            "type": "object",
            "properties": {
                "amount": {"type": "number", "minimum": 0},
                "date": {"type": "string", "minLength": 1},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2},
                "kind": {"$ref": "#/$defs/kind"}
            },
            "required": ["amount"],
            "additionalProperties": false,
            "$defs": {"kind": {"anyOf": [{"const": "x"}, {"type": "null"}]}}
        });
        assert!(validate(&json!({"amount": 1.5, "date": "d", "tags": ["a"]}), &schema).is_ok());
        assert!(validate(&json!({"amount": 1, "kind": null}), &schema).is_ok());
        for bad in [
            json!({"date": "d"}),
            json!({"amount": -1}),
            json!({"amount": "1"}),
            json!({"amount": 1, "other": 1}),
            json!({"amount": 1, "tags": ["c"]}),
            json!({"amount": 1, "tags": ["a", "a", "b"]}),
            json!({"amount": 1, "kind": "y"}),
            json!([1]),
        ] {
            assert!(validate(&bad, &schema).is_err(), "{bad}");
        }
        assert!(validate(&json!("42"), &json!({"const": "42"})).is_ok());
        assert!(validate(&json!(3), &json!({"type": "integer"})).is_ok());
        assert!(validate(
            &json!(1),
            &json!({"oneOf": [{"type": "integer"}, {"type": "number"}]})
        )
        .is_err());
        assert!(validate(&json!(1), &json!(false)).is_err());
    }

    #[test]
    fn ref_cycles_end() {
        let schema = json!({"$ref": "#"});
        assert!(validate(&json!(1), &schema).is_err());
    }
}
