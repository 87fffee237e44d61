//! Phase J: how a template spreads one message's reasoning (or content) over several blocks.
//!
//! Some templates write the reasoning between tool calls: `reasoning_content` is split (at
//! blank lines, say) into blocks, and each block goes before its call. A model that thinks
//! between calls then writes several blocks in one output, and the message holds them joined
//! the way the template splits them. The join is found by rendering a turn with two calls
//! whose reasoning (content) is two probes joined by a candidate separator: when a call
//! lands between the two probes, the template splits there.

use super::compare::Renderer;
use super::content::ContentAnalysis;
use super::frame::Frame;
use super::reasoning::ReasoningAnalysis;
use super::scenario::{Call, ProbeSet, Scenario, Turn};

/// The separators tried, most specific first.
const CANDIDATES: [&str; 2] = ["\n\n", "\n"];

/// Which field a join is looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `reasoning_content`.
    Reasoning,
    /// `content`.
    Content,
}

/// The separator the template splits `field` at when it writes it in several blocks around
/// tool calls, if it does.
pub fn block_join(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: Option<&Scenario>,
    reasoning: &ReasoningAnalysis,
    field: Field,
) -> Option<String> {
    let base = tool_scenario?;
    if field == Field::Reasoning && !reasoning.found() {
        return None;
    }
    let (p, c) = (&ProbeSet::PRIMARY, &ProbeSet::CHECK);
    let (first, second) = match field {
        Field::Reasoning => (p.reasoning, c.reasoning),
        Field::Content => (p.content, c.content),
    };
    let calls = vec![Call::first(p, 2), Call::second(p, 2)];
    CANDIDATES.into_iter().find_map(|join| {
        let text = format!("{first}{join}{second}");
        let mut turn = Turn {
            calls: calls.clone(),
            ..Turn::default()
        };
        match field {
            Field::Reasoning => turn.reasoning = Some(text),
            Field::Content => turn.content = Some(text),
        }
        let scenario = Scenario {
            turn: Some(turn),
            ..base.clone()
        };
        let body = frame.body(&renderer.render(&scenario).ok()?, true);
        let (a, b) = (body.find(first)?, body.find(second)?);
        let between = body.get(a + first.len()..b)?;
        (between != join && between.contains(p.fn_first)).then(|| join.to_owned())
    })
}

/// Fills in the joins of `reasoning` and `content`.
pub fn analyze(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: Option<&Scenario>,
    reasoning: &mut ReasoningAnalysis,
    content: &mut ContentAnalysis,
) {
    reasoning.block_join = block_join(renderer, frame, tool_scenario, reasoning, Field::Reasoning);
    content.block_join = block_join(renderer, frame, tool_scenario, reasoning, Field::Content);
}
