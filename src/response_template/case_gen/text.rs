//! Drawn texts: region bodies of every content type (valid or not) and filler between
//! regions.

use super::field::FieldPlan;
use super::rng::Rng;

/// Words and other text for bodies and filler.
pub(super) const WORDS: [&str; 24] = [
    "hello", "world", "Hi", "42", "x", "é", "日本", "🙂", " ", "  ", "\n", "\t", ",", ":", "{",
    "}", "\"", "'", "a_b", "ü", "true", "-", "=", "#",
];

/// A draw of a JSON body (possibly in a dialect, possibly broken).
pub(super) fn json_body(rng: &mut Rng, plan: &FieldPlan, depth: usize) -> String {
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

pub(super) fn scalar_body(rng: &mut Rng, content: &str) -> String {
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

pub(super) fn body(rng: &mut Rng, plan: &FieldPlan) -> String {
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
pub(super) fn filler(rng: &mut Rng, marks: &[String]) -> String {
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
