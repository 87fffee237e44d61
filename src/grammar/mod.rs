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
//! - `tool_choice: auto` (the default): **lazy**. The grammar is the call block and what the
//!   PEG's turn loop (`(calls | other)*` of its root) allows beside it: `calls (glue calls)*
//!   tail` with parallel calls, `calls tail` otherwise, where `glue` is whitespace and the
//!   loop's other blocks (the reasoning blocks of interleaved formats), and `tail` is glue,
//!   then text (see below), then one of the loop's turn ends (each marker-led form of the turn
//!   ends, stray closers). A server applies it from the first [`Trigger`] on. Only rules
//!   reachable from the root are emitted.
//! - Text after the calls (the parser's content) is allowed where the turn loop reads content
//!   and every call and block starts with a distinctive marker: the text holds none of the
//!   format's markers, so a further call cannot hide in it. A stray reasoning closer is no
//!   turn end where reasoning needs no opener (the parser would read all before it as
//!   reasoning). A block whose text may end in a name or value read up to a delimiter is
//!   followed by nothing, or by whitespace first when that is a delimiter (else the text would
//!   read as part of that name).
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
//! - Tagged arguments and the members of a JSON call object come in any order, each at most
//!   once (one rule per set written so far); Python-dict arguments use expanded rules in both
//!   flavours (`%json` is JSON only), as do container arguments of a template that writes
//!   containers as elements (JSON, or the elements in declared order: see [`elements`]).
//! - A trigger inside the reasoning starts the grammar there (as llama.cpp's word triggers
//!   do); for channel formats (whose headers also open reasoning) the trigger is a pattern
//!   through the tool name. A trigger split between the prompt's prefill and the output never
//!   fires (the grammar cannot start inside a marker).
//! - Text after the calls only where every call starts with a marker the text may not hold:
//!   elsewhere (a call opened by a bare `{`) llguidance's greedy lexer would take a further
//!   call for text, so only whitespace and the turn end follow. Calls after such text are not
//!   allowed (the text would have to hold their opener).
//! - Required (non-lazy) grammars write the reasoning as the format delimits it (opener, text
//!   without the closer, closer), not with the PEG's look-aheads past call markers.

pub mod elements;
pub mod from_peg;
pub mod gbnf;
pub mod ir;
pub mod lark;
mod prefix;
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
    for tool in tools {
        schema::check_parameters(tool.name(), tool.parameters())?;
    }
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
            parser
                .literal_quotes
                .as_ref()
                .map(|l| (l.open.clone(), l.close.clone())),
            parser.values.text().clone(),
            parser.values.python(),
            &mut rules,
        );
        t.names_in_ids(format.tools.as_ref().is_some_and(|t| t.name_in_id));
        t.bare_strings(parser.values.bare_strings());
        t.typed_slot(format.tools.as_ref().is_some_and(|t| {
            t.arguments.non_string.as_ref().is_some_and(|n| {
                n.name_suffix
                    .contains(crate::analyze::slots::Slot::Type.char())
            })
        }));
        t.element_values(
            format
                .tools
                .as_ref()
                .and_then(|t| t.arguments.element_values.clone()),
        );
        if parser.values.verbatim_literals() {
            let quote = parser
                .literal_quotes
                .as_ref()
                .map(|l| l.open.as_str())
                .filter(|open| *open == "'" || *open == "\"")
                .and_then(|open| open.chars().next());
            let follow = format
                .tools
                .as_ref()
                .map(|t| after_value_starts(t, &format.reasoning.start));
            t.verbatim_quote(quote.zip(follow));
        }
        let mut blocks = t.trigger_rules()?;
        if blocks.is_empty() {
            blocks = t.tool_nodes()?;
        }
        let turn = t.turn_loop()?;
        let open = t.open_end();
        let echo = t.root_echo();
        let names_in_peg = t.names_in_peg.get();
        drop(t);
        let block = Expr::alt(blocks);
        let block_id = rules.define("calls", block)?;
        let block = Expr::Ref(block_id);
        // Between and after the calls: whitespace and the blocks the turn loop allows beside
        // them (reasoning blocks of interleaved formats).
        let interludes = turn
            .as_ref()
            .map(|l| l.interludes.clone())
            .unwrap_or_default();
        let interludes = if interludes.is_empty() {
            Expr::Empty
        } else {
            let id = rules.define("interlude", Expr::alt(interludes.clone()))?;
            Expr::repeat(Expr::seq([Expr::Ref(id), Expr::space()]), 0, None)
        };
        // A block whose text may end in a name or value read up to a delimiter: what follows
        // it starts with one of the delimiters (whitespace, when that is one; else only the
        // next call's opener, which is one).
        let ws_ends_open = open
            .delimiters
            .iter()
            .any(|d| d.starts_with(char::is_whitespace));
        let lead = if open.delimiters.is_empty() {
            Expr::space()
        } else {
            Expr::repeat(Expr::Class(ir::whitespace()), 1, None)
        };
        let glue = if open.delimiters.is_empty() {
            Expr::seq([Expr::space(), interludes.clone()])
        } else if ws_ends_open {
            Expr::alt([Expr::space(), Expr::seq([lead.clone(), interludes.clone()])])
        } else {
            Expr::Empty
        };
        let more_calls = Expr::repeat(Expr::seq([glue, block.clone()]), 0, None);
        let calls_from = |first: Expr| {
            if options.parallel_tool_calls {
                Expr::seq([first, more_calls.clone()])
            } else {
                first
            }
        };
        let calls = calls_from(block.clone());
        // The triggers, from the block alone (its rules finished: what matches nothing gone).
        // The call openers as words (`opening_words`), and the triggers: those words, or
        // where a word also starts a reasoning or content opener, a pattern leaving it out.
        let (opening_words, starts) = {
            let mut alone = rules.clone();
            let root = alone.root();
            alone.set_body(root, block.clone())?;
            let alone = alone.finish()?;
            let with_others = |others: &[&str]| {
                triggers::triggers(
                    &alone,
                    &Expr::Ref(alone.root()),
                    format.channels.is_some(),
                    names_in_peg,
                    parser.preserved_tokens(),
                    parser.triggers(),
                    others,
                )
            };
            let others = crate::generate::grammar::part_openers(format);
            let others: Vec<&str> = others.iter().map(String::as_str).collect();
            (with_others(&[]), with_others(&others))
        };
        // The prompt may end with a call's opening word (every message opens with it): the
        // first call then starts at the output's start, after a word the output never shows.
        // A pattern anchored at the output's start starts the grammar there, in the call.
        let opened = prompt_opened_call(&mut rules, &block, &opening_words, parser)?;
        let (calls, starts) = match opened {
            Some((first, anchored)) => {
                let calls = Expr::alt([calls, calls_from(first)]);
                (calls, starts.into_iter().chain(anchored).collect())
            }
            None => (calls, starts),
        };
        // The turn's ends: the turn loop's (each marker-led form of the turn ends, and stray
        // closers), else the format's turn end. A stray reasoning closer is left out where
        // reasoning needs no opener: the parser would read all that precedes it as reasoning.
        let reasoning_end = format.reasoning.end.trim();
        let implicit_reasoning =
            format.reasoning.start.trim().is_empty() && !reasoning_end.is_empty();
        let ends = match &turn {
            Some(l) if !l.ends.is_empty() => Expr::optional(Expr::alt(
                l.ends
                    .iter()
                    .filter(|(_, literals)| {
                        !(implicit_reasoning && literals.iter().all(|l| l == reasoning_end))
                    })
                    .map(|(e, _)| e.clone()),
            )),
            _ => turn_end(&format.turn_end),
        };
        // Text after the calls is content, where the turn loop reads it and every call block
        // starts with an opening word: the text holds no such word (a further call would
        // start with one) and no marker of the format (a greedy lexeme of that text would
        // otherwise run into a marker that follows).
        let words: Vec<&str> = opening_words
            .iter()
            .filter(|t| t.kind == TriggerKind::Word)
            .map(|t| t.value.as_str())
            .collect();
        // Each call starts with a marker too (a call inside a block whose closer may be left
        // out would otherwise read as text: `{` starts both).
        let openers = triggers::call_openers(&rules, block_id).unwrap_or_default();
        let distinctive = |w: &String| {
            let w = w.trim();
            w.chars().count() >= 2 && !w.chars().all(|c| c.is_alphanumeric() || c == '_')
        };
        // A block may end in text that runs on unless what follows ends it (a value over
        // lines): only such an end follows, never text.
        // Calls that only a pattern starts (no word: `[` of a Python call list): text after
        // them holds none of the block's openers, however plain, so no call the parser could
        // read lies in it.
        let block_openers = triggers::block_openers(&rules, &block).unwrap_or_default();
        let pattern_led = !block_openers.is_empty()
            && words.is_empty()
            && !starts.is_empty()
            && starts.iter().all(|t| t.kind == TriggerKind::Pattern);
        let word_led = !words.is_empty()
            && words.len() == opening_words.len()
            && openers.iter().all(distinctive);
        // (The prompt may have opened the first call, which then starts with its bare name;
        // the calls after it start with their openers, which the text holds none of.)
        let text_after = turn.as_ref().is_some_and(|l| l.text)
            && !open.runs_on
            && !openers.is_empty()
            && (word_led || pattern_led);
        let text = if text_after {
            // (Where a pattern leads, the calls' own openers are their names: words of text.)
            let mut markers = if pattern_led {
                Vec::new()
            } else {
                openers.clone()
            };
            for e in [&interludes, &ends] {
                literal_markers_through(&rules, e, &mut markers);
            }
            let plain_openers = block_openers
                .iter()
                .map(|o| o.trim())
                .filter(|o| pattern_led && !o.is_empty());
            let stops: Vec<&str> = words
                .iter()
                .copied()
                .chain(parser.preserved_tokens().iter().map(|t| t.trim()))
                .chain(markers.iter().map(String::as_str))
                .filter(|t| t.chars().count() >= 2)
                .chain(plain_openers)
                .collect();
            Expr::excluding(stops)
        } else {
            Expr::Empty
        };
        let tail = match (open.delimiters.is_empty(), ws_ends_open) {
            (true, _) => Expr::seq([Expr::space(), interludes, text, ends]),
            (false, true) => Expr::optional(Expr::seq([lead, interludes, text, ends])),
            (false, false) => Expr::Empty,
        };
        let (body, triggers) = if lazy {
            (Expr::seq([calls, tail]), starts)
        } else {
            (Expr::seq([echo, prelude(parser), calls, tail]), Vec::new())
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

/// Where the prompt ends with one of the word triggers of the call `block` (`starts`): the
/// block after that word, and the triggers that start the grammar at the output's start in
/// it (its head pattern, anchored). `None` when the prompt ends with none, or the block does
/// not start with it.
fn prompt_opened_call(
    rules: &mut Rules,
    block: &Expr,
    starts: &[Trigger],
    parser: &ChatParser,
) -> Result<Option<(Expr, Vec<Trigger>)>, GrammarError> {
    let prompt = parser.prefill_text().trim_end();
    let Some(word) = starts
        .iter()
        .find(|t| t.kind == TriggerKind::Word && prompt.ends_with(t.value.as_str()))
    else {
        return Ok(None);
    };
    let Some(rest) = prefix::after_literal(rules, block, &word.value)? else {
        return Ok(None);
    };
    let first = rules.define("call-after-prompt", rest)?;
    let mut alone = rules.clone();
    let root = alone.root();
    alone.set_body(root, Expr::Ref(first))?;
    let alone = alone.finish()?;
    let heads = triggers::triggers(
        &alone,
        &Expr::Ref(alone.root()),
        true,
        true,
        parser.preserved_tokens(),
        parser.triggers(),
        &[],
    );
    let anchored = heads
        .into_iter()
        .map(|t| Trigger {
            kind: TriggerKind::Pattern,
            value: match t.kind {
                TriggerKind::Pattern => format!("^(?:{})", t.value),
                TriggerKind::Word => format!("^{}", lark::regex_escape(&t.value)),
            },
        })
        .collect();
    Ok(Some((Expr::Ref(first), anchored)))
}

/// Adds the marker-like literals of `e` and of the rules it references (outside schema
/// rules) to `out`.
fn literal_markers_through(rules: &Rules, e: &Expr, out: &mut Vec<String>) {
    literal_markers(e, out);
    let mut seen = vec![false; rules.rules().len()];
    let mut stack = Vec::new();
    e.for_each_ref(&mut |r| stack.push(r));
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut seen[id.index()], true) {
            continue;
        }
        let rule = rules.rule(id);
        if rule.schema.is_some() || rule.schema_internal {
            continue;
        }
        literal_markers(&rule.body, out);
        rule.body.for_each_ref(&mut |r| stack.push(r));
    }
}

/// Adds the marker-like literals of `e` (not through references) to `out`.
fn literal_markers(e: &Expr, out: &mut Vec<String>) {
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
        Expr::Seq(items) | Expr::Alt(items) => items.iter().for_each(|i| literal_markers(i, out)),
        Expr::Repeat { expr, .. } => literal_markers(expr, out),
        _ => {}
    }
}

/// The end-of-turn marker (whole, or up to one of its markers), optional, when the server
/// leaves it in the text: for grammars whose PEG has no turn loop to read the ends from.
fn turn_end(turn_end: &str) -> Expr {
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
    if forms.is_empty() {
        return Expr::Empty;
    }
    Expr::optional(Expr::seq([
        Expr::alt(forms.iter().map(|f| Expr::lit(f))),
        Expr::space(),
    ]))
}

/// `text` with optional whitespace after each whole marker in it (`<|start|> assistant` for
/// `<|start|>assistant`), as the channel parser reads it.
fn spaced_after_markers(text: &str) -> Expr {
    let pieces = crate::analyze::markers::split_after_markers(text);
    let spaced = pieces.iter().enumerate().flat_map(|(i, piece)| {
        let space = (i > 0).then(Expr::space);
        space.into_iter().chain([Expr::lit(piece)])
    });
    Expr::seq(spaced.collect::<Vec<_>>())
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
        // A word may follow a space after a special token, as the parser reads it.
        let message = Expr::seq([
            Expr::space(),
            Expr::lit(&c.header_start),
            Expr::space(),
            Expr::alt(c.reasoning_channels.iter().map(|n| Expr::lit(n))),
            Expr::space(),
            Expr::lit(&c.header_end),
            Expr::excluding(c.message_ends.iter().chain([&c.header_start])),
            Expr::alt(c.message_ends.iter().map(|n| Expr::lit(n))),
            Expr::space(),
            Expr::optional(spaced_after_markers(&c.reopen)),
        ]);
        return Expr::seq([Expr::repeat(message, 0, None), Expr::space()]);
    }
    if let Some(s) = format.switch.as_ref().filter(|_| !end.is_empty()) {
        // A reasoning message before the calls: its text, the message end, and the header
        // re-opened for the calls message.
        let message = Expr::seq([
            Expr::excluding([end]),
            Expr::lit(end),
            Expr::space(),
            Expr::lit(s.header.trim()),
            Expr::space(),
        ]);
        if options.reasoning_open || start.is_empty() {
            return message;
        }
        return Expr::seq([
            Expr::space(),
            Expr::optional(Expr::seq([Expr::lit(start), message])),
        ]);
    }
    if end.is_empty() {
        return Expr::seq([Expr::space(), wrapper]);
    }
    let text_and_end = Expr::seq([Expr::excluding([end]), Expr::lit(end), Expr::space()]);
    // Reasoning without an opener (delimited by its end alone) is open from the start of the
    // output, as when the prompt opened it. (Left optional, its text would share a lexeme with
    // the calls' start that only its end marker can end.)
    if options.reasoning_open || start.is_empty() {
        return Expr::seq([text_and_end, wrapper]);
    }
    let block = Expr::seq([Expr::lit(start), text_and_end]);
    // Where the template writes the closer (or an empty block) in a turn without reasoning,
    // a model writes it before its calls too.
    let block = if format.reasoning.opened_by_turn {
        Expr::alt([block, Expr::seq([Expr::lit(end), Expr::space()])])
    } else {
        block
    };
    Expr::seq([Expr::space(), Expr::optional(block), wrapper])
}

/// The characters that may start the text after a tagged value (see the generator's
/// lookahead after verbatim strings): its suffix, else the separator or name prefix of the
/// next argument (a name character when both are blank), or the end of the arguments, call
/// or section, or what may follow a call whose end marker is left out (the next call, a
/// reasoning block opened by `reasoning_start`).
fn after_value_starts(t: &crate::analyze::ToolAnalysis, reasoning_start: &str) -> Vec<char> {
    let a = &t.arguments;
    let first = |m: &str| m.trim().chars().next();
    if let Some(c) = first(&a.value_suffix) {
        return vec![c];
    }
    let mut out: Vec<char> = t
        .after_value_markers()
        .into_iter()
        .chain([reasoning_start])
        .filter_map(first)
        .collect();
    match first(&a.separator).or_else(|| first(&a.name_prefix)) {
        Some(c) => out.push(c),
        None => out.extend(
            ('a'..='z')
                .chain('A'..='Z')
                .chain('0'..='9')
                .chain(['_', '.', '$', '-']),
        ),
    }
    out
}
