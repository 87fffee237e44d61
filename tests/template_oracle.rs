//! Replays renders recorded by `scripts/jinja2_oracle.py` (transformers + Python Jinja2) and
//! compares them with chatparse byte for byte. Skipped unless `CHATPARSE_ORACLE` names the file:
//!
//! ```text
//! python3 scripts/jinja2_oracle.py > target/jinja2_oracle.jsonl
//! CHATPARSE_ORACLE=target/jinja2_oracle.jsonl cargo test --test template_oracle -- --nocapture
//! ```
//!
//! Reports: renders both sides produce identically, renders where both fail, and every
//! disagreement. It fails on a disagreement outside the documented categories: deliberate
//! differences (`list.append` on namespace lists and the `from_json` filter, which transformers'
//! sandbox rejects and chatparse supports), lenient renders (minijinja iterates `none`, has no
//! generators), Jinja2 `Markup` escaping on `|safe + str`, and Python `%` string formatting.

use std::collections::BTreeMap;

use chatparse::shared_data::shared_dir;
use chatparse::template::{ChatTemplate, RenderInput};
use serde_json::Value;

/// transformers errors that chatparse deliberately does not reproduce.
const DELIBERATE: [&str; 2] = [
    "SecurityError: access to attribute 'append' of 'list' object is unsafe",
    "No filter named 'from_json' found",
];

/// Python errors that minijinja cannot reproduce: it iterates `none` as an empty sequence, and
/// `map`/`select` give lists rather than generators (which `json.dumps` rejects). chatparse
/// renders where transformers fails.
const LENIENT: [&str; 2] = [
    "TypeError: 'NoneType' object is not iterable",
    "Object of type generator is not JSON serializable",
];

/// Jinja2 `Markup` arithmetic: `"x"|safe + y` HTML-escapes `y`; minijinja's `+` does not.
fn is_markup_escaping(jinja2_output: &str) -> bool {
    jinja2_output.contains("&#34;") || jinja2_output.contains("&#39;")
}

#[test]
fn renders_match_transformers_oracle() {
    let Some(path) = std::env::var_os("CHATPARSE_ORACLE") else {
        eprintln!("NOTICE: skipping template_oracle: set CHATPARSE_ORACLE (see the file docs)");
        return;
    };
    let Some(shared) = shared_dir() else {
        eprintln!("NOTICE: skipping template_oracle: shared/ not found");
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let mut templates: BTreeMap<String, ChatTemplate> = BTreeMap::new();
    let (mut total, mut same_text, mut both_fail, mut deliberate) = (0, 0, 0, 0);
    let (mut lenient, mut markup, mut percent) = (0, 0, 0);
    let mut disagreements = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let rec: Value = serde_json::from_str(line).unwrap();
        let id = rec["id"].as_str().unwrap();
        let name = rec["template"].as_str().unwrap().to_string();
        let template = templates.entry(name.clone()).or_insert_with(|| {
            let source = match rec["source"].as_str() {
                Some(inline) => inline.to_string(),
                None => std::fs::read_to_string(shared.join("templates").join(&name)).unwrap(),
            };
            ChatTemplate::new(name.clone(), source).unwrap()
        });
        let input: RenderInput = serde_json::from_value(rec["input"].clone()).unwrap();
        total += 1;
        let ours = template.render(&input);
        let want_ok = rec["expected"]["ok"].as_str();
        let want_err = rec["expected"]["error"].as_str();
        match (&ours, want_ok, want_err) {
            (Ok(got), Some(want), _) if got == want => same_text += 1,
            (Err(_), None, Some(_)) => both_fail += 1,
            (Ok(_), None, Some(err)) if DELIBERATE.iter().any(|d| err.contains(d)) => {
                deliberate += 1
            }
            (Ok(_), None, Some(err)) if LENIENT.iter().any(|d| err.contains(d)) => lenient += 1,
            (Ok(_), Some(want), _) if is_markup_escaping(want) => markup += 1,
            // Python's `'%s' % x` string formatting: minijinja has no such operator.
            (Err(e), Some(_), _) if e.message().contains("% operator") => percent += 1,
            (Ok(got), Some(want), _) => disagreements.push(format!(
                "{id}\n    differs at byte {}:\n    chatparse: {:?}\n    jinja2:    {:?}",
                first_difference(got, want),
                window(got, first_difference(got, want)),
                window(want, first_difference(got, want)),
            )),
            _ => {
                let ours = match &ours {
                    Ok(got) => format!("ok ({} bytes): {:?}", got.len(), tail(got)),
                    Err(e) => format!("error: {e}"),
                };
                let theirs = match (want_ok, want_err) {
                    (Some(w), _) => format!("ok ({} bytes): {:?}", w.len(), tail(w)),
                    (_, e) => format!("error: {}", e.unwrap_or("?")),
                };
                disagreements.push(format!(
                    "{id}\n    chatparse: {ours}\n    jinja2:    {theirs}"
                ));
            }
        }
    }
    eprintln!(
        "template_oracle: {total} renders: {same_text} identical, {both_fail} fail on both sides, \
         {deliberate} deliberate differences (append, from_json), {lenient} lenient (chatparse \
         renders, Python raises), {markup} Markup escaping, {percent} `%` formatting, {} other \
         disagreements",
        disagreements.len()
    );
    for d in &disagreements {
        eprintln!("{d}");
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements",
        disagreements.len()
    );
}

fn tail(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    chars[chars.len().saturating_sub(80)..].iter().collect()
}

fn first_difference(a: &str, b: &str) -> usize {
    a.bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

fn window(s: &str, at: usize) -> String {
    s.char_indices()
        .filter(|(i, _)| *i + 40 >= at && *i < at + 80)
        .map(|(_, c)| c)
        .collect()
}
