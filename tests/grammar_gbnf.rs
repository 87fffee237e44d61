//! The GBNF output read by an independent GBNF reader: llguidance's own (the `GrammarParser` of
//! `llguidance.gbnf_to_lark`, from the `llguidance` package on PyPI, run by
//! `tests/grammar_gbnf/read_gbnf.py`). Every generated GBNF must parse, have exactly the rules
//! of the internal form (plus the automaton rules of `until` text), each equal to the internal
//! form's rule (literals decoded, classes as character sets); and the Lark output of the same
//! internal form defines the same rules (those `%json` does not cover), rule for rule.
//!
//! Needs `python3` with `llguidance` installed (`pip install llguidance==1.9.1`); without it
//! the test prints a NOTICE and passes.

mod grammar_support;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use chatparse::grammar::ir::{CharSet, Expr, Rules};
use chatparse::grammar::{Constraint, GrammarFlavor};
use chatparse::message::ToolChoice;
use grammar_support::{fixture_cases, template_cases};
use serde_json::Value;

/// An expression in a form both sides can be brought to.
#[derive(Debug, Clone, PartialEq)]
enum Canon {
    Lit(String),
    Class(CharSet),
    Ref(String),
    Until,
    Seq(Vec<Canon>),
    Alt(Vec<Canon>),
    Rep(Box<Canon>, u32, Option<u32>),
}

fn from_ir(rules: &Rules, e: &Expr) -> Canon {
    match e {
        Expr::Empty | Expr::Never => Canon::Lit(String::new()),
        Expr::Literal(t) => Canon::Lit(t.clone()),
        Expr::Class(set) => Canon::Class(set.clone()),
        Expr::Ref(r) => Canon::Ref(rules.rule(*r).name.clone()),
        Expr::Excluding(_) => Canon::Until,
        Expr::Seq(items) => Canon::Seq(items.iter().map(|i| from_ir(rules, i)).collect()),
        Expr::Alt(items) => Canon::Alt(items.iter().map(|i| from_ir(rules, i)).collect()),
        Expr::Repeat { expr, min, max } => Canon::Rep(Box::new(from_ir(rules, expr)), *min, *max),
    }
}

/// One escaped or plain character of the reader's text, and the rest.
fn read_char(s: &str) -> Result<(char, &str), String> {
    let mut chars = s.chars();
    let c = chars.next().ok_or("unexpected end")?;
    if c != '\\' {
        return Ok((c, chars.as_str()));
    }
    let e = chars.next().ok_or("dangling escape")?;
    let rest = chars.as_str();
    let hex = |rest: &str, max: usize| -> Result<(char, usize), String> {
        let n = rest
            .chars()
            .take(max)
            .take_while(|c| c.is_ascii_hexdigit())
            .count();
        let v = u32::from_str_radix(&rest[..n], 16).map_err(|e| e.to_string())?;
        Ok((char::from_u32(v).ok_or("bad code point")?, n))
    };
    match e {
        'n' => Ok(('\n', rest)),
        'r' => Ok(('\r', rest)),
        't' => Ok(('\t', rest)),
        'x' => hex(rest, 2).map(|(c, n)| (c, &rest[n..])),
        'u' => hex(rest, 4).map(|(c, n)| (c, &rest[n..])),
        'U' => hex(rest, 6).map(|(c, n)| (c, &rest[n..])),
        other => Ok((other, rest)),
    }
}

fn read_class(text: &str) -> Result<CharSet, String> {
    if text == "." {
        return Ok(CharSet::any());
    }
    let mut s = text.strip_prefix('[').ok_or("class without [")?;
    let negated = s.starts_with('^');
    if negated {
        s = &s[1..];
    }
    let mut ranges = Vec::new();
    while !s.starts_with(']') {
        let (lo, rest) = read_char(s)?;
        s = rest;
        if s.starts_with('-') && !s[1..].starts_with(']') {
            let (hi, rest) = read_char(&s[1..])?;
            s = rest;
            ranges.push((lo, hi));
        } else {
            ranges.push((lo, lo));
        }
    }
    let set = CharSet::new(ranges).ok_or("empty class")?;
    if negated {
        set.complement()
            .ok_or_else(|| "empty negated class".to_owned())
    } else {
        Ok(set)
    }
}

fn from_read(v: &Value, ir_names: &[String]) -> Result<Canon, String> {
    let a = v.as_array().ok_or("node is not a list")?;
    let kind = a
        .first()
        .and_then(Value::as_str)
        .ok_or("node without kind")?;
    Ok(match kind {
        "lit" => {
            let mut s = a[1].as_str().ok_or("lit")?;
            let mut out = String::new();
            while !s.is_empty() {
                let (c, rest) = read_char(s)?;
                out.push(c);
                s = rest;
            }
            Canon::Lit(out)
        }
        "rx" => Canon::Class(read_class(a[1].as_str().ok_or("rx")?)?),
        "ref" => {
            let name = a[1].as_str().ok_or("ref")?;
            if name.starts_with("until-") && !ir_names.iter().any(|n| n == name) {
                Canon::Until
            } else {
                Canon::Ref(name.to_owned())
            }
        }
        "seq" | "alt" => {
            let items = a[1]
                .as_array()
                .ok_or("items")?
                .iter()
                .map(|i| from_read(i, ir_names))
                .collect::<Result<Vec<_>, _>>()?;
            if kind == "seq" {
                Canon::Seq(items)
            } else {
                Canon::Alt(items)
            }
        }
        "rep" => Canon::Rep(
            Box::new(from_read(&a[1], ir_names)?),
            a[2].as_u64().ok_or("min")? as u32,
            a[3].as_u64().map(|m| m as u32),
        ),
        other => return Err(format!("unknown node kind {other}")),
    })
}

/// Runs the reader over `texts`; `None` when python3 or llguidance is missing.
fn read_all(texts: &[String]) -> Option<Vec<Value>> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/grammar_gbnf/read_gbnf.py"
    );
    let probe = Command::new("python3")
        .args(["-c", "import llguidance.gbnf_to_lark"])
        .output()
        .ok()?;
    if !probe.status.success() {
        return None;
    }
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let input = serde_json::to_string(texts).ok()?;
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    assert!(out.status.success(), "the GBNF reader failed");
    serde_json::from_slice(&out.stdout).ok()
}

/// The Lark names a rule may have: `name` (rules), `NAME` (terminals), `start` for the root.
fn lark_defines(lark: &str, name: &str, root: bool) -> bool {
    let lower = if root {
        "start".to_owned()
    } else {
        name.replace('-', "_")
    };
    let upper = lower.to_ascii_uppercase();
    lark.lines()
        .any(|l| l.starts_with(&format!("{lower}:")) || l.starts_with(&format!("{upper}:")))
}

#[test]
fn gbnf_read_by_llguidance_equals_the_internal_form_and_the_lark_rules() {
    let mut notices = Vec::new();
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut cases = fixture_cases(&corpus, &mut notices);
    match chatparse::shared_data::shared_path("templates") {
        Some(dir) => cases.extend(template_cases(&dir)),
        None => println!("NOTICE: ../shared/templates absent: fixtures only"),
    }
    let mut constraints: Vec<(String, Constraint)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for case in &cases {
        let mut parsers = vec![case.parser.clone()];
        parsers.extend(case.with_choice(ToolChoice::Required));
        for parser in parsers {
            if let Ok(c) = chatparse::grammar::constraint(&parser) {
                if seen.insert(c.print(GrammarFlavor::Gbnf).grammar) {
                    constraints.push((case.id.clone(), c));
                }
            }
        }
    }
    let texts: Vec<String> = constraints
        .iter()
        .map(|(_, c)| c.print(GrammarFlavor::Gbnf).grammar)
        .collect();
    let Some(read) = read_all(&texts) else {
        println!(
            "NOTICE: skipping the GBNF reader check: python3 with llguidance is not installed \
             (pip install llguidance==1.9.1)"
        );
        return;
    };
    let mut failures = Vec::new();
    let (mut rules_checked, mut lark_checked) = (0, 0);
    for ((id, c), (text, result)) in constraints.iter().zip(texts.iter().zip(&read)) {
        if let Some(e) = result.get("error") {
            failures.push(format!("{id}: the reader rejects the GBNF: {e}\n{text}"));
            continue;
        }
        let Some(read_rules) = result.get("rules").and_then(Value::as_object) else {
            failures.push(format!("{id}: no rules read"));
            continue;
        };
        let ir_names: Vec<String> = c.rules.rules().iter().map(|r| r.name.clone()).collect();
        let extra: BTreeMap<&String, &Value> = read_rules
            .iter()
            .filter(|(n, _)| !ir_names.contains(n))
            .collect();
        if let Some((n, _)) = extra.iter().find(|(n, _)| !n.starts_with("until-")) {
            failures.push(format!(
                "{id}: the GBNF has a rule `{n}` the internal form lacks"
            ));
        }
        let lark = c.print(GrammarFlavor::Lark).grammar;
        for (i, rule) in c.rules.rules().iter().enumerate() {
            let Some(read_body) = read_rules.get(&rule.name) else {
                failures.push(format!("{id}: rule `{}` missing from the GBNF", rule.name));
                continue;
            };
            let want = from_ir(&c.rules, &rule.body);
            match from_read(read_body, &ir_names) {
                Ok(got) if got == want => rules_checked += 1,
                Ok(got) => failures.push(format!(
                    "{id}: rule `{}` differs:\n  internal form: {want:?}\n  read:          {got:?}",
                    rule.name
                )),
                Err(e) => failures.push(format!("{id}: rule `{}`: {e}", rule.name)),
            }
            if !rule.schema_internal {
                if lark_defines(&lark, &rule.name, i == 0) {
                    lark_checked += 1;
                } else {
                    failures.push(format!("{id}: rule `{}` missing from the Lark", rule.name));
                }
            }
        }
    }
    println!(
        "{} grammars read by llguidance's GBNF reader: {rules_checked} rules equal to the \
         internal form, {lark_checked} defined in the Lark output too",
        texts.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}
