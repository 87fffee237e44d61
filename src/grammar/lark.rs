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
//! - a run before a context-free item joins the regular prefixes the item's text starts with,
//!   through rule references (`R (P1 rest1 | P2 rest2)`, the rests auxiliary rules
//!   `<rule>__<n>`): where the text goes on (the glue before a further call, the tail after
//!   the last) is then decided inside one lexeme, never by a lexeme that ended too early;
//! - text without some delimiters is a terminal of its own, `/(?s:.*)/ & ~/(?s:.*)(D1|D2)(?s:.*)/`
//!   (llguidance's and/not operators), used inside the runs;
//! - a JSON-flavour schema rule is `name: %json {schema}` (llguidance's own JSON Schema
//!   compiler; its expansion rules are left out); Python-flavour schema rules and those with
//!   an element form stay expanded.
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
        recursive: rules.recursive(),
        terminals: Vec::new(),
        excluding: HashMap::new(),
        runs: 0,
        rule_heads: HashMap::new(),
        visiting: vec![false; rules.rules().len()],
        aux: Vec::new(),
        printed: HashMap::new(),
        run_bytes: 0,
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
                // A compact rule has no whitespace between tokens but one space after a
                // separator.
                let mut schema = rule
                    .schema
                    .as_ref()
                    .map(|s| s.schema.clone())
                    .unwrap_or(serde_json::Value::Bool(true));
                let compact = rule.schema.as_ref().is_some_and(|s| s.compact);
                if let serde_json::Value::Object(obj) = &mut schema {
                    obj.insert(
                        "x-guidance".to_owned(),
                        if compact {
                            serde_json::json!({
                                "json_allow_general_unicode_escapes": true,
                                "whitespace_flexible": false,
                                "item_separator": ", ?",
                                "key_separator": ": ?",
                            })
                        } else {
                            serde_json::json!({"json_allow_general_unicode_escapes": true})
                        },
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
    // Auxiliary rules (printing one may add more).
    let mut i = 0;
    while i < p.aux.len() {
        let (name, items) = p.aux[i].clone();
        let body = p.seq_items(&name, &items);
        body_lines.push(format!("{name}: {body}"));
        i += 1;
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
        .map(|r| {
            r.schema
                .as_ref()
                .is_some_and(|s| !s.python && s.quotes.is_none() && s.elements.is_none())
        })
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
    recursive: Vec<bool>,
    /// Terminals added by the printer: runs and delimiter exclusions.
    terminals: Vec<(String, String)>,
    excluding: HashMap<Vec<String>, String>,
    runs: usize,
    /// Per rule, its heads (see [`Printer::heads`]) once computed: each head's regular prefix
    /// and the auxiliary rule holding the rest (`None`: nothing follows); `None` when the rule
    /// has no head worth splitting.
    rule_heads: HashMap<usize, Option<Vec<Head>>>,
    /// Rules whose heads are being computed (a cycle leaves the rule whole).
    visiting: Vec<bool>,
    /// Auxiliary rules: the rest of a rule after one of its heads (name, items).
    aux: Vec<(String, Vec<Item>)>,
    /// Sequences already printed (the same items print the same, whichever rule holds them).
    printed: HashMap<Vec<Item>, String>,
    /// The size of the run terminals so far: past [`MAX_RUN_BYTES`] runs are no longer joined
    /// with the heads that follow them (the grammar stays bounded; lexing may then fail where
    /// a lexeme ends too early).
    run_bytes: usize,
}

/// How much run terminal text the printer writes before it stops joining runs with heads.
const MAX_RUN_BYTES: usize = 16 << 20;

/// A rule's head: its regular prefix and the auxiliary rule holding the rest (`None`: nothing
/// follows).
type Head = (Expr, Option<usize>);

/// An item of a sequence being printed: an expression, or an auxiliary rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Item {
    E(Expr),
    Aux(usize),
}

/// Most heads a rule or an item may split into (past it, it is printed whole).
const MAX_HEADS: usize = 256;

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
        self.run_bytes += body.len();
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

    /// A sequence in a rule: maximal regular runs as terminals.
    fn seq_parts(&mut self, rule: &str, items: &[Expr]) -> String {
        let items: Vec<Item> = items.iter().cloned().map(Item::E).collect();
        self.seq_items(rule, &items)
    }

    /// A sequence of items in a rule: maximal regular runs as terminals.
    ///
    /// A run before a context-free item whose text starts with regular prefixes (its
    /// [`heads`](Self::heads)) joins each of them in one lexeme: `R (P1 rest1 | P2 rest2)`
    /// for `R item`. A greedy lexer then never ends `R` where another way on (the end of the
    /// text, another item) would have taken more: the ways on diverge inside one lexeme.
    ///
    /// Otherwise, a run ending in optional parts before the item is distributed (`R (O N | N)`
    /// for `R O? N`): the optional part and the item's first lexeme then start at the same
    /// place, so a greedy lexeme never runs into the item's start.
    fn seq_items(&mut self, rule: &str, items: &[Item]) -> String {
        if let Some(s) = self.printed.get(items) {
            return s.clone();
        }
        let s = self.seq_items_new(rule, items);
        self.printed.insert(items.to_vec(), s.clone());
        s
    }

    fn seq_items_new(&mut self, rule: &str, items: &[Item]) -> String {
        let regular = |p: &Self, i: &Item| matches!(i, Item::E(e) if p.is_regular(e));
        let Some(k) = items.iter().position(|i| !regular(self, i)) else {
            let run: Vec<Expr> = items.iter().filter_map(item_expr).collect();
            return self.run(rule, &run);
        };
        let run: Vec<Expr> = items[..k].iter().filter_map(item_expr).collect();
        let after = if k + 1 < items.len() {
            Some(self.seq_items(rule, &items[k + 1..]))
        } else {
            None
        };
        let with_after = |s: String| match &after {
            Some(a) => format!("{s} {a}"),
            None => s,
        };
        if !run.is_empty() && self.run_bytes < MAX_RUN_BYTES {
            if let Item::E(e) = &items[k] {
                let heads = self.heads(e, 0);
                // Every way on starts with a regular prefix (an item that may start with
                // nothing leaves the run a lexeme of its own: what follows the item, outside
                // this sequence, starts where the run ends, as do the item's prefixes).
                if !heads.is_empty() && heads.iter().all(|(p, _)| *p != Expr::Empty) {
                    let mut alts = Vec::new();
                    for (prefix, rest) in heads {
                        let mut lexeme = run.clone();
                        lexeme.push(prefix);
                        let lexeme = self.run(rule, &lexeme);
                        if rest.is_empty() {
                            alts.push(lexeme);
                        } else {
                            let rest = self.seq_items(rule, &rest);
                            alts.push(format!("{lexeme} {rest}"));
                        }
                    }
                    return with_after(format!("({})", alts.join(" | ")));
                }
            }
        }
        let first = match &items[k] {
            Item::E(e) => self.rule_expr(rule, e, Prec::Seq),
            Item::Aux(a) => self.aux[*a].0.clone(),
        };
        let tail = with_after(first);
        self.distribute(rule, &run, tail, 0)
    }

    /// The ways the text of a context-free `e` starts: each a regular prefix (possibly empty)
    /// and the items that follow it. Rules are entered when they are context-free rules, not
    /// recursive; the rest of a rule after a head is an auxiliary rule.
    fn heads(&mut self, e: &Expr, depth: usize) -> Vec<(Expr, Vec<Item>)> {
        let whole = || vec![(Expr::Empty, vec![Item::E(e.clone())])];
        if self.is_regular(e) {
            return vec![(e.clone(), Vec::new())];
        }
        if depth > 16 {
            return whole();
        }
        match e {
            Expr::Ref(r) if self.kinds[r.0] == Kind::Rule && !self.recursive[r.0] => {
                match self.heads_of_rule(r.0, depth) {
                    Some(heads) => heads
                        .into_iter()
                        .map(|(p, aux)| (p, aux.map(Item::Aux).into_iter().collect()))
                        .collect(),
                    None => whole(),
                }
            }
            Expr::Alt(items) => {
                let mut out = Vec::new();
                for item in items {
                    out.extend(self.heads(item, depth + 1));
                    if out.len() > MAX_HEADS {
                        return whole();
                    }
                }
                out
            }
            Expr::Seq(items) => {
                let Some(k) = items.iter().position(|i| !self.is_regular(i)) else {
                    return vec![(e.clone(), Vec::new())];
                };
                let prefix = Expr::seq(items[..k].iter().cloned());
                self.heads(&items[k], depth + 1)
                    .into_iter()
                    .map(|(p, mut rest)| {
                        rest.extend(items[k + 1..].iter().cloned().map(Item::E));
                        (Expr::seq([prefix.clone(), p]), rest)
                    })
                    .collect()
            }
            _ => whole(),
        }
    }

    /// The heads of rule `r` (memoised), the rest after each one an auxiliary rule.
    fn heads_of_rule(&mut self, r: usize, depth: usize) -> Option<Vec<Head>> {
        if let Some(h) = self.rule_heads.get(&r) {
            return h.clone();
        }
        if std::mem::replace(&mut self.visiting[r], true) {
            return None;
        }
        let body = self.rules.rules()[r].body.clone();
        let heads = self.heads(&body, depth + 1);
        self.visiting[r] = false;
        let worth = !heads.is_empty() && heads.iter().all(|(p, _)| *p != Expr::Empty);
        let out = worth.then(|| {
            let base = rule_name(self.rules, RuleId(r));
            heads
                .into_iter()
                .enumerate()
                .map(|(j, (p, rest))| {
                    let aux = (!rest.is_empty()).then(|| {
                        self.aux.push((format!("{base}__{j}"), rest));
                        self.aux.len() - 1
                    });
                    (p, aux)
                })
                .collect()
        });
        self.rule_heads.insert(r, out.clone());
        out
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

/// The expression of an item that is one.
fn item_expr(i: &Item) -> Option<Expr> {
    match i {
        Item::E(e) => Some(e.clone()),
        Item::Aux(_) => None,
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
