//! From a [`TurnFormat`] and the request options to a PEG [`Grammar`] for one assistant turn.
//!
//! The grammar reads the *whole turn*: the prefill (what the prompt already wrote of the turn,
//! e.g. an opened `<think>`) followed by the model output. Its shape:
//!
//! ```text
//! turn      = echo? reasoning? wrapped? body* end
//! echo      = HEADER | HEADER_LAST_MARKER                    (the model repeated the header)
//! reasoning = space stray* START tag(reasoning, until END) closes?   (tagged)
//!           | tag(reasoning, until END) closes               (delimited: no start marker; the
//!                                                          closer optional where the turn opens it)
//! closes    = END (space END)*                               (a repeated close is dropped)
//! wrapped   = CONTENT_START tag(content, until CONTENT_END) CONTENT_END?
//! body      = tools | START closes | START tag(reasoning, until END) closes
//!           | END space $ | TURN_END HEADER | TURN_END space $
//!           | tag(content, any until TRIGGERS)
//! tools     = SECTION_START call (SEP call)* SECTION_END? | call+
//! call      = &atomic(call up to its name) tag(tool, ...)
//! ```
//!
//! Every alternative of `body` that fails (a malformed call) falls back to content, so a full
//! parse never fails: text that is not a call stays content. Markers are matched without their
//! surrounding whitespace, with optional whitespace around them. Wrapped content is read only
//! where the format puts it (first, after the reasoning; with inline reasoning, right after
//! its closing marker). A closing reasoning marker or the end-of-turn marker is dropped only
//! at the end of the output; elsewhere it is the model's text. A call shows in (partial)
//! parses only once its name is complete. Without parallel calls, the first call block holds
//! one call and the rest of the turn is read without calls. A JSON call needs its name field,
//! and a bare one (no marker opens it) must name a declared tool.
//!
//! AST tags (read by the [`mapper`](super::mapper)): `reasoning`, `content`, `tool`,
//! `tool_id`, `tool_name`, `tool_args` (JSON text), `tool_arg`, `tool_arg_name`,
//! `tool_arg_value` (raw value text; string vs JSON is decided from the tool's schema).

use crate::analyze::markers::{closes_bracket, marker_pieces, marker_spans, opens_bracket, units};
use crate::analyze::slots::{self, Piece, Slot};
use crate::analyze::{ArgumentMarkers, CallIdPosition, ElementValues, ToolAnalysis, ToolFormat};
use crate::diff::SegmentKind;
use crate::peg::{BuildError, Grammar, GrammarBuilder, Parser};

use super::format::{ChannelFormat, TurnFormat};

mod switch;

/// The request options that change the grammar.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrammarOptions {
    /// Reasoning goes to `reasoning_content` (otherwise it stays inline in the content).
    pub extract_reasoning: bool,
    /// Tool calls are parsed (tools declared and `tool_choice` is not `none`).
    pub tools: bool,
    /// Several calls may follow each other.
    pub parallel_tool_calls: bool,
    /// The prefill opened reasoning (the model starts inside it).
    pub reasoning_open: bool,
    /// The input starts inside the reasoning: the prefill was exactly the reasoning start
    /// marker and is not part of the input (the grammar reads what follows it). Equivalent
    /// to reading the prefill first, since the opening branch always matches it; saves
    /// copying the output behind the prefill on every parse.
    pub starts_in_reasoning: bool,
    /// The content is a JSON value (response format with a JSON schema).
    pub json_schema: bool,
    /// The names of the tools a call may name. A bare JSON call (no marker opens it) must
    /// name one of them: without a marker, only the call's shape tells it from JSON content.
    pub tool_names: Vec<String>,
    /// The parameter names the tools declare (all tools, each once). A value that may run on
    /// over lines ends at a line that starts one of them; without any, at a line that starts
    /// any argument name.
    pub parameter_names: Vec<String>,
}

/// AST tag names shared by the grammar and the mapper.
pub mod tags {
    /// Reasoning text.
    pub const REASONING: &str = "reasoning";
    /// Content text.
    pub const CONTENT: &str = "content";
    /// One tool call.
    pub const TOOL: &str = "tool";
    /// The call id.
    pub const TOOL_ID: &str = "tool_id";
    /// The function name (raw, or a JSON string in JSON formats).
    pub const TOOL_NAME: &str = "tool_name";
    /// The arguments as JSON (or Python-dict) text.
    pub const TOOL_ARGS: &str = "tool_args";
    /// One tagged argument.
    pub const TOOL_ARG: &str = "tool_arg";
    /// A tagged argument's name.
    pub const TOOL_ARG_NAME: &str = "tool_arg_name";
    /// A tagged argument's raw value.
    pub const TOOL_ARG_VALUE: &str = "tool_arg_value";
    /// A tagged argument's raw value written with the string markers of a format whose
    /// non-string values have their own markers: always a string.
    pub const TOOL_ARG_STRING: &str = "tool_arg_string";
    /// A tagged argument's JSON value written with the non-string markers.
    pub const TOOL_ARG_JSON: &str = "tool_arg_json";
    /// A form the parser reads but a constrained-decoding grammar never writes: what models
    /// write other than the template (an alias of a key).
    pub const LENIENT: &str = "lenient";
    /// A marker's slot that repeats the argument's name (`</{key}>` after a value): the
    /// parser reads any text there; a grammar writes the argument's own name.
    pub const ARG_KEY_ECHO: &str = "tool_arg_key_echo";
}

/// The rule of values written as elements (see [`ElementValues`]); the constraint grammar
/// translation recognises it by this name.
pub const ELEMENT_LIST_RULE: &str = "element-list";

/// A built grammar and the markers that start anything but plain content.
#[derive(Debug, Clone)]
pub struct BuiltGrammar {
    /// The grammar.
    pub grammar: Grammar,
    /// Every marker whose presence can make the parse differ from "all of it is content"
    /// (tool triggers, content and reasoning markers). Output containing none of them is
    /// plain content.
    pub markers: Vec<String>,
    /// When every content node of the grammar is plain text read up to the first of these
    /// delimiters (`any`, then `until_one_of`): a text that one of them starts can then only
    /// begin a content node, never lie inside one. `None`: some content is read otherwise
    /// (wrapped content, a JSON response value, a marker kept as content, channels).
    pub content_stops: Option<Vec<String>>,
    /// What a call that opens the output may start with where no trigger marks it (its name
    /// prefix, or the arguments' brace of a format whose messages each open with the separator).
    pub bare_call_starts: Vec<String>,
    /// Calls are messages of their own (channels, role switches): one may open the output.
    pub calls_are_messages: bool,
}

/// Builds the grammar for `format` under `options`; `name` labels errors.
pub fn build_grammar(
    format: &TurnFormat,
    options: &GrammarOptions,
    name: &str,
) -> Result<BuiltGrammar, BuildError> {
    let python = options.tools
        && (format.literal_values
            || format.tools.as_ref().is_some_and(|t| {
                t.python_calls_with_quoted_values()
                    || t.json.as_ref().is_some_and(|j| j.python_dicts)
            }));
    let b = GrammarBuilder::new().name(name).python_dict(python);
    if let Some(channels) = &format.channels {
        return channel_grammar(b, channels, options);
    }
    if let Some(s) = &format.switch {
        return switch::switch_grammar(b, format, s, options);
    }
    let g = Gen {
        b: &b,
        literal_values: format.literal_values,
        tool_names: &options.tool_names,
        parameter_names: &options.parameter_names,
        reasoning_start: &format.reasoning.start,
        reasoning_end: &format.reasoning.end,
        turn_ends: turn_end_forms(&[&format.turn_end, &format.tool_turn_end]),
        part_openers: part_openers(format),
    };
    let mut triggers: Vec<String> = Vec::new();
    let mut alternatives = Vec::new();
    let mut tool_trigger = None;
    let mut tool_block = None;
    let mut bare_starts = Vec::new();
    let mut call_heads: Vec<String> = Vec::new();
    if let Some(tools) = format.tools.as_ref().filter(|_| options.tools) {
        let lead_separator = separator_leads_calls(format, tools);
        // Reasoning blocks between calls inside a call section, where the template writes
        // reasoning between calls (it splits reasoning into blocks around them).
        let (rs, re) = (format.reasoning.start.trim(), format.reasoning.end.trim());
        let interleaved = format.reasoning.block_join.is_some();
        let inner_reasoning =
            (interleaved && options.extract_reasoning && !rs.is_empty() && !re.is_empty()).then(
                || {
                    b.seq([
                        b.space(),
                        b.literal(rs),
                        b.tag(tags::REASONING, b.until(re)),
                        b.literal(re),
                    ])
                },
            );
        let ToolBlock {
            parser,
            triggers: tool_triggers,
            bare_starts: bare,
        } = g.tools(
            tools,
            options.parallel_tool_calls,
            lead_separator,
            inner_reasoning,
        );
        bare_starts = bare;
        tool_block = Some(b.trigger_rule("tool-calls", parser));
        // Content stops at a call opener's first whole marker: the text after it may be
        // spaced otherwise than the template writes it (see `Gen::loose_text`).
        for trigger in &tool_triggers {
            let head = marker_head(trigger).to_owned();
            if !triggers.contains(&head) {
                triggers.push(head);
            }
        }
        // A call opener that is a whole marker and ends the output (one the prompt wrote,
        // when the model wrote nothing after it) opened nothing: dropped, never content.
        let whole: Vec<String> = triggers
            .iter()
            .filter(|t| marker_spans(t) == [(0, t.len())])
            .cloned()
            .collect();
        if !whole.is_empty() {
            alternatives.push(g.turn_end(&whole));
        }
        call_heads.clone_from(&triggers);
        tool_trigger = Some(tool_triggers);
    }
    let (cs, ce) = (format.content.start.trim(), format.content.end.trim());
    // Wrapped content is read where the format puts it: first in the turn, after the
    // reasoning. A wrapper marker elsewhere is text.
    // Content read other than as plain text up to the triggers (see `content_stops`).
    let mut other_content = !cs.is_empty() || options.json_schema;
    let te = turn_end_forms(&[&format.turn_end, &format.tool_turn_end]);
    let wrapped = if cs.is_empty() {
        b.eps()
    } else {
        // Without a closer of its own, wrapped content runs to what can follow it: another
        // wrapper, a call, or the end of the turn.
        let text = if ce.is_empty() {
            let mut stops = vec![cs.to_owned()];
            stops.extend(triggers.iter().cloned());
            stops.extend(form_starts(&te));
            stops.dedup();
            b.until_one_of(stops)
        } else {
            // A turn end right after the content (the model skipped the closer) ends it; one
            // with more text after it is content. A call opener that starts with a whole marker
            // ends it too (a model that calls right after a content block the prompt opened);
            // bare call text (`{"name"`) does not.
            let marker_heads: Vec<String> = call_heads
                .iter()
                .filter(|h| marker_spans(h).first().is_some_and(|&(at, _)| at == 0))
                .cloned()
                .collect();
            g.until_closer_or_final_turn_end(ce, &marker_heads, &te)
        };
        // Where the turn's header is the call opener (every message opens with it and what
        // follows picks its kind: `<|recipient|>NAME` or `<|recipient|>all<|content|>`), the
        // content message is led by that opener, which the prompt wrote.
        let opener = format
            .tools
            .as_ref()
            .map(|t| t.per_call_start.trim())
            .filter(|o| !o.is_empty() && format.turn_start.trim().ends_with(o));
        let lead = match opener {
            Some(o) => b.optional(b.seq([b.space(), b.literal(o)])),
            None => b.eps(),
        };
        // The opener written again right after it (after a prompt that already opened the
        // content) opens nothing and is dropped, unless closed right away.
        let repeated = if ce.is_empty() {
            b.zero_or_more(b.seq([b.space(), b.literal(cs)]))
        } else {
            let closed = b.seq([b.space(), b.literal(ce)]);
            b.zero_or_more(b.seq([b.space(), b.literal(cs), b.negate(closed)]))
        };
        let wrapped = b.seq([
            lead,
            b.space(),
            b.literal(cs),
            repeated,
            b.tag(tags::CONTENT, text),
            b.optional(g.lit(ce)),
        ]);
        let re = format.reasoning.end.trim();
        if !options.extract_reasoning && !re.is_empty() {
            // Reasoning kept inline is content: the wrapper follows its closing marker.
            alternatives.push(b.seq([b.tag(tags::CONTENT, b.literal(re)), wrapped]));
            other_content = true;
            triggers.push(re.to_owned());
        }
        b.optional(wrapped)
    };
    if options.json_schema {
        // A response-format JSON value inside a Markdown code fence: the fence is dropped.
        alternatives.push(b.seq([
            b.literal("```"),
            b.chars("[a-zA-Z]", 0, None),
            b.space(),
            b.tag(tags::CONTENT, b.json()),
            b.space(),
            b.literal("```"),
        ]));
        triggers.push("```".to_owned());
    }
    let (rs, re) = (format.reasoning.start.trim(), format.reasoning.end.trim());
    if options.extract_reasoning && !re.is_empty() {
        // Reasoning markers after the reasoning: an empty block is dropped (with a closing
        // marker the model repeated right after it), and so is a closing marker at the end of
        // the output. A closing marker elsewhere is the model's text and stays content.
        if !rs.is_empty() {
            alternatives.push(b.seq([b.literal(rs), g.closes(re)]));
            if format.reasoning.block_join.is_some() {
                // Where the template writes reasoning blocks between the turn's other parts
                // (interleaved thinking), a later opener is the format's marker as a call
                // opener is: its block is reasoning as it streams, up to its closer or, left
                // open, the end of the output.
                let block = || b.seq([b.literal(rs), b.tag(tags::REASONING, b.until(re))]);
                alternatives.push(b.seq([block(), g.closes(re)]));
                alternatives.push(b.seq([block(), b.end()]));
            } else {
                // A later, closed reasoning block is reasoning too (held back until it
                // closes: an opener the template never writes there may be the model's text).
                alternatives.push(b.seq([
                    b.literal(rs),
                    b.peek(b.seq([b.until(re), b.literal(re)])),
                    b.tag(tags::REASONING, b.until(re)),
                    g.closes(re),
                ]));
            }
            triggers.push(rs.to_owned());
        }
        // A closing marker that ends the output closes nothing the model still says: dropped.
        alternatives.push(g.turn_end(&[re.to_owned()]));
        triggers.push(re.to_owned());
    }
    if !cs.is_empty() && !ce.is_empty() && !triggers.iter().any(|t| t == ce) {
        // A content closer that ends the output, where no opener opened it (the prompt did,
        // or the model left it out): it closes nothing the model still says, and is dropped.
        alternatives.push(g.turn_end(&[ce.to_owned()]));
        triggers.push(ce.to_owned());
    }
    if !te.is_empty() {
        // A turn end followed by the assistant header re-opens the message (a template that
        // renders parts of one turn as several assistant messages): both are dropped.
        let headers: Vec<String> = header_echoes(&format.turn_start)
            .into_iter()
            .filter(|h| !te.iter().any(|t| t == h))
            .collect();
        if !headers.is_empty() {
            alternatives.push(b.seq([
                b.space(),
                b.choice(te.iter().map(|t| b.literal(t))),
                b.space(),
                b.choice(headers.iter().map(|h| b.literal(h))),
            ]));
        }
        // An end-of-turn marker the server did not strip ends the turn (only at the end: one
        // in the middle of the output stays content), and so does one right before a call (a
        // template that ends the content's turn before the calls: `text<|end|>\ncall…`). A
        // constrained model never writes that one (it would stop there).
        alternatives.push(g.turn_end(&te));
        if !call_heads.is_empty() {
            alternatives.push(b.tag(
                tags::LENIENT,
                b.seq([
                    b.space(),
                    b.choice(te.iter().map(|t| b.literal(t))),
                    b.space(),
                    b.peek(b.choice(call_heads.iter().map(|h| b.literal(h)))),
                ]),
            ));
        }
        for start in form_starts(&te) {
            if !triggers.contains(&start) {
                triggers.push(start);
            }
        }
    }
    // Markers that wrap tool results, where the model imitates a tool's answer: no field
    // holds them, the text between them stays content. A marker the format reads otherwise
    // (a reasoning or content marker, a call opener) keeps that reading. Read, never written
    // (a constrained model imitates no tool); the tag is entered once the marker is whole.
    let structural = [rs, re, cs, ce];
    let result_markers: Vec<&str> = format
        .tool_result_markers
        .iter()
        .map(|m| m.trim())
        .filter(|m| !m.is_empty() && !structural.contains(m) && !call_heads.iter().any(|h| h == m))
        .collect();
    if !result_markers.is_empty() {
        let marker = || b.choice(result_markers.iter().map(|m| b.literal(m)));
        alternatives.push(b.seq([b.peek(marker()), b.tag(tags::LENIENT, marker())]));
        for m in result_markers {
            if !triggers.iter().any(|t| t == m) {
                triggers.push(m.to_owned());
            }
        }
    }
    other_content |= triggers.is_empty();
    let content_stops = (!other_content).then(|| triggers.clone());
    let plain = if triggers.is_empty() {
        b.tag(tags::CONTENT, b.rest())
    } else {
        b.tag(tags::CONTENT, b.seq([b.any(), b.until_one_of(&triggers)]))
    };
    alternatives.push(plain);
    let body = turn_body(&b, tool_block, alternatives, options.parallel_tool_calls);
    if tool_trigger.is_none() {
        tool_trigger = unoffered_call_markers(format);
    }
    let mut reasoning = g.reasoning(format, options, tool_trigger.as_deref(), &te);
    if !options.extract_reasoning && !cs.is_empty() && !rs.is_empty() {
        // Reasoning kept inline, but the model skipped it: the opener (written by the
        // prompt) right before the content wrapper opened nothing; it is dropped.
        let skipped = b.seq([b.space(), b.literal(rs), b.space(), b.peek(b.literal(cs))]);
        reasoning = b.choice([skipped, reasoning]);
    }
    // A header that holds a format marker (an opened `<think>`) is not repeated: the marker
    // is the format's.
    let mut format_markers: Vec<&str> = vec![
        format.reasoning.start.trim(),
        format.reasoning.end.trim(),
        cs,
        ce,
    ];
    format_markers.extend(triggers.iter().map(String::as_str));
    format_markers.retain(|m| !m.is_empty());
    let mut echoes = header_echoes(&format.turn_start);
    echoes.retain(|e| !format_markers.iter().any(|m| e.contains(m)));
    let echo = if echoes.is_empty() {
        b.eps()
    } else {
        b.optional(b.seq([b.space(), b.choice(echoes.iter().map(|e| b.literal(e)))]))
    };
    // A header echo precedes the reasoning opener, so none follows an opener the prefill
    // wrote.
    let root = if options.starts_in_reasoning {
        b.seq([reasoning, wrapped, body, b.end()])
    } else {
        b.seq([echo, reasoning, wrapped, body, b.end()])
    };
    let bare_call_starts = bare_starts.clone();
    let mut markers = triggers;
    markers.extend(echoes);
    markers.extend(bare_starts);
    if !cs.is_empty() {
        markers.push(cs.to_owned());
    }
    if options.extract_reasoning {
        // The opener's leading token opens the block alone too (see `Gen::opener`).
        let lead = crate::diff::segments(rs)
            .next()
            .filter(|s| s.kind == SegmentKind::Marker)
            .map_or("", |s| s.text);
        markers.extend(
            [rs, lead, format.reasoning.end.trim()]
                .into_iter()
                .filter(|m| !m.is_empty())
                .map(str::to_owned),
        );
    }
    markers.sort();
    markers.dedup();
    Ok(BuiltGrammar {
        grammar: b.build(root)?,
        markers,
        content_stops,
        bare_call_starts,
        calls_are_messages: false,
    })
}

/// A tool-call block of the grammar and what starts it.
struct ToolBlock {
    parser: Parser,
    /// The texts a call starts with, where content stops.
    triggers: Vec<String>,
    /// What a call that opens the output (right after the turn header) may start with where
    /// no trigger marks it, and content elsewhere does not stop: the arguments' brace of a
    /// format whose messages each open with the separator; the name prefix of a call whose
    /// opener the model left out.
    bare_starts: Vec<String>,
}

/// The loop over a turn's parts: the call block first, then `alternatives`. Without parallel
/// calls, the first call block holds one call and the rest of the turn is read without calls
/// (another call stays content, and the parse reports it).
fn turn_body(
    b: &GrammarBuilder,
    tool_block: Option<Parser>,
    mut alternatives: Vec<Parser>,
    parallel: bool,
) -> Parser {
    match tool_block {
        Some(block) if parallel => alternatives.insert(0, block),
        Some(block) => {
            let after = b.zero_or_more(b.choice(alternatives.clone()));
            alternatives.insert(0, b.seq([block, after]));
        }
        None => {}
    }
    b.zero_or_more(b.choice(alternatives))
}

/// The forms of the turn ends (of content turns and of tool-call turns) a model or server
/// may leave at the end of the output, longest first: each whole turn end, each of its
/// prefixes that ends with a marker (`<|end|>` of `<|end|>\n</s>`, whose `</s>` the server
/// stripped), and each of its suffixes that starts with one (`</s>` alone: the model wrote the
/// end-of-sequence token without the turn's own end).
fn turn_end_forms(turn_ends: &[&str]) -> Vec<String> {
    let mut forms: Vec<String> = Vec::new();
    let mut add = |form: &str| {
        let form = form.trim();
        if !form.is_empty() && !forms.iter().any(|f| f == form) {
            forms.push(form.to_owned());
        }
    };
    for te in turn_ends.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        add(te);
        // Every run of whole markers the turn end starts or ends with (a model stops after
        // the first ones, or a server has removed the first ones).
        let pieces = marker_pieces(te);
        let offset = |piece: &str| piece.as_ptr() as usize - te.as_ptr() as usize;
        for piece in pieces.iter().filter(|p| closes_bracket(p)) {
            add(&te[..offset(piece) + piece.len()]);
        }
        for piece in pieces.iter().skip(1).filter(|p| opens_bracket(p)) {
            add(&te[offset(piece)..]);
        }
    }
    forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    forms
}

/// The texts the forms of a turn end start with (their first marker sequences): where text
/// read up to a possible turn end stops.
fn form_starts(forms: &[String]) -> Vec<String> {
    let mut starts: Vec<String> = Vec::new();
    for form in forms {
        let first = marker_pieces(form)
            .first()
            .map_or(form.as_str(), |u| u.trim())
            .to_owned();
        if !first.is_empty() && !starts.contains(&first) {
            starts.push(first);
        }
    }
    starts
}

/// What a model may repeat of the turn header at the start of its output: the whole header,
/// and its last marker when the header ends with one (`<|CHATBOT_TOKEN|>` of
/// `<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>`); longest first.
fn header_echoes(header: &str) -> Vec<String> {
    let header = header.trim();
    let mut echoes = Vec::new();
    if header.is_empty() {
        return echoes;
    }
    echoes.push(header.to_owned());
    if let Some(last) = units(header)
        .pop()
        .filter(|u| u.ends_with(['>', ']']) && *u != header)
    {
        echoes.push(last.to_owned());
    }
    echoes
}

/// The distinct cores of `markers` (whitespace trimmed, cut before their first
/// [slot](crate::analyze::slots)), blank ones left out: the texts that start them.
fn marker_set<'m>(markers: impl IntoIterator<Item = &'m str>) -> Vec<&'m str> {
    let mut set: Vec<&str> = Vec::new();
    for m in markers.into_iter().map(stop_text) {
        if !m.is_empty() && !set.contains(&m) {
            set.push(m);
        }
    }
    set
}

/// Whether the call separator of `tools` also leads a first call: it separates messages (it
/// holds a marker), or the turn header itself ends with it (every message opens with it).
pub(crate) fn separator_leads_calls(format: &TurnFormat, tools: &ToolAnalysis) -> bool {
    let sep = tools.call_separator.trim();
    !sep.is_empty() && (separates_messages(sep) || format.turn_start.trim_end().ends_with(sep))
}

/// Whether a call separator ends one message and starts the next (it holds a marker), rather
/// than only spacing calls apart.
fn separates_messages(separator: &str) -> bool {
    crate::diff::segments(separator).any(|s| s.kind == crate::diff::SegmentKind::Marker)
}

/// A name read up to one of `stops`: a function or argument name never holds whitespace or
/// markup (`<`, `>`, `/`), so those end it too (a marker look-alike in the text before a call
/// is not read as part of the name, nor is a closing tag `</call>` read as an argument).
fn word_until<'s>(b: &GrammarBuilder, stops: impl IntoIterator<Item = &'s str>) -> Parser {
    let all = word_stops(stops);
    // A name is never empty: text right before a stop names nothing.
    b.seq([
        b.negate(b.choice(all.iter().map(|s| b.literal(s)))),
        b.any(),
        b.until_one_of(all),
    ])
}

/// An element's name (a key of an object the template writes as elements), up to one of
/// `stops`: words (see [`word_until`]) with one space between them, as the template writes
/// keys that hold spaces (`<Model Name>`).
fn element_name<'s>(
    b: &GrammarBuilder,
    stops: impl IntoIterator<Item = &'s str> + Clone,
) -> Parser {
    let word = || word_until(b, stops.clone());
    b.seq([word(), b.zero_or_more(b.seq([b.literal(" "), word()]))])
}

/// What ends a word read by [`word_until`]: the given stops, whitespace, a tag's brackets and
/// a list's opening bracket (content ending in `[TOOL` before a `[` call list is no name).
fn word_stops<'s>(stops: impl IntoIterator<Item = &'s str>) -> Vec<&'s str> {
    let mut all: Vec<&str> = stops.into_iter().filter(|s| !s.is_empty()).collect();
    for ws in [" ", "\n", "\t", "\r", "<", ">", "/", "["] {
        if !all.contains(&ws) {
            all.push(ws);
        }
    }
    all
}

/// `c` escaped for a character class.
fn regex_escape(c: &str) -> String {
    c.chars()
        .flat_map(|ch| {
            let escape = matches!(ch, '\\' | ']' | '[' | '^' | '-').then_some('\\');
            escape.into_iter().chain([ch])
        })
        .collect()
}

/// Whether a value's end marker is text a value may well hold: at most two characters, none
/// of them a letter or digit (a quote, `, `, `)`), unlike a tag (`</parameter>`). Such values
/// are read by what follows them (see `Gen::guided_text`).
fn weak_end(end: &str) -> bool {
    // The whole marker: a slot (`</{key}>`) makes a tag.
    let core = end.trim();
    !core.is_empty()
        && core.chars().count() <= 2
        && !core
            .chars()
            .any(|c| c.is_alphanumeric() || slots::Slot::of(c).is_some())
}

/// With no tools offered: the call openers of the template's format that are whole markers
/// (`<tool_call>`, never a brace or a bare name prefix). The model may still write a call, and
/// one right after reasoning it left unclosed ends that reasoning (the call is no thought);
/// with no tools to parse it into, the call stays content as written.
fn unoffered_call_markers(format: &TurnFormat) -> Option<Vec<String>> {
    let tools = format.tools.as_ref()?;
    let (openers, _) = call_openers(tools, separator_leads_calls(format, tools));
    let whole: Vec<String> = openers
        .into_iter()
        .filter(|t| marker_spans(t) == [(0, t.len())])
        .collect();
    (!whole.is_empty()).then_some(whole)
}

/// The Markdown code fence a model may write bare JSON calls in (see [`fenced_calls_read`]).
const CODE_FENCE: &str = "```";

/// Whether calls of `t` are bare JSON (no marker opens them): a model may write them in a
/// Markdown code fence (```` ```json ````), as it writes JSON in chat. Read, never written.
fn fenced_calls_read(t: &ToolAnalysis) -> bool {
    t.format == ToolFormat::JsonNative
        && t.section_start.trim().is_empty()
        && stop_text(&t.per_call_start).is_empty()
        && t.stated_wrapper.is_none()
}

/// What a call of `t` starts with: the triggers (texts where content stops and a call is
/// read) and the bare starts (what a call right after the turn header may start with where no
/// trigger marks it). `lead_separator`: every message, the first call's too, opens with the
/// call separator (see [`Gen::tools`]).
fn call_openers(t: &ToolAnalysis, lead_separator: bool) -> (Vec<String>, Vec<String>) {
    let ss = t.section_start.trim();
    let array = t.json.as_ref().is_some_and(|j| j.array_wrapped);
    let lead_separator = ss.is_empty() && lead_separator;
    let mut triggers: Vec<String> = Vec::new();
    let mut add = |m: &str| {
        let m = stop_text(m);
        if !m.is_empty() && !triggers.iter().any(|t| t == m) {
            triggers.push(m.to_owned());
        }
    };
    if let Some(w) = &t.stated_wrapper {
        add(marker_head(w.open.trim()));
    }
    if !ss.is_empty() {
        add(ss);
        if !array {
            add(&t.per_call_start);
        }
    } else if array {
        add(&t.per_call_start);
        add("[");
    } else {
        add(&t.per_call_start);
        if t.call_id.position == CallIdPosition::PreFuncName {
            add(&t.call_id.prefix);
        }
        add(&t.function.name_prefix);
        if t.format == ToolFormat::JsonNative && t.per_call_start.trim().is_empty() {
            add("{");
        }
    }
    // With no marker of its own, a call is found by its arguments' brace, unless every
    // message opens with the separator (the turn header ends with it): then a call after
    // other text starts there, and a brace in the text is the text's. A call may still
    // open the output, right after the header: the brace only tells that one apart.
    let mut bare_starts = Vec::new();
    if triggers.is_empty() {
        if lead_separator && !stop_text(&t.call_separator).is_empty() {
            bare_starts.push("{".to_owned());
        } else {
            triggers.push("{".to_owned());
        }
    }
    if lead_separator {
        let sep = stop_text(&t.call_separator).to_owned();
        if !sep.is_empty() && !triggers.contains(&sep) {
            triggers.insert(0, sep);
        }
    }
    if fenced_calls_read(t) && !triggers.is_empty() {
        triggers.push(CODE_FENCE.to_owned());
    }
    // A call whose opener the model left out starts with its name prefix (see
    // `tag_call`); content stops only at the opener, but the output may open with it.
    if t.format != ToolFormat::JsonNative
        && !stop_text(&t.per_call_start).is_empty()
        && !stop_text(&t.function.name_prefix).is_empty()
    {
        bare_starts.push(stop_text(&t.function.name_prefix).to_owned());
    }
    (triggers, bare_starts)
}

/// A marker text up to the first place where [`Gen::loose_text`] matches any whitespace
/// (`<|calls|>` of `<|calls|>[`); the whole text when there is none.
/// The text a slot's value runs up to: the head of the fixed text after it (never empty:
/// where whitespace may come first, the text up to the next place it may come).
fn slot_end(next: &str) -> &str {
    let next = next.trim();
    loose_gaps(next)
        .iter()
        .map(|&(start, _)| start)
        .find(|&start| start > 0)
        .map_or(next, |start| &next[..start])
}

fn marker_head(text: &str) -> &str {
    match loose_gaps(text).first() {
        Some(&(start, _)) => &text[..start],
        None => text,
    }
}

/// Argument values end with their line break alone (a blank value suffix holding it, no
/// separator: `KEY => VALUE` lines).
fn ended_by_line(separator: &str, value_suffix: &str) -> bool {
    separator.is_empty() && value_suffix.trim().is_empty() && value_suffix.contains('\n')
}

/// A value end that is a line break alone (blank, holding one): the value suffix where there is
/// no separator, or the separator (`KEY: VALUE` lines): a value written raw may span lines.
fn line_end(end: &str) -> bool {
    end.trim().is_empty() && end.contains('\n')
}

/// The places inside `text` where [`Gen::loose_text`] matches any whitespace, as byte ranges
/// of the whitespace written there (empty where none is written), in order: next to each whole
/// marker, where whitespace is written or where the text on the other side is not a word; and
/// each run of whitespace holding a line break between other text.
fn loose_gaps(text: &str) -> Vec<(usize, usize)> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut gaps: Vec<(usize, usize)> = Vec::new();
    let spans = marker_spans(text);
    for &(start, end) in &spans {
        let before = &text[..start];
        let lead = before.trim_end().len();
        if lead > 0 && (lead < start || !word(before.chars().next_back())) {
            gaps.push((lead, start));
        }
        let after = &text[end..];
        let trail = end + (after.len() - after.trim_start().len());
        if trail < text.len() && (trail > end || !word(after.chars().next())) {
            gaps.push((end, trail));
        }
    }
    // A line break written between two words or signs outside a marker (`Action:⏎```json`):
    // models write a space there, or none.
    let mut from = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), from) {
            (true, None) => from = Some(i),
            (false, Some(start)) => {
                let run = &text[start..i];
                let inside = spans.iter().any(|&(s, e)| s < start && i < e);
                if start > 0 && run.contains('\n') && !inside {
                    gaps.push((start, i));
                }
                from = None;
            }
            _ => {}
        }
    }
    gaps.sort_unstable();
    gaps.dedup();
    // Overlapping gaps (a line break next to a marker) are one.
    gaps.dedup_by(|next, kept| {
        let overlap = next.0 <= kept.1;
        if overlap {
            kept.1 = kept.1.max(next.1);
        }
        overlap
    });
    // Gaps never overlap (each is whitespace next to a marker, or empty at its edge).
    gaps.retain(|&(s, _)| s > 0);
    gaps
}

/// The characters of an argument name read without a marker after it (a Python keyword, a
/// bare key of a literal object).
const ARGUMENT_NAME_CHARS: &str = "[A-Za-z0-9_.$-]";

/// The characters of a word a slot or an id holds where no fixed text ends it (a name, a
/// type, a call id: `functions.get-weather:0`).
const WORD_CHARS: &str = "[A-Za-z0-9_.:\\-]";

/// The two names JSON tool calls give their arguments object (OpenAI's `arguments`, the JSON
/// schema's `parameters`, which Llama-style calls use): models trained on one write the other
/// too, so either is read where the template writes one of them.
const ARGUMENT_FIELD_NAMES: [&str; 2] = ["arguments", "parameters"];

/// The keys read as a call's arguments: the template's own first, then its alias.
fn argument_fields(field: &str) -> impl Iterator<Item = &str> {
    let alias = ARGUMENT_FIELD_NAMES
        .contains(&field)
        .then(|| {
            ARGUMENT_FIELD_NAMES
                .into_iter()
                .filter(move |f| *f != field)
        })
        .into_iter()
        .flatten();
    std::iter::once(field).chain(alias)
}

/// Where a tagged value ends when the model may leave its closing marker out.
struct UnclosedValue {
    /// The value suffix, with its leading whitespace, then without.
    suffix: Vec<String>,
    /// Where the value text stops: the value suffix (with its leading whitespace, then
    /// without), then each of `next` (with the suffix's leading whitespace, then without).
    stops: Vec<String>,
    /// What may follow a value whose suffix is left out: the next argument's name prefix, the
    /// end of the arguments or of the call.
    next: Vec<String>,
}

/// The [`UnclosedValue`] of a tagged format: only where the value suffix and what may follow
/// the value are whole markers (`</param>`, or the opener of one, `<param=`), so text a value
/// holds does not end it; `None` for other formats.
fn unclosed_value(t: &ToolAnalysis, args_end: &[&str]) -> Option<UnclosedValue> {
    let a = &t.arguments;
    if a.value_wrapper.is_some() || a.element_values.is_some() || a.non_string.is_some() {
        return None;
    }
    // A whole marker, or a marker opener whose name follows it (`<param=`).
    let whole = |m: &str| {
        marker_spans(m).first().is_some_and(|&(s, _)| s == 0)
            || (opens_bracket(m) && m.chars().count() > 1 && !m.contains(char::is_whitespace))
    };
    let suffix = stop_text(&a.value_suffix);
    let prefix = stop_text(&a.name_prefix);
    // The name prefix may also be a tag's opening up to an attribute (`<parameter name="`):
    // a bracket, then a word, on one line.
    let tag_head = |m: &str| {
        let mut chars = m.chars();
        opens_bracket(m)
            && chars.nth(1).is_some_and(char::is_alphabetic)
            && !m.contains(['\n', '\r'])
    };
    if slots::has_slots(&a.value_suffix)
        || !whole(suffix)
        || !(whole(prefix) || tag_head(prefix))
        || prefix == suffix
    {
        return None;
    }
    let exact = a.value_suffix.trim_end();
    // The whitespace the template writes before the suffix ends the value before the other
    // stops too (`Dallas⏎<param=`).
    let lead = &exact[..exact.len() - suffix.len()];
    let suffix_forms = vec![exact.to_owned(), suffix.to_owned()];
    let mut stops = suffix_forms.clone();
    let mut next: Vec<String> = vec![prefix.to_owned()];
    for m in args_end.iter().copied().filter(|m| whole(m)) {
        if !next.iter().any(|n| n == m) {
            next.push(m.to_owned());
        }
    }
    for m in &next {
        for form in [format!("{lead}{m}"), m.clone()] {
            if !stops.contains(&form) {
                stops.push(form);
            }
        }
    }
    Some(UnclosedValue {
        suffix: suffix_forms,
        stops,
        next,
    })
}

/// Whether `text` is a namespace written before a name: a word and a dot (`functions.`).
fn is_namespace(text: &str) -> bool {
    text.strip_suffix('.').is_some_and(|word| {
        word.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && word.chars().all(|c| c.is_alphanumeric() || c == '_')
    })
}

/// The fixed text a marker starts with (whitespace trimmed, up to its first slot): where a
/// text read up to the marker stops.
fn stop_text(marker: &str) -> &str {
    slots::head(marker.trim()).trim_end()
}

/// Where a name (a word) before `marker` stops: the marker's fixed text before any slot, up
/// to the first place where it may be spaced otherwise (see [`marker_head`]).
fn word_stop(marker: &str) -> &str {
    marker_head(stop_text(marker))
}

struct Gen<'a> {
    b: &'a GrammarBuilder,
    literal_values: bool,
    tool_names: &'a [String],
    /// The declared parameter names (see [`GrammarOptions::parameter_names`]).
    parameter_names: &'a [String],
    /// The reasoning opener (reasoning may come between calls).
    reasoning_start: &'a str,
    /// The reasoning closer (a stray one may follow the last call).
    reasoning_end: &'a str,
    /// The forms of the turn end (see [`turn_end_forms`]): one may follow the last call.
    turn_ends: Vec<String>,
    /// The openers of reasoning and content messages ([`part_openers`]): no call starts
    /// with one, even where the call's own opener starts it (`send=` of `send=mind::`).
    part_openers: Vec<String>,
}

/// The openers of the parts of a turn other than calls: reasoning, and content (a wrapper's
/// or a role switch's content message), trimmed, the empty ones left out.
pub(crate) fn part_openers(format: &TurnFormat) -> Vec<String> {
    let switch = format.switch.as_ref().map_or("", |s| s.content.as_str());
    [
        format.reasoning.start.as_str(),
        format.content.start.as_str(),
        switch,
    ]
    .into_iter()
    .map(str::trim)
    .filter(|o| !o.is_empty())
    .map(str::to_owned)
    .collect()
}

impl Gen<'_> {
    /// Marker text matched exactly: literal text, and each [slot](crate::analyze::slots) as
    /// what it stands for (digits for a counter; a type, the repeated name or key as text up
    /// to the fixed text after it).
    fn text(&self, marker: &str) -> Parser {
        let b = self.b;
        if !slots::has_slots(marker) {
            return self.loose_text(marker);
        }
        let pieces = slots::pieces(marker);
        let parts = pieces.iter().enumerate().map(|(i, piece)| match piece {
            Piece::Text(t) => self.loose_text(t),
            Piece::Slot(Slot::Counter) => b.chars("[0-9]", 1, None),
            // The argument's name repeated (tagged: a grammar writes that name).
            Piece::Slot(Slot::Key) => b.tag(
                tags::ARG_KEY_ECHO,
                match pieces.get(i + 1) {
                    Some(Piece::Text(next)) if !next.trim().is_empty() => b.until(slot_end(next)),
                    _ => b.chars(WORD_CHARS, 1, None),
                },
            ),
            // A type is a word, or what a template writes for a declared schema
            // (`array[string]`, `string|null`): text up to the fixed text after it.
            Piece::Slot(Slot::Type | Slot::Name) => match pieces.get(i + 1) {
                Some(Piece::Text(next)) if !next.trim().is_empty() => b.until(slot_end(next)),
                // A type last: words joined by `|`, each with an optional `[…]` (its items).
                _ if *piece == Piece::Slot(Slot::Type) => {
                    let word = b.seq([
                        b.chars(WORD_CHARS, 1, None),
                        b.optional(b.seq([b.literal("["), b.until("]"), b.literal("]")])),
                    ]);
                    b.seq([word, b.zero_or_more(b.seq([b.literal("|"), word]))])
                }
                _ => b.chars(WORD_CHARS, 1, None),
            },
        });
        b.seq(parts.collect::<Vec<_>>())
    }

    /// Fixed marker text, with any whitespace where a whole marker (`<|x|>`, `[X]`, `【x】`)
    /// meets the text next to it: a tokenizer may write a space or a line break there, or none,
    /// whatever the template writes (`<|calls|> [` for `<|calls|>[`, `</k><v>` for
    /// `</k>\n<v>`). A word glued to a marker stays glued (`[CHANNEL]call`), and whitespace
    /// elsewhere in the text is matched as written.
    fn loose_text(&self, text: &str) -> Parser {
        let b = self.b;
        let gaps = loose_gaps(text);
        if gaps.is_empty() {
            return b.literal(text);
        }
        let mut parts = Vec::new();
        let mut at = 0;
        for (start, end) in gaps {
            if start > at {
                parts.push(b.literal(&text[at..start]));
            }
            parts.push(b.space());
            at = end;
        }
        if at < text.len() {
            parts.push(b.literal(&text[at..]));
        }
        b.seq(parts)
    }

    /// A marker matched without its surrounding whitespace, with optional whitespace around it
    /// (only whitespace when the marker is blank).
    fn lit(&self, marker: &str) -> Parser {
        let b = self.b;
        let core = marker.trim();
        if core.is_empty() {
            return b.space();
        }
        b.seq([b.space(), self.text(core), b.space()])
    }

    /// A marker with optional whitespace before it only.
    fn lit_before(&self, marker: &str) -> Parser {
        let b = self.b;
        let core = marker.trim();
        if core.is_empty() {
            return b.eps();
        }
        b.seq([b.space(), self.text(core)])
    }

    /// A marker with optional whitespace before it, then at most its own trailing whitespace
    /// (the text after it may start with meaningful whitespace).
    fn lit_exact_after(&self, marker: &str) -> Parser {
        let b = self.b;
        let core = marker.trim();
        if core.is_empty() {
            return b.eps();
        }
        let trailing = &marker[marker.trim_end().len()..];
        let after = if trailing.is_empty() {
            b.eps()
        } else {
            b.optional(b.literal(trailing))
        };
        b.seq([b.space(), self.text(core), after])
    }

    /// What closes a tagged value: its suffix, or where bare values are ended by their line
    /// break alone (the suffix, [`ended_by_line`], or the separator, [`line_end`]), that line
    /// break (or the end of the output, or a turn end that ends it), so the value never runs into the text after it on
    /// the same line. Quoted literal values end at
    /// their quotes and may share a line.
    fn value_close(&self, a: &ArgumentMarkers, suffix: &str) -> Parser {
        let b = self.b;
        let raw_lines = ended_by_line(&a.separator, suffix)
            || (a.string_open.is_empty() && line_end(&a.separator) && suffix.trim().is_empty());
        if !self.literal_values && raw_lines {
            // Or the turn end that ends the output (the model stopped right after the value).
            let final_turn_end = if self.turn_ends.is_empty() {
                b.end()
            } else {
                b.peek(self.turn_end(&self.turn_ends))
            };
            return b.choice([b.literal("\n"), b.end(), final_turn_end]);
        }
        // The value is read up to the suffix's fixed text exactly (see `until_marker`): that
        // text is written exactly too, even where it holds several markers (`]<]x[>[</`), so
        // that no whitespace between them makes the value run on.
        let core = stop_text(suffix);
        let whole = suffix.trim();
        if !loose_gaps(core).is_empty() && whole.starts_with(core) {
            return b.seq([b.space(), b.literal(core), self.text(&whole[core.len()..])]);
        }
        self.lit_before(suffix)
    }

    /// Text up to a marker: stops at the marker with its leading whitespace, or at its core
    /// (the fixed text before a slot).
    fn until_marker(&self, marker: &str) -> Parser {
        let core = stop_text(marker);
        if core.is_empty() && marker.contains('\n') {
            // Ended by a line break alone (`key => value` lines): the text of the line.
            return self.b.until("\n");
        }
        let exact = slots::head(marker.trim_end());
        if exact != core && !exact.is_empty() {
            self.b.until_one_of([exact, core])
        } else {
            self.b.until(core)
        }
    }

    /// A trailing end-of-turn marker: one of `forms` (longest first), then only whitespace to
    /// the end.
    /// Text up to `closer` or one of `also`, or up to a turn end (`forms`) that ends the
    /// output; a turn end with more text after it is text. Without a turn end other than
    /// `closer`, text up to `closer` or one of `also`.
    fn until_closer_or_final_turn_end(
        &self,
        closer: &str,
        also: &[String],
        forms: &[String],
    ) -> Parser {
        let b = self.b;
        let starts: Vec<String> = form_starts(forms)
            .into_iter()
            .filter(|f| !f.starts_with(closer))
            .collect();
        let mut stops = vec![closer.to_owned()];
        stops.extend(also.iter().filter(|a| !a.is_empty()).cloned());
        if starts.is_empty() {
            return b.until_one_of(stops);
        }
        stops.extend(starts.iter().cloned());
        let inside = b.seq([
            b.peek(b.choice(starts.iter().map(|t| b.literal(t)))),
            b.negate(self.turn_end(forms)),
            b.any(),
            b.until_one_of(stops.clone()),
        ]);
        b.seq([b.until_one_of(stops), b.zero_or_more(inside)])
    }

    fn turn_end(&self, forms: &[String]) -> Parser {
        let b = self.b;
        b.seq([
            b.space(),
            b.choice(forms.iter().map(|f| b.literal(f))),
            b.space(),
            b.end(),
        ])
    }

    fn reasoning(
        &self,
        format: &TurnFormat,
        options: &GrammarOptions,
        tool_triggers: Option<&[String]>,
        turn_end: &[String],
    ) -> Parser {
        let b = self.b;
        let r = &format.reasoning;
        // Reasoning kept inline (`reasoning_format: none`) is read as the same block, markers
        // and all, but as content: a call written inside it is its text, as with reasoning
        // extracted. Only a marked block: unmarked reasoning is content as it comes.
        let inline = !options.extract_reasoning;
        if !r.is_enabled() || (inline && (r.start.trim().is_empty() || r.end.trim().is_empty())) {
            return b.eps();
        }
        let tag = |p: Parser| if inline { p } else { b.tag(tags::REASONING, p) };
        let (start, end) = (r.start.trim(), r.end.trim());
        let mut stops = vec![r.end.trim_end().to_owned(), end.to_owned()];
        // What ends unclosed reasoning: a call, or the content wrapper's opener (the model
        // skipped the closer).
        let mut triggers: Vec<String> = tool_triggers.unwrap_or_default().to_vec();
        let content_start = format.content.start.trim();
        if !content_start.is_empty() && !triggers.iter().any(|t| t == content_start) {
            triggers.push(content_start.to_owned());
        }
        stops.extend(triggers.iter().cloned());
        let turn_end_starts = form_starts(turn_end);
        stops.extend(turn_end_starts.iter().cloned());
        stops.dedup();
        // A call (or content opener) inside reasoning ends it only when no closing marker
        // follows (the model skipped it); otherwise the text is reasoning. The lookahead is need-more until
        // the closing marker or the end of the output, so streams hold the text back rather
        // than retract it. An end-of-turn marker ends it only at the end of the output.
        let mut continuations = Vec::new();
        if !triggers.is_empty() {
            let at_trigger = b.peek(b.choice(triggers.iter().map(|t| b.literal(t))));
            let closed_later = b.peek(b.seq([b.until(end), b.literal(end)]));
            // Not where the reasoning closes (a trigger may start like the closer).
            continuations.push(b.seq([at_trigger, b.negate(b.literal(end)), closed_later]));
        }
        if !turn_end_starts.is_empty() {
            // Not where the reasoning closes (a turn end may start like the closer).
            continuations.push(b.seq([
                b.peek(b.choice(turn_end_starts.iter().map(|t| b.literal(t)))),
                b.negate(b.literal(end)),
                b.negate(self.turn_end(turn_end)),
            ]));
        }
        let text = if continuations.is_empty() {
            tag(b.until_one_of(&stops))
        } else {
            // Tags stay outside the lookahead, so a partial parse shows no text beyond it.
            b.seq([
                tag(b.until_one_of(&stops)),
                b.zero_or_more(b.seq([
                    b.choice(continuations),
                    tag(b.seq([b.any(), b.until_one_of(&stops)])),
                ])),
            ])
        };
        let close = self.closes(end);
        // The model may write the opener again right after it (often after a prompt that
        // already opened the block): a repeated opener opens nothing and is dropped. One closed
        // right away stays the block's text (`<think><think></think>`: reasoning `<think>`, as
        // llama.cpp reports it).
        let repeated = if start.is_empty() {
            b.eps()
        } else {
            let closed = b.seq([b.space(), b.literal(end)]);
            b.zero_or_more(b.seq([b.space(), b.literal(start), b.negate(closed)]))
        };
        if options.starts_in_reasoning {
            // What follows the opener of the branch below (the prefill was the opener).
            return b.seq([repeated, text, b.optional(close)]);
        }
        if start.is_empty() {
            if r.starts_unmarked() {
                // The output starts inside the reasoning: left unclosed, it is still reasoning.
                b.optional(b.seq([text, b.optional(close)]))
            } else {
                // Text is reasoning only once its closer follows; until then a stream shows
                // none of it (it may yet be content), so nothing is retracted.
                let closed_later = b.peek(b.seq([b.until(end), b.literal(end)]));
                b.optional(b.seq([closed_later, text, close]))
            }
        } else if inline {
            // The block as content, from its opener (never dropped: the text is kept as the
            // model wrote it) to its closer.
            b.optional(b.tag(
                tags::CONTENT,
                b.seq([b.space(), b.literal(start), text, b.optional(close)]),
            ))
        } else {
            b.optional(b.choice([
                b.seq([
                    b.space(),
                    self.opener(start, &self.other_markers(format, tool_triggers)),
                    repeated,
                    text,
                    b.optional(close),
                ]),
                // A closed (empty) block written by the prompt: the end marker alone.
                close,
            ]))
        }
    }

    /// A closing marker, and the same marker repeated right after it (whitespace between):
    /// the repetition closes nothing and is dropped.
    fn closes(&self, end: &str) -> Parser {
        let b = self.b;
        let close = b.seq([b.space(), b.literal(end)]);
        b.seq([close, b.zero_or_more(close)])
    }

    /// An opening marker made of a marker token and a label (`<|channel>thought`): the model
    /// may write the token alone first (`<|channel><|channel>thought`); such a stray token
    /// right before the opener is dropped. Where the token opens nothing else of the format
    /// (no other marker in `others` holds it), the label is optional: the token alone opens
    /// the block, and text that only starts like the label is reasoning.
    fn opener(&self, start: &str, others: &[&str]) -> Parser {
        let b = self.b;
        let mut parts = crate::diff::segments(start);
        let (lead, label) = match (parts.next(), parts.next(), parts.next()) {
            (Some(first), Some(second), third) if first.kind == SegmentKind::Marker => {
                let label =
                    (second.kind == SegmentKind::Text && third.is_none()).then_some(second.text);
                (first.text, label)
            }
            _ => return b.literal(start),
        };
        let stray = b.seq([b.literal(lead), b.space(), b.peek(b.literal(lead))]);
        let own_token = !others.iter().any(|m| m.contains(lead.trim()));
        match label.filter(|l| own_token && !l.trim().is_empty()) {
            Some(label) => b.seq([
                b.zero_or_more(stray),
                b.literal(lead),
                b.optional(b.literal(label)),
            ]),
            None => b.seq([b.zero_or_more(stray), b.literal(start)]),
        }
    }

    /// The markers of `format` other than the reasoning's: the turn's header and ends, the
    /// content wrapper and the call triggers.
    fn other_markers<'f>(
        &self,
        format: &'f TurnFormat,
        tool_triggers: Option<&'f [String]>,
    ) -> Vec<&'f str> {
        let mut others = vec![
            format.turn_start.as_str(),
            format.turn_end.as_str(),
            format.tool_turn_end.as_str(),
            format.content.start.as_str(),
            format.content.end.as_str(),
        ];
        others.extend(tool_triggers.unwrap_or_default().iter().map(String::as_str));
        others.retain(|m| !m.trim().is_empty());
        others
    }

    /// The tool-call block and its triggers (the texts that start it).
    fn tools(
        &self,
        t: &ToolAnalysis,
        parallel: bool,
        lead_separator: bool,
        inner_reasoning: Option<Parser>,
    ) -> ToolBlock {
        let b = self.b;
        // Inside a section, reasoning blocks may sit between the calls (interleaved
        // thinking); outside one, the turn's own loop reads them.
        let in_section = !t.section_start.trim().is_empty();
        let thoughts = match inner_reasoning.filter(|_| in_section) {
            Some(r) => b.zero_or_more(r),
            None => b.eps(),
        };
        let call = match t.format {
            ToolFormat::JsonNative => self.json_call(t),
            ToolFormat::TagWithJson | ToolFormat::TagWithTagged => self.tag_call(t),
        };
        // Inside a section whose template writes Python call expressions, a call written as a
        // JSON object (`{"name": …, "arguments": {…}}`): models trained on both forms switch
        // (read, never written).
        let call = if in_section && t.python_keyword_calls() {
            let named = b.json_member("name", b.tag(tags::TOOL_NAME, b.json_string()));
            let members = argument_fields("arguments")
                .map(|f| b.json_member(f, b.tag(tags::TOOL_ARGS, b.json())))
                .collect();
            let (object, head) = self.object(named, named, &["name"], members);
            let json = self.shown_with_name(head, object);
            b.choice([call, b.tag(tags::LENIENT, json)])
        } else {
            call
        };
        // A reasoning or content message's opener that the call's own opener starts is not
        // a call (`send=mind::7` is reasoning, not a call to `mind`).
        let (triggers, bare_starts) = call_openers(t, lead_separator);
        let others: Vec<&str> = self
            .part_openers
            .iter()
            .map(String::as_str)
            .filter(|o| {
                triggers
                    .iter()
                    .any(|c| o.len() > c.len() && o.starts_with(c.as_str()))
            })
            .collect();
        let call = if others.is_empty() {
            call
        } else {
            b.seq([
                b.negate(b.seq([b.space(), b.choice(others.iter().map(|o| b.literal(o)))])),
                call,
            ])
        };
        // Without parallel calls, a block holds one call.
        let more = |p: Parser| {
            if parallel {
                b.zero_or_more(p)
            } else {
                b.eps()
            }
        };
        // Models trained on one call per turn chain calls with a `;` or `,` where the template
        // shows no separator of that kind: read as the separator, never written.
        let separator = if stop_text(&t.call_separator).contains([';', ',']) {
            self.lit(&t.call_separator)
        } else {
            let punctuation = || b.seq([b.space(), b.chars("[;,]", 1, Some(1))]);
            b.choice([
                // The lookahead keeps the lenient tag (and its cost in the tree) off every
                // other call boundary.
                b.seq([
                    b.peek(punctuation()),
                    b.tag(tags::LENIENT, b.seq([punctuation(), b.space()])),
                ]),
                self.lit(&t.call_separator),
            ])
        };
        let separated = |call: Parser| {
            b.seq([
                thoughts,
                call,
                more(b.seq([thoughts, separator, thoughts, call])),
                thoughts,
            ])
        };
        let array = t.json.as_ref().is_some_and(|j| j.array_wrapped);
        let calls = if array {
            let listed = || more(b.seq([b.space(), b.literal(","), b.space(), call]));
            let bracketed = b.seq([
                b.literal("["),
                b.space(),
                call,
                listed(),
                b.space(),
                b.literal("]"),
            ]);
            if t.section_start.trim().is_empty() {
                bracketed
            } else {
                // Inside a section, the model may leave the list's brackets out (a single
                // object, or objects joined by commas): read, never written.
                b.choice([bracketed, b.tag(tags::LENIENT, b.seq([call, listed()]))])
            }
        } else {
            separated(call)
        };
        let ss = t.section_start.trim();
        // Calls that are separate messages (no section; a separator holding a marker, such
        // as `<|eom|><|start|>assistant`): the separator also ends the message before the
        // first call.
        let lead_separator = ss.is_empty() && lead_separator;
        let block = if ss.is_empty() {
            let lead = if lead_separator {
                b.optional(self.lit(&t.call_separator))
            } else {
                b.eps()
            };
            b.seq([b.space(), lead, calls, self.lit(&t.section_end)])
        } else {
            // The model may leave the section opener out when calls have their own opener.
            let opener = if t.per_call_start.trim().is_empty() {
                self.text(ss)
            } else {
                b.optional(self.text(ss))
            };
            let filled = b.seq([
                b.space(),
                opener,
                b.space(),
                calls,
                b.optional(self.end_marker(&t.section_end, &[ss, &t.per_call_start])),
            ]);
            // A section closed with no call in it is how the template writes none.
            if t.section_end.trim().is_empty() {
                filled
            } else {
                let empty = b.seq([
                    b.space(),
                    self.text(ss),
                    b.space(),
                    self.lit(&t.section_end),
                ]);
                b.choice([filled, empty])
            }
        };
        // The fence is a trigger only where `call_openers` found bare JSON calls.
        let block = if triggers.iter().any(|m| m == CODE_FENCE) {
            let fence = || {
                b.seq([
                    b.space(),
                    b.literal(CODE_FENCE),
                    b.chars("[A-Za-z]", 0, None),
                    b.space(),
                ])
            };
            let fenced = b.seq([fence(), calls, fence()]);
            b.choice([block, b.tag(tags::LENIENT, fenced)])
        } else {
            block
        };
        // Calls inside the wrapper the tools preamble states (the template writes none): the
        // preamble tells the model to write it, so grammars allow both forms.
        let block = match &t.stated_wrapper {
            Some(w) => b.choice([
                b.seq([
                    b.space(),
                    self.text(w.open.trim()),
                    b.space(),
                    call,
                    more(b.seq([self.lit(&w.separator), call])),
                    self.lit_before(&w.close),
                ]),
                block,
            ]),
            None => block,
        };
        ToolBlock {
            parser: block,
            triggers,
            bare_starts,
        }
    }

    fn call_id(&self, t: &ToolAnalysis, position: CallIdPosition) -> Parser {
        let b = self.b;
        let id = &t.call_id;
        if id.position != position || position == CallIdPosition::None {
            return b.eps();
        }
        let text = if id.suffix.trim().is_empty() {
            // No suffix: the id ends where the call goes on (what follows it in the call),
            // or at the end of the call, the next call or the section.
            let next: &[&str] = match position {
                CallIdPosition::PreFuncName => &[&t.function.name_prefix],
                CallIdPosition::BetweenFuncAndArgs => &[&t.arguments.start],
                _ => &[],
            };
            let stops = marker_set(next.iter().copied().chain([
                t.function.close.as_str(),
                t.per_call_end.as_str(),
                t.call_separator.as_str(),
                t.per_call_start.as_str(),
                t.section_end.as_str(),
            ]));
            if stops.is_empty() {
                // Nothing closes it: an id is one word.
                b.chars(WORD_CHARS, 1, None)
            } else {
                b.until_one_of(stops)
            }
        } else {
            self.until_marker(&id.suffix)
        };
        let written = b.seq([
            self.lit(&id.prefix),
            b.tag(tags::TOOL_ID, text),
            self.lit(&id.suffix),
        ]);
        if position == CallIdPosition::BetweenFuncAndArgs
            && !stop_text(&id.prefix).is_empty()
            && !stop_text(&id.suffix).is_empty()
        {
            // The model may leave the id out between the name and the arguments, going on
            // with the marker that ends it (`name[ARGS]{…}` for `name[ID]x[ARGS]{…}`): a call
            // without an id (read, never written).
            b.choice([written, b.tag(tags::LENIENT, self.lit(&id.suffix))])
        } else {
            written
        }
    }

    fn tag_call(&self, t: &ToolAnalysis) -> Parser {
        let b = self.b;
        let f = &t.function;
        let args = match t.format {
            ToolFormat::TagWithTagged => self.tagged_or_json_args(t),
            _ => b.seq([
                self.lit(&t.arguments.start),
                b.tag(tags::TOOL_ARGS, b.json()),
                self.lit(&t.arguments.end),
            ]),
        };
        let (name, name_stops) = if f.name_suffix.trim().is_empty() {
            // The name runs to the arguments (or to the end of a call without arguments).
            let args_start = match t.format {
                ToolFormat::TagWithJson => "{",
                _ if !t.arguments.start.trim().is_empty() => t.arguments.start.as_str(),
                _ => t.arguments.name_prefix.as_str(),
            };
            let (id_prefix, id_suffix) = if t.call_id.position == CallIdPosition::BetweenFuncAndArgs
            {
                (t.call_id.prefix.as_str(), t.call_id.suffix.as_str())
            } else {
                ("", "")
            };
            let stops: Vec<&str> = [
                id_prefix,
                // The id may be left out (see `call_id`): its closer then ends the name.
                id_suffix,
                args_start,
                f.close.as_str(),
                t.per_call_end.as_str(),
                // A call without arguments may be followed by the next call's opener.
                t.per_call_start.as_str(),
            ]
            .into_iter()
            .map(word_stop)
            .filter(|m| !m.is_empty())
            .collect();
            if stops.is_empty() {
                (b.until("{"), None)
            } else {
                (word_until(b, stops.iter().copied()), Some(stops))
            }
        } else {
            let (core, exact) = (
                word_stop(&f.name_suffix),
                slots::head(f.name_suffix.trim_end()),
            );
            (word_until(b, [exact, core]), None)
        };
        // A declared name that holds whitespace is read whole (the word stops at a space).
        let after_name = match &name_stops {
            Some(stops) => b.choice(
                stops
                    .iter()
                    .map(|m| b.seq([b.space(), b.literal(m)]))
                    .chain([b.seq([b.space(), b.end()])]),
            ),
            None => b.seq([b.space(), b.literal(word_stop(&f.name_suffix))]),
        };
        let name = self.declared_or(self.tool_names, after_name, name);
        // A name suffix of whitespace alone, before what may be a word (an argument's name):
        // at least one whitespace character, unless what ends the name follows right away
        // (the parser reads a name up to whitespace, so `fnquery` would be one name).
        let name_suffix = match name_stops {
            Some(stops) if !f.name_suffix.is_empty() && t.format == ToolFormat::TagWithTagged => b
                .seq([
                    b.choice([
                        b.chars("[ \\t\\r\\n]", 1, None),
                        b.peek(b.choice(word_stops(stops).into_iter().map(|m| b.literal(m)))),
                        b.end(),
                    ]),
                    b.space(),
                ]),
            _ => self.lit(&f.name_suffix),
        };
        // A namespace before the name (`functions.`) after a call opener may be left out by
        // the model: read, never written.
        let lenient_prefix =
            is_namespace(f.name_prefix.trim()) && !stop_text(&t.per_call_start).is_empty();
        let id = &t.call_id;
        let counter = id.counter && id.position == CallIdPosition::BetweenFuncAndArgs;
        let named_with = |prefix: Parser| {
            let named = b.seq([prefix, b.tag(tags::TOOL_NAME, name), name_suffix]);
            if counter {
                // A per-call counter after the name: the call's id is the whole reference
                // (`functions.NAME:0`).
                let reference = b.seq([
                    named,
                    self.text(id.prefix.trim()),
                    b.chars("[0-9]", 1, None),
                ]);
                b.seq([b.tag(tags::TOOL_ID, reference), self.lit(&id.suffix)])
            } else {
                named
            }
        };
        let between = if counter {
            b.eps()
        } else {
            self.call_id(t, CallIdPosition::BetweenFuncAndArgs)
        };
        // With a name prefix, the per-call opener may be left out by the model (read, never
        // written). Both ways are whole alternatives, so an opener that is also how the name
        // prefix starts (`[` and `[call `) does not hide the prefix. Leniencies never add up
        // to a call with no marker at all: without its opener, a call keeps its name prefix.
        let strict = named_with(self.lit(&f.name_prefix));
        let named = if lenient_prefix {
            named_with(b.choice([self.lit(&f.name_prefix), b.tag(tags::LENIENT, b.space())]))
        } else {
            strict
        };
        let lead = || {
            let opened = b.seq([
                self.lit(&t.per_call_start),
                self.call_id(t, CallIdPosition::PreFuncName),
                named,
            ]);
            if f.name_prefix.trim().is_empty() || t.per_call_start.trim().is_empty() {
                return opened;
            }
            let bare = b.seq([self.call_id(t, CallIdPosition::PreFuncName), strict]);
            b.choice([opened, b.tag(tags::LENIENT, bare)])
        };
        let rest = || {
            b.seq([
                self.call_id(t, CallIdPosition::PostArgs),
                self.lit_before(&f.close),
                // Several calls in one opener's block (`<call><fn=a>…</fn><fn=b>…</fn></call>`):
                // the next call's name prefix ends this one.
                self.call_end(
                    &t.per_call_end,
                    &[&t.per_call_start, &f.name_prefix, &t.section_end],
                ),
            ])
        };
        let call = self.shown_with_name(lead(), b.seq([lead(), between, args, rest()]));
        if !counter
            || stop_text(&t.per_call_start).is_empty()
            || t.format != ToolFormat::TagWithJson
        {
            return call;
        }
        // A reference that names no tool (`call_3`, `0`: the model wrote another id there,
        // such as a client's it saw in the conversation): the call, its id that reference;
        // the mapper names it by the tool its arguments fit (read, never written).
        let head = b.seq([
            self.lit(&t.per_call_start),
            b.tag(tags::TOOL_ID, b.chars(WORD_CHARS, 1, None)),
            self.lit(&id.suffix),
            b.peek(self.lit(&t.arguments.start)),
        ]);
        let nameless = b.seq([
            b.atomic(b.peek(head)),
            b.tag(tags::TOOL, b.seq([head, args, rest()])),
        ]);
        b.choice([call, b.tag(tags::LENIENT, nameless)])
    }

    /// A call's own end marker. A model may leave it out at the end of the output, right
    /// before what starts the next call (`next`: its opener, or its name prefix where the
    /// model leaves the opener out too) or right before the turn end that ends the
    /// output (it ends its turn instead) (read, never written by a grammar); elsewhere it is
    /// required, so text after a call that breaks off is not read as the call's end.
    fn call_end(&self, end: &str, next: &[&str]) -> Parser {
        let b = self.b;
        if end.trim().is_empty() {
            return b.eps();
        }
        let mut left_out = vec![b.end()];
        for next in next.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            left_out.push(b.literal(next));
        }
        let turn_ends: Vec<String> = self
            .turn_ends
            .iter()
            .filter(|t| !t.trim().is_empty() && !end.trim().starts_with(t.trim()))
            .cloned()
            .collect();
        if !turn_ends.is_empty() {
            left_out.push(self.turn_end(&turn_ends));
        }
        b.choice([
            self.end_marker(end, next),
            b.tag(
                tags::LENIENT,
                b.peek(b.seq([b.space(), b.choice(left_out)])),
            ),
        ])
    }

    /// An end marker (of a call or of the call section) after any whitespace, and the same
    /// marker repeated right after it: a repetition closes nothing and is dropped. Only a whole
    /// marker (`<tool_call|>`, `[/CALLS]`) that opens nothing of `others` repeats so.
    fn end_marker(&self, end: &str, others: &[&str]) -> Parser {
        let b = self.b;
        let core = end.trim();
        let whole = marker_spans(core).first() == Some(&(0, core.len()));
        if !whole || others.iter().any(|o| o.trim().starts_with(core)) {
            return self.lit_before(end);
        }
        // Read, never written: a grammar that allowed it could not tell a repeated end from
        // the whitespace before the next call.
        b.seq([
            self.lit_before(end),
            // (The tag is entered only once a whole repetition is there: a tag left open at
            // the end of a stream's text would hold every call before it open.)
            b.zero_or_more(b.seq([
                b.peek(b.seq([b.space(), b.literal(core)])),
                b.tag(tags::LENIENT, b.seq([b.space(), b.literal(core)])),
            ])),
        ])
    }

    /// A tagged call's arguments, or (read, never written) one JSON object in their place,
    /// as models that know JSON calls write it (`<invoke name="f">{"city": "Paris"}</invoke>`)
    /// where what ends the call follows it. The tag is entered once the object has opened.
    fn tagged_or_json_args(&self, t: &ToolAnalysis) -> Parser {
        let b = self.b;
        let tagged = self.tagged_args(t);
        let a = &t.arguments;
        let ends: Vec<&str> = [t.function.close.as_str(), t.per_call_end.as_str()]
            .into_iter()
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .collect();
        // Only where the arguments have no wrapper of their own, their first argument opens
        // otherwise than an object does, and something ends the call (a JSON object then
        // needs no other boundary).
        let own_wrapper = !a.start.trim().is_empty() || !a.end.trim().is_empty();
        let opens_like_object = a.name_prefix.trim_start().starts_with('{');
        let Some(&end) = ends.first().filter(|_| !own_wrapper && !opens_like_object) else {
            return tagged;
        };
        let json = b.seq([
            b.peek(b.seq([b.space(), b.literal("{")])),
            b.tag(
                tags::LENIENT,
                b.seq([b.space(), b.tag(tags::TOOL_ARGS, b.json()), b.space()]),
            ),
            b.peek(self.lit_before(end)),
        ]);
        b.choice([json, tagged])
    }

    /// `word`, or first a declared name (of `declared`) that holds whitespace, read whole
    /// where `after` follows it: a template writes such a name as it is (`<function=get
    /// current temperature>`), and a word stops at its first space.
    fn declared_or(&self, declared: &[String], after: Parser, word: Parser) -> Parser {
        let b = self.b;
        let mut spaced: Vec<&str> = declared
            .iter()
            .map(String::as_str)
            .filter(|n| n.trim() == *n && n.contains(char::is_whitespace))
            .collect();
        if spaced.is_empty() {
            return word;
        }
        // Longest first: a name that starts another does not cut it short.
        spaced.sort_by_key(|n| std::cmp::Reverse(n.len()));
        let names = b.choice(spaced.into_iter().map(|n| b.literal(n)));
        b.choice([b.seq([names, b.peek(after)]), word])
    }

    fn tagged_args(&self, t: &ToolAnalysis) -> Parser {
        let b = self.b;
        let a = &t.arguments;
        // A blank value suffix ends nothing: the separator does, unless there is none (a
        // value ended by its line break alone, `key => value` lines).
        let value_end =
            if a.value_suffix.trim().is_empty() && !ended_by_line(&a.separator, &a.value_suffix) {
                a.separator.clone()
            } else {
                a.value_suffix.clone()
            };
        // An argument name never runs past the end of the arguments or of the call (a call
        // without arguments is followed by its close, then maybe another call).
        let args_end = marker_set([
            a.end.as_str(),
            t.function.close.as_str(),
            t.per_call_end.as_str(),
        ]);
        // Where nothing closes a call, the next call's opener ends an argument name.
        let next_call = if args_end.is_empty() {
            marker_set([t.per_call_start.as_str()])
        } else {
            Vec::new()
        };
        // What follows a quoted string: its closing quote is the one this text comes after
        // (a quote elsewhere is text).
        let string_follow = (!a.string_close.is_empty()).then(|| self.after_value(t));
        // Literal values end at their quotes; other tagged values may lose their closer.
        let unclosed = if self.literal_values {
            None
        } else {
            unclosed_value(t, &args_end)
        };
        let name_until = |marker: &str| {
            let core = word_stop(marker);
            let exact = slots::head(marker.trim_end());
            let mut stops = marker_set([core]);
            if exact != core && !exact.is_empty() {
                stops.insert(0, exact);
            }
            stops.extend(args_end.iter().copied().filter(|m| *m != core));
            stops.extend(next_call.iter().copied().filter(|m| *m != core));
            word_until(b, stops)
        };
        let value_markers = |name_suffix: &str, value_prefix: &str, value: Parser, suffix: &str| {
            let name_suffix = if value_prefix.trim().is_empty() {
                self.lit_exact_after(name_suffix)
            } else {
                self.lit(name_suffix)
            };
            b.seq([
                name_suffix,
                self.lit_exact_after(value_prefix),
                value,
                self.value_close(a, suffix),
            ])
        };
        let arg = if let Some(n) = &a.non_string {
            // Typed markers: the name ends at either name suffix; the string variant holds a
            // raw string, the non-string variant a JSON value.
            let mut stops = marker_set([a.name_suffix.as_str(), n.name_suffix.as_str()]);
            for marker in [a.name_suffix.as_str(), n.name_suffix.as_str()] {
                let (core, exact) = (word_stop(marker), slots::head(marker.trim_end()));
                if exact != core && !exact.is_empty() && !stops.contains(&exact) {
                    stops.insert(0, exact);
                }
            }
            for m in args_end.iter().copied() {
                if !stops.contains(&m) {
                    stops.push(m);
                }
            }
            let string = value_markers(
                &a.name_suffix,
                &a.value_prefix,
                b.tag(
                    tags::TOOL_ARG_STRING,
                    self.raw_value(a, &value_end, &a.value_suffix),
                ),
                &a.value_suffix,
            );
            // Escaped or wrapped JSON is read as text and decoded by the mapper.
            let json_value = if n.value_suffix.trim().is_empty() {
                b.seq([b.space(), b.json()])
            } else if a.non_string_text().is_plain() && a.python_values.is_empty() {
                // A value marked as JSON that is not JSON (the model marked a string as
                // another type) is read as text up to the suffix.
                b.choice([
                    b.seq([
                        b.space(),
                        b.json(),
                        b.peek(self.lit_before(&n.value_suffix)),
                    ]),
                    self.raw_value(a, &n.value_suffix, &n.value_suffix),
                ])
            } else {
                self.raw_value(a, &n.value_suffix, &n.value_suffix)
            };
            let json = value_markers(
                &n.name_suffix,
                &n.value_prefix,
                b.tag(tags::TOOL_ARG_JSON, json_value),
                &n.value_suffix,
            );
            b.tag(
                tags::TOOL_ARG,
                b.seq([
                    self.lit(&a.name_prefix),
                    b.tag(tags::TOOL_ARG_NAME, word_until(b, stops)),
                    b.choice([string, json]),
                ]),
            )
        } else {
            let name_suffix = if a.value_prefix.trim().is_empty() {
                self.lit_exact_after(&a.name_suffix)
            } else {
                self.lit(&a.name_suffix)
            };
            b.tag(
                tags::TOOL_ARG,
                b.seq([
                    self.lit(&a.name_prefix),
                    // A blank name suffix: the name ends at the value prefix. A Python
                    // keyword's name never runs past its `=` (a Python literal may follow).
                    b.tag(
                        tags::TOOL_ARG_NAME,
                        if t.python_calls_with_quoted_values() || t.python_keyword_calls() {
                            b.chars(ARGUMENT_NAME_CHARS, 1, None)
                        } else {
                            let ends_name = if a.name_suffix.trim().is_empty() {
                                &a.value_prefix
                            } else {
                                &a.name_suffix
                            };
                            let after = b.seq([b.space(), b.literal(word_stop(ends_name))]);
                            let word = name_until(ends_name);
                            if word_stop(ends_name).is_empty() {
                                word
                            } else {
                                self.declared_or(self.parameter_names, after, word)
                            }
                        },
                    ),
                    name_suffix,
                    self.lit_exact_after(&a.value_prefix),
                    if self.literal_values {
                        b.tag(
                            tags::TOOL_ARG_VALUE,
                            self.literal_value(a, string_follow, &args_end),
                        )
                    } else if let Some(u) = &unclosed {
                        b.tag(tags::TOOL_ARG_VALUE, self.unclosed_text(t, u))
                    } else {
                        b.tag(tags::TOOL_ARG_VALUE, self.tagged_value(t, &value_end))
                    },
                    match &unclosed {
                        // The model may leave the value's closing marker out: the next
                        // argument or the end of the arguments then ends the value.
                        Some(u) => b.choice([
                            self.lit_before(&a.value_suffix),
                            b.tag(
                                tags::LENIENT,
                                b.peek(b.seq([
                                    b.space(),
                                    b.choice(u.next.iter().map(|m| b.literal(m))),
                                ])),
                            ),
                        ]),
                        None => self.value_close(a, &a.value_suffix),
                    },
                ]),
            )
        };
        let arg = if t.python_calls_with_quoted_values() {
            // The template quotes every value (`key="%s"`): models write Python literals
            // instead (`key='a'`, `n=3`, `d={'k': None}`). Read, never written.
            let mut follows = vec![self.lit_before(&a.separator)];
            follows.extend(
                t.after_value_markers()
                    .into_iter()
                    .filter(|m| !stop_text(m).is_empty())
                    .map(|m| self.lit_before(m)),
            );
            let follow = b.peek(b.choice(follows));
            let value = b.choice([
                self.quoted_string("'", true, follow),
                self.quoted_string("\"", true, follow),
                b.seq([b.json(), follow]),
            ]);
            let literal = b.tag(
                tags::TOOL_ARG,
                b.seq([
                    self.lit(&a.name_prefix),
                    b.tag(tags::TOOL_ARG_NAME, b.chars(ARGUMENT_NAME_CHARS, 1, None)),
                    b.space(),
                    b.literal("="),
                    b.space(),
                    b.tag(tags::TOOL_ARG_JSON, value),
                ]),
            );
            b.choice([arg, b.tag(tags::LENIENT, literal)])
        } else {
            arg
        };
        let sep = if a.separator.trim().is_empty() {
            b.space()
        } else {
            self.lit(&a.separator)
        };
        // An argument (or the separator before one) never starts where the arguments end
        // (`</call>` after an argument prefix `<`).
        let (arg, sep) = if args_end.is_empty() {
            (arg, sep)
        } else {
            // An end marker that starts like an argument (`<]x[>` before `<]x[>[<key>`) is
            // left to the argument's own markers to tell apart.
            let name_start = stop_text(&a.name_prefix);
            let ends: Vec<&str> = args_end
                .iter()
                .copied()
                .filter(|m| name_start.is_empty() || !name_start.starts_with(m))
                .collect();
            let end = move || {
                if ends.is_empty() {
                    return b.eps();
                }
                let end = b.choice(ends.iter().map(|m| b.literal(m)));
                b.seq([b.space(), b.negate(end)])
            };
            (b.seq([end(), arg]), b.seq([end(), sep]))
        };
        b.seq([
            self.lit(&a.start),
            b.optional(b.seq([arg, b.zero_or_more(b.seq([sep, arg]))])),
            self.lit_before(&a.end),
        ])
    }

    /// The text of a value whose closing marker the model may leave out (see
    /// [`UnclosedValue`]): it runs to the value suffix, or to the next argument (its prefix, a
    /// name and the name suffix) or an end of the arguments or of the call followed by what
    /// may follow a call. A call's end marker followed by other text is text the value holds
    /// (a file that documents `</tool_call>`).
    fn unclosed_text(&self, t: &ToolAnalysis, u: &UnclosedValue) -> Parser {
        let b = self.b;
        let a = &t.arguments;
        let after_call = self.after_call_forms(t);
        let mut ends = vec![b.choice(u.suffix.iter().map(|m| b.literal(m)))];
        let name_prefix = stop_text(&a.name_prefix);
        let markers: Vec<&str> = u
            .next
            .iter()
            .map(String::as_str)
            .filter(|m| *m != name_prefix)
            .collect();
        if u.next.iter().any(|m| m == name_prefix) {
            ends.push(self.next_argument(a));
        }
        // What may follow each end: the ends after it (`</invoke>` then `</call>`), each
        // followed in turn by what may follow it, then what follows a call, or a line break.
        // (Built from the last end back, as each refers to those after it.)
        let mut follows: Vec<Parser> = vec![b.eps(); markers.len()];
        for i in (0..markers.len()).rev() {
            let mut next: Vec<Parser> = (i + 1..markers.len())
                .map(|j| b.seq([b.space(), b.literal(markers[j]), follows[j]]))
                .collect();
            next.extend(after_call.iter().copied());
            next.push(b.seq([b.chars("[ \\t]", 0, None), b.literal("\n")]));
            follows[i] = b.choice(next);
        }
        for (m, follow) in markers.iter().zip(&follows) {
            ends.push(b.seq([b.space(), b.literal(m), b.peek(*follow)]));
        }
        let ends_here = b.choice(ends);
        let until = || b.until_one_of(&u.stops);
        b.seq([
            until(),
            b.zero_or_more(b.seq([b.negate(ends_here), b.any(), until()])),
        ])
    }

    /// A tagged value: elements (where the template writes objects and arrays so) when the
    /// value suffix follows them, else its raw text up to `end`.
    fn tagged_value(&self, t: &ToolAnalysis, end: &str) -> Parser {
        let b = self.b;
        let a = &t.arguments;
        // A weak end, or a line break alone (a value written raw may hold one): the value
        // runs to what follows it.
        let raw = if weak_end(end) || line_end(end) {
            // (A wrapper for strings only leaves the other values bare: read the same way.)
            self.wrapped_or(a, &a.value_suffix, self.guided_text(t, end))
        } else {
            self.raw_value(a, end, &a.value_suffix)
        };
        // Python calls whose strings the template writes bare: models quote their strings as
        // Python does, so a string literal followed by what follows a value is that string.
        let raw = if t.python_calls_with_bare_strings() {
            let follow = self.after_value(t);
            let quoted = b.choice([
                self.quoted_string("'", true, follow),
                self.quoted_string("\"", true, follow),
            ]);
            b.choice([b.seq([quoted, b.peek(follow)]), raw])
        } else {
            raw
        };
        // Elements need an opener and a closer to be told from text (an element always
        // consumes text, so their repetition ends).
        let Some(e) = a
            .element_values
            .as_ref()
            .filter(|e| !stop_text(&e.open).is_empty() && !stop_text(&e.close).is_empty())
        else {
            return raw;
        };
        let follows = b.peek(self.lit_before(&a.value_suffix));
        b.choice([b.seq([self.elements(e), follows]), raw])
    }

    /// Elements in a row (see [`ElementValues`]): each its opener, a name, the text between
    /// name and value, a value (elements again, or text up to a closer) and its closer.
    fn elements(&self, e: &ElementValues) -> Parser {
        let b = self.b;
        let close_start = stop_text(&e.close);
        let closer_next = b.seq([b.space(), b.literal(close_start)]);
        // Text runs to a closer (`</` + a name + `>`): a `</` that starts no closer is text.
        let closer = match slots::pieces(e.close.trim()).as_slice() {
            [Piece::Text(_), Piece::Slot(Slot::Key), Piece::Text(end)] => b.seq([
                b.literal(close_start),
                element_name(b, [*end]),
                b.literal(end),
            ]),
            _ => b.literal(close_start),
        };
        let text = b.seq([
            b.until(close_start),
            b.zero_or_more(b.seq([
                b.negate(closer),
                b.literal(close_start),
                b.until(close_start),
            ])),
        ]);
        let value = b.choice([
            b.seq([b.reference(ELEMENT_LIST_RULE), b.peek(closer_next)]),
            text,
        ]);
        let name_stop = stop_text(&e.name_value);
        let element = b.seq([
            b.negate(closer_next),
            self.lit_before(&e.open),
            element_name(b, [name_stop]),
            self.lit_exact_after(&e.name_value),
            value,
            self.lit_before(&e.close),
        ]);
        b.rule(ELEMENT_LIST_RULE, b.one_or_more(element))
    }

    /// A tagged value's raw text, up to `end`. With a value wrapper, a wrapped value (one
    /// section, or several in a row when they join) comes first when the value `suffix`
    /// follows it: it may hold `end` (`<![CDATA[…</param>…]]></param>`); otherwise the text is
    /// bare. The mapper decodes both (see [`value_text`](crate::message::value_text)).
    fn raw_value(&self, a: &ArgumentMarkers, end: &str, suffix: &str) -> Parser {
        self.wrapped_or(a, suffix, self.until_marker(end))
    }

    /// A value in the argument's wrapper (see [`ArgumentMarkers::value_wrapper`]) followed by
    /// `suffix`, or `bare` (the value as written without one).
    fn wrapped_or(&self, a: &ArgumentMarkers, suffix: &str, bare: Parser) -> Parser {
        let b = self.b;
        let Some(w) = &a.value_wrapper else {
            return bare;
        };
        let section = b.seq([b.literal(&w.open), b.until(&w.close), b.literal(&w.close)]);
        let wrapped = if w.sections {
            b.one_or_more(section)
        } else {
            section
        };
        let follows = if suffix.trim().is_empty() {
            b.eps()
        } else {
            b.peek(self.lit_before(suffix))
        };
        b.choice([b.seq([wrapped, follows]), bare])
    }

    /// A literal value (see [`literal`](super::literal)): Python/JSON literals when the quotes
    /// are `'`/`"`, otherwise strings in the custom quotes, objects with bare keys, arrays and
    /// bare scalars.
    /// The text after a tagged value, as a lookahead: the value suffix, then the next
    /// argument (separator, name prefix, a name and its suffix), the end of the arguments,
    /// the call or the section, or what may come after a call whose end marker is left out
    /// (the next call, a reasoning block).
    fn after_value(&self, t: &ToolAnalysis) -> Parser {
        let b = self.b;
        let a = &t.arguments;
        let suffix = self.lit_before(&a.value_suffix);
        let mut after = vec![self.next_argument(a)];
        // A marker that starts the next call (where the call's end is left out) counts only
        // with that call's name after it: `', then'` inside a string is no call.
        let name_suffix = stop_text(&t.function.name_suffix);
        let next_call = |start: &str| {
            if name_suffix.is_empty() || slots::has_slots(&t.function.name_prefix) {
                return self.lit_before(start);
            }
            let per_call = if start == t.per_call_start.as_str() {
                b.eps()
            } else {
                b.optional(self.lit_before(&t.per_call_start))
            };
            b.seq([
                self.lit_before(start),
                per_call,
                self.lit_before(&t.function.name_prefix),
                b.space(),
                b.chars("[A-Za-z0-9_.:$-]", 1, None),
                b.space(),
                self.text(name_suffix),
            ])
        };
        let starts = [
            t.call_separator.as_str(),
            t.per_call_start.as_str(),
            t.section_start.as_str(),
        ];
        for end in t
            .after_value_markers()
            .into_iter()
            .chain([self.reasoning_start])
        {
            if stop_text(end).is_empty() {
                continue;
            }
            if starts.contains(&end) && end != self.reasoning_start {
                after.push(next_call(end));
            } else {
                after.push(self.lit_before(end));
            }
        }
        b.seq([suffix, b.choice(after)])
    }

    /// `marker` as written where it is blank (whitespace alone), else its text after any
    /// whitespace ([`Self::lit_before`]); nothing for an empty marker.
    fn marker_or_blank(&self, marker: &str) -> Parser {
        if marker.is_empty() {
            self.b.eps()
        } else if stop_text(marker).is_empty() {
            self.b.literal(marker)
        } else {
            self.lit_before(marker)
        }
    }

    /// What may follow a call, each as a parser (for lookaheads): the next call (its markers,
    /// maybe a new section, a name, the name suffix), the end of the section, reasoning, a
    /// turn end, or the end of the output.
    fn after_call_forms(&self, t: &ToolAnalysis) -> Vec<Parser> {
        let b = self.b;
        let exact = |m: &str| self.marker_or_blank(m);
        let mut after_call = Vec::new();
        if !stop_text(&t.function.name_suffix).is_empty() {
            after_call.push(b.seq([
                b.optional(exact(&t.call_separator)),
                b.optional(exact(&t.section_start)),
                exact(&t.per_call_start),
                self.lit_before(&t.function.name_prefix),
                b.space(),
                word_until(b, [stop_text(&t.function.name_suffix)]),
                b.space(),
                self.text(stop_text(&t.function.name_suffix)),
            ]));
        }
        if stop_text(&t.function.name_suffix).is_empty() && !stop_text(&t.per_call_start).is_empty()
        {
            // The next call's opener, where no name suffix tells a call apart.
            after_call.push(b.seq([
                b.optional(exact(&t.call_separator)),
                b.optional(exact(&t.section_start)),
                exact(&t.per_call_start),
            ]));
        }
        let turn_ends = self.turn_ends.iter().map(String::as_str);
        for m in [
            t.section_end.as_str(),
            self.reasoning_start,
            self.reasoning_end,
        ]
        .into_iter()
        .chain(turn_ends)
        {
            if !m.trim().is_empty() {
                after_call.push(exact(m));
            }
        }
        after_call.push(b.seq([b.space(), b.end()]));
        after_call
    }

    /// A value's raw text whose end marker is text a value may hold (`"`, `, `, `)`; see
    /// [`weak_end`]): it runs to the first place where what follows a value comes (the value
    /// suffix, then the next argument, or the end of the arguments or of the call followed by
    /// what may follow a call); an end marker elsewhere is text (`say "hi" now` between
    /// quotes, `Lunch (team), 12:00` before `)`).
    fn guided_text(&self, t: &ToolAnalysis, end: &str) -> Parser {
        let b = self.b;
        let a = &t.arguments;
        let exact = |m: &str| self.marker_or_blank(m);
        let after_call = self.after_call_forms(t);
        // After an explicit end marker, a line break too.
        let after_end = b.choice(
            after_call
                .iter()
                .copied()
                .chain([b.seq([b.chars("[ \\t]", 0, None), b.literal("\n")])]),
        );
        let after_call = b.choice(after_call);
        // The end of the arguments or of the call, then what may follow a call; with neither
        // marker, what follows a call right away.
        let ends: Vec<&str> = [
            a.end.as_str(),
            t.function.close.as_str(),
            t.per_call_end.as_str(),
        ]
        .into_iter()
        .filter(|m| !m.is_empty())
        .collect();
        // A value over lines goes on at a line that starts no declared argument (a line of
        // code `x = 1` in a value is text).
        let next_argument = if line_end(end) && !self.parameter_names.is_empty() {
            self.next_declared_argument(a)
        } else {
            self.next_argument(a)
        };
        let mut after = vec![next_argument];
        if ends.is_empty() {
            after.push(b.peek(after_call));
        } else {
            // An end may be followed by the ends after it (`)` then `</invoke>`).
            for (i, m) in ends.iter().enumerate() {
                if !weak_end(m) {
                    // A whole marker (`§end`, `</call>`): no value holds it, whatever follows.
                    after.push(exact(m));
                    continue;
                }
                let mut next: Vec<Parser> = ends[i + 1..].iter().map(|m| exact(m)).collect();
                next.push(after_end);
                after.push(b.seq([exact(m), b.peek(b.choice(next))]));
            }
        }
        let follow = b.seq([self.lit_before(&a.value_suffix), b.choice(after)]);
        // Where `follow` may start: the suffix, or (blank) any marker after a value.
        let stop = |m: &'_ str| -> Option<String> {
            match (m.is_empty(), stop_text(m)) {
                (true, _) => None,
                (false, "") => Some(m.to_owned()),
                (false, core) => Some(core.to_owned()),
            }
        };
        let turn_end_starts = form_starts(&self.turn_ends);
        let stops: Vec<String> = if stop_text(&a.value_suffix).is_empty() {
            [
                end,
                a.separator.as_str(),
                a.end.as_str(),
                t.function.close.as_str(),
                t.per_call_end.as_str(),
                t.call_separator.as_str(),
                t.per_call_start.as_str(),
                t.section_end.as_str(),
            ]
            .into_iter()
            .filter_map(stop)
            // A turn end may follow the last value right away (the model stopped there).
            .chain(turn_end_starts.iter().cloned())
            // Bare values: whitespace before what follows is layout, not value (a value that
            // runs to its line break holds its spaces).
            .chain(if line_end(end) {
                vec!["\r".to_owned(), "\n".to_owned()]
            } else {
                [" ", "\t", "\r", "\n"].map(String::from).to_vec()
            })
            .collect()
        } else {
            vec![stop_text(&a.value_suffix).to_owned()]
        };
        let until = || b.until_one_of(stops.iter().map(String::as_str));
        // Where a turn end stands that does not end the output, the value goes on (as it did
        // before it stopped there); a final one ends it.
        let starts = turn_end_starts;
        let ends_here = if starts.is_empty() {
            follow
        } else {
            b.choice([
                self.turn_end(&self.turn_ends),
                b.seq([
                    b.negate(b.choice(starts.iter().map(|s| b.literal(s)))),
                    follow,
                ]),
            ])
        };
        // (A negation first: the grammar writes such text as its first run alone.)
        let go_on = b.negate(ends_here);
        b.seq([until(), b.zero_or_more(b.seq([go_on, b.any(), until()]))])
    }

    /// The start of the next tagged argument, as a lookahead: the separator, the name prefix,
    /// and (when the name has a suffix) a name and that suffix.
    fn next_argument(&self, a: &ArgumentMarkers) -> Parser {
        let b = self.b;
        let name_suffix = stop_text(&a.name_suffix);
        b.seq([
            self.lit_before(&a.separator),
            self.lit_before(&a.name_prefix),
            if name_suffix.is_empty() {
                b.eps()
            } else {
                b.seq([
                    b.space(),
                    b.chars(ARGUMENT_NAME_CHARS, 1, None),
                    b.space(),
                    self.text(name_suffix),
                ])
            },
        ])
    }

    /// The start of the next tagged argument under a declared name: the separator, the name
    /// prefix, one of [`Self::parameter_names`] and the name suffix (if any), after which no
    /// further name character follows.
    fn next_declared_argument(&self, a: &ArgumentMarkers) -> Parser {
        let b = self.b;
        let name_suffix = stop_text(&a.name_suffix);
        let mut names: Vec<&str> = self.parameter_names.iter().map(String::as_str).collect();
        // Longest first: a name that starts another does not cut it short.
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        let name = b.seq([
            b.choice(names.into_iter().map(|n| b.literal(n))),
            b.negate(b.chars(ARGUMENT_NAME_CHARS, 1, None)),
        ]);
        b.seq([
            self.lit_before(&a.separator),
            self.lit_before(&a.name_prefix),
            b.space(),
            name,
            if name_suffix.is_empty() {
                b.eps()
            } else {
                b.seq([b.space(), self.text(name_suffix)])
            },
        ])
    }

    /// A string between `quote`s that ends at the first closing quote `follow` comes after (a
    /// quote elsewhere is text, as models write nested quotes unescaped: `'sed -n '1,5p' f'`);
    /// with `escapes`, a backslash escapes the character after it (`\'`). Line breaks and
    /// control characters are text.
    fn quoted_string(&self, quote: &str, escapes: bool, follow: Parser) -> Parser {
        let b = self.b;
        let mut parts = Vec::new();
        if escapes {
            parts.push(b.chars(&format!("[^{}\\\\]", regex_escape(quote)), 1, None));
            parts.push(b.seq([b.literal("\\"), b.any()]));
        } else {
            parts.push(b.chars(&format!("[^{}]", regex_escape(quote)), 1, None));
        }
        parts.push(b.seq([b.literal(quote), b.negate(follow)]));
        b.seq([
            b.literal(quote),
            b.zero_or_more(b.choice(parts)),
            b.literal(quote),
        ])
    }

    /// A literal value (see [`super::literal`]): a string in the format's quotes or a bare
    /// value. A string in `'` or `"` quotes (`follow`: what comes after a value) ends at the
    /// first closing quote `follow` comes after: a quote elsewhere is text, as models write
    /// nested quotes unescaped (`'sed -n '1,5p' f'`). Unless the template writes strings
    /// verbatim, a backslash escapes the character after it (`\'`); line breaks and control
    /// characters are text.
    ///
    /// A bare value (a number, `true`) ends at whitespace, at JSON punctuation, and where what
    /// follows a value in this format starts: the argument separator or what ends the
    /// arguments (`ends`), e.g. the `)` of `name(days: 2)`.
    fn literal_value(&self, a: &ArgumentMarkers, follow: Option<Parser>, ends: &[&str]) -> Parser {
        let b = self.b;
        let (open, close) = (a.string_open.as_str(), a.string_close.as_str());
        if open == "'" || open == "\"" {
            let Some(follow) = follow.filter(|_| close.chars().count() == 1) else {
                return b.json();
            };
            let verbatim = |quote: &str| a.verbatim_strings && quote == close;
            let quoted = |quote: &str| self.quoted_string(quote, !verbatim(quote), follow);
            return b.choice([quoted("'"), quoted("\""), b.json()]);
        }
        let value = b.reference("literal-value");
        let string = b.seq([b.literal(open), b.until(close), b.literal(close)]);
        // Nested containers: JSON's punctuation, or the format's own (see `LiteralSyntax`).
        let syntax = super::literal::LiteralSyntax::of(a);
        // A bare key is the text up to the key's punctuation, spaces included, as the
        // template writes keys (`{Model Name:…}`); it holds no punctuation or line break.
        let mut key_class = String::from(":{}\\[\\],\\n\\r");
        for c in [&syntax.key, &syntax.item, &a.string_open]
            .into_iter()
            .filter_map(|m| m.chars().next())
        {
            key_class.push_str(&regex_escape(&c.to_string()));
        }
        let bare_key = b.seq([
            b.chars(ARGUMENT_NAME_CHARS, 1, None),
            b.chars(&format!("[^{key_class}]"), 0, None),
        ]);
        let key = b.choice([string, bare_key]);
        let punctuation = |json: &str, own: &str| {
            if own.is_empty() {
                b.literal(json)
            } else {
                b.choice([b.literal(json), b.literal(own)])
            }
        };
        let colon = punctuation(":", &syntax.key);
        let comma = punctuation(",", &syntax.item);
        let member = b.seq([key, b.space(), colon, b.space(), value]);
        let list = |item: Parser, open: &str, close: &str| {
            b.seq([
                b.literal(open),
                b.space(),
                b.optional(b.seq([
                    item,
                    b.zero_or_more(b.seq([b.space(), comma, b.space(), item])),
                ])),
                b.space(),
                b.literal(close),
            ])
        };
        let object = list(member, "{", "}");
        let array = list(value, "[", "]");
        // Whitespace and JSON punctuation, and the first character of what follows a value
        // in this format (never whitespace: the markers are trimmed).
        let mut class = String::from(",}\\] \\n\\r\\t");
        let mut stops = vec![',', '}', ']'];
        for marker in ends
            .iter()
            .chain([&a.separator.as_str(), &syntax.key.as_str()])
        {
            if let Some(c) = marker.trim().chars().next().filter(|c| !stops.contains(c)) {
                stops.push(c);
                class.push_str(&regex_escape(&c.to_string()));
            }
        }
        // A value that starts with the string opener is a string, closed or not.
        let bare = b.seq([
            b.negate(b.literal(open)),
            b.chars(&format!("[^{class}]"), 1, None),
        ]);
        b.rule("literal-value", b.choice([string, object, array, bare]))
    }

    fn json_call(&self, t: &ToolAnalysis) -> Parser {
        let b = self.b;
        let layout = t.json.clone().unwrap_or_default();
        // Bare JSON (no marker opens the call): only a declared tool's name makes it a call.
        let bare = t.per_call_start.trim().is_empty() && t.section_start.trim().is_empty();
        let name_value = || {
            if bare && !self.tool_names.is_empty() {
                b.choice(self.tool_names.iter().flat_map(|n| {
                    let json = serde_json::Value::String(n.clone()).to_string();
                    let python = format!("'{}'", n.replace('\\', "\\\\").replace('\'', "\\'"));
                    [b.literal(&json), b.literal(&python)]
                }))
            } else {
                b.json_string()
            }
        };
        let (object, head) = if layout.name_is_key {
            let head = b.seq([
                b.literal("{"),
                b.space(),
                b.tag(tags::TOOL_NAME, name_value()),
                b.space(),
                b.literal(":"),
            ]);
            let object = b.seq([
                head,
                b.space(),
                b.tag(tags::TOOL_ARGS, b.json()),
                b.space(),
                b.literal("}"),
            ]);
            (object, head)
        } else {
            let name = layout.name_field.as_deref().unwrap_or("name");
            let args = layout.arguments_field.as_deref().unwrap_or("arguments");
            let named = b.json_member(name, b.tag(tags::TOOL_NAME, name_value()));
            let mut members: Vec<Parser> = argument_fields(args)
                .enumerate()
                .map(|(i, field)| {
                    let member = b.json_member(field, b.tag(tags::TOOL_ARGS, b.json()));
                    if i == 0 {
                        member
                    } else {
                        b.tag(tags::LENIENT, member)
                    }
                })
                .collect();
            if let Some(id) = layout
                .id_field
                .as_ref()
                .or(layout.generated_id_field.as_ref())
            {
                members.push(b.json_member(id, b.tag(tags::TOOL_ID, b.json())));
            }
            // Fields the template writes with the same text in every call (`"type":
            // "function"`): members of their own, so a grammar writes them.
            for (key, value) in &layout.constant_fields {
                let text = serde_json::Value::String(value.clone()).to_string();
                members.push(b.json_member(key, b.literal(&text)));
            }
            let argument_members = argument_fields(args).count();
            // A call has its name: an object without the name field is not a call.
            let (inner, inner_head) = self.object(named, named, &[name], members.clone());
            match &layout.function_field {
                Some(function) => {
                    // Arguments beside the function object are read (a flat call), never
                    // written: a grammar that wrote them there and inside would give the
                    // parser two arguments objects.
                    let outer: Vec<Parser> = members
                        .into_iter()
                        .enumerate()
                        .map(|(i, m)| {
                            if i < argument_members {
                                b.tag(tags::LENIENT, m)
                            } else {
                                m
                            }
                        })
                        .collect();
                    self.object(
                        b.choice([b.json_member(function, inner), named]),
                        b.choice([b.seq([b.json_member(function, b.eps()), inner_head]), named]),
                        &[function.as_str(), name],
                        outer,
                    )
                }
                None => (inner, inner_head),
            }
        };
        let call_end = self.call_end(&t.per_call_end, &[&t.per_call_start]);
        let single = self.shown_with_name(
            b.seq([self.lit(&t.per_call_start), head]),
            b.seq([self.lit(&t.per_call_start), object, call_end]),
        );
        if t.per_call_start.trim().is_empty() || layout.array_wrapped {
            return single;
        }
        // Calls the template opens one by one (`<|call|>{…}`), written by the model as one
        // JSON list after a single opener (`<|call|>[{…}, {…}]`): each object is a call (read,
        // never written).
        let element = || self.shown_with_name(head, object);
        let list = b.seq([
            self.lit(&t.per_call_start),
            b.space(),
            b.literal("["),
            b.space(),
            element(),
            b.zero_or_more(b.seq([b.space(), b.literal(","), b.space(), element()])),
            b.space(),
            b.literal("]"),
            call_end,
        ]);
        b.choice([single, b.tag(tags::LENIENT, list)])
    }

    /// A call (tagged `tool`) that starts only where `head` (the call up to the end of its
    /// name) matches: while the name is still being written, a partial parse shows no call (a
    /// stream must not announce one, and a call that turns out not to be one never showed).
    fn shown_with_name(&self, head: Parser, call: Parser) -> Parser {
        let b = self.b;
        // The lookahead is atomic: nothing it parsed shows while it is undecided.
        b.seq([b.atomic(b.peek(head)), b.tag(tags::TOOL, call)])
    }

    /// `{ member (, member)* }` holding `required` (a member under one of `required_keys`),
    /// where other members are one of `members` or any other key.
    ///
    /// Returns the object and its head: the object up to the end of the required member's
    /// `required_head`.
    fn object(
        &self,
        required: Parser,
        required_head: Parser,
        required_keys: &[&str],
        mut members: Vec<Parser>,
    ) -> (Parser, Parser) {
        let b = self.b;
        members.push(b.seq([
            b.json_string(),
            b.space(),
            b.literal(":"),
            b.space(),
            b.json(),
        ]));
        // Members before and after the required one alike: a repeat of it after it is another
        // key (ignored), so a call whose name a stream announced never turns into text or
        // another name.
        let other = b.choice(members);
        // Members before the required one are under other keys.
        let required_key = b.choice(required_keys.iter().map(|k| b.json_member(k, b.eps())));
        let before = b.seq([
            b.negate(required_key),
            other,
            b.space(),
            b.literal(","),
            b.space(),
        ]);
        let open = b.seq([b.literal("{"), b.space(), b.zero_or_more(before)]);
        let object = b.seq([
            open,
            required,
            b.zero_or_more(b.seq([b.space(), b.literal(","), b.space(), other])),
            b.space(),
            b.literal("}"),
        ]);
        (object, b.seq([open, required_head]))
    }
}

/// `text` with optional whitespace after each whole marker in it (`<|start|> assistant` for
/// `<|start|>assistant`), the space such tokenizers write after a special token.
fn spaced_after_markers(b: &GrammarBuilder, text: &str) -> Parser {
    let pieces = crate::analyze::markers::split_after_markers(text);
    let spaced = pieces.iter().enumerate().flat_map(|(i, piece)| {
        let space = (i > 0).then(|| b.space());
        space.into_iter().chain([b.literal(piece)])
    });
    b.seq(spaced.collect::<Vec<_>>())
}

/// The grammar of a channel-message turn (see [`ChannelFormat`]):
///
/// ```text
/// turn    = message* end
/// message = REOPEN? space (tool | other | dangling | reasoning | content) | plain
/// tool    = header with recipient TOOL_RECIPIENT name, body: tag(tool_args, json)
/// other   = header with another recipient: dropped
/// reasoning / content = header of a reasoning / content channel, body tagged
/// ```
fn channel_grammar(
    b: GrammarBuilder,
    c: &ChannelFormat,
    options: &GrammarOptions,
) -> Result<BuiltGrammar, BuildError> {
    let word = || b.chars("[A-Za-z0-9_.\\-]", 1, None);
    let mut stops: Vec<String> = c.message_ends.clone();
    stops.push(c.reopen.clone());
    stops.retain(|s| !s.is_empty());
    let end = b.optional(b.choice(c.message_ends.iter().map(|m| b.literal(m))));
    let reopened = || spaced_after_markers(&b, &c.reopen);
    // What starts the next message: the re-opened header, or (where the model leaves the
    // message end and the re-opening out) its channel or recipient.
    let next_message = || {
        let heads = [&c.header_start, &c.recipient].into_iter();
        let heads = heads.filter(|m| !m.is_empty()).map(|m| b.literal(m));
        b.choice([reopened()].into_iter().chain(heads))
    };
    let reopen = b.optional(b.seq([b.space(), reopened()]));
    // The content type: `<|constrain|>json` as models write it, or a bare `json` as
    // templates render it.
    let constrain = b.optional(b.seq([
        b.space(),
        b.choice([
            b.seq([
                b.literal(&c.constrain),
                b.space(),
                b.chars("[A-Za-z0-9_.\\-]", 0, None),
            ]),
            word(),
        ]),
    ]));
    let header_end = b.seq([constrain, b.space(), b.literal(&c.header_end)]);
    // A word may follow a space after a special token: tokenizers that mark word starts
    // (SentencePiece's `▁`) decode the word after a special token with one
    // (`<|channel|> final`, `<|start|> assistant`, `<|constrain|> json`).
    let header_start = || b.seq([b.literal(&c.header_start), b.space()]);
    let channel = |names: &[String]| b.choice(names.iter().map(|n| b.literal(n)));
    let with_recipient = |recipient: Parser| {
        b.choice([
            b.seq([recipient, b.space(), header_start(), word()]),
            b.seq([header_start(), word(), b.space(), recipient]),
        ])
    };
    let tool_recipient = b.seq([
        b.literal(&c.recipient),
        b.literal(&c.tool_recipient),
        b.tag(tags::TOOL_NAME, word()),
    ]);
    // Not the tool recipient: a message to a tool whose arguments do not parse is no call,
    // and not another recipient's (dropped) message either; it stays content.
    let other_recipient = b.seq([
        b.literal(&c.recipient),
        b.negate(b.literal(&c.tool_recipient)),
        word(),
    ]);
    let body = || b.until_one_of(&stops);
    let message_end = || {
        let ends = c.message_ends.iter().map(|m| b.literal(m));
        b.choice(ends.chain([b.end()]))
    };
    let mut alternatives = Vec::new();
    if options.tools {
        alternatives.push(b.tag(
            tags::TOOL,
            b.seq([
                // The call shows only once its whole header matched: a header that never
                // reaches its message start was never a call, so a stream must not announce
                // it (its name) before the grammar is past the header.
                b.atomic(b.seq([with_recipient(tool_recipient), header_end])),
                b.space(),
                b.choice([
                    // JSON arguments: the whole message (its end, or the output's, follows).
                    b.seq([
                        b.tag(tags::TOOL_ARGS, b.json()),
                        // (or the next message's header, where the message end is left out)
                        b.peek(b.seq([b.space(), b.choice([message_end(), next_message()])])),
                    ]),
                    // A call with nothing in its message: no arguments (read, never
                    // written).
                    b.tag(tags::LENIENT, b.peek(message_end())),
                    // A message that is not JSON (no content type says it must be): its text
                    // is the arguments, as written (read, never written).
                    b.tag(
                        tags::LENIENT,
                        b.tag(tags::TOOL_ARGS, b.until_one_of(&stops)),
                    ),
                ]),
                b.space(),
                end,
                // The header re-opened for the next message belongs to the call, so that a
                // constraint grammar built from calls writes it between two calls.
                reopen,
            ]),
        ));
    }
    // Messages to other recipients are dropped, as are headers left without a message.
    alternatives.push(b.seq([with_recipient(other_recipient), header_end, body(), end]));
    alternatives.push(with_recipient(other_recipient));
    let reasoning_header = b.seq([header_start(), channel(&c.reasoning_channels), header_end]);
    if options.extract_reasoning {
        alternatives.push(b.seq([reasoning_header, b.tag(tags::REASONING, body()), end]));
    } else {
        // Reasoning kept inline: the whole message, header included, is content.
        alternatives.push(b.tag(tags::CONTENT, b.seq([reasoning_header, body(), end])));
    }
    alternatives.push(b.seq([
        header_start(),
        channel(&c.content_channels),
        header_end,
        b.tag(tags::CONTENT, body()),
        end,
    ]));
    let message = b.seq([reopen, b.space(), b.choice(alternatives)]);
    let mut triggers = vec![
        c.header_start.clone(),
        c.reopen.clone(),
        c.recipient.clone(),
    ];
    triggers.retain(|t| !t.is_empty());
    // Text outside messages is content, but a message end that ends the output (written with
    // no message, or after plain text) is the model stopping: it is in no field.
    let ends: Vec<&String> = c.message_ends.iter().filter(|m| !m.is_empty()).collect();
    let final_end = b.seq([
        b.space(),
        b.choice(ends.iter().map(|m| b.literal(m))),
        b.space(),
        b.end(),
    ]);
    let mut plain_stops = triggers.clone();
    plain_stops.extend(ends.iter().map(|m| (*m).clone()));
    let plain = b.tag(
        tags::CONTENT,
        b.seq([b.any(), b.until_one_of(&plain_stops)]),
    );
    let mut items = vec![message];
    if !ends.is_empty() {
        items.push(final_end);
    }
    items.push(plain);
    let root = b.seq([b.zero_or_more(b.choice(items)), b.end()]);
    let mut markers = triggers;
    markers.extend(c.message_ends.iter().cloned());
    markers.sort();
    markers.dedup();
    Ok(BuiltGrammar {
        grammar: b.build(root)?,
        markers,
        // Message bodies are content too.
        content_stops: None,
        bare_call_starts: Vec::new(),
        // A call is a message of its own: it may open the output.
        calls_are_messages: true,
    })
}
