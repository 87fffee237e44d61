//! From the built PEG [`Grammar`] to the internal form, specialised to the request's tools.
//!
//! Every node kind with a context-free counterpart becomes one: literals, sequences,
//! alternations (PEG's ordered choice read as an unordered one: the language can only grow),
//! repetitions, character classes, `space`, `any`, `rest`, `until` / `until_one_of` (text
//! containing none of the delimiters: exactly the PEG's language for it), rules (references,
//! so recursion is kept), JSON parsers (generic JSON rules) and `schema` wrappers (the schema's
//! rules). Lookaheads (`peek`, `negate`) and anchors match no text and emit nothing: the CFG is
//! then wider than the PEG, never narrower. The one place a negative lookahead matters for
//! tightness, an object member under a key that an earlier member or a `negate` took (a JSON
//! call's "any other key"), keeps its meaning: that member's key is a string *except* the taken
//! keys. PEG repetitions are greedy: whitespace between an unbounded run of a class and text
//! starting with a character of that class is at least one character (the run would otherwise
//! take that text).
//!
//! Beside the call block, the root's turn loop (`(calls | other)*`) gives what may come between
//! and after calls ([`TurnLoop`]: reasoning blocks, the ways the turn ends, whether content
//! is read there), the root's first option the prompt markers the output may repeat, and the
//! block's trailing `until` delimiters what text right after it must start with.
//!
//! The AST tags the mapper reads drive the specialisation, so it follows whatever the generator
//! builds without knowing formats:
//!
//! - `tool`: one alternative per tool of the request (a rule per tool, [`Role::Call`]);
//! - `tool_name`: that tool's name, written as the tagged parser reads names (a JSON string,
//!   one of the literals of a bare call, or raw text);
//! - `tool_args` over a JSON value: the tool's parameter schema ([`Role::Arguments`]);
//! - `tool_arg` (tagged arguments): one alternative per parameter with its name; the list
//!   `(arg (sep arg)*)?` becomes the parameters in any order, each at most once, every required
//!   one present (one rule per subset written, up to six parameters; past that any order with
//!   repeats and nothing required);
//!   `tool_arg_value` / `tool_arg_string` / `tool_arg_json`: raw text for string parameters
//!   (their `enum` when declared; a wrapped or bare text when values may be wrapped, decoded
//!   like the parser does), the parameter's schema for the others ([`Role::Argument`];
//!   for literal values with custom string quotes, the schema written as a literal: strings in
//!   the quotes, object keys bare);
//! - values read up to what follows them (an end marker a value may hold, `"` or `, `):
//!   written as text holding none of the end markers (stricter than the parser);
//! - values the template writes as elements (`<k>v</k>`, the generator's
//!   [`ELEMENT_LIST_RULE`](crate::generate::grammar::ELEMENT_LIST_RULE)): object and array
//!   parameters follow their schema as JSON or as the template's elements (members in declared
//!   order, see [`super::elements`]), both of which the parser reads, and strings are text;
//! - a JSON call object `{ (!K other ,)* R (, member)* }` (members a choice of the name, the
//!   arguments, the id, any other key): its known members each at most once, in any order, the
//!   required one present, and no other key (see `member_object`).

use std::collections::HashMap;

use serde_json::Value;

use crate::generate::grammar::tags;
use crate::message::request::declared_types;
use crate::message::{ArgumentKind, Tool, ValueText};
use crate::peg::{Grammar, Node, Parser};

use super::ir::{CharSet, Expr, Role, RuleId, Rules, ValueKind};
use super::schema::{python_string, Json};
use super::GrammarError;

/// Most parameters whose tagged arguments may come in any order with each at most once (one
/// rule per subset); past it, any parameters in any order, repeats allowed.
const MAX_ORDER_FREE: usize = 6;

/// How deep the translation may recurse through nested PEG nodes.
const MAX_NODE_DEPTH: usize = 512;

/// How the trigger rules' text may end open (see [`FromPeg::open_end`]).
#[derive(Debug, Default)]
pub(crate) struct OpenEnd {
    /// The delimiters of the `until` texts it may end with.
    pub(crate) delimiters: Vec<String>,
    /// Whether such a text goes on past its delimiters unless what follows ends it (a value
    /// that may span lines): only what ends it may follow the block, never free text.
    pub(crate) runs_on: bool,
}

/// What a turn may hold beside its calls, from the PEG's turn loop.
#[derive(Debug, Default)]
pub(crate) struct TurnLoop {
    /// Blocks that may come between and after calls (reasoning blocks).
    pub(crate) interludes: Vec<Expr>,
    /// The ways the turn may end (turn-end markers, stray closers), each with its whitespace,
    /// and the literals it holds.
    pub(crate) ends: Vec<(Expr, Vec<String>)>,
    /// Whether text (content) may come between blocks.
    pub(crate) text: bool,
}

/// Where the translation is: inside which tool's call, which of its parameters, and which
/// keys an object member at this position may not use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
struct Ctx {
    tool: Option<usize>,
    param: Option<usize>,
    /// The first JSON string read here is a key the earlier members took: excluded.
    taken: Vec<String>,
    /// Right after an `until`: the whitespace the first `space` here can match (the `until`
    /// took any other), as the PEG reads it.
    after_until: Option<Vec<String>>,
    /// Right after a greedy run of these characters: text here starting with one of them
    /// needs whitespace first (the run would have taken it).
    after_run: Option<CharSet>,
}

/// The translator.
pub(crate) struct FromPeg<'a> {
    g: &'a Grammar,
    tools: &'a [Tool],
    python: bool,
    pub(crate) json: Json<'a>,
    rule_memo: HashMap<(u32, Ctx), RuleId>,
    call_memo: HashMap<(Parser, usize), RuleId>,
    args_memo: HashMap<usize, RuleId>,
    value_memo: HashMap<(usize, usize), RuleId>,
    /// A name was read by a choice of the declared names (a bare call): the PEG itself only
    /// reads offered names there.
    pub(crate) names_in_peg: std::cell::Cell<bool>,
    literal: Option<(String, String)>,
    /// How tagged value text is written (wrapper, escapes).
    values: ValueText,
    /// Tagged values read as text may be Python literals (the template writes them).
    python_values: bool,
    /// Top-level strings in this quote are written verbatim; with the characters that may
    /// start what follows a value (see [`Json::verbatim`]).
    verbatim: Option<(char, Vec<char>)>,
    /// Names are read from call ids (see [`id_name`](crate::generate::id_name)): a name
    /// read up to a delimiter may have id text around it.
    name_in_id: bool,
    /// The template writes container values as these elements.
    elements: Option<crate::analyze::ElementValues>,
    /// Strings are written bare with the markers of other values: a value whose schema allows
    /// a string is any text (the parser reads text the rest of the schema rules out as the
    /// string, see `ValueFormat::whole`).
    bare_strings: bool,
    /// The markers of non-string values write the parameter's declared type (a type slot):
    /// a string parameter whose declared type is not plain `string` (`string|null`) is
    /// written under them too.
    typed_slot: bool,
}

impl<'a> FromPeg<'a> {
    /// `literal`: the string quotes of a format whose argument values are literals; `values`:
    /// how tagged value text is written; `python_values`: the template writes non-string
    /// values as Python literals.
    pub(crate) fn new(
        g: &'a Grammar,
        tools: &'a [Tool],
        literal: Option<(String, String)>,
        values: ValueText,
        python_values: bool,
        rules: &'a mut Rules,
    ) -> FromPeg<'a> {
        let python = g.flavour() == crate::json::Flavour::Python;
        FromPeg {
            g,
            tools,
            python,
            json: Json::new(rules, python),
            rule_memo: HashMap::new(),
            call_memo: HashMap::new(),
            args_memo: HashMap::new(),
            value_memo: HashMap::new(),
            names_in_peg: std::cell::Cell::new(false),
            literal,
            values,
            python_values,
            verbatim: None,
            name_in_id: false,
            elements: None,
            bare_strings: false,
            typed_slot: false,
        }
    }

    /// The non-string markers write the declared type (see the field).
    pub(crate) fn typed_slot(&mut self, yes: bool) {
        self.typed_slot = yes;
    }

    /// Strings are written bare with the markers of other values (see the field).
    pub(crate) fn bare_strings(&mut self, yes: bool) {
        self.bare_strings = yes;
    }

    /// Names are read from call ids: a tool's name is written with optional id text around
    /// it (`functions.NAME:0`), as the parser reads it.
    pub(crate) fn names_in_ids(&mut self, yes: bool) {
        self.name_in_id = yes;
    }

    /// `name` as a call id holding it, for [`names_in_ids`](Self::names_in_ids): id text
    /// before it ending in a separator (`.`, `:`, `#`), and id text after it starting with
    /// one, of characters none of `delimiters` starts with.
    fn id_holding(&self, name: &str, delimiters: &[String]) -> Expr {
        let excluded = |c: char| delimiters.iter().any(|d| d.starts_with(c));
        let class = |chars: &str| {
            CharSet::new(chars.chars().filter(|&c| !excluded(c)).map(|c| (c, c)))
                .map_or(Expr::Never, Expr::Class)
        };
        let id_char = || {
            let word = ('a'..='z').chain('A'..='Z').chain('0'..='9');
            let all: String = word.chain("_-.:#".chars()).collect();
            Expr::Repeat {
                expr: Box::new(class(&all)),
                min: 0,
                max: None,
            }
        };
        let separator = || class(".:#");
        Expr::seq([
            Expr::optional(Expr::seq([id_char(), separator()])),
            Expr::lit(name),
            Expr::optional(Expr::seq([separator(), id_char()])),
        ])
    }

    /// The node of a handle.
    fn node(&self, p: Parser) -> &'a Node {
        let g: &'a Grammar = self.g;
        g.node(p)
    }

    /// The template writes container values as elements (`<k>v</k>`): a container
    /// parameter's value is its schema as JSON or as such elements.
    pub(crate) fn element_values(&mut self, elements: Option<crate::analyze::ElementValues>) {
        self.elements = elements;
    }

    /// Strings in `quote` are written verbatim (see [`Json::verbatim`]).
    pub(crate) fn verbatim_quote(&mut self, quote: Option<(char, Vec<char>)>) {
        self.verbatim = quote;
    }

    /// The PEG rules flagged as triggers, as references.
    pub(crate) fn trigger_rules(&mut self) -> Result<Vec<Expr>, GrammarError> {
        let g: &'a Grammar = self.g;
        let mut out = Vec::new();
        for (i, rule) in g.rules.iter().enumerate() {
            if rule.trigger {
                out.push(self.rule_ref(i as u32, &Ctx::default(), 0)?);
            }
        }
        Ok(out)
    }

    /// Every `tool`-tagged node reachable from the root (for grammars without trigger rules),
    /// translated.
    pub(crate) fn tool_nodes(&mut self) -> Result<Vec<Expr>, GrammarError> {
        let g: &'a Grammar = self.g;
        let tool_tag = g.tag_id(tags::TOOL);
        let mut found = Vec::new();
        let mut seen = vec![false; g.nodes.len()];
        let mut stack = vec![g.root];
        while let Some(p) = stack.pop() {
            if std::mem::replace(&mut seen[p.idx()], true) {
                continue;
            }
            match self.node(p) {
                Node::Tag { tag, p: inner } => {
                    if Some(*tag) == tool_tag {
                        found.push(p);
                    } else {
                        stack.push(*inner);
                    }
                }
                node => children(node, g, &mut |c| stack.push(c)),
            }
        }
        found.sort_by_key(|p| p.idx());
        let mut out = Vec::new();
        for p in found {
            out.push(self.expr(p, &Ctx::default(), 0)?);
        }
        Ok(out)
    }

    /// What the root's turn loop (`(calls | other)*`, the repetition whose choice holds a
    /// trigger rule) allows beside the calls; `None` when the root has no such loop.
    pub(crate) fn turn_loop(&mut self) -> Result<Option<TurnLoop>, GrammarError> {
        let g: &'a Grammar = self.g;
        let Some(items) = self.find_turn_loop(g.root, 0) else {
            return Ok(None);
        };
        let content = g.tag_id(tags::CONTENT);
        let mut out = TurnLoop::default();
        for item in items {
            match self.node(item) {
                Node::Ref(r) if g.rules.get(*r as usize).is_some_and(|r| r.trigger) => {}
                Node::Tag { tag, .. } if Some(*tag) == content => out.text = true,
                Node::Seq(parts)
                    if parts
                        .last()
                        .is_some_and(|&l| matches!(self.node(l), Node::End)) =>
                {
                    let mut literals = Vec::new();
                    self.literals(item, &mut literals, 0);
                    out.ends
                        .push((self.expr(item, &Ctx::default(), 0)?, literals));
                }
                _ => out.interludes.push(self.expr(item, &Ctx::default(), 0)?),
            }
        }
        Ok(Some(out))
    }

    /// The prompt's trailing markers the output may repeat at its start, as the PEG's root
    /// reads them first (`(space (M1 | M2 …))?`): that option; empty when the root has none.
    pub(crate) fn root_echo(&self) -> Expr {
        let g: &'a Grammar = self.g;
        let Node::Seq(items) = self.node(g.root) else {
            return Expr::Empty;
        };
        let Some(Node::Repeat {
            p,
            min: 0,
            max: Some(1),
        }) = items.first().map(|&i| self.node(i))
        else {
            return Expr::Empty;
        };
        let Node::Seq(parts) = self.node(*p) else {
            return Expr::Empty;
        };
        let [space, choice] = parts[..] else {
            return Expr::Empty;
        };
        let (Node::Space, Node::Choice(options)) = (self.node(space), self.node(choice)) else {
            return Expr::Empty;
        };
        let literals: Option<Vec<Expr>> = options
            .iter()
            .map(|&o| match self.node(o) {
                Node::Literal(bytes) => Some(Expr::lit(&String::from_utf8_lossy(bytes))),
                _ => None,
            })
            .collect();
        match literals {
            Some(l) if !l.is_empty() => Expr::optional(Expr::seq([Expr::space(), Expr::alt(l)])),
            _ => Expr::Empty,
        }
    }

    /// The literals of a node (through sequences, choices and repetitions), trimmed.
    fn literals(&self, p: Parser, out: &mut Vec<String>, depth: usize) {
        if depth > 16 {
            return;
        }
        match self.node(p) {
            Node::Literal(bytes) => out.push(String::from_utf8_lossy(bytes).trim().to_owned()),
            Node::Seq(items) | Node::Choice(items) => {
                items.iter().for_each(|&i| self.literals(i, out, depth + 1))
            }
            Node::Repeat { p, .. } | Node::Atomic(p) | Node::Tag { p, .. } => {
                self.literals(*p, out, depth + 1)
            }
            _ => {}
        }
    }

    /// The delimiters of the `until` texts the trigger rules' text may end with (a name or a
    /// value read up to a delimiter, with nothing closing it): text right after such a block
    /// must start with one of them, or the parser reads it as part of that name or value.
    pub(crate) fn open_end(&self) -> OpenEnd {
        let g: &'a Grammar = self.g;
        let mut out = OpenEnd::default();
        for rule in g.rules.iter().filter(|r| r.trigger) {
            self.trailing_until(rule.body, 0, &mut out);
        }
        out
    }

    /// Adds to `out` the delimiters of the `until` texts `p` may end with; returns whether
    /// `p` may match nothing (so what precedes it may end its text).
    fn trailing_until(&self, p: Parser, depth: usize, out: &mut OpenEnd) -> bool {
        if depth > 64 {
            return false;
        }
        let mut add = |d: &[u8]| {
            let d = String::from_utf8_lossy(d).into_owned();
            if !out.delimiters.contains(&d) {
                out.delimiters.push(d);
            }
        };
        match self.node(p) {
            Node::Until(f) => {
                add(f.needle());
                true
            }
            Node::UntilOneOf { delimiters, .. } => {
                delimiters.iter().for_each(|d| add(d));
                true
            }
            Node::Eps | Node::Start | Node::End | Node::Space | Node::Peek(_) | Node::Negate(_) => {
                true
            }
            Node::Chars { min, .. } => *min == 0,
            Node::Seq(items) => {
                for &item in items.iter().rev() {
                    if !self.trailing_until(item, depth + 1, out) {
                        return false;
                    }
                }
                true
            }
            Node::Choice(items) => {
                let mut nullable = false;
                for &item in items.iter() {
                    nullable |= self.trailing_until(item, depth + 1, out);
                }
                nullable
            }
            Node::Repeat { p, min, .. } => {
                // Text that goes on past a delimiter where what follows it is not what ends
                // it (`(!end . until)*`): the text's end is decided by what follows.
                if let Node::Seq(items) = self.node(*p) {
                    if items
                        .first()
                        .is_some_and(|&f| matches!(self.node(f), Node::Negate(_)))
                    {
                        out.runs_on = true;
                    }
                }
                self.trailing_until(*p, depth + 1, out) || *min == 0
            }
            // A lenient form is read, never written: the grammar has no text of it.
            Node::Tag { tag, .. } if self.g.tag_name(*tag) == tags::LENIENT => false,
            Node::Atomic(p) | Node::Tag { p, .. } => self.trailing_until(*p, depth + 1, out),
            Node::Ref(r) => match self.g.rules.get(*r as usize) {
                Some(rule) => self.trailing_until(rule.body, depth + 1, out),
                None => false,
            },
            _ => false,
        }
    }

    /// The alternatives of the first repetition of a choice holding a trigger rule, searched
    /// through the sequences and options from `p`.
    fn find_turn_loop(&self, p: Parser, depth: usize) -> Option<Vec<Parser>> {
        if depth > 8 {
            return None;
        }
        let g: &'a Grammar = self.g;
        match self.node(p) {
            Node::Repeat {
                p: body, max: None, ..
            } => {
                let Node::Choice(items) = self.node(*body) else {
                    return None;
                };
                let trigger = |i: Parser| {
                    matches!(self.node(i), Node::Ref(r)
                        if g.rules.get(*r as usize).is_some_and(|r| r.trigger))
                };
                for &item in items.iter() {
                    if trigger(item) {
                        return Some(items.to_vec());
                    }
                    // One call block, then a loop of what may follow it (parallel calls off).
                    if let Node::Seq(parts) = self.node(item) {
                        if let [first, rest] = parts[..] {
                            if trigger(first) {
                                if let Node::Repeat { p, max: None, .. } = self.node(rest) {
                                    if let Node::Choice(after) = self.node(*p) {
                                        return Some(after.to_vec());
                                    }
                                }
                            }
                        }
                    }
                }
                None
            }
            Node::Seq(items) => items
                .iter()
                .find_map(|&i| self.find_turn_loop(i, depth + 1)),
            Node::Repeat {
                p, max: Some(1), ..
            }
            | Node::Atomic(p) => self.find_turn_loop(*p, depth + 1),
            _ => None,
        }
    }

    fn rule_ref(&mut self, r: u32, ctx: &Ctx, depth: usize) -> Result<Expr, GrammarError> {
        let key = (r, ctx.clone());
        if let Some(id) = self.rule_memo.get(&key) {
            return Ok(Expr::Ref(*id));
        }
        let g: &'a Grammar = self.g;
        let Some(rule) = g.rules.get(r as usize) else {
            return Ok(Expr::Never);
        };
        if &*rule.name == crate::generate::grammar::ELEMENT_LIST_RULE {
            // Values written as elements: the grammar writes containers as JSON instead,
            // which the parser reads as well (see the module docs).
            return Ok(Expr::Never);
        }
        let mut wanted = rule.name.to_string();
        if let Some(t) = ctx.tool.and_then(|t| self.tools.get(t)) {
            wanted = format!("{wanted}-{}", t.name());
        }
        let id = self.json.rules.declare(&wanted)?;
        self.rule_memo.insert(key, id);
        let body = self.expr(rule.body, ctx, depth + 1)?;
        self.json.rules.set_body(id, body)?;
        Ok(Expr::Ref(id))
    }

    /// The node `p` in context `ctx`.
    fn expr(&mut self, p: Parser, ctx: &Ctx, depth: usize) -> Result<Expr, GrammarError> {
        if depth > MAX_NODE_DEPTH {
            return Err(GrammarError::TooLarge(format!(
                "PEG nodes nested deeper than {MAX_NODE_DEPTH}"
            )));
        }
        let d = depth + 1;
        let plain = Ctx {
            taken: Vec::new(),
            after_until: None,
            after_run: None,
            ..ctx.clone()
        };
        Ok(match self.node(p) {
            Node::Fail | Node::RefName(_) => Expr::Never,
            Node::Eps | Node::Start | Node::End | Node::Peek(_) | Node::Negate(_) => Expr::Empty,
            Node::Literal(bytes) => Expr::lit(&String::from_utf8_lossy(bytes)),
            Node::Any => Expr::Class(CharSet::any()),
            Node::Rest => Expr::repeat(Expr::Class(CharSet::any()), 0, None),
            Node::Space => match &ctx.after_until {
                Some(ws) => Expr::alt(ws.iter().map(|w| Expr::lit(w))),
                None => Expr::space(),
            },
            Node::Chars { class, min, max } => match charset(class) {
                Some(s) => Expr::repeat(Expr::Class(s), *min, *max),
                None if *min == 0 => Expr::Empty,
                None => Expr::Never,
            },
            Node::Until(finder) => Expr::excluding([String::from_utf8_lossy(finder.needle())]),
            Node::UntilOneOf { delimiters, .. } => {
                Expr::excluding(delimiters.iter().map(|d| String::from_utf8_lossy(d)))
            }
            Node::Seq(items) => match self.member_object(items, ctx, d)? {
                Some(object) => object,
                None => self.seq(items, ctx, d)?,
            },
            Node::Choice(items) => {
                let mut taken = ctx.taken.clone();
                let mut alts = Vec::new();
                for &item in items.iter() {
                    let c = Ctx {
                        taken: taken.clone(),
                        ..ctx.clone()
                    };
                    if matches!(self.node(item), Node::End | Node::Peek(_)) && items.len() > 1 {
                        // `… | end`, `… | &x`: the parser's leniency for an output cut off
                        // there, or for text that is left out; a constrained model writes one
                        // of the other options.
                        continue;
                    }
                    let final_only = matches!(self.node(item), Node::Seq(parts)
                        if parts.last().is_some_and(|&l| matches!(self.node(l), Node::End)));
                    if final_only && items.len() > 1 {
                        // `… | turn-end end`: what ends the output (a turn end the model wrote
                        // there); written where the grammar ends, never where more may follow.
                        continue;
                    }
                    if ctx.tool.is_some() && self.leads_with_any_key(item, 0) {
                        // Inside a call, an object member under any other key: the parser
                        // skips it, and its value could hold anything; the grammar writes only
                        // the members the call needs.
                        continue;
                    }
                    alts.push(self.expr(item, &c, d)?);
                    for k in self.leading_keys(item, 0) {
                        if !taken.contains(&k) {
                            taken.push(k);
                        }
                    }
                }
                Expr::alt(alts)
            }
            Node::Repeat { p: inner, min, max } => {
                if let Some(list) = self.argument_list(p, ctx, d)? {
                    list
                } else {
                    Expr::repeat(self.expr(*inner, &plain, d)?, *min, *max)
                }
            }
            Node::Ref(r) => self.rule_ref(*r, ctx, d)?,
            Node::Schema { name, schema, .. } => {
                let id = self.json.schema(name, schema)?;
                Expr::Ref(id)
            }
            Node::Atomic(inner) => self.expr(*inner, ctx, d)?,
            Node::Tag { tag, p: inner } => self.tag(self.g.tag_name(*tag), *inner, ctx, d)?,
            Node::Json(target) => self.json_target(*target, ctx)?,
            Node::JsonKey { json, python, .. } => {
                let json = Expr::lit(&String::from_utf8_lossy(json));
                if self.python {
                    Expr::alt([json, Expr::lit(&String::from_utf8_lossy(python))])
                } else {
                    json
                }
            }
        })
    }

    fn seq(&mut self, items: &[Parser], ctx: &Ctx, d: usize) -> Result<Expr, GrammarError> {
        let mut out = Vec::with_capacity(items.len());
        // Taken keys apply up to the first item that reads text other than whitespace.
        let mut taken = ctx.taken.clone();
        let mut after = ctx.after_until.clone();
        let mut skip = false;
        for (i, &item) in items.iter().enumerate() {
            // A greedy run of a class, then whitespace, then text starting with a character of
            // the class: the PEG's run takes that character unless whitespace parts them.
            let run = if i == 0 {
                ctx.after_run.clone()
            } else {
                self.trailing_run(items[i - 1], 0)
            };
            let c = Ctx {
                taken: taken.clone(),
                after_until: after.clone(),
                after_run: run.clone(),
                ..ctx.clone()
            };
            if std::mem::take(&mut skip) {
                continue;
            }
            let next = items.get(i + 1).copied();
            let option = run
                .as_ref()
                .and_then(|class| Some((class, self.space_then_class(item, class)?)));
            match (run.as_ref(), self.node(item), next, option) {
                (Some(class), Node::Space, Some(next), _)
                    if self.starts_in_class(next, class, 0) =>
                {
                    // The whitespace and the item after it, together.
                    out.push(self.spaced(next, class, &c, d)?);
                    skip = true;
                }
                (_, _, _, Some((class, [_, first, rest @ ..]))) => {
                    // An option of whitespace and such text: the same, inside the option.
                    let lead = self.spaced(*first, class, &c, d)?;
                    let rest = self.seq(rest, &c, d)?;
                    out.push(Expr::optional(Expr::seq([lead, rest])));
                }
                _ => out.push(self.expr(item, &c, d)?),
            }
            match self.node(item) {
                Node::Negate(x) => {
                    for k in self.leading_keys(*x, 0) {
                        if !taken.contains(&k) {
                            taken.push(k);
                        }
                    }
                }
                Node::Eps | Node::Start | Node::Peek(_) => continue,
                Node::Space => {}
                _ => taken.clear(),
            }
            after = self.until_tail(item, 0);
        }
        Ok(Expr::seq(out))
    }

    /// Whitespace then `p`, right after a greedy run of `class`: where `p`'s text starts with a
    /// character of the class, at least one whitespace character (per alternative of a choice).
    fn spaced(
        &mut self,
        p: Parser,
        class: &CharSet,
        ctx: &Ctx,
        d: usize,
    ) -> Result<Expr, GrammarError> {
        let alternatives: Vec<Parser> = match self.node(p) {
            Node::Choice(items) => items.to_vec(),
            _ => vec![p],
        };
        let mut out = Vec::new();
        for a in alternatives {
            let lead = if self.starts_in_class(a, class, 0) {
                Expr::repeat(Expr::Class(super::ir::whitespace()), 1, None)
            } else {
                Expr::space()
            };
            out.push(Expr::seq([lead, self.expr(a, ctx, d)?]));
        }
        Ok(Expr::alt(out))
    }

    /// When `p` is an option of a sequence of whitespace then text that may start with a
    /// character of `class`: that sequence's items (at least two).
    fn space_then_class(&self, p: Parser, class: &CharSet) -> Option<&'a [Parser]> {
        let g: &'a Grammar = self.g;
        let Node::Repeat {
            p: opt,
            min: 0,
            max: Some(1),
        } = g.node(p)
        else {
            return None;
        };
        match g.node(*opt) {
            Node::Seq(parts)
                if parts.len() >= 2
                    && matches!(g.node(parts[0]), Node::Space)
                    && self.starts_in_class(parts[1], class, 0) =>
            {
                Some(parts)
            }
            _ => None,
        }
    }

    /// Whether a text of `p` may start with a character of `class`.
    fn starts_in_class(&self, p: Parser, class: &CharSet, depth: usize) -> bool {
        if depth > 16 {
            return false;
        }
        match self.node(p) {
            Node::Literal(bytes) => String::from_utf8_lossy(bytes)
                .chars()
                .next()
                .is_some_and(|c| class.contains(c)),
            Node::Chars { class: other, .. } => charset(other).is_some_and(|o| overlap(&o, class)),
            Node::Choice(items) => items
                .iter()
                .any(|&i| self.starts_in_class(i, class, depth + 1)),
            Node::Seq(items) => items
                .first()
                .is_some_and(|&i| self.starts_in_class(i, class, depth + 1)),
            Node::Tag { p, .. } | Node::Atomic(p) => self.starts_in_class(*p, class, depth + 1),
            _ => false,
        }
    }

    /// The class of the unbounded run `p` ends with.
    fn trailing_run(&self, p: Parser, depth: usize) -> Option<CharSet> {
        if depth > 16 {
            return None;
        }
        match self.node(p) {
            Node::Chars {
                class, max: None, ..
            } => charset(class),
            Node::Tag { p, .. } | Node::Atomic(p) => self.trailing_run(*p, depth + 1),
            Node::Seq(items) => self.trailing_run(*items.last()?, depth + 1),
            // Every alternative ends with a run: any of their characters.
            Node::Choice(items) => {
                let mut ranges = Vec::new();
                for &i in items.iter() {
                    ranges.extend_from_slice(self.trailing_run(i, depth + 1)?.ranges());
                }
                CharSet::new(ranges)
            }
            _ => None,
        }
    }

    /// When `p` ends with an `until`: the leading whitespace of its delimiters (what a `space`
    /// right after it can still match).
    fn until_tail(&self, p: Parser, depth: usize) -> Option<Vec<String>> {
        if depth > 32 {
            return None;
        }
        let ws_of = |d: &[u8]| {
            let d = String::from_utf8_lossy(d);
            d[..d.len() - d.trim_start().len()].to_owned()
        };
        let mut out: Vec<String> = match self.node(p) {
            Node::Until(f) => vec![ws_of(f.needle())],
            Node::UntilOneOf { delimiters, .. } => delimiters.iter().map(|d| ws_of(d)).collect(),
            // A name is written exactly (the mapper trims the one the PEG reads).
            Node::Tag { tag, .. }
                if matches!(self.g.tag_name(*tag), tags::TOOL_NAME | tags::TOOL_ARG_NAME) =>
            {
                return None
            }
            Node::Tag { p, .. } | Node::Atomic(p) => return self.until_tail(*p, depth + 1),
            // A value's text, wrapped or bare: as after the bare text (the tighter).
            Node::Choice(items) if self.reads_text(p) => {
                return self.until_tail(*items.last()?, depth + 1)
            }
            // A value read up to what follows it is written as its first text only (see
            // `guided_text`): as after that text.
            Node::Seq(_) if self.guided_text(p).is_some() => {
                return self.until_tail(self.guided_text(p)?, depth + 1)
            }
            Node::Seq(items) => return self.until_tail(*items.last()?, depth + 1),
            _ => return None,
        };
        out.sort();
        out.dedup();
        Some(out)
    }

    /// Whether `p` starts (after whitespace) with a JSON string: an object member under any key.
    fn leads_with_any_key(&self, p: Parser, depth: usize) -> bool {
        if depth > 16 {
            return false;
        }
        match self.node(p) {
            Node::Json(crate::json::Target::String) => true,
            Node::Seq(items) => items
                .iter()
                .find(|&&i| {
                    !matches!(
                        self.node(i),
                        Node::Space | Node::Eps | Node::Peek(_) | Node::Negate(_)
                    )
                })
                .is_some_and(|&i| self.leads_with_any_key(i, depth + 1)),
            Node::Tag { p, .. } | Node::Atomic(p) => self.leads_with_any_key(*p, depth + 1),
            _ => false,
        }
    }

    /// The literal keys (`"name"`, and `'name'` in the Python flavour) an expression starts with,
    /// when it starts with object member keys.
    fn leading_keys(&self, p: Parser, depth: usize) -> Vec<String> {
        if depth > 32 {
            return Vec::new();
        }
        match self.node(p) {
            Node::JsonKey { json, python, .. } => {
                let mut keys = vec![String::from_utf8_lossy(json).into_owned()];
                if self.python {
                    keys.push(String::from_utf8_lossy(python).into_owned());
                }
                keys
            }
            Node::Seq(items) => {
                for &item in items.iter() {
                    match self.node(item) {
                        Node::Space | Node::Eps | Node::Start | Node::Peek(_) | Node::Negate(_) => {
                        }
                        _ => return self.leading_keys(item, depth + 1),
                    }
                }
                Vec::new()
            }
            Node::Choice(items) => items
                .iter()
                .flat_map(|&i| self.leading_keys(i, depth + 1))
                .collect(),
            Node::Tag { p, .. } | Node::Atomic(p) => self.leading_keys(*p, depth + 1),
            Node::Ref(r) => self
                .g
                .rules
                .get(*r as usize)
                .map(|rule| self.leading_keys(rule.body, depth + 1))
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    fn json_target(
        &mut self,
        target: crate::json::Target,
        ctx: &Ctx,
    ) -> Result<Expr, GrammarError> {
        use crate::json::Target;
        Ok(match target {
            Target::Value => self.json.value()?,
            Target::Object => self.json.object()?,
            Target::Array => self.json.array()?,
            Target::String if !ctx.taken.is_empty() => self.json.string_except(&ctx.taken)?,
            Target::String => self.json.string()?,
            Target::Number => self.json.number()?,
            Target::Bool => self.json.boolean(),
            Target::Null => self.json.null(),
            Target::StringContent => self.json.string_content(),
        })
    }

    fn tag(&mut self, tag: &str, inner: Parser, ctx: &Ctx, d: usize) -> Result<Expr, GrammarError> {
        let tool = ctx
            .tool
            .and_then(|t| self.tools.get(t).map(|tool| (t, tool)));
        let param = |tool: &'a Tool, i: Option<usize>| {
            i.and_then(|i| tool.parameter_names().nth(i).map(str::to_owned))
        };
        match (tag, tool) {
            (tags::LENIENT, _) => Ok(Expr::Never),
            (tags::TOOL, None) => {
                let mut alts = Vec::new();
                for t in 0..self.tools.len() {
                    alts.push(Expr::Ref(self.call(inner, t, d)?));
                }
                Ok(Expr::alt(alts))
            }
            (tags::TOOL_NAME, Some((_, tool))) => {
                Ok(self.name_as(inner, tool.name(), self.name_in_id))
            }
            (tags::TOOL_ARGS, Some((t, _))) if self.reads_json_value(inner) => {
                Ok(Expr::Ref(self.arguments(t)?))
            }
            (tags::TOOL_ARG, Some((t, tool))) if ctx.param.is_none() => {
                let mut alts = Vec::new();
                for i in 0..tool.parameter_names().count() {
                    let c = Ctx {
                        tool: Some(t),
                        param: Some(i),
                        taken: Vec::new(),
                        after_until: None,
                        after_run: None,
                    };
                    alts.push(self.expr(inner, &c, d)?);
                }
                Ok(Expr::alt(alts))
            }
            // The argument's name, or that name repeated in a marker (`</{key}>`).
            (tags::TOOL_ARG_NAME | tags::ARG_KEY_ECHO, Some((_, tool))) => {
                match param(tool, ctx.param) {
                    Some(name) => Ok(self.name_as(inner, &name, false)),
                    None => self.expr(inner, ctx, d),
                }
            }
            (
                tags::TOOL_ARG_VALUE | tags::TOOL_ARG_STRING | tags::TOOL_ARG_JSON,
                Some((t, tool)),
            ) if ctx.param.is_some() => {
                // A value read up to what follows it is written compact: whitespace could end
                // it early.
                let guided = self.guided_text(inner);
                let inner = guided.unwrap_or(inner);
                let i = ctx.param.unwrap_or(0);
                let Some(name) = param(tool, Some(i)) else {
                    return self.expr(inner, ctx, d);
                };
                let schema = tool.parameter_schema(&name).unwrap_or(Value::Bool(true));
                let raw = ArgumentKind::of_schema(&schema) == ArgumentKind::String
                    || (self.bare_strings
                        && tag == tags::TOOL_ARG_VALUE
                        && declared_types(&schema).iter().any(|t| t == "string"));
                match (tag, raw) {
                    (tags::TOOL_ARG_STRING, false) => Ok(Expr::Never),
                    (tags::TOOL_ARG_JSON, true) if !self.typed_slot => Ok(Expr::Never),
                    _ => {
                        // A value read to the end of its line: no line break inside or
                        // around it (it would end the value).
                        let line = self.reads_text(inner)
                            && self.text_delimiters(inner).iter().any(|d| d.contains('\n'));
                        let compact = guided.is_some() || line;
                        let outer = std::mem::replace(&mut self.json.compact, compact);
                        let id = self.value(inner, t, i, &name, &schema, raw, ctx, d);
                        self.json.compact = outer;
                        let id = id?;
                        // A JSON value may have whitespace around it where the node reads text
                        // or leading whitespace.
                        let spaced = guided.is_none()
                            && (self.reads_text(inner) || matches!(self.node(inner), Node::Seq(_)))
                            && matches!(
                                self.json.rules.rule(id).role,
                                Some(Role::Argument {
                                    value: ValueKind::Json,
                                    ..
                                })
                            );
                        Ok(if spaced && line {
                            let blank = CharSet::new([(' ', ' '), ('\t', '\t')])
                                .map_or(Expr::Empty, |s| Expr::repeat(Expr::Class(s), 0, None));
                            Expr::seq([blank.clone(), Expr::Ref(id), blank])
                        } else if spaced {
                            Expr::seq([Expr::space(), Expr::Ref(id), Expr::space()])
                        } else {
                            Expr::Ref(id)
                        })
                    }
                }
            }
            _ => self.expr(inner, ctx, d),
        }
    }

    /// The rule of one call to tool `t`, from the `tool`-tagged node.
    fn call(&mut self, p: Parser, t: usize, d: usize) -> Result<RuleId, GrammarError> {
        if let Some(id) = self.call_memo.get(&(p, t)) {
            return Ok(*id);
        }
        let name = self.tools[t].name().to_owned();
        let id = self.json.rules.declare(&format!("call-{name}"))?;
        self.call_memo.insert((p, t), id);
        let ctx = Ctx {
            tool: Some(t),
            param: None,
            taken: Vec::new(),
            after_until: None,
            after_run: None,
        };
        let body = self.expr(p, &ctx, d)?;
        self.json.rules.set_body(id, body)?;
        self.json.rules.rule_mut(id).role = Some(Role::Call { tool: name });
        Ok(id)
    }

    /// The arguments rule of tool `t`: its parameter schema.
    fn arguments(&mut self, t: usize) -> Result<RuleId, GrammarError> {
        if let Some(id) = self.args_memo.get(&t) {
            return Ok(*id);
        }
        let tool = &self.tools[t];
        let name = tool.name().to_owned();
        let id = self
            .json
            .schema(&format!("{name}-args"), tool.parameters())?;
        self.json.rules.rule_mut(id).role = Some(Role::Arguments { tool: name });
        self.args_memo.insert(t, id);
        Ok(id)
    }

    /// The value rule of parameter `i` of tool `t`: raw text (the PEG node's own language, or
    /// the declared `enum` of strings) or the parameter's schema.
    #[allow(clippy::too_many_arguments)]
    fn value(
        &mut self,
        inner: Parser,
        t: usize,
        i: usize,
        name: &str,
        schema: &Value,
        raw: bool,
        ctx: &Ctx,
        d: usize,
    ) -> Result<RuleId, GrammarError> {
        if let Some(id) = self.value_memo.get(&(t, i)) {
            return Ok(*id);
        }
        let tool_name = self.tools[t].name().to_owned();
        let rule_name = format!("{tool_name}-{name}-value");
        let until = self.reads_text(inner);
        let reads_json = self.reads_json_value(inner);
        let (id, value) = if until && raw {
            // Raw text up to the value's end marker; a declared enum of strings narrows it.
            let text = self.raw_text(inner, ctx, d)?;
            let strings: Option<Vec<&str>> = schema
                .get("enum")
                .and_then(Value::as_array)
                .map(|e| e.iter().filter_map(Value::as_str).collect());
            let body = match strings.filter(|s| !s.is_empty()) {
                Some(values) => {
                    // Each value as the parser reads it: bare (escaped; not holding the bare
                    // text's delimiters), or wrapped when values may be.
                    let excluded = self.text_delimiters(inner);
                    let wrapped = self.values.wrapper.as_ref().map(|(open, _)| open.as_str());
                    Expr::alt(values.into_iter().flat_map(|v| {
                        let forms = self.values.forms(v);
                        forms
                            .into_iter()
                            .filter(|f| {
                                wrapped.is_some_and(|open| f.starts_with(open))
                                    || !excluded.iter().any(|d| f.contains(d.as_str()))
                            })
                            .map(|f| Expr::lit(&f))
                            .collect::<Vec<_>>()
                    }))
                }
                None => text,
            };
            let kind = if self.values.is_plain() {
                ValueKind::Raw
            } else {
                ValueKind::Encoded(self.values.clone())
            };
            (self.json.rules.define(&rule_name, body)?, kind)
        } else if until || reads_json {
            // Values read as text are Python literals where the template writes them so (the
            // Python flavour also reads JSON).
            let flavour = self.json.python;
            self.json.python |= until && self.python_values;
            // A scalar value may be a verbatim string (nested strings are literals).
            let verbatim = self.verbatim.clone().filter(|_| is_scalar(schema));
            let outer = std::mem::replace(&mut self.json.verbatim, verbatim);
            // A container (never a string: the reader keeps text as a string where the
            // schema allows one) may be written as the template's elements.
            let elements = self
                .elements
                .clone()
                .filter(|_| super::elements::container_only(schema));
            let outer_elements = std::mem::replace(&mut self.json.elements, elements);
            let id = self.json.schema(&rule_name, schema);
            self.json.python = flavour;
            self.json.verbatim = outer;
            self.json.elements = outer_elements;
            (id?, ValueKind::Json)
        } else if let Some((open, close)) = self.literal.clone() {
            // Literal values with custom quotes: the parameter's schema written as a literal
            // (strings in the quotes, bare keys), as the parser converts literals to JSON.
            let saved = self.json.quotes.replace((open.clone(), close.clone()));
            let id = self.json.schema(&rule_name, schema);
            self.json.quotes = saved;
            (id?, ValueKind::Literal { open, close })
        } else {
            // Another value syntax: the node's own rules.
            let body = self.raw_text(inner, ctx, d)?;
            (
                self.json.rules.define(&rule_name, body)?,
                ValueKind::Literal {
                    open: String::new(),
                    close: String::new(),
                },
            )
        };
        let role = Role::Argument {
            tool: tool_name,
            name: name.to_owned(),
            value,
        };
        self.json.rules.rule_mut(id).role = Some(role);
        self.value_memo.insert((t, i), id);
        Ok(id)
    }

    /// The raw text a value node reads: the node's own language (an `until` is the text
    /// without its delimiters), with any JSON inside it left generic.
    fn raw_text(&mut self, inner: Parser, ctx: &Ctx, d: usize) -> Result<Expr, GrammarError> {
        let c = Ctx {
            tool: ctx.tool,
            param: None,
            taken: Vec::new(),
            after_until: None,
            after_run: None,
        };
        self.expr(inner, &c, d)
    }

    /// The plain text of a value the parser reads up to what follows it (the generator's
    /// `guided_text`: text up to a stop, then more text while no follow comes): the grammar
    /// writes the first text only, with none of the stops in it (stricter, never misread).
    fn guided_text(&self, p: Parser) -> Option<Parser> {
        let items = match self.node(p) {
            // Elements first (not written, see above), then the text.
            Node::Choice(alts) => return alts.last().and_then(|&last| self.guided_text(last)),
            Node::Seq(items) => items,
            _ => return None,
        };
        let [first, rest] = items.as_ref() else {
            return None;
        };
        let Node::Repeat { p: repeated, .. } = self.node(*rest) else {
            return None;
        };
        let Node::Seq(loop_items) = self.node(*repeated) else {
            return None;
        };
        let reads_text = matches!(self.node(*first), Node::Until(_) | Node::UntilOneOf { .. });
        let negated = loop_items
            .first()
            .is_some_and(|&n| matches!(self.node(n), Node::Negate(_)));
        (reads_text && negated).then_some(*first)
    }

    /// Whether the node reads a value's text: text up to delimiters, or a choice of a wrapped
    /// text and, last, such bare text (see the generator's `raw_value`).
    fn reads_text(&self, p: Parser) -> bool {
        match self.node(p) {
            Node::Until(_) | Node::UntilOneOf { .. } => true,
            Node::Choice(items) => items.last().is_some_and(|&last| {
                matches!(self.node(last), Node::Until(_) | Node::UntilOneOf { .. })
            }),
            _ => false,
        }
    }

    /// The delimiters of the bare text a [`reads_text`](Self::reads_text) node reads.
    fn text_delimiters(&self, p: Parser) -> Vec<String> {
        match self.node(p) {
            Node::Until(f) => vec![String::from_utf8_lossy(f.needle()).into_owned()],
            Node::UntilOneOf { delimiters, .. } => delimiters
                .iter()
                .map(|d| String::from_utf8_lossy(d).into_owned())
                .collect(),
            Node::Choice(items) => items
                .last()
                .map(|&last| self.text_delimiters(last))
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// Whether the node reads one JSON value (possibly after whitespace).
    fn reads_json_value(&self, p: Parser) -> bool {
        match self.node(p) {
            Node::Json(crate::json::Target::Value | crate::json::Target::Object) => true,
            Node::Seq(items) => {
                let mut rest = items
                    .iter()
                    .filter(|&&i| !matches!(self.node(i), Node::Space));
                matches!((rest.next(), rest.next()), (Some(&i), None) if self.reads_json_value(i))
            }
            Node::Atomic(p) => self.reads_json_value(*p),
            // Other ways to write a value before JSON (verbatim strings): JSON is enough.
            Node::Choice(items) => items.last().is_some_and(|&l| self.reads_json_value(l)),
            _ => false,
        }
    }

    /// `name` written where the node `p` reads a name: a JSON string (`"name"`, and `'name'`
    /// in the Python flavour), the matching literals of a choice of literals, or raw text when
    /// the node's language holds it; `in_id`: raw text may be a call id holding the name
    /// (see [`names_in_ids`](Self::names_in_ids)).
    fn name_as(&self, p: Parser, name: &str, in_id: bool) -> Expr {
        let json = Value::String(name.to_owned()).to_string();
        let python = python_string(name);
        match self.node(p) {
            Node::Json(crate::json::Target::String) => {
                if self.python {
                    Expr::alt([Expr::lit(&json), Expr::lit(&python)])
                } else {
                    Expr::lit(&json)
                }
            }
            // A choice that is not the names themselves (a declared name read whole, or a
            // word): the name as each alternative writes it.
            Node::Choice(items)
                if !items
                    .iter()
                    .all(|&i| matches!(self.node(i), Node::Literal(_))) =>
            {
                Expr::alt(items.iter().map(|&i| self.name_as(i, name, in_id)))
            }
            Node::Choice(items) => {
                self.names_in_peg.set(true);
                Expr::alt(items.iter().filter_map(|&i| match self.node(i) {
                    Node::Literal(bytes) => {
                        let text = String::from_utf8_lossy(bytes);
                        (text == json || text == python || text == name).then(|| Expr::lit(&text))
                    }
                    _ => None,
                }))
            }
            Node::Chars { class, min, max } => {
                let n = name.chars().count() as u32;
                let fits = name.chars().all(|c| class.matches(c))
                    && n >= *min
                    && max.is_none_or(|m| n <= m);
                if fits {
                    Expr::lit(name)
                } else {
                    Expr::Never
                }
            }
            Node::Until(finder) => {
                let delimiter = String::from_utf8_lossy(finder.needle()).into_owned();
                if name.contains(&delimiter) {
                    Expr::Never
                } else if in_id {
                    self.id_holding(name, &[delimiter])
                } else {
                    Expr::lit(name)
                }
            }
            Node::UntilOneOf { delimiters, .. } => {
                let delimiters: Vec<String> = delimiters
                    .iter()
                    .map(|d| String::from_utf8_lossy(d).into_owned())
                    .collect();
                if delimiters.iter().any(|d| name.contains(d.as_str())) {
                    Expr::Never
                } else if in_id {
                    self.id_holding(name, &delimiters)
                } else {
                    Expr::lit(name)
                }
            }
            Node::Atomic(inner) | Node::Tag { p: inner, .. } => self.name_as(*inner, name, in_id),
            // A name that may not be empty: a first character that starts no delimiter, then
            // the text up to one (a declared name is never empty).
            Node::Seq(items) => match **items {
                [first, any, rest]
                    if matches!(self.node(first), Node::Negate(_))
                        && matches!(self.node(any), Node::Any) =>
                {
                    self.name_as(rest, name, in_id)
                }
                _ => Expr::lit(name),
            },
            _ => Expr::lit(name),
        }
    }

    /// The tagged-argument list `(arg (sep arg)*)?` of a tool: its parameters in declared
    /// order, separated by `sep`, required ones mandatory. `None` when `p` is not such a list
    /// (or not inside a call).
    fn argument_list(
        &mut self,
        p: Parser,
        ctx: &Ctx,
        d: usize,
    ) -> Result<Option<Expr>, GrammarError> {
        let Some(t) = ctx.tool.filter(|_| ctx.param.is_none()) else {
            return Ok(None);
        };
        let Node::Repeat {
            p: body,
            min: 0,
            max: Some(1),
        } = self.node(p)
        else {
            return Ok(None);
        };
        let Node::Seq(items) = self.node(*body) else {
            return Ok(None);
        };
        let [arg, more] = items.as_ref() else {
            return Ok(None);
        };
        let Node::Repeat {
            p: more_body,
            min: 0,
            max: None,
        } = self.node(*more)
        else {
            return Ok(None);
        };
        let Node::Seq(more_items) = self.node(*more_body) else {
            return Ok(None);
        };
        let [sep, arg2] = more_items.as_ref() else {
            return Ok(None);
        };
        // The same argument node in both places. (Lists whose items hold guards before the
        // argument stay repetitions: their argument rules would end in optional regular
        // parts, which llguidance's greedy lexer runs into what follows the list.)
        let arg_tag = self.g.tag_id(tags::TOOL_ARG);
        let is_arg = matches!(self.node(*arg), Node::Tag { tag, .. } if Some(*tag) == arg_tag);
        if arg != arg2 || !is_arg {
            return Ok(None);
        }
        let tool = &self.tools[t];
        let params: Vec<(usize, bool)> = tool
            .parameter_names()
            .enumerate()
            .map(|(i, n)| (i, tool.is_required(n)))
            .collect();
        let plain = Ctx {
            tool: Some(t),
            param: None,
            taken: Vec::new(),
            after_until: None,
            after_run: None,
        };
        let sep = self.expr(*sep, &plain, d)?;
        let (mut items, mut later) = (Vec::new(), Vec::new());
        for &(i, _) in &params {
            let c = Ctx {
                tool: Some(t),
                param: Some(i),
                taken: Vec::new(),
                after_until: None,
                after_run: None,
            };
            items.push(self.expr(*arg, &c, d)?);
            later.push(self.expr(*arg2, &c, d)?);
        }
        if params.len() > MAX_ORDER_FREE {
            // Too many for the subsets: any parameters in any order, repeats allowed.
            return Ok(Some(Expr::optional(Expr::seq([
                Expr::alt(items),
                Expr::repeat(Expr::seq([sep, Expr::alt(later)]), 0, None),
            ]))));
        }
        let required: u32 = params
            .iter()
            .filter(|(_, r)| *r)
            .fold(0, |m, (i, _)| m | (1 << i));
        let name = format!("{}-arguments", tool.name());
        self.at_most_once(&name, &items, &later, required, &sep)
            .map(Some)
    }

    /// `items` in any order, each at most once, separated by `sep`, the ones in the bit mask
    /// `required` present: one rule per set of items written so far (a bit mask), named after
    /// `name`. Item `i` is written `items[i]` first, `later[i]` after another. At most
    /// [`MAX_ORDER_FREE`] items.
    fn at_most_once(
        &mut self,
        name: &str,
        items: &[Expr],
        later: &[Expr],
        required: u32,
        sep: &Expr,
    ) -> Result<Expr, GrammarError> {
        let n = items.len().min(MAX_ORDER_FREE);
        if n == 0 {
            return Ok(Expr::Empty);
        }
        let full = (1u32 << n) - 1;
        let ids: Vec<RuleId> = (0..full)
            .map(|_| self.json.rules.declare(name))
            .collect::<Result<_, _>>()?;
        for mask in 0..full {
            let mut alts = Vec::new();
            if mask & required == required {
                alts.push(Expr::Empty);
            }
            for (i, item) in items.iter().take(n).enumerate() {
                if mask & (1 << i) != 0 {
                    continue;
                }
                // Every item written: nothing more.
                let next = match mask | (1 << i) {
                    m if m == full => Expr::Empty,
                    m => Expr::Ref(ids[m as usize]),
                };
                let item = if mask == 0 {
                    item.clone()
                } else {
                    Expr::seq([sep.clone(), later.get(i).unwrap_or(item).clone()])
                };
                alts.push(Expr::seq([item, next]));
            }
            self.json
                .rules
                .set_body(ids[mask as usize], Expr::alt(alts))?;
        }
        Ok(Expr::Ref(ids[0]))
    }

    /// A JSON object whose members are a choice, as a call object is read:
    /// `{ (!K other ,)* R (, member)* }` with `member = R | M1 | … | any other key` (`other`
    /// the same choice without `R`). Inside a call the grammar writes `R` and the `Mi` each at
    /// most once, in any order, `R` present: a repeated member is not a call the parser reads
    /// as written (repeated arguments are joined), and "any other key" is skipped by the parser.
    /// `None` when `items` (a sequence's) is not such an object or not inside a call.
    fn member_object(
        &mut self,
        items: &[Parser],
        ctx: &Ctx,
        d: usize,
    ) -> Result<Option<Expr>, GrammarError> {
        if ctx.tool.is_none() || ctx.param.is_some() {
            return Ok(None);
        }
        // The opening `{ (!K other ,)*` may be a sequence of its own.
        let mut flat = Vec::new();
        if let Some((&first, rest)) = items.split_first() {
            match self.node(first) {
                Node::Seq(open) => flat.extend(open.iter().copied()),
                _ => flat.push(first),
            }
            flat.extend(rest.iter().copied());
        }
        let lit = |p: Parser, text: &[u8]| matches!(self.node(p), Node::Literal(b) if &**b == text);
        let space = |p: Parser| matches!(self.node(p), Node::Space);
        let star = |p: Parser| match self.node(p) {
            Node::Repeat {
                p,
                min: 0,
                max: None,
            } => match self.node(*p) {
                Node::Seq(items) => Some(items.clone()),
                _ => None,
            },
            _ => None,
        };
        let [open, s1, before, required, after, s2, close] = flat[..] else {
            return Ok(None);
        };
        if !(lit(open, b"{") && space(s1) && space(s2) && lit(close, b"}")) {
            return Ok(None);
        }
        let (Some(before), Some(after)) = (star(before), star(after)) else {
            return Ok(None);
        };
        // before = !K other space "," space; after = space "," space member.
        let [neg, other, b1, comma, b2] = before[..] else {
            return Ok(None);
        };
        let [a1, comma2, a2, member] = after[..] else {
            return Ok(None);
        };
        let shaped = matches!(self.node(neg), Node::Negate(_))
            && space(b1)
            && lit(comma, b",")
            && space(b2)
            && space(a1)
            && lit(comma2, b",")
            && space(a2);
        let (Node::Choice(others), Node::Choice(members)) = (self.node(other), self.node(member))
        else {
            return Ok(None);
        };
        // Members after the required one are the others (a repeated required key is another
        // key to the parser).
        if !shaped || members[..] != others[..] {
            return Ok(None);
        }
        let plain = Ctx {
            taken: Vec::new(),
            after_until: None,
            after_run: None,
            ..ctx.clone()
        };
        let mut written = vec![self.expr(required, &plain, d)?];
        for &m in others.iter() {
            if !self.leads_with_any_key(m, 0) {
                written.push(self.expr(m, &plain, d)?);
            }
        }
        if written.len() > MAX_ORDER_FREE {
            return Ok(None);
        }
        let sep = Expr::seq([Expr::space(), Expr::lit(","), Expr::space()]);
        let tool = ctx.tool.and_then(|t| self.tools.get(t)).map(Tool::name);
        let name = format!("{}-members", tool.unwrap_or_default());
        let body = self.at_most_once(&name, &written, &written, 1, &sep)?;
        Ok(Some(Expr::seq([
            Expr::lit("{"),
            Expr::space(),
            body,
            Expr::space(),
            Expr::lit("}"),
        ])))
    }
}

/// The characters of a PEG class (`None`: none).
fn charset(class: &crate::peg::CharClass) -> Option<CharSet> {
    let (ranges, negated) = class.ranges();
    let set = CharSet::new(ranges.iter().copied());
    if negated {
        match set {
            Some(s) => s.complement(),
            None => Some(CharSet::any()),
        }
    } else {
        set
    }
}

/// Whether two sets share a character.
fn overlap(a: &CharSet, b: &CharSet) -> bool {
    a.ranges()
        .iter()
        .any(|&(lo, hi)| b.ranges().iter().any(|&(l, h)| lo <= h && l <= hi))
}

/// Calls `f` on the children of a node (rule references resolved to the rule bodies).
fn children(node: &Node, g: &Grammar, f: &mut impl FnMut(Parser)) {
    match node {
        Node::Seq(ps) | Node::Choice(ps) => ps.iter().for_each(|&p| f(p)),
        Node::Repeat { p, .. }
        | Node::Peek(p)
        | Node::Negate(p)
        | Node::Schema { p, .. }
        | Node::Atomic(p)
        | Node::Tag { p, .. } => f(*p),
        Node::Ref(r) => {
            if let Some(rule) = g.rules.get(*r as usize) {
                f(rule.body);
            }
        }
        _ => {}
    }
}

/// Whether every value `schema` allows is a scalar (a string, number, boolean or null: no
/// object or array can hold a nested string).
fn is_scalar(schema: &Value) -> bool {
    const SCALARS: [&str; 5] = ["string", "number", "integer", "boolean", "null"];
    match schema.get("type") {
        Some(Value::String(t)) => SCALARS.contains(&t.as_str()),
        Some(Value::Array(ts)) => ts
            .iter()
            .all(|t| t.as_str().is_some_and(|t| SCALARS.contains(&t))),
        _ => schema
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.iter().all(|v| !v.is_object() && !v.is_array())),
    }
}
