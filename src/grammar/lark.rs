//! The internal form printed as llguidance's Lark dialect (`%llguidance {}` header), the
//! format llama.cpp, vLLM and SGLang accept from their llguidance backend.
//!
//! llguidance lexes greedily: a lexeme (a terminal, a string, a regex) ends only where the
//! next byte cannot extend it, and is never shortened afterwards. Text up to a delimiter
//! followed by the delimiter as two lexemes would therefore fail (the text lexeme would take
//! the delimiter's first bytes). The printer keeps every regular stretch in one lexeme:
//!
//! - a rule that reaches no JSON schema rule and no recursion is a terminal (upper-case name,
//!   one regular expression);
//! - in the other rules, each maximal run of regular items of a sequence becomes one terminal
//!   (`R_<rule>_<n>`); a run that can be empty is used as `R?` over its non-empty part;
//! - text without some delimiters is a terminal of its own, `/(?s:.*)/ & ~/(?s:.*)(D1|D2)(?s:.*)/`
//!   (llguidance's and/not operators), used inside the runs;
//! - a JSON-flavour schema rule is `name: %json {schema}` (llguidance's own JSON Schema
//!   compiler; its expansion rules are left out); Python-flavour schema rules stay expanded.
//!
//! Names: a rule `call-get-weather` is `call_get_weather`, a terminal `CALL_GET_WEATHER` (the
//! mapping llguidance's GBNF converter uses); the root rule is `start`.

use std::collections::HashMap;
use std::fmt::Write;

use super::ir::{expr_nullable, CharSet, Expr, RuleId, Rules};

/// Prints `rules` as an llguidance Lark grammar.
pub fn print(rules: &Rules) -> String {
    let kinds = kinds(rules);
    let mut p = Printer {
        rules,
        kinds: &kinds,
        nullable: rules.nullable(),
        terminals: Vec::new(),
        excluding: HashMap::new(),
        runs: 0,
    };
    let mut out = String::from("%llguidance {}\n\n");
    let mut body_lines = Vec::new();
    for (i, rule) in rules.rules().iter().enumerate() {
        let id = RuleId(i);
        match kinds[i] {
            Kind::Internal => {}
            Kind::Json => {
                // `\uXXXX` escapes of any character, as JSON allows (llguidance's default
                // accepts them for control characters only).
                let mut schema = rule
                    .schema
                    .as_ref()
                    .map(|s| s.schema.clone())
                    .unwrap_or(serde_json::Value::Bool(true));
                if let serde_json::Value::Object(obj) = &mut schema {
                    obj.insert(
                        "x-guidance".to_owned(),
                        serde_json::json!({"json_allow_general_unicode_escapes": true}),
                    );
                }
                let schema = schema.to_string();
                body_lines.push(format!("{}: %json {schema}", rule_name(rules, id)));
            }
            Kind::Terminal => {
                let body = p.regular(&rule.body, Prec::Alt);
                body_lines.push(format!("{}: {body}", terminal_name(&rule.name)));
            }
            Kind::Rule => {
                let body = p.rule_expr(&rule.name, &rule.body, Prec::Alt);
                body_lines.push(format!("{}: {body}", rule_name(rules, id)));
            }
        }
    }
    for line in body_lines {
        let _ = writeln!(out, "{line}");
    }
    for (name, body) in &p.terminals {
        let _ = writeln!(out, "{name}: {body}");
    }
    out
}

/// How a rule is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A context-free rule.
    Rule,
    /// A terminal (regular, one lexeme).
    Terminal,
    /// `%json {schema}`.
    Json,
    /// Inside a `%json` rule's expansion: not printed.
    Internal,
}

fn kinds(rules: &Rules) -> Vec<Kind> {
    let n = rules.rules().len();
    let recursive = rules.recursive();
    let json: Vec<bool> = rules
        .rules()
        .iter()
        .map(|r| r.schema.as_ref().is_some_and(|s| !s.python))
        .collect();
    // Rules reached only through %json rules are not printed.
    let mut printed = vec![false; n];
    let mut stack = vec![rules.root()];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut printed[id.0], true) || json[id.0] {
            continue;
        }
        rules.rule(id).body.for_each_ref(&mut |r| stack.push(r));
    }
    // Regular: no recursion, no %json, every reference regular (a fixpoint from "all regular
    // candidates" down).
    let mut regular: Vec<bool> = (0..n).map(|i| !recursive[i] && !json[i]).collect();
    loop {
        let mut changed = false;
        for i in 0..n {
            if regular[i] {
                let mut ok = true;
                rules.rules()[i]
                    .body
                    .for_each_ref(&mut |r| ok &= regular[r.0]);
                if !ok {
                    regular[i] = false;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    (0..n)
        .map(|i| {
            if !printed[i] {
                Kind::Internal
            } else if json[i] {
                Kind::Json
            } else if regular[i] && i != rules.root().0 {
                Kind::Terminal
            } else {
                Kind::Rule
            }
        })
        .collect()
}

fn rule_name(rules: &Rules, id: RuleId) -> String {
    if id == rules.root() {
        "start".to_owned()
    } else {
        rules.rule(id).name.replace('-', "_")
    }
}

fn terminal_name(name: &str) -> String {
    name.replace('-', "_").to_ascii_uppercase()
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    Alt,
    Seq,
    Atom,
}

fn wrap(s: String, yes: bool) -> String {
    if yes {
        format!("({s})")
    } else {
        s
    }
}

struct Printer<'r> {
    rules: &'r Rules,
    kinds: &'r [Kind],
    nullable: Vec<bool>,
    /// Terminals added by the printer: runs and delimiter exclusions.
    terminals: Vec<(String, String)>,
    excluding: HashMap<Vec<String>, String>,
    runs: usize,
}

impl Printer<'_> {
    fn is_regular(&self, e: &Expr) -> bool {
        match e {
            Expr::Ref(r) => self.kinds[r.0] == Kind::Terminal,
            Expr::Seq(items) | Expr::Alt(items) => items.iter().all(|i| self.is_regular(i)),
            Expr::Repeat { expr, .. } => self.is_regular(expr),
            _ => true,
        }
    }

    /// A regular expression in terminal syntax.
    fn regular(&mut self, e: &Expr, ctx: Prec) -> String {
        match e {
            Expr::Empty | Expr::Never => "\"\"".to_owned(),
            Expr::Literal(text) => string(text),
            Expr::Class(set) => format!("/{}/", regex_class(set)),
            Expr::Ref(r) => terminal_name(&self.rules.rule(*r).name),
            Expr::Excluding(ds) => self.excluding(ds),
            Expr::Seq(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.regular(i, Prec::Seq)).collect();
                wrap(parts.join(" "), ctx > Prec::Seq)
            }
            Expr::Alt(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.regular(i, Prec::Alt)).collect();
                wrap(parts.join(" | "), ctx > Prec::Alt)
            }
            Expr::Repeat { expr, min, max } => {
                let inner = self.regular(expr, Prec::Atom);
                let inner = wrap(inner, matches!(**expr, Expr::Repeat { .. }));
                format!("{inner}{}", repeat_op(*min, *max))
            }
        }
    }

    fn excluding(&mut self, ds: &[String]) -> String {
        if let Some(name) = self.excluding.get(ds) {
            return name.clone();
        }
        let name = format!("UNTIL_{}", self.excluding.len());
        let alts: Vec<String> = ds.iter().map(|d| regex_escape(d)).collect();
        let body = format!("/(?s:.*)/ & ~/(?s:.*)({})(?s:.*)/", alts.join("|"));
        self.terminals.push((name.clone(), body));
        self.excluding.insert(ds.to_vec(), name.clone());
        name
    }

    /// A run of regular items as one terminal (its name), usable in a rule.
    fn run(&mut self, rule: &str, items: &[Expr]) -> String {
        if let [Expr::Literal(text)] = items {
            return string(text);
        }
        if let [Expr::Ref(r)] = items {
            if !self.nullable[r.0] {
                return terminal_name(&self.rules.rule(*r).name);
            }
        }
        let body = {
            let parts: Vec<String> = items.iter().map(|i| self.regular(i, Prec::Seq)).collect();
            parts.join(" ")
        };
        self.runs += 1;
        let name = format!("R_{}_{}", terminal_name(rule), self.runs);
        let nullable = items.iter().all(|i| expr_nullable(i, &self.nullable));
        if nullable {
            // An empty lexeme cannot be matched: the run is optional over its non-empty part.
            self.terminals
                .push((name.clone(), format!("({body}) & /(?s:.+)/")));
            format!("{name}?")
        } else {
            self.terminals.push((name.clone(), body));
            name
        }
    }

    /// A sequence in a rule: maximal regular runs as terminals. A run ending in optional parts
    /// before a context-free item is distributed (`R (O N | N)` for `R O? N`): the optional
    /// part and the item's first lexeme then start at the same place, so a greedy lexeme never
    /// runs into the item's start.
    fn seq_parts(&mut self, rule: &str, items: &[Expr]) -> String {
        let Some(k) = items.iter().position(|i| !self.is_regular(i)) else {
            return self.run(rule, items);
        };
        let first = self.rule_expr(rule, &items[k], Prec::Seq);
        let rest = if k + 1 < items.len() {
            format!("{first} {}", self.seq_parts(rule, &items[k + 1..]))
        } else {
            first
        };
        self.distribute(rule, &items[..k], rest, 0)
    }

    fn distribute(&mut self, rule: &str, run: &[Expr], tail: String, depth: usize) -> String {
        match run.split_last() {
            None => tail,
            Some((
                Expr::Repeat {
                    expr,
                    min: 0,
                    max: Some(1),
                },
                before,
            )) if depth < 4 => {
                if before.iter().all(is_space) {
                    // Leading whitespace joins the optional part (a whitespace lexeme beside
                    // one that starts with whitespace would take it first).
                    let mut with: Vec<Expr> = before.to_vec();
                    with.push((**expr).clone());
                    let with = self.run(rule, &with);
                    let without = self.distribute(rule, before, tail.clone(), depth + 1);
                    format!("({with} {tail} | {without})")
                } else {
                    // The optional part starts a lexeme of its own, beside the tail's first.
                    let opt = self.run(rule, std::slice::from_ref(&**expr));
                    let tail = format!("({opt} {tail} | {tail})");
                    self.distribute(rule, before, tail, depth + 1)
                }
            }
            Some(_) => format!("{} {tail}", self.run(rule, run)),
        }
    }

    /// A rule body: regular runs as terminals, the rest as rule syntax.
    fn rule_expr(&mut self, rule: &str, e: &Expr, ctx: Prec) -> String {
        if self.is_regular(e) {
            let s = self.run(rule, std::slice::from_ref(e));
            return s;
        }
        match e {
            Expr::Ref(r) => match self.kinds[r.0] {
                Kind::Terminal => terminal_name(&self.rules.rule(*r).name),
                _ => rule_name(self.rules, *r),
            },
            Expr::Seq(items) => wrap(self.seq_parts(rule, items), ctx > Prec::Seq),
            Expr::Alt(items) => {
                let parts: Vec<String> = items
                    .iter()
                    .map(|i| self.rule_expr(rule, i, Prec::Alt))
                    .collect();
                wrap(parts.join(" | "), ctx > Prec::Alt)
            }
            Expr::Repeat { expr, min, max } => {
                let inner = self.rule_expr(rule, expr, Prec::Atom);
                let inner = wrap(inner, matches!(**expr, Expr::Repeat { .. }));
                format!("{inner}{}", repeat_op(*min, *max))
            }
            other => self.regular(other, ctx),
        }
    }
}

/// Whether `e` is optional whitespace (`[ \t\n\r]*`).
fn is_space(e: &Expr) -> bool {
    matches!(e, Expr::Repeat { expr, min: 0, max: None }
        if matches!(&**expr, Expr::Class(set) if *set == super::ir::whitespace()))
}

fn repeat_op(min: u32, max: Option<u32>) -> String {
    match (min, max) {
        (0, None) => "*".to_owned(),
        (1, None) => "+".to_owned(),
        (0, Some(1)) => "?".to_owned(),
        (m, None) => format!("{{{m},}}"),
        (m, Some(n)) if m == n => format!("{{{m}}}"),
        (m, Some(n)) => format!("{{{m},{n}}}"),
    }
}

/// A Lark string literal (JSON escaping).
pub fn string(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// `text` as a regular expression matching it literally (inside `/.../`).
pub fn regex_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == ' ' || c == '_' {
            out.push(c);
        } else if c.is_ascii() || c.is_control() || c.is_whitespace() {
            let _ = write!(out, "\\x{{{:X}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

fn regex_class_char(c: char) -> String {
    if c.is_ascii_alphanumeric() || (!c.is_ascii() && !c.is_control() && !c.is_whitespace()) {
        c.to_string()
    } else {
        format!("\\x{{{:X}}}", u32::from(c))
    }
}

/// A character set as a regular expression class (`(?s:.)` for every character).
pub fn regex_class(set: &CharSet) -> String {
    if set.is_any() {
        return "(?s:.)".to_owned();
    }
    let (negated, shown) = match set.complement() {
        Some(comp) if comp.len() < set.len() => (true, comp),
        _ => (false, set.clone()),
    };
    let mut out = String::from(if negated { "[^" } else { "[" });
    for &(lo, hi) in shown.ranges() {
        out.push_str(&regex_class_char(lo));
        if hi != lo {
            out.push('-');
            out.push_str(&regex_class_char(hi));
        }
    }
    out.push(']');
    out
}
