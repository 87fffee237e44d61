//! Streaming equivalence: feeding a text in any chunking gives the same message and the same
//! merged events as feeding it at once. Inputs: the bench inputs (also checked against their
//! recorded `.expected.json`) and every parse vector of `hf-response-templates.jsonl`.

use std::path::Path;
use std::sync::OnceLock;

use chatparse::response_template::{merge_chunks, Event, ResponseParser, ResponseTemplate};
use chatparse::shared_data::shared_path_or_skip;
use proptest::prelude::*;
use serde_json::Value;

/// One input: template, prefix, text, tools.
struct Input {
    name: String,
    template: ResponseTemplate,
    prefix: Option<String>,
    text: String,
    tools: Option<Vec<Value>>,
}

type Outcome<'t> = Result<(Value, Vec<Event<'t>>), String>;

fn run<'t>(input: &'t Input, pieces: &[&str]) -> Outcome<'t> {
    let mut parser = ResponseParser::new(
        &input.template,
        input.prefix.as_deref(),
        input.tools.as_deref(),
    )
    .map_err(|e| e.kind().to_string())?;
    let mut events = parser.initial_events().to_vec();
    for piece in pieces {
        events.extend(parser.feed(piece).map_err(|e| e.kind().to_string())?);
    }
    let (message, last) = parser.finalize().map_err(|e| e.kind().to_string())?;
    events.extend(last);
    Ok((message, merge_chunks(&events)))
}

/// Cuts `text` at the given fractions (rounded down to character boundaries).
fn split<'a>(text: &'a str, cuts: &[usize]) -> Vec<&'a str> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| {
            let mut p = c % (text.len() + 1);
            while !text.is_char_boundary(p) {
                p -= 1;
            }
            p
        })
        .collect();
    points.push(0);
    points.push(text.len());
    points.sort_unstable();
    points.dedup();
    points.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

fn bench_inputs() -> &'static [(Input, Value)] {
    static CACHE: OnceLock<Vec<(Input, Value)>> = OnceLock::new();
    CACHE.get_or_init(load_bench_inputs)
}

fn vector_inputs() -> &'static [Input] {
    static CACHE: OnceLock<Vec<Input>> = OnceLock::new();
    CACHE.get_or_init(load_vector_inputs)
}

fn load_bench_inputs() -> Vec<(Input, Value)> {
    let Some(dir) = shared_path_or_skip("bench/hf-response", "response_template_stream") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in ["smollm", "qwen3", "gpt_oss"] {
        for size in ["1KB", "10KB"] {
            let text = read(&dir.join(format!("{name}-{size}.txt")));
            let expected: Value =
                serde_json::from_str(&read(&dir.join(format!("{name}-{size}.expected.json"))))
                    .unwrap();
            let template = ResponseTemplate::from_path(dir.join(format!("{name}.template.json")))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            out.push((
                Input {
                    name: format!("{name}-{size}"),
                    template,
                    prefix: Some(String::new()),
                    text,
                    tools: None,
                },
                expected,
            ));
        }
    }
    out
}

fn load_vector_inputs() -> Vec<Input> {
    let Some(path) = shared_path_or_skip(
        "cases/hf-response-templates.jsonl",
        "response_template_stream",
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in read(&path).lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let (Some(text), Some(tpl)) = (case["text"].as_str(), case.get("template")) else {
            continue;
        };
        let Ok(template) = ResponseTemplate::from_value(tpl) else {
            continue;
        };
        out.push(Input {
            name: case["id"].as_str().unwrap_or("?").to_owned(),
            template,
            prefix: case["prefix"].as_str().map(str::to_owned),
            text: text.to_owned(),
            tools: case["tools"].as_array().cloned(),
        });
    }
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn bench_inputs_match_recorded_output() {
    for (input, expected) in bench_inputs() {
        let (message, _) =
            run(input, &[&input.text]).unwrap_or_else(|e| panic!("{}: {e}", input.name));
        let mut comparable = message.clone();
        if expected.get("content").is_none() && input.name.starts_with("smollm") {
            // Deliberate deviation: in these outputs whitespace between tool calls reopens the
            // implicit `content` field and, in transformers, its empty value erases the real
            // content written before the first tool call. We keep that content.
            let content = comparable.as_object_mut().and_then(|m| m.remove("content"));
            assert!(content
                .as_ref()
                .and_then(Value::as_str)
                .is_some_and(|c| !c.is_empty()));
        }
        assert_eq!(&comparable, expected, "{}", input.name);
        let cuts: Vec<usize> = (1..input.text.len() / 4).map(|i| i * 4).collect();
        let pieces = split(&input.text, &cuts);
        assert_eq!(
            run(input, &pieces).map(|r| r.0),
            Ok(message),
            "{} in 4-byte chunks",
            input.name
        );
    }
}

#[test]
fn every_char_boundary_on_vectors() {
    for input in vector_inputs() {
        let whole = run(input, &[&input.text]);
        let cuts: Vec<usize> = (0..=input.text.len()).collect();
        assert_eq!(
            run(input, &split(&input.text, &cuts)),
            whole,
            "{}",
            input.name
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_chunkings_equal_one_shot(seed in 0usize..10_000, cuts in prop::collection::vec(0usize..200_000, 0..40)) {
        let vectors = vector_inputs();
        let bench = bench_inputs();
        let total = vectors.len() + bench.len();
        if total == 0 {
            return Ok(());
        }
        let index = seed % total;
        let input = vectors.get(index).unwrap_or_else(|| &bench[index - vectors.len()].0);
        let whole = run(input, &[&input.text]);
        let pieces = split(&input.text, &cuts);
        prop_assert_eq!(run(input, &pieces), whole, "{}", &input.name);
    }
}

/// Random small templates over a tiny alphabet, so delimiters overlap, nest and repeat a lot.
fn random_template(seed: &[u8]) -> Value {
    let alphabet = ["<", ">", "a", "b", "/", "|", "\n", " "];
    let word = |bytes: &[u8]| -> String {
        let s: String = bytes
            .iter()
            .map(|b| alphabet[usize::from(*b) % alphabet.len()])
            .collect();
        if s.is_empty() {
            "<".to_owned()
        } else {
            s
        }
    };
    let mut fields = serde_json::Map::new();
    for (i, chunk) in seed.chunks(6).take(4).enumerate() {
        let mut spec = serde_json::Map::new();
        let kind = chunk.first().copied().unwrap_or(0);
        let open = word(chunk.get(1..3).unwrap_or(&[]));
        let close = word(chunk.get(3..6).unwrap_or(&[]));
        if kind % 5 != 0 || i > 0 {
            match kind % 3 {
                0 => spec.insert("open".into(), Value::from(open.clone())),
                1 => spec.insert(
                    "open".into(),
                    serde_json::json!([open.clone(), format!("{open}a")]),
                ),
                _ => spec.insert(
                    "open_pattern".into(),
                    Value::from(format!("{}b*", regex_escape(&open))),
                ),
            };
        }
        if kind % 7 != 3 {
            match kind % 4 {
                0 => spec.insert(
                    "close_pattern".into(),
                    Value::from(format!("{}|\\Z", regex_escape(&close))),
                ),
                _ => spec.insert("close".into(), Value::from(close)),
            };
        }
        spec.insert("repeats".into(), Value::from(kind % 2 == 0));
        if kind % 6 == 0 {
            spec.insert("join".into(), Value::from("+"));
        }
        if kind % 11 == 1 {
            spec.insert("content_args".into(), serde_json::json!({"strip": false}));
        }
        fields.insert(format!("f{i}"), Value::Object(spec));
    }
    serde_json::json!({"defaults": {"role": "assistant"}, "start_anchor": "S", "fields": fields})
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                format!("\\{c}")
            } else {
                c.to_string()
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_templates_stream_like_one_shot(
        seed in prop::collection::vec(any::<u8>(), 6..24),
        text in "[<>ab/| \n]{0,60}",
        prefix in "[S<>ab/]{0,8}",
        cuts in prop::collection::vec(0usize..64, 0..12),
    ) {
        let template = random_template(&seed);
        let Ok(template) = ResponseTemplate::from_value(&template) else { return Ok(()) };
        let input = Input { name: "random".into(), template, prefix: Some(prefix), text, tools: None };
        let whole = run(&input, &[&input.text]);
        let pieces = split(&input.text, &cuts);
        prop_assert_eq!(run(&input, &pieces), whole);
    }
}
