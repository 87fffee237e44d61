//! Random response-template cases for differential testing against transformers.
//!
//! [`generate_case`] builds one case from a seed and an index (so any case can be rebuilt on
//! its own): a template drawn from the template language of [`syntax`](super::syntax)
//! (fields with literal, literal-list or regex delimiters, content types with their
//! arguments, transforms, `repeats`/`join`/`optional`/`transform_each`, defaults, anchors,
//! and now and then a mistake: a misspelled or unknown key, an empty map, a bad regex, a
//! missing group, a wrong type), a prompt prefix, a text that mostly follows the template
//! (with partial and stray delimiters, bodies of every content type, valid or not) and the
//! chunk sizes to stream it in. `chatparse response-cases` writes cases as JSON lines;
//! `scripts/hf_response_oracle.py` records what transformers does with them, in the format of
//! the conformance vectors.
//!
//! The regexes drawn for delimiters stay within what this module supports (no lookarounds or
//! backreferences, see the module docs' limits); integers stay within `i64`.

mod delim;
mod field;
mod rng;
mod text;

use serde_json::{json, Map, Value};

use delim::{py_escape, sample};
use field::field_plan;
use rng::Rng;
use text::{body, filler};

/// Field names (in an order unlike their alphabetical one, for tie breaks).
const NAMES: [&str; 8] = [
    "content",
    "thinking",
    "tool_calls",
    "b",
    "a",
    "answer",
    "n",
    "meta",
];

/// Draws one case: `{id, source, template, prefix, text, chunk_sizes[, tools]}`, or (one in
/// five) `{id, source, template, prefix, ops[, tools]}` with the calls of an `ops` vector.
pub fn generate_case(seed: u64, index: u64) -> Value {
    let mut rng = Rng::new(seed, index);
    let mut group_names = Vec::new();
    let n_fields = 1 + rng.weighted(&[20, 40, 30, 10]);
    let mut names: Vec<&str> = Vec::new();
    while names.len() < n_fields {
        let name = *rng.pick(&NAMES);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let implicit_count = rng.weighted(&[35, 62, 3]);
    let mut plans = Vec::new();
    let mut opens: Vec<String> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let implicit = i >= names.len().saturating_sub(implicit_count);
        let plan = field_plan(&mut rng, name, implicit, &mut group_names, &opens);
        if let Some(open) = plan.open.as_ref().filter(|d| !d.pattern) {
            opens.extend(open.samples.first().cloned());
        }
        plans.push(plan);
    }
    if rng.chance(50) {
        // The implicit field is not always last.
        let last = plans.len() - 1;
        let other = rng.below(plans.len());
        plans.swap(other, last);
    }
    let mut top = Map::new();
    if rng.chance(5) {
        top.insert(
            "version".into(),
            rng.pick(&[json!(1), json!(2), json!("1")]).clone(),
        );
    }
    match rng.below(20) {
        0 => {}
        1 => {
            top.insert(
                "defaults".into(),
                json!({"role": "assistant", "content": ""}),
            );
        }
        2 => {
            let preset = rng
                .pick(&[
                    json!("preset"),
                    json!([]),
                    json!(["x"]),
                    json!(null),
                    json!({"k": 1}),
                ])
                .clone();
            top.insert(
                "defaults".into(),
                json!({"role": "assistant", (names[0]): preset}),
            );
        }
        3 if rng.chance(30) => {
            top.insert("defaults".into(), json!(["role"]));
        }
        _ => {
            top.insert("defaults".into(), json!({"role": "assistant"}));
        }
    }
    let anchor_lit = *rng.pick(&[
        "<|im_start|>assistant\n",
        "<|assistant|>",
        "<start_of_turn>model\n",
        "A:",
    ]);
    match rng.weighted(&[70, 8, 16, 2, 2, 2]) {
        0 => {
            top.insert("start_anchor".into(), json!(anchor_lit));
        }
        1 => {
            top.insert("start_anchor".into(), json!([anchor_lit, "<|assistant|>"]));
        }
        2 => {
            let p = match rng.below(3) {
                0 => py_escape(anchor_lit),
                1 => r"<\|im_start\|>assistant\s*".to_owned(),
                _ => format!("{}$", py_escape(anchor_lit)),
            };
            top.insert("start_anchor_pattern".into(), json!(p));
        }
        3 => {
            top.insert("start_anchor".into(), json!(anchor_lit));
            top.insert("start_anchor_pattern".into(), json!("x"));
        }
        4 => {
            top.insert("start_anchor_pattern".into(), json!("(unclosed"));
        }
        _ => {}
    }
    let mut fields = Map::new();
    for p in &plans {
        fields.insert(p.name.clone(), Value::Object(p.spec.clone()));
    }
    if rng.chance(2) {
        fields.clear();
    }
    top.insert("fields".into(), Value::Object(fields));
    if rng.chance(3) {
        let key = *rng.pick(&["field", "default", "start_anchr", "stop"]);
        top.insert(key.into(), json!({}));
    }

    // The text.
    let marks: Vec<String> = plans
        .iter()
        .flat_map(|p| p.open.iter().chain(&p.close))
        .flat_map(|d| d.samples.iter().cloned())
        .collect();
    let mut text = String::new();
    for _ in 0..rng.below(9) {
        text.push_str(&filler(&mut rng, &marks));
        let Some(p) = plans.get(rng.below(plans.len())) else {
            break;
        };
        if let Some(open) = &p.open {
            text.push_str(&sample(&mut rng, open));
        }
        text.push_str(&body(&mut rng, p));
        match (rng.below(10), &p.close) {
            (0, _) | (_, None) => {}
            (1, Some(close)) => {
                // A partial close.
                let s = sample(&mut rng, close);
                let cut = s.char_indices().map(|(i, _)| i).nth(1).unwrap_or(0);
                text.push_str(s.get(..cut).unwrap_or(""));
            }
            (_, Some(close)) => text.push_str(&sample(&mut rng, close)),
        }
    }
    if rng.chance(40) {
        text.push_str(&filler(&mut rng, &marks));
    }
    let prefix = match rng.weighted(&[5, 45, 35, 15]) {
        0 => Value::Null,
        1 => json!(""),
        2 => {
            // History, the anchor, then maybe an opened region.
            let mut p = format!("<|im_start|>user\nHi<|im_end|>\n{anchor_lit}");
            if rng.chance(40) {
                if let Some(open) = plans.iter().find_map(|p| p.open.as_ref()) {
                    p.push_str(&sample(&mut rng, open));
                }
            }
            if rng.chance(20) {
                p.push_str(&format!("old{anchor_lit}"));
            }
            json!(p)
        }
        _ => json!(filler(&mut rng, &marks)),
    };
    let mut case = json!({
        "id": format!("gen/{seed}/{index}"),
        "source": format!("chatparse response-cases --seed {seed} (case {index})"),
        "template": Value::Object(top),
        "prefix": prefix,
        "text": text,
        "chunk_sizes": [1, 2 + rng.below(6)],
    });
    if rng.chance(15) {
        case["tools"] = json!([{"type": "function", "function": {"name": "get", "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "n": {"type": rng.pick(&["integer", "number"])},
                "flag": {"type": "boolean"},
                "obj": {"type": ["object", "null"]},
                "ü": {"anyOf": [{"type": "array"}, {"type": "integer"}]}
            }
        }}}, {"type": "function", "function": {"name": "f", "parameters": {"type": "object",
            "properties": {"x": {"type": "integer"}, "a": {"type": "number", "nullable": true}}}}}]);
        if rng.chance(20) {
            // A later tool of the same name replaces the earlier one.
            if let Some(tools) = case["tools"].as_array_mut() {
                tools.push(json!({"name": "get", "parameters": {"properties": {
                    "city": {"type": "integer"}, "n": {"type": "string"}}}}));
            }
        }
    }
    if rng.chance(20) {
        // An `ops` case: the text in a few feeds of random sizes, `finalize`, and sometimes
        // more calls after it.
        let text = case["text"].as_str().unwrap_or_default().to_owned();
        case["ops"] = Value::Array(ops(&mut rng, &text));
        if let Some(case) = case.as_object_mut() {
            case.remove("text");
            case.remove("chunk_sizes");
        }
        return case;
    }
    if rng.chance(1) {
        // A long text (past the parser's compaction threshold).
        let text = case["text"].as_str().unwrap_or_default().to_owned();
        if !text.is_empty() {
            case["text"] = json!(text.repeat(6000 / text.len() + 1));
            case["chunk_sizes"] = json!([64 + rng.below(64)]);
        }
    }
    case
}

/// The calls of an `ops` case feeding `text`: `["feed", piece]`s cut at random character
/// boundaries (now and then an empty one), `["finalize"]`, and sometimes a feed and a
/// finalize more.
fn ops(rng: &mut Rng, text: &str) -> Vec<Value> {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
    let mut cuts: Vec<usize> = (0..rng.below(5))
        .filter_map(|_| bounds.get(rng.below(bounds.len().max(1))).copied())
        .collect();
    cuts.extend([0, text.len()]);
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<Value> = cuts
        .windows(2)
        .map(|w| json!(["feed", text.get(w[0]..w[1]).unwrap_or_default()]))
        .collect();
    if out.is_empty() || rng.chance(5) {
        out.push(json!(["feed", ""]));
    }
    out.push(json!(["finalize"]));
    if rng.chance(10) {
        out.push(json!(["feed", "x"]));
        out.push(json!(["finalize"]));
    }
    out
}

/// `count` cases of `seed`, indices `0..count`.
pub fn generate_cases(seed: u64, count: u64) -> impl Iterator<Item = Value> {
    (0..count).map(move |i| generate_case(seed, i))
}

#[cfg(test)]
#[path = "../case_gen_tests.rs"]
mod tests;
