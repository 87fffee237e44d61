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

use serde_json::{json, Map, Value};

/// A small deterministic random generator (SplitMix64).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64, index: u64) -> Rng {
        let mut rng = Rng(seed ^ index.wrapping_mul(0xA076_1D64_78BD_642F));
        rng.next();
        rng
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// One of `items`.
    fn s<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// An index drawn with the given weights.
    fn weighted(&mut self, weights: &[usize]) -> usize {
        let total: usize = weights.iter().sum();
        let mut x = self.below(total);
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    }
}

/// Tag names for delimiters: several share prefixes (`tool`, `tool_call`), so delimiters
/// overlap and tie.
const TAGS: [&str; 9] = [
    "think",
    "tool",
    "tool_call",
    "a",
    "ab",
    "x",
    "n",
    "answer",
    "é",
];

/// Closing delimiters for the implicit field.
const END_MARKS: [&str; 6] = ["<|im_end|>", "<|end|>", "END", "\n\n", "<|eot|>", "»"];

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

/// Words and other text for bodies and filler.
const WORDS: [&str; 24] = [
    "hello", "world", "Hi", "42", "x", "é", "日本", "🙂", " ", "  ", "\n", "\t", ",", ":", "{",
    "}", "\"", "'", "a_b", "ü", "true", "-", "=", "#",
];

/// One drawn delimiter: its JSON (under `key` or `key_pattern`), texts that match it, and the
/// named groups it captures (with whether each always takes part in a match).
#[derive(Debug, Clone)]
struct Delim {
    pattern: bool,
    value: Value,
    samples: Vec<String>,
    groups: Vec<(String, bool)>,
}

/// A regex under construction with a way to draw matching text.
#[derive(Debug, Default)]
struct RegexBuilder {
    source: String,
    parts: Vec<Part>,
    groups: Vec<(String, bool)>,
}

#[derive(Debug, Clone)]
enum Part {
    Lit(String),
    Word,
    Spaces { min: usize },
    Digits,
    Optional(Box<Part>),
    Choice(Vec<String>),
    Lazy,
    Nothing,
}

/// Escapes regex metacharacters the way Python's `re.escape` needs them escaped.
fn py_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.^$*+?{}[]|()#&~-".contains(c) || c == ' ' || c == '\n' || c == '\t' {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                _ => {
                    out.push('\\');
                    out.push(c);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl RegexBuilder {
    fn lit(&mut self, s: &str) {
        self.source.push_str(&py_escape(s));
        self.parts.push(Part::Lit(s.to_owned()));
    }

    fn raw(&mut self, source: &str, part: Part) {
        self.source.push_str(source);
        self.parts.push(part);
    }

    fn sample(&self, rng: &mut Rng) -> String {
        let mut out = String::new();
        for part in &self.parts {
            sample_part(part, rng, &mut out);
        }
        out
    }
}

fn sample_part(part: &Part, rng: &mut Rng, out: &mut String) {
    match part {
        Part::Lit(s) => out.push_str(s),
        Part::Word => out.push_str(rng.s(&["get", "f", "search_web", "ÿes", "x1", "_"])),
        Part::Spaces { min } => {
            let n = min + rng.below(3);
            for _ in 0..n {
                out.push(*rng.pick(&[' ', '\n', ' ']));
            }
        }
        Part::Digits => out.push_str(rng.s(&["0", "7", "42", "٣"])),
        Part::Optional(inner) => {
            if rng.chance(50) {
                sample_part(inner, rng, out);
            }
        }
        Part::Choice(alts) => out.push_str(rng.pick(alts).as_str()),
        Part::Lazy => out.push_str(rng.s(&["", " to=x", "json ", "a>b"])),
        Part::Nothing => {}
    }
}

/// Draws a delimiter around the literal `mark` (`closing`: a close delimiter).
fn delim(rng: &mut Rng, mark: &str, closing: bool, group_names: &mut Vec<String>) -> Delim {
    match rng.weighted(&[60, 12, 28]) {
        0 => Delim {
            pattern: false,
            value: json!(mark),
            samples: vec![mark.to_owned()],
            groups: Vec::new(),
        },
        1 => {
            // A list of literals, some prefixes of others.
            let mut list = vec![mark.to_owned()];
            let extra = match rng.below(4) {
                0 => format!("{mark}\n"),
                1 => mark.chars().take(mark.chars().count().max(2) - 1).collect(),
                2 => mark.to_uppercase(),
                _ => format!("[{}]", mark.trim_matches(['<', '>', '/', '|'])),
            };
            if !extra.is_empty() {
                list.push(extra);
            }
            if rng.chance(10) {
                list.push(mark.to_owned());
            }
            Delim {
                pattern: false,
                samples: list.clone(),
                value: json!(list),
                groups: Vec::new(),
            }
        }
        _ => regex_delim(rng, mark, closing, group_names),
    }
}

fn regex_delim(rng: &mut Rng, mark: &str, closing: bool, group_names: &mut Vec<String>) -> Delim {
    let mut b = RegexBuilder::default();
    let inner = mark.trim_end_matches('>');
    let angle = inner.len() != mark.len() && !inner.is_empty();
    match rng.below(11) {
        0 if angle => {
            // `<tag=(?P<name>\w+)>`
            let name = group_name(rng, group_names);
            b.lit(&format!("{inner}="));
            b.raw(&format!("(?P<{name}>\\w+)"), Part::Word);
            b.lit(">");
            b.groups.push((name, true));
        }
        1 if angle => {
            // An optional named group: it may not take part in the match.
            let name = group_name(rng, group_names);
            b.lit(inner);
            b.raw(
                &format!("(?: (?P<{name}>\\w+))?"),
                Part::Optional(Box::new(Part::Lit(" get".into()))),
            );
            b.lit(">");
            b.groups.push((name, false));
        }
        2 => {
            b.lit(mark);
            b.raw("\\s*", Part::Spaces { min: 0 });
        }
        3 => {
            b.lit(mark);
            b.raw("(?:\\n)?", Part::Optional(Box::new(Part::Lit("\n".into()))));
        }
        4 => {
            let other = format!("<{}>", rng.pick(&TAGS));
            b.raw(
                &format!("(?:{}|{})", py_escape(mark), py_escape(&other)),
                Part::Choice(vec![mark.to_owned(), other]),
            );
        }
        5 if !closing => {
            // A lazy span between two literals (gpt-oss style headers).
            let name = group_name(rng, group_names);
            b.lit("<|c|>");
            b.raw(&format!("(?P<{name}>\\w+)"), Part::Word);
            b.raw(".*?", Part::Lazy);
            b.lit(mark);
            b.groups.push((name, true));
        }
        6 => {
            b.raw("\\s*", Part::Spaces { min: 0 });
            b.lit(mark);
        }
        7 => {
            b.lit(mark);
            b.raw("\\d+", Part::Digits);
        }
        8 if closing && rng.chance(15) => {
            // A close that can match the empty string.
            b.raw(
                &format!("(?:{})?", py_escape(mark)),
                Part::Optional(Box::new(Part::Lit(mark.to_owned()))),
            );
        }
        8 if rng.chance(30) => {
            b.raw("^", Part::Nothing);
            b.lit(mark);
        }
        9 if rng.chance(30) => {
            b.lit(mark);
            b.raw("$", Part::Nothing);
        }
        10 if rng.chance(20) => {
            // A mistake: an unbalanced or dangling construct.
            b.raw(rng.s(&["(", "[a-", "*", "(?P<1x>a)", "\\"]), Part::Nothing);
            b.lit(mark);
        }
        _ => b.lit(mark),
    }
    if b.groups.is_empty() && rng.chance(8) {
        // Named group on a literal part: needs a transform.
        let name = group_name(rng, group_names);
        b.source = format!("(?P<{name}>{})", b.source);
        b.groups.push((name, true));
    }
    let samples = (0..3).map(|_| b.sample(rng)).collect();
    Delim {
        pattern: true,
        value: json!(b.source),
        samples,
        groups: b.groups,
    }
}

fn group_name(rng: &mut Rng, taken: &mut Vec<String>) -> String {
    let name = if rng.chance(15) && !taken.is_empty() {
        // Reuse a name of another delimiter.
        rng.pick(taken).clone()
    } else {
        (*rng.pick(&["name", "fn", "attr", "id", "content", "kind"])).to_owned()
    };
    taken.push(name.clone());
    name
}

/// One drawn field: its JSON spec and what the text generator needs.
#[derive(Debug)]
struct FieldPlan {
    name: String,
    spec: Map<String, Value>,
    open: Option<Delim>,
    close: Option<Delim>,
    content: String,
    /// For `xml-inline`: how to write one tag (`{k}` and `{v}` replaced).
    tag_shape: Option<String>,
    /// Keys of JSON objects in bodies (transform_each items use them).
    item_keys: Vec<String>,
}

/// Content type names, one deliberately unknown.
const CONTENT: [&str; 8] = [
    "text",
    "json",
    "int",
    "float",
    "bool",
    "xml-inline",
    "kv-lines",
    "yaml",
];

fn value_parser(rng: &mut Rng) -> Value {
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
fn flag_value(rng: &mut Rng) -> Value {
    if rng.chance(97) {
        json!(rng.chance(50))
    } else {
        rng.pick(&[json!(1), json!(0), json!("yes"), json!(null)])
            .clone()
    }
}

fn content_args(rng: &mut Rng, content: &str, plan: &mut FieldPlan) -> Option<Value> {
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
fn transform(rng: &mut Rng, plan: &FieldPlan, each: bool) -> Value {
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

fn field_plan(
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

/// A draw of a JSON body (possibly in a dialect, possibly broken).
fn json_body(rng: &mut Rng, plan: &FieldPlan, depth: usize) -> String {
    let key = |rng: &mut Rng| {
        (*rng.pick(&["name", "args", "city", "a", "b_c", "n1", "日", "arguments"])).to_owned()
    };
    if depth == 0 && rng.chance(15) {
        // A tool call whose string arguments a schema may coerce.
        let name = rng.s(&["get", "f", "other"]);
        let mut args = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let k = rng.s(&["city", "n", "flag", "obj", "ü", "x", "a"]);
            let v = rng.s(&[
                "\"3.0\"",
                "\" 5 \"",
                "\"1e3\"",
                "\"true\"",
                "\"0\"",
                "\"null\"",
                "\"None\"",
                "\"{\\\"a\\\": 1}\"",
                "\"[1, 2]\"",
                "\"x\"",
                "7",
                "[\"1\", 2]",
                "\"1_000\"",
                "\"-0\"",
                "\"2.50\"",
                "\"inf\"",
                "\"٣\"",
            ]);
            args.push(format!("\"{k}\": {v}"));
        }
        return format!(
            "{{\"name\": \"{name}\", \"arguments\": {{{}}}}}",
            args.join(", ")
        );
    }
    match rng.below(if depth > 1 { 6 } else { 10 }) {
        0 => rng
            .pick(&[
                "0",
                "-7",
                "3.0",
                "1e3",
                "12345678901",
                "-0.0",
                "2.5e-3",
                "NaN",
                "1e400",
            ])
            .to_string(),
        1 => rng
            .pick(&[
                "\"s\"",
                "\"é\\n\\u00e9\"",
                "\"a,b:c\"",
                "\"{x:1}\"",
                "\"\"",
                "\"it's 'q'\"",
                "\"<s>x</s>\"",
                "\"«a»,k:1\"",
                "\"\\\"{y:2}\"",
                "\"\u{1}\"",
                "'single'",
            ])
            .to_string(),
        2 => rng
            .pick(&["true", "false", "null", "True", "None"])
            .to_string(),
        3 => rng
            .pick(&["{", "[1,", "{\"a\": }", "not json", "'s'", "{\"a\":1}}"])
            .to_string(),
        4 | 5 => {
            let n = rng.below(3);
            let items: Vec<String> = (0..n).map(|_| json_body(rng, plan, depth + 1)).collect();
            format!("[{}]", items.join(rng.s(&[", ", ","])))
        }
        6 => {
            // A transform_each-friendly list of records.
            let items: Vec<String> = (0..1 + rng.below(2))
                .map(|_| {
                    format!(
                        "{{\"{}\": \"f\", \"{}\": {{\"x\": 1}}}}",
                        plan.item_keys.first().map_or("name", String::as_str),
                        plan.item_keys.get(1).map_or("args", String::as_str)
                    )
                })
                .collect();
            format!("[{}]", items.join(", "))
        }
        _ => {
            let n = rng.below(4);
            let mut members = Vec::new();
            for _ in 0..n {
                let k = key(rng);
                let v = json_body(rng, plan, depth + 1);
                members.push(match rng.below(12) {
                    0 | 10 => format!("{k}: {v}"),
                    11 => format!("{k}:{v}"),
                    1 => format!("{k} : {v}"),
                    2 => format!(" {k}:{v}"),
                    3 => format!("'{k}': {v}"),
                    4 => format!(
                        "<|\"|>{k}<|\"|>: <|\"|>{}<|\"|>",
                        rng.pick(&["v", "a,b:c", "q\"x"])
                    ),
                    5 => format!("«{k}»: «{}»", rng.pick(&["v", "x'y"])),
                    _ => format!("\"{k}\": {v}"),
                });
            }
            let sep = *rng.pick(&[", ", ",", ",\n "]);
            format!("{{{}}}", members.join(sep))
        }
    }
}

fn scalar_body(rng: &mut Rng, content: &str) -> String {
    let pool: &[&str] = match content {
        "int" => &[
            "42",
            " 7 ",
            "-3",
            "+5",
            "1_000",
            "3.0",
            "0x1F",
            "٣",
            "",
            "abc",
            "007",
            "1__0",
            "-0",
            "9223372036854775807",
            "\u{a0}12\u{2003}",
        ],
        "float" => &[
            "3.14", " -0.5 ", "1e3", "1_0.5", "inf", "nan", ".5", "5.", "1e400", "abc", "-inf",
            "1E-3", "٣.٥", "", "0x1p3", "1.0",
        ],
        "bool" => &[
            "true", "True", "TRUE", "1", "0", "false", "yes", "no", "garbage", "", " true ", "on",
        ],
        _ => &["hello", " spaced  ", "", "\n", "é 日本 🙂", "a\nb", "  \t "],
    };
    (*rng.pick(pool)).to_owned()
}

fn body(rng: &mut Rng, plan: &FieldPlan) -> String {
    match plan.content.as_str() {
        "json" => json_body(rng, plan, 0),
        "xml-inline" => {
            let shape = plan.tag_shape.as_deref().unwrap_or("<{k}>{v}</{k}>");
            let mut out = String::new();
            if rng.chance(30) {
                out.push_str("<function=get>");
            }
            for _ in 0..rng.below(4) {
                let k = *rng.pick(&["city", "n", "flag", "obj", "city", "ü"]);
                let v = *rng.pick(&[
                    "Paris",
                    "3",
                    "true",
                    "{\"a\": 1}",
                    "[1, 2]",
                    " 5 ",
                    "null",
                    "3.0",
                    "x<y",
                ]);
                out.push_str(&shape.replace("{k}", k).replace("{v}", v));
            }
            if rng.chance(30) {
                out.push_str("</function>");
            }
            out
        }
        "kv-lines" => {
            let mut lines = Vec::new();
            for _ in 0..rng.below(4) {
                let k = *rng.pick(&["name", " age ", "ok", "x", ""]);
                let sep = *rng.pick(&[":", "=", ": ", " -> "]);
                let v = *rng.pick(&["alice", "30", " true", "a:b", "{\"k\": 1}", ""]);
                lines.push(format!("{k}{sep}{v}"));
            }
            let join = *rng.pick(&["\n", ";", "\n\n", ", "]);
            lines.join(join)
        }
        "text" => {
            let mut out = String::new();
            for _ in 0..rng.below(5) {
                out.push_str(rng.s(&WORDS));
            }
            out
        }
        other => scalar_body(rng, other),
    }
}

/// Filler text between regions: words, whitespace, pieces of delimiters.
fn filler(rng: &mut Rng, marks: &[String]) -> String {
    let mut out = String::new();
    for _ in 0..rng.below(4) {
        match rng.below(10) {
            0 if !marks.is_empty() => {
                // A proper prefix of a delimiter.
                let m = rng.pick(marks);
                let cut = m
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(1 + rng.below(3))
                    .unwrap_or(0);
                out.push_str(m.get(..cut).unwrap_or(""));
            }
            1 if !marks.is_empty() => out.push_str(rng.pick(marks).as_str()),
            _ => out.push_str(rng.s(&WORDS)),
        }
    }
    out
}

fn sample(rng: &mut Rng, d: &Delim) -> String {
    rng.pick(&d.samples).clone()
}

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
#[path = "case_gen_tests.rs"]
mod tests;
