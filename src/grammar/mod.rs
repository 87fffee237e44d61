//! Constrained-decoding grammars from the same analysis as the parser: GBNF (llama.cpp) and
//! llguidance's Lark, lazy with triggers, and the preserved tokens.
//!
//! # Pipeline
//!
//! ```text
//! ChatParser (PEG grammar + format + request) ──from_peg──▶ internal form (ir::Rules)
//!        ├── gbnf::print ──▶ GBNF          (schema rules expanded, `until` as automaton rules)
//!        └── lark::print ──▶ Lark          (`%json` for schemas, regular stretches as terminals)
//! ```
//!
//! The tool-call part of the PEG grammar (its trigger rules; the `tool`-tagged nodes when it
//! has none) is translated node by node ([`from_peg`](self::from_peg) says how each node kind
//! maps and what lookaheads become), specialised to the request: one alternative per offered
//! tool with its exact name, and its parameter schema for the arguments ([`schema`](self::schema)).
//! A name the request does not offer, or arguments the schema rejects, have no derivation.
//!
//! # Laziness
//!
//! - `tool_choice: auto` (the default): **lazy**. The grammar is the call block alone (`calls
//!   (ws calls)*` with parallel calls, one block otherwise, then optional whitespace and the
//!   end-of-turn marker); a server applies it from the first [`Trigger`] on. Only rules
//!   reachable from the block are emitted.
//! - `tool_choice: required` or a named function: **not lazy**. The grammar is the whole output:
//!   the reasoning the format allows first (a block closed by its end marker; when the prompt
//!   opened it, the rest of it), then the calls. A named function leaves only that function.
//! - `parallel_tool_calls: false`: the block holds one call (the PEG block already does) and is
//!   not repeated.
//! - Tools disabled (`tool_choice: none` or no tools) with a response-format JSON schema: the
//!   reasoning, then the schema's value (not lazy). Neither: [`GrammarError::NothingToConstrain`].
//!
//! # What each flavour cannot express, and what the grammar does instead
//!
//! - PEG lookaheads (`peek`, `negate`) and ordered choice: no CFG counterpart. Lookaheads emit
//!   nothing and choices become alternations, so the grammar may allow a text the PEG reads
//!   differently (say, a call header the PEG reads as content); member keys taken by earlier
//!   alternatives are excluded from "any other key" so arguments cannot slip past the schema.
//! - GBNF has no "text without this delimiter": one rule per automaton state (see [`gbnf`]).
//!   Lark has it (`&`/`~`), but llguidance lexes greedily, so such text and its delimiter must
//!   share one lexeme (see [`lark`]).
//! - JSON Schema: both flavours leave `pattern`, `format`, numeric bounds, `multipleOf`, `not`,
//!   `uniqueItems` unchecked in the GBNF (see [`schema`]); the Lark output hands schemas to
//!   llguidance, which checks more of them (formats, bounds, patterns). Object keys come in the
//!   declared order in both, and `additionalProperties` is false unless the schema says
//!   otherwise.
//! - Tagged arguments come in declared order; Python-dict arguments use expanded rules in both
//!   flavours (`%json` is JSON only).
//! - A trigger inside the reasoning starts the grammar there (as llama.cpp's word triggers
//!   do); for channel formats (whose headers also open reasoning) the trigger is a pattern
//!   through the tool name.

pub mod from_peg;
pub mod gbnf;
pub mod ir;
pub mod lark;
pub mod sample;
pub mod schema;
pub mod triggers;

#[cfg(test)]
mod tests;

use serde_json::json;

use crate::generate::ChatParser;
use crate::message::{Tool, ToolChoice};

use self::ir::{Expr, Rules};
pub use self::triggers::{Trigger, TriggerKind};

/// Which grammar language to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GrammarFlavor {
    /// llama.cpp's GBNF.
    Gbnf,
    /// llguidance's Lark dialect.
    Lark,
}

impl GrammarFlavor {
    /// `"gbnf"` or `"lark"`.
    pub fn name(self) -> &'static str {
        match self {
            GrammarFlavor::Gbnf => "gbnf",
            GrammarFlavor::Lark => "lark",
        }
    }
}

/// Why no grammar could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrammarError {
    /// The request constrains nothing (no tools enabled, no response format).
    #[error("nothing to constrain: {0}")]
    NothingToConstrain(String),
    /// The grammar would match nothing.
    #[error("{0}")]
    Empty(String),
    /// A tool's schema cannot be turned into rules.
    #[error("schema: {0}")]
    Schema(String),
    /// The grammar grew past a limit.
    #[error("grammar too large: {0}")]
    TooLarge(String),
}

/// A grammar for constrained decoding, with what a server needs to apply it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodingGrammar {
    /// The language of [`grammar`](Self::grammar).
    pub flavor: GrammarFlavor,
    /// The grammar text.
    pub grammar: String,
    /// Whether the grammar applies only from a trigger on.
    pub lazy: bool,
    /// What starts a lazy grammar (empty when not lazy).
    pub triggers: Vec<Trigger>,
    /// Markers a server must keep as special tokens.
    pub preserved_tokens: Vec<String>,
}

impl DecodingGrammar {
    /// The grammar as one JSON object: `{"flavor", "grammar", "lazy", "triggers": [{"kind",
    /// "value"}], "preserved_tokens"}`.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "flavor": self.flavor.name(),
            "grammar": self.grammar,
            "lazy": self.lazy,
            "triggers": self.triggers.iter().map(|t| json!({
                "kind": match t.kind { TriggerKind::Word => "word", TriggerKind::Pattern => "pattern" },
                "value": t.value,
            })).collect::<Vec<_>>(),
            "preserved_tokens": self.preserved_tokens,
        })
    }
}

/// The internal form of a request's grammar, before printing.
#[derive(Debug, Clone)]
pub struct Constraint {
    /// The rules (root first).
    pub rules: Rules,
    /// Whether the grammar applies only from a trigger on.
    pub lazy: bool,
    /// What starts it when lazy.
    pub triggers: Vec<Trigger>,
    /// Markers a server must keep as special tokens.
    pub preserved_tokens: Vec<String>,
}

impl Constraint {
    /// Prints the grammar in `flavor`.
    pub fn print(&self, flavor: GrammarFlavor) -> DecodingGrammar {
        let grammar = match flavor {
            GrammarFlavor::Gbnf => gbnf::print(&self.rules),
            GrammarFlavor::Lark => lark::print(&self.rules),
        };
        DecodingGrammar {
            flavor,
            grammar,
            lazy: self.lazy,
            triggers: self.triggers.clone(),
            preserved_tokens: self.preserved_tokens.clone(),
        }
    }
}

impl ChatParser {
    /// The constrained-decoding grammar of this parser's request, in `flavor`.
    ///
    /// ```
    /// use chatparse::analyze::analyze;
    /// use chatparse::generate::ChatParser;
    /// use chatparse::grammar::GrammarFlavor;
    /// use chatparse::message::ChatRequest;
    /// use chatparse::template::ChatTemplate;
    ///
    /// let source = std::fs::read_to_string("examples/chatml-tools.jinja").unwrap();
    /// let request: ChatRequest = serde_json::from_str(
    ///     &std::fs::read_to_string("examples/chatml-tools.request.json").unwrap(),
    /// )
    /// .unwrap();
    /// let template = ChatTemplate::new("chatml-tools", &source).unwrap();
    /// let parser = ChatParser::new(&template, &analyze(&template), &request).unwrap();
    /// let grammar = parser.decoding_grammar(GrammarFlavor::Gbnf).unwrap();
    /// assert!(grammar.lazy);
    /// assert!(grammar.grammar.starts_with("root ::= "));
    /// ```
    pub fn decoding_grammar(&self, flavor: GrammarFlavor) -> Result<DecodingGrammar, GrammarError> {
        Ok(constraint(self)?.print(flavor))
    }
}

/// The internal form of `parser`'s grammar (see the module docs for its shape).
pub fn constraint(parser: &ChatParser) -> Result<Constraint, GrammarError> {
    let format = parser.format();
    let options = parser.options();
    // The offered tools, borrowed (a schema may be deep: no copy).
    let named: Vec<Tool>;
    let tools: &[Tool] = match &parser.tool_choice {
        ToolChoice::Function(name) => {
            named = parser
                .tools
                .iter()
                .filter(|t| t.name() == name)
                .cloned()
                .collect();
            &named
        }
        _ => &parser.tools,
    };
    let lazy = matches!(parser.tool_choice, ToolChoice::Auto);
    let mut rules = Rules::new();
    let (root_body, triggers) = if options.tools {
        if tools.is_empty() {
            return Err(GrammarError::Empty(
                "no tool of the request can be called (tool_choice names none of them)".to_owned(),
            ));
        }
        let mut t = from_peg::FromPeg::new(
            parser.grammar(),
            tools,
            parser.literal_quotes.clone(),
            parser.values.text().clone(),
            parser.values.python(),
            &mut rules,
        );
        let mut blocks = t.trigger_rules()?;
        if blocks.is_empty() {
            blocks = t.tool_nodes()?;
        }
        let names_in_peg = t.names_in_peg.get();
        drop(t);
        let block = Expr::alt(blocks);
        let block_id = rules.define("calls", block)?;
        let block = Expr::Ref(block_id);
        let calls = if options.parallel_tool_calls {
            Expr::seq([
                block.clone(),
                Expr::repeat(Expr::seq([Expr::space(), block.clone()]), 0, None),
            ])
        } else {
            block.clone()
        };
        // The triggers, from the block alone (its rules finished: what matches nothing gone).
        let triggers = if lazy {
            let mut alone = rules.clone();
            let root = alone.root();
            alone.set_body(root, block.clone())?;
            let alone = alone.finish()?;
            triggers::triggers(
                &alone,
                &Expr::Ref(alone.root()),
                format.channels.is_some(),
                names_in_peg,
                parser.preserved_tokens(),
            )
        } else {
            Vec::new()
        };
        let words: Vec<&str> = triggers
            .iter()
            .filter(|t| t.kind == TriggerKind::Word)
            .map(|t| t.value.as_str())
            .collect();
        // Text after the calls would be the parser's content, but llguidance's greedy lexer
        // cannot tell such text from a further call that starts with a short lexeme (`{`):
        // after the calls only whitespace and the end of turn.
        let text_after = false;
        // Text after the calls holds no trigger and no marker of the format (a greedy lexeme
        // of that text would otherwise run into a call's optional closing marker).
        let markers = block_markers(&rules, block_id);
        let mut stops = words.clone();
        stops.extend(
            parser
                .preserved_tokens()
                .iter()
                .map(|t| t.trim())
                .chain(markers.iter().map(String::as_str))
                .filter(|t| t.chars().count() >= 2),
        );
        let tail = tail(&format.turn_end, text_after.then_some(stops.as_slice()));
        let body = if lazy {
            Expr::seq([calls, tail])
        } else {
            Expr::seq([prelude(parser), calls, tail])
        };
        (body, triggers)
    } else if let Some(schema) = &parser.json_schema {
        let python = false;
        let mut json = schema::Json::new(&mut rules, python);
        let id = json.schema("response", schema)?;
        drop(json);
        let body = Expr::seq([prelude(parser), Expr::Ref(id), Expr::space()]);
        (body, Vec::new())
    } else {
        return Err(GrammarError::NothingToConstrain(
            "the request enables no tool calls and sets no response format".to_owned(),
        ));
    };
    let root = rules.root();
    rules.set_body(root, root_body)?;
    let rules = rules.finish()?;
    let lazy = !triggers.is_empty();
    Ok(Constraint {
        rules,
        lazy,
        triggers,
        preserved_tokens: parser.preserved_tokens().to_vec(),
    })
}

/// The marker-like literals of the block (two characters or more, not only letters, digits and
/// `_`), outside schema rules.
fn block_markers(rules: &Rules, block: ir::RuleId) -> Vec<String> {
    fn walk(e: &Expr, out: &mut Vec<String>) {
        match e {
            Expr::Literal(text) => {
                let t = text.trim();
                if t.chars().count() >= 2
                    && !t.chars().all(|c| c.is_alphanumeric() || c == '_')
                    && !out.iter().any(|o| o == t)
                {
                    out.push(t.to_owned());
                }
            }
            Expr::Seq(items) | Expr::Alt(items) => items.iter().for_each(|i| walk(i, out)),
            Expr::Repeat { expr, .. } => walk(expr, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    let mut seen = vec![false; rules.rules().len()];
    let mut stack = vec![block];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id.index()], true) {
            continue;
        }
        let rule = rules.rule(id);
        if rule.schema.is_some() || rule.schema_internal {
            continue;
        }
        walk(&rule.body, &mut out);
        rule.body.for_each_ref(&mut |r| stack.push(r));
    }
    out
}

/// What may follow the calls: the end-of-turn marker (whole, or up to one of its markers) when
/// the server leaves it in the text; with word triggers (`after`), also text holding none of
/// them (the parser reads it as content; another call would need a trigger).
fn tail(turn_end: &str, after: Option<&[&str]>) -> Expr {
    let te = turn_end.trim();
    let mut forms: Vec<String> = Vec::new();
    if !te.is_empty() {
        forms.push(te.to_owned());
        for segment in crate::diff::segments(te) {
            let form = te[..segment.end()].trim();
            if segment.kind == crate::diff::SegmentKind::Marker && !forms.iter().any(|f| f == form)
            {
                forms.push(form.to_owned());
            }
        }
    }
    let text = match after {
        Some(words) => Expr::excluding(
            words
                .iter()
                .copied()
                .chain(forms.iter().map(String::as_str)),
        ),
        None => Expr::space(),
    };
    let end = if forms.is_empty() {
        Expr::Empty
    } else {
        Expr::optional(Expr::seq([
            Expr::alt(forms.iter().map(|f| Expr::lit(f))),
            Expr::space(),
        ]))
    };
    Expr::seq([text, end])
}

/// What a non-lazy grammar allows before the calls: the reasoning block of the format (the
/// rest of it when the prompt opened it), then whitespace.
fn prelude(parser: &ChatParser) -> Expr {
    let format = parser.format();
    let options = parser.options();
    let (start, end) = (format.reasoning.start.trim(), format.reasoning.end.trim());
    // An empty content wrapper may follow the reasoning.
    let (cs, ce) = (format.content.start.trim(), format.content.end.trim());
    let wrapper = if cs.is_empty() {
        Expr::Empty
    } else {
        Expr::optional(Expr::seq([
            Expr::lit(cs),
            Expr::space(),
            Expr::lit(ce),
            Expr::space(),
        ]))
    };
    if let Some(c) = &format.channels {
        // Reasoning messages before the call: header, reasoning channel, body, message end,
        // and the header reopened.
        let message = Expr::seq([
            Expr::space(),
            Expr::lit(&c.header_start),
            Expr::alt(c.reasoning_channels.iter().map(|n| Expr::lit(n))),
            Expr::space(),
            Expr::lit(&c.header_end),
            Expr::excluding(c.message_ends.iter().chain([&c.header_start])),
            Expr::alt(c.message_ends.iter().map(|n| Expr::lit(n))),
            Expr::space(),
            Expr::optional(Expr::lit(&c.reopen)),
        ]);
        return Expr::seq([Expr::repeat(message, 0, None), Expr::space()]);
    }
    if end.is_empty() {
        return Expr::seq([Expr::space(), wrapper]);
    }
    let text_and_end = Expr::seq([Expr::excluding([end]), Expr::lit(end), Expr::space()]);
    if options.reasoning_open {
        return Expr::seq([text_and_end, wrapper]);
    }
    if start.is_empty() {
        return Expr::seq([Expr::space(), wrapper]);
    }
    Expr::seq([
        Expr::space(),
        Expr::optional(Expr::seq([Expr::lit(start), text_and_end])),
        wrapper,
    ])
}
