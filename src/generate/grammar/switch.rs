//! The grammar of a role-switch turn (see [`SwitchFormat`]): messages that re-open the
//! assistant header, each picking its kind by what follows the header.
//!
//! ```text
//! turn    = (space HEADER)? kind? (tools | SEP kind? | turn_end | content)* $
//! SEP     = space MESSAGE_END space HEADER                   (dropped)
//!         | space HEADER &(space OPENER)                     (end left out; read only)
//! kind    = space REASONING_START tag(reasoning, until MESSAGE_END)
//!         | space CONTENT_SUFFIX                             (dropped)
//! content = tag(content, any until MESSAGE_END | TRIGGERS | TURN_END)
//! ```
//!
//! A reasoning start counts only right after a header (the one the prompt wrote, or one
//! re-opened after a message end): elsewhere it is the model's text. A header without a
//! message end before it re-opens a message only when a kind's opener (reasoning, content, a
//! call) follows it; elsewhere it is text too (except a repeat of the prompt's header at the
//! start of the output). Text after a message end that neither re-opens the header nor ends
//! the output stays content.

use crate::peg::{BuildError, GrammarBuilder};

use super::super::format::{SwitchFormat, TurnFormat};
use super::{form_starts, tags, turn_body, turn_end_forms, BuiltGrammar, Gen, GrammarOptions};

/// Builds the grammar of a role-switch turn.
pub(super) fn switch_grammar(
    b: GrammarBuilder,
    format: &TurnFormat,
    s: &SwitchFormat,
    options: &GrammarOptions,
) -> Result<BuiltGrammar, BuildError> {
    let g = Gen {
        b: &b,
        literal_values: format.literal_values,
        tool_names: &options.tool_names,
        parameter_names: &options.parameter_names,
        reasoning_start: &format.reasoning.start,
        reasoning_end: &format.reasoning.end,
        turn_ends: turn_end_forms(&[&format.turn_end, &format.tool_turn_end, &s.message_end]),
        part_openers: super::part_openers(format),
    };
    let (header, end) = (s.header.trim(), s.message_end.trim());
    let te = g.turn_ends.clone();
    let mut triggers: Vec<String> = Vec::new();
    let add = |t: &str, triggers: &mut Vec<String>| {
        if !t.is_empty() && !triggers.iter().any(|x| x == t) {
            triggers.push(t.to_owned());
        }
    };
    add(end, &mut triggers);
    let mut tool_block = None;
    if let Some(t) = format.tools.as_ref().filter(|_| options.tools) {
        let block = g.tools(t, options.parallel_tool_calls, false, None);
        tool_block = Some(b.trigger_rule("tool-calls", block.parser));
        for t in &block.triggers {
            add(t, &mut triggers);
        }
    }
    for start in form_starts(&te) {
        add(&start, &mut triggers);
    }
    // What a message opens with, right after its header: the reasoning start, or the content
    // suffix (dropped). An opener right before another kind's opener (the prompt opened one
    // kind and the model wrote another) opened nothing and is dropped.
    let rs = format.reasoning.start.trim();
    let cs = s.content.trim();
    let tool_starts: Vec<String> = match format.tools.as_ref().filter(|_| options.tools) {
        Some(t) => {
            g.tools(t, options.parallel_tool_calls, false, None)
                .triggers
        }
        None => Vec::new(),
    };
    let mut openers: Vec<&str> = vec![rs, cs];
    openers.extend(tool_starts.iter().map(String::as_str));
    openers.retain(|o| !o.is_empty());
    let rechosen = || b.peek(b.seq([b.space(), b.choice(openers.iter().map(|o| b.literal(o)))]));
    let mut empty = Vec::new();
    let mut kinds = Vec::new();
    // A reasoning message runs to the message end: what follows it is the next message, the
    // turn's end or the end of the output (said here, not left to the turn's loop, so that a
    // grammar made from this parser cannot put calls right after reasoning text).
    // (A message end followed by neither is dropped, what follows it read as the turn's next
    // part.)
    // A turn end that does not open with the message end (the last message's own ending)
    // ends reasoning only at the end of the output; elsewhere it is reasoning text.
    let final_ends_differ = form_starts(&te).iter().any(|f| !f.starts_with(end));
    // The model may leave the message end out and re-open the header right away: the header
    // followed by a kind's opener starts the next message (`…<|start|>assistant to=user…`).
    let reopened = || b.seq([b.space(), b.literal(header), rechosen()]);
    let reasoning_text = || {
        if header.is_empty() {
            return g.until_closer_or_final_turn_end(end, &[], &te);
        }
        let mut stops = vec![end.to_owned(), header.to_owned()];
        stops.extend(form_starts(&te).into_iter().filter(|f| !f.starts_with(end)));
        let stop_here = b.choice([b.literal(end), reopened(), g.turn_end(&te)]);
        b.seq([
            b.until_one_of(stops.clone()),
            b.zero_or_more(b.seq([b.negate(stop_here), b.any(), b.until_one_of(stops.clone())])),
        ])
    };
    let te_after: Vec<String> = te.iter().filter(|f| f.starts_with(end)).cloned().collect();
    let mut after = vec![b.reference("switch-separator")];
    if !te_after.is_empty() {
        after.push(g.turn_end(&te_after));
    }
    if final_ends_differ {
        // Read, never written by a grammar: a grammar cannot hold "only at the end of the
        // output" here, and text after the turn end would be read as reasoning.
        after.push(b.tag(tags::LENIENT, g.turn_end(&te)));
    }
    after.push(b.seq([b.space(), b.literal(end)]));
    // A reasoning message cut off by the end of the output (read, never written: a grammar
    // cannot hold "only at the end" here either).
    after.push(b.tag(tags::LENIENT, b.seq([b.space(), b.end()])));
    let after_reasoning = b.choice(after);
    if !rs.is_empty() {
        let opener = || b.seq([b.space(), b.literal(rs)]);
        // (Read, never written: a grammar cannot hold the lookahead, and would write the
        // opener before a call, which the parser reads as reasoning text.)
        empty.push(b.tag(tags::LENIENT, b.seq([opener(), rechosen()])));
        kinds.push(if options.extract_reasoning {
            b.seq([
                opener(),
                b.tag(tags::REASONING, reasoning_text()),
                after_reasoning,
            ])
        } else {
            // Reasoning kept inline: the message, its opener included, is content.
            b.seq([
                b.tag(tags::CONTENT, b.seq([opener(), reasoning_text()])),
                after_reasoning,
            ])
        });
    }
    if !cs.is_empty() {
        let opener = || b.seq([b.space(), b.literal(cs)]);
        empty.push(b.seq([opener(), rechosen()]));
        kinds.push(opener());
    }
    let kind = if kinds.is_empty() {
        b.eps()
    } else {
        b.seq([b.zero_or_more(b.choice(empty)), b.optional(b.choice(kinds))])
    };
    let mut separators = vec![b.seq([
        b.space(),
        b.literal(end),
        b.space(),
        b.literal(header),
        kind,
    ])];
    if !header.is_empty() {
        // The message end left out before a re-opened header and a kind's opener: read,
        // never written. (The tag is entered only once the lookahead holds, so no tag is left
        // open at the end of a stream's text.)
        separators.push(b.seq([
            b.peek(reopened()),
            b.tag(tags::LENIENT, b.seq([b.space(), b.literal(header)])),
            kind,
        ]));
        add(header, &mut triggers);
    }
    let separator = b.rule("switch-separator", b.choice(separators));
    // The model may repeat the header the prompt wrote.
    let echo = b.optional(b.seq([b.space(), b.literal(header)]));
    let mut alternatives = vec![separator, g.turn_end(&te)];
    alternatives.push(b.tag(tags::CONTENT, b.seq([b.any(), b.until_one_of(&triggers)])));
    let body = turn_body(&b, tool_block, alternatives, options.parallel_tool_calls);
    let root = b.seq([echo, kind, body, b.end()]);
    let mut markers = triggers;
    for m in [rs, cs, header] {
        if !m.is_empty() && !markers.iter().any(|x| x == m) {
            markers.push(m.to_owned());
        }
    }
    markers.sort();
    markers.dedup();
    Ok(BuiltGrammar {
        grammar: b.build(root)?,
        markers,
        // Reasoning and content after a header are read otherwise than up to the triggers.
        content_stops: None,
        bare_call_starts: Vec::new(),
        // A call is a message of its own: it may open the output.
        calls_are_messages: true,
    })
}
