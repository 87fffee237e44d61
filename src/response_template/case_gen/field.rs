//! Drawn fields: delimiters, content types with their arguments, flags, transforms, and now
//! and then a mistake.

use serde_json::{json, Map, Value};

use super::delim::{delim, py_escape, Delim, TAGS};
use super::rng::Rng;

/// Closing delimiters for the implicit field.
pub(super) const END_MARKS: [&str; 6] = ["<|im_end|>", "<|end|>", "END", "\n\n", "<|eot|>", "»"];

/// One drawn field: its JSON spec and what the text generator needs.
#[derive(Debug)]
pub(super) struct FieldPlan {
    pub(super) name: String,
    pub(super) spec: Map<String, Value>,
    pub(super) open: Option<Delim>,
    pub(super) close: Option<Delim>,
    pub(super) content: String,
    /// For `xml-inline`: how to write one tag (`{k}` and `{v}` replaced).
    pub(super) tag_shape: Option<String>,
    /// Keys of JSON objects in bodies (transform_each items use them).
    pub(super) item_keys: Vec<String>,
}

/// Content type names, one deliberately unknown.
pub(super) const CONTENT: [&str; 8] = [
    "text",
    "json",
    "int",
    "float",
    "bool",
    "xml-inline",
    "kv-lines",
    "yaml",
];

pub(super) fn value_parser(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => json!({"name": "json", "args": {"allow_non_json": true}}),
        1 => json!({"name": "int"}),
        2 => json!({"name": "json"}),
        3 => json!({"name": "bool"}),
        4 => json!({"name": "text", "args": {"strip": false}}),
        5 if rng.chance(10) => json!({"name": "number"}),
        5 => json!({"name": "float"}),
        _ if rng.chance(8) => json!({"nme": "json"}),
        _ if rng.chance(30) => json!({"name": "json", "args": {"unquoted_keys": true}}),
        _ => json!({"name": "text"}),
    }
}

/// A possibly wrong value for a boolean argument or flag.
pub(super) fn flag_value(rng: &mut Rng) -> Value {
    if rng.chance(97) {
        json!(rng.chance(50))
    } else {
        rng.pick(&[json!(1), json!(0), json!("yes"), json!(null)])
            .clone()
    }
}

pub(super) fn content_args(rng: &mut Rng, content: &str, plan: &mut FieldPlan) -> Option<Value> {
    let mut args = Map::new();
    match content {
        "text" | "int" | "float" | "bool" if rng.chance(30) => {
            args.insert("strip".into(), flag_value(rng));
        }
        "json" => {
            if rng.chance(30) {
                args.insert("unquoted_keys".into(), flag_value(rng));
            }
            if rng.chance(25) {
                args.insert("allow_non_json".into(), flag_value(rng));
            }
            if rng.chance(15) {
                let pair = rng.pick(&[
                    ["<|\"|>", "<|\"|>"],
                    ["'", "'"],
                    ["«", "»"],
                    ["<s>", "</s>"],
                ]);
                args.insert("string_delims".into(), json!([pair]));
            }
            if rng.chance(5) {
                args.insert("strip".into(), flag_value(rng));
            }
        }
        "xml-inline" => {
            let (pattern, shape) = match rng.below(6) {
                0 => (
                    r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
                    "<parameter={k}>\n{v}\n</parameter>",
                ),
                1 => (r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "<{k}>{v}</{k}>"),
                2 => (r"<arg (?P<key>[a-z_]+)=(?P<value>[^>]*)>", "<arg {k}={v}>"),
                3 => (r"(?P<key>\w+)=(?P<value>\S*)", "{k}={v} "),
                4 if rng.chance(20) => (r"<(?P<k>\w+)>(?P<value>.*?)</\1>", "<{k}>{v}</{k}>"),
                4 if rng.chance(20) => (r"<(?P<key>\w+)>(?P<val>.*?)</\1>", "<{k}>{v}</{k}>"),
                4 => (
                    r"<(?P<key>\w+)(?: v=(?P<value>\w*))?/>",
                    "<{k} v={v}/><{k}/>",
                ),
                _ if rng.chance(15) => (r"<(?P<key>\w+>(?P<value>.*?)", "<{k}>{v}"),
                _ => (r"<(?P<key>\w+)>(?P<value>.*?)</\1>", "<{k}>{v}</{k}>"),
            };
            if rng.chance(98) {
                args.insert("tag_pattern".into(), json!(pattern));
            }
            plan.tag_shape = Some(shape.to_owned());
            if rng.chance(40) {
                args.insert("value_parser".into(), value_parser(rng));
            }
            if rng.chance(30) {
                args.insert("merge_duplicates".into(), flag_value(rng));
            }
        }
        "kv-lines" => {
            if rng.chance(20) {
                let sep = if rng.chance(10) {
                    ""
                } else {
                    rng.s(&[";", "\n", ", "])
                };
                args.insert("line_sep".into(), json!(sep));
            }
            if rng.chance(20) {
                let sep = if rng.chance(10) {
                    ""
                } else {
                    rng.s(&["=", ":", " -> "])
                };
                args.insert("kv_sep".into(), json!(sep));
            }
            if rng.chance(20) {
                args.insert("strip".into(), flag_value(rng));
            }
            if rng.chance(30) {
                args.insert("value_parser".into(), value_parser(rng));
            }
        }
        _ => {}
    }
    if rng.chance(2) {
        // A misspelled or unknown argument.
        let key = *rng.pick(&["stirp", "unquoted_key", "tag_patern", "valueparser", "sep"]);
        args.insert(key.into(), json!(true));
    }
    if args.is_empty() && !rng.chance(5) {
        return None;
    }
    Some(Value::Object(args))
}

/// A transform for a field (with its placeholders' roots in scope, mostly).
pub(super) fn transform(rng: &mut Rng, plan: &FieldPlan, each: bool) -> Value {
    let groups: Vec<&str> = plan
        .open
        .iter()
        .chain(&plan.close)
        .flat_map(|d| d.groups.iter().map(|(n, _)| n.as_str()))
        .collect();
    let group = if rng.chance(50) {
        groups.last()
    } else {
        groups.first()
    };
    let name = group.map_or("{content.name}".to_owned(), |g| format!("{{{g}}}"));
    if groups.len() > 1 && rng.chance(30) {
        let all: Map<String, Value> = groups
            .iter()
            .map(|g| ((*g).to_owned(), json!(format!("{{{g}}}"))))
            .collect();
        return json!({"groups": all, "content": "{content}"});
    }
    if each {
        let k = plan.item_keys.first().map_or("name", String::as_str);
        return match rng.below(4) {
            0 => {
                json!({"type": "function", "function": {"name": format!("{{{k}}}"), "arguments": "{args}"}})
            }
            1 => json!({"v": format!("{{{k}}}")}),
            2 => json!({"all": "{content}", "k": format!("{{{k}}}")}),
            _ => json!(["{missing}"]),
        };
    }
    match rng.below(10) {
        0 | 1 => json!({"type": "function", "function": "{content}"}),
        2 | 3 => json!({"type": "function", "function": {"name": name, "arguments": "{content}"}}),
        4 => json!("{content}"),
        5 => json!({"v": "{content.args}", "n": 1, "l": [true, null]}),
        6 => json!(["{content}", name]),
        7 if rng.chance(40) => json!({"v": "pre {content}"}),
        7 => json!({"v": "{content.0}"}),
        8 => json!({"v": "{undefined_name}"}),
        _ => json!({"literal": "{not a placeholder}", "v": "{content}", "d": "{content.a.b}"}),
    }
}

pub(super) fn field_plan(
    rng: &mut Rng,
    name: &str,
    implicit: bool,
    group_names: &mut Vec<String>,
    earlier_opens: &[String],
) -> FieldPlan {
    let tag = *rng.pick(&TAGS);
    let (open_mark, close_mark) = match rng.below(4) {
        // The open of an earlier field: the two tie (the field name decides).
        _ if !earlier_opens.is_empty() && rng.chance(12) => {
            let open = rng.pick(earlier_opens).clone();
            let close = format!("</{}", open.trim_start_matches(['<', '[']));
            (open, close)
        }
        0 => (
            format!("[{}]", tag.to_uppercase()),
            format!("[/{}]", tag.to_uppercase()),
        ),
        1 => (format!("<|{tag}|>"), format!("<|/{tag}|>")),
        _ => (format!("<{tag}>"), format!("</{tag}>")),
    };
    let content = CONTENT[rng.weighted(&[42, 20, 6, 5, 5, 9, 8, 1])].to_owned();
    let mut plan = FieldPlan {
        name: name.to_owned(),
        spec: Map::new(),
        open: None,
        close: None,
        content: content.clone(),
        tag_shape: None,
        item_keys: vec!["name".into(), "args".into()],
    };
    if !implicit {
        let d = delim(rng, &open_mark, false, group_names);
        let key = if d.pattern { "open_pattern" } else { "open" };
        plan.spec.insert(key.into(), d.value.clone());
        plan.open = Some(d);
    }
    let close_kind = rng.weighted(&[80, 14, 3, 3]);
    if close_kind == 0 {
        let mark = if implicit && !earlier_opens.is_empty() && rng.chance(8) {
            // The implicit close is another field's open: an open and a close tie.
            rng.pick(earlier_opens).clone()
        } else if implicit {
            (*rng.pick(&END_MARKS)).to_owned()
        } else {
            close_mark
        };
        let d = delim(rng, &mark, true, group_names);
        let key = if d.pattern { "close_pattern" } else { "close" };
        plan.spec.insert(key.into(), d.value.clone());
        plan.close = Some(d);
    } else if close_kind == 2 {
        plan.spec.insert("close".into(), json!("eos"));
        plan.close = Some(Delim {
            pattern: false,
            value: json!("eos"),
            samples: vec!["eos".into(), "videos".into()],
            groups: Vec::new(),
        });
    } else if close_kind == 3 {
        // Both spellings of one delimiter, or an empty list: load errors.
        if rng.chance(50) {
            plan.spec.insert("close".into(), json!(close_mark));
            plan.spec
                .insert("close_pattern".into(), json!(py_escape(&close_mark)));
        } else {
            plan.spec.insert("close".into(), json!([]));
        }
    }
    if content != "text" || rng.chance(10) {
        plan.spec.insert("content".into(), json!(content));
    }
    if let Some(args) = content_args(rng, &content, &mut plan) {
        plan.spec.insert("content_args".into(), args);
    }
    let repeats = rng.chance(if name == "tool_calls" { 60 } else { 15 });
    if repeats || rng.chance(3) {
        plan.spec.insert(
            "repeats".into(),
            if rng.chance(95) {
                json!(repeats)
            } else {
                flag_value(rng)
            },
        );
    }
    if rng.chance(if repeats { 20 } else { 2 }) {
        plan.spec.insert(
            "join".into(),
            rng.pick(&[json!("\n"), json!(""), json!(", "), json!(1)])
                .clone(),
        );
    }
    if rng.chance(12) {
        plan.spec.insert(
            "optional".into(),
            if rng.chance(90) {
                json!(false)
            } else {
                flag_value(rng)
            },
        );
    }
    let groups = plan
        .open
        .iter()
        .chain(&plan.close)
        .any(|d| !d.groups.is_empty());
    let each = content == "json" && rng.chance(10);
    if groups && rng.chance(90) || rng.chance(if content == "json" { 35 } else { 8 }) || each {
        let t = transform(rng, &plan, each);
        plan.spec.insert("transform".into(), t);
        if each || rng.chance(3) {
            plan.spec.insert(
                "transform_each".into(),
                if rng.chance(90) {
                    json!(true)
                } else {
                    flag_value(rng)
                },
            );
        }
    } else if rng.chance(2) {
        plan.spec.insert("transform_each".into(), json!(true));
    }
    if rng.chance(2) {
        // A misspelled or unknown field key.
        let (bad, value) = match rng.below(6) {
            0 => ("opn", json!(open_mark)),
            1 => ("clsoe", json!("</x>")),
            2 => ("contnet", json!("json")),
            3 => ("repeat", json!(true)),
            4 => ("optinal", json!(false)),
            _ => ("transfrom", json!("{content}")),
        };
        plan.spec.insert(bad.into(), value);
    }
    plan
}
