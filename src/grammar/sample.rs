//! Random texts of a grammar, with the calls they hold: the generation side of the round-trip
//! property (a text the grammar allows must parse back to the calls it was generated with).
//!
//! A walk from the root picks alternatives and repetition counts at random (deterministic for a
//! seed), and past a depth budget takes each rule's shortest derivation. Rules with a
//! [`Role`](super::ir::Role) record what they write: a call starts at a call rule; an arguments
//! rule or a JSON-typed argument writes a random value valid for its schema (in the grammar's
//! JSON flavour, keys in declared order); a raw argument writes random text from its rule
//! (no whitespace at either end, none of the delimiters, no delimiter prefix at its end).

use serde_json::{Map, Value};

use super::ir::{CharSet, Expr, Role, RuleId, Rules, ValueKind};
use super::schema::{literal_text, python_literal};

/// One generated call.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledCall {
    /// The tool's name.
    pub name: String,
    /// The arguments (an object).
    pub arguments: Value,
}

/// A generated text and the calls it holds, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The text.
    pub text: String,
    /// The calls.
    pub calls: Vec<SampledCall>,
}

/// A random text of `rules` for `seed`.
pub fn sample(rules: &Rules, seed: u64) -> Sample {
    let heights = heights(rules);
    let mut w = Walker {
        rules,
        heights,
        rng: seed ^ 0x9E37_79B9_7F4A_7C15,
        out: String::new(),
        calls: Vec::new(),
        budget: 40,
    };
    w.rule(rules.root(), 0);
    Sample {
        text: w.out,
        calls: w.calls,
    }
}

/// Per rule, the depth of its shallowest derivation (`u32::MAX` when it has none).
fn heights(rules: &Rules) -> Vec<u32> {
    let n = rules.rules().len();
    let mut h = vec![u32::MAX; n];
    loop {
        let mut changed = false;
        for i in 0..n {
            let v = expr_height(&rules.rules()[i].body, &h).saturating_add(1);
            if v < h[i] {
                h[i] = v;
                changed = true;
            }
        }
        if !changed {
            return h;
        }
    }
}

fn expr_height(e: &Expr, h: &[u32]) -> u32 {
    match e {
        Expr::Ref(r) => h.get(r.0).copied().unwrap_or(u32::MAX),
        Expr::Seq(items) => items.iter().map(|i| expr_height(i, h)).max().unwrap_or(0),
        Expr::Alt(items) => items
            .iter()
            .map(|i| expr_height(i, h))
            .min()
            .unwrap_or(u32::MAX),
        Expr::Repeat { expr, min, .. } => {
            if *min == 0 {
                0
            } else {
                expr_height(expr, h)
            }
        }
        Expr::Never => u32::MAX,
        _ => 0,
    }
}

struct Walker<'r> {
    rules: &'r Rules,
    heights: Vec<u32>,
    rng: u64,
    out: String,
    calls: Vec<SampledCall>,
    budget: usize,
}

/// Characters random text is drawn from (markers' characters are added per delimiter set).
const ALPHABET: &[char] = &[
    'a', 'b', 'c', 'x', 'y', 'z', 'Q', '0', '7', ' ', ' ', '\n', '.', ',', ':', '!', '?', '-', '_',
    '(', ')', '{', '}', '[', ']', '<', '>', '/', '=', '"', '\'', '\\', 'é', '日', '🙂',
];

impl Walker<'_> {
    fn next(&mut self) -> u64 {
        // SplitMix64.
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    fn rule(&mut self, id: RuleId, depth: usize) {
        let rule = self.rules.rule(id);
        match &rule.role {
            Some(Role::Call { tool }) => {
                self.calls.push(SampledCall {
                    name: tool.clone(),
                    arguments: Value::Object(Map::new()),
                });
                self.expr(&rule.body, depth + 1);
                return;
            }
            Some(Role::Arguments { .. }) => {
                let value = self.schema_value(id);
                if let Some(call) = self.calls.last_mut() {
                    call.arguments = value;
                }
                return;
            }
            Some(Role::Argument { name, value, .. }) => {
                let value = match value {
                    ValueKind::Raw => {
                        let start = self.out.len();
                        self.raw_text(&rule.body.clone(), depth + 1);
                        Value::String(self.out[start..].to_owned())
                    }
                    ValueKind::Encoded(syntax) => {
                        let start = self.out.len();
                        self.raw_text(&rule.body.clone(), depth + 1);
                        Value::String(syntax.decode(&self.out[start..]).0)
                    }
                    ValueKind::Json => self.schema_value(id),
                    ValueKind::Literal { .. } if rule.schema.is_some() => self.schema_value(id),
                    ValueKind::Literal { open, close } => {
                        let start = self.out.len();
                        self.expr(&rule.body.clone(), depth + 1);
                        let json = crate::generate::literal::literal_to_json(
                            &self.out[start..],
                            open,
                            close,
                        );
                        serde_json::from_str(&json).unwrap_or(Value::Null)
                    }
                };
                if let Some(Value::Object(args)) = self.calls.last_mut().map(|c| &mut c.arguments) {
                    args.insert(name.clone(), value);
                }
                return;
            }
            None => {}
        }
        if rule.schema.is_some() {
            self.schema_value(id);
            return;
        }
        let body = rule.body.clone();
        self.expr(&body, depth + 1);
    }

    /// A raw value: random text of the rule with no whitespace at its ends.
    fn raw_text(&mut self, e: &Expr, depth: usize) {
        match e {
            Expr::Excluding(ds) => {
                let text = self.text_excluding(ds);
                self.out.push_str(text.trim());
            }
            other => {
                let start = self.out.len();
                self.expr(other, depth);
                let trimmed = self.out[start..].trim().to_owned();
                self.out.truncate(start);
                self.out.push_str(&trimmed);
            }
        }
    }

    /// Writes a random value of the schema rule `id` and returns it.
    fn schema_value(&mut self, id: RuleId) -> Value {
        let Some(schema) = self.rules.rule(id).schema.clone() else {
            return Value::Null;
        };
        let value = self.value(&schema.schema, &schema.schema, 0);
        let literal = schema
            .quotes
            .as_ref()
            .and_then(|(open, close)| literal_text(&value, open, close));
        let verbatim = schema.verbatim.and_then(|quote| match &value {
            // A verbatim string holds no quote of its own kind (one is written as JSON).
            Value::String(s) if !s.contains(quote) => Some(format!("{quote}{s}{quote}")),
            _ => None,
        });
        // A container as the template's elements, where the rule allows them and they write
        // this value.
        let elements = schema
            .elements
            .as_ref()
            .filter(|_| self.below(2) == 0)
            .and_then(|e| super::elements::elements_text(&value, &schema.schema, e));
        let text = if let Some(text) = literal.or(verbatim).or(elements) {
            text
        } else if let (Some('"'), true, Value::String(s)) = (schema.verbatim, schema.python, &value)
        {
            // A string holding the verbatim quote: in the other quote, with escapes (the
            // verbatim quote's escapes would be read as text).
            super::schema::python_string(s)
        } else if schema.verbatim.is_some() {
            value.to_string()
        } else if schema.python {
            python_literal(&value)
        } else if self.below(2) == 0 {
            value.to_string()
        } else {
            serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string())
        };
        self.out.push_str(&text);
        value
    }

    fn pick<'v>(&mut self, items: &'v [Value]) -> Option<&'v Value> {
        if items.is_empty() {
            return None;
        }
        let i = self.below(items.len() as u64) as usize;
        items.get(i)
    }

    /// A random value valid for `schema` (the subset the rules express).
    fn value(&mut self, schema: &Value, root: &Value, depth: usize) -> Value {
        let Value::Object(obj) = schema else {
            return Value::Null;
        };
        let shallow = depth > 6;
        if let Some(Value::String(pointer)) = obj.get("$ref") {
            let target = pointer
                .strip_prefix('#')
                .and_then(|p| {
                    if p.is_empty() {
                        Some(root)
                    } else {
                        root.pointer(p)
                    }
                })
                .cloned()
                .unwrap_or(Value::Bool(true));
            return self.value(&target, root, depth + 1);
        }
        if let Some(v) = obj.get("const") {
            return v.clone();
        }
        if let Some(Value::Array(values)) = obj.get("enum") {
            return self.pick(values).cloned().unwrap_or(Value::Null);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alts)) = obj.get(key) {
                let mut base = obj.clone();
                base.remove(key);
                if let Some(alt) = self.pick(alts).cloned() {
                    let mut merged = base;
                    if let Value::Object(a) = alt {
                        merged.extend(a);
                    }
                    return self.value(&Value::Object(merged), root, depth + 1);
                }
            }
        }
        let types: Vec<String> = match obj.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ if obj.contains_key("properties") => vec!["object".to_owned()],
            _ if obj.contains_key("items") => vec!["array".to_owned()],
            _ => vec![
                "string".to_owned(),
                "integer".to_owned(),
                "boolean".to_owned(),
            ],
        };
        let t = types
            .get(self.below(types.len() as u64) as usize)
            .cloned()
            .unwrap_or_default();
        match t.as_str() {
            "string" => {
                let min = obj.get("minLength").and_then(Value::as_u64).unwrap_or(0);
                let max = obj
                    .get("maxLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(min + 8);
                let len = min + self.below(max.saturating_sub(min) + 1);
                let s: String = (0..len)
                    .map(|_| ALPHABET[self.below(ALPHABET.len() as u64) as usize])
                    .collect();
                Value::String(s)
            }
            "integer" => Value::from(self.below(2001) as i64 - 1000),
            "number" => {
                if self.below(2) == 0 {
                    Value::from(self.below(100) as i64)
                } else {
                    Value::from((self.below(10_000) as f64) / 8.0)
                }
            }
            "boolean" => Value::Bool(self.below(2) == 0),
            "null" => Value::Null,
            "object" => {
                let required: Vec<String> = obj
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| {
                        r.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                let mut out = Map::new();
                if let Some(Value::Object(props)) = obj.get("properties") {
                    for (k, sub) in props {
                        if required.contains(k) || (!shallow && self.below(2) == 0) {
                            out.insert(k.clone(), self.value(sub, root, depth + 1));
                        }
                    }
                }
                for k in &required {
                    if !out.contains_key(k) {
                        out.insert(k.clone(), Value::Null);
                    }
                }
                Value::Object(out)
            }
            "array" => {
                let min = obj.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                let max = obj
                    .get("maxItems")
                    .and_then(Value::as_u64)
                    .unwrap_or(min + 3);
                let len = if shallow {
                    min
                } else {
                    min + self.below(max.saturating_sub(min) + 1)
                };
                let items = obj.get("items").cloned().unwrap_or(Value::Bool(true));
                Value::Array(
                    (0..len)
                        .map(|_| self.value(&items, root, depth + 1))
                        .collect(),
                )
            }
            _ => Value::Null,
        }
    }

    /// Random text containing none of `ds` and ending with no proper prefix of one.
    fn text_excluding(&mut self, ds: &[String]) -> String {
        let extra: Vec<char> = ds.iter().flat_map(|d| d.chars()).collect();
        let len = self.below(12);
        let mut s = String::new();
        for _ in 0..len {
            let c = if !extra.is_empty() && self.below(4) == 0 {
                extra[self.below(extra.len() as u64) as usize]
            } else {
                ALPHABET[self.below(ALPHABET.len() as u64) as usize]
            };
            s.push(c);
        }
        loop {
            let cut = ds.iter().filter_map(|d| s.find(d.as_str())).min();
            match cut {
                Some(at) => s.truncate(at),
                None => break,
            }
        }
        loop {
            let partial = ds
                .iter()
                .any(|d| (1..d.len()).any(|n| d.is_char_boundary(n) && s.ends_with(&d[..n])));
            if !partial || s.is_empty() {
                break;
            }
            s.pop();
        }
        s
    }

    fn class_char(&mut self, set: &CharSet) -> char {
        // Mostly characters of the alphabet the set holds, so text stays readable.
        let fitting: Vec<char> = ALPHABET
            .iter()
            .copied()
            .filter(|c| set.contains(*c))
            .collect();
        if !fitting.is_empty() && self.below(4) != 0 {
            return fitting[self.below(fitting.len() as u64) as usize];
        }
        let n = self.next();
        set.nth(n % set.len().min(u64::from(u32::MAX)))
    }

    fn expr(&mut self, e: &Expr, depth: usize) {
        let deep = depth > self.budget;
        match e {
            Expr::Empty | Expr::Never => {}
            Expr::Literal(text) => self.out.push_str(text),
            Expr::Class(set) => {
                let c = self.class_char(set);
                self.out.push(c);
            }
            Expr::Excluding(ds) => {
                let text = self.text_excluding(ds);
                self.out.push_str(&text);
            }
            Expr::Seq(items) => items.iter().for_each(|i| self.expr(i, depth + 1)),
            Expr::Alt(items) => {
                let candidates: Vec<&Expr> = if deep {
                    let best = items
                        .iter()
                        .map(|i| expr_height(i, &self.heights))
                        .min()
                        .unwrap_or(0);
                    items
                        .iter()
                        .filter(|i| expr_height(i, &self.heights) == best)
                        .collect()
                } else {
                    items
                        .iter()
                        .filter(|i| expr_height(i, &self.heights) != u32::MAX)
                        .collect()
                };
                if candidates.is_empty() {
                    return;
                }
                let i = self.below(candidates.len() as u64) as usize;
                self.expr(candidates[i], depth + 1);
            }
            Expr::Repeat { expr, min, max } => {
                let upper = if deep {
                    *min
                } else {
                    max.unwrap_or(min + 2).min(min + 2)
                };
                let n = *min + self.below(u64::from(upper - min) + 1) as u32;
                for _ in 0..n {
                    self.expr(expr, depth + 1);
                }
            }
            Expr::Ref(r) => self.rule(*r, depth + 1),
        }
    }
}
