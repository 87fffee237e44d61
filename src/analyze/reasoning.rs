//! Phase R: reasoning markers and what the generation prompt opens.
//!
//! - **R1** renders an assistant turn with content, with and without `reasoning_content`, and
//!   reads the markers around the reasoning probe in the turn body. When the template always
//!   renders a reasoning block (empty without reasoning), the content-only body is exactly
//!   `start + end` before the content, which tells the end marker from a content wrapper.
//! - **R3** (when R1 finds nothing and tool calls render): the same with a tool-call turn;
//!   reasoning that renders only there is [`ReasoningScope::ToolCallsOnly`].
//! - **R2** (when no turn renders reasoning): the generation prompts with thinking on and off.
//!   A prompt ending with a marker opens reasoning; the other prompt's closing marker, or the
//!   conventional closing form of the opener (`<x>` → `</x>`, `[X]` → `[/X]`) confirmed by the
//!   template stripping reasoning that ends with it from content, gives the end.
//!
//! The prefill (what each generation prompt already wrote) is classified for both thinking
//! settings in every case.

use serde::{Deserialize, Serialize};

use super::compare::{compare, Renderer};
use super::frame::Frame;
use super::markers::{
    is_bracket_pair, last_marker, marker_prefix_len, marker_spans, split_after_first_marker,
    trailing_marker,
};
use super::scenario::{Call, ProbeSet, Scenario, Turn, CONTENT, REASONING};

/// How reasoning is delimited in the model output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningMode {
    /// No reasoning markers found.
    None,
    /// `start` reasoning `end`, both markers non-empty.
    Tagged,
    /// Reasoning runs from the start of the output to `end` (`start` is empty).
    Delimited,
}

/// Which turns carry reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningScope {
    /// Any assistant turn.
    Always,
    /// Only turns with tool calls.
    ToolCallsOnly,
}

/// Where the reasoning markers were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkerSource {
    /// Around `reasoning_content` rendered in an assistant turn.
    Turn,
    /// From the generation prompts (thinking on vs off).
    GenerationPrompt,
    /// Stated in the prompt's words, written by no render (see `stated_reasoning`).
    Prompt,
    /// No markers.
    None,
}

/// What a generation prompt already wrote of the assistant output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prefill {
    /// Nothing reasoning-related: the model starts the output.
    None,
    /// The prompt ends inside an opened reasoning block: the model writes reasoning first.
    ReasoningOpen,
    /// The prompt holds a closed (empty) reasoning block or the end marker: no reasoning.
    ReasoningClosed,
}

/// What a template renders of reasoning in an assistant turn that has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WithoutReasoning {
    /// Nothing.
    Nothing,
    /// An empty block, `start + end`.
    EmptyBlock,
    /// The end marker alone.
    EndMarker,
}

impl ReasoningAnalysis {
    /// What a turn without reasoning starts with (`""`, `start + end` or `end`).
    pub fn empty_residue(&self) -> String {
        match self.without_reasoning {
            WithoutReasoning::Nothing => String::new(),
            WithoutReasoning::EmptyBlock => format!("{}{}", self.start, self.end),
            WithoutReasoning::EndMarker => self.end.clone(),
        }
    }
}

/// The reasoning part of an [`Analysis`](super::Analysis).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningAnalysis {
    /// How reasoning is delimited.
    pub mode: ReasoningMode,
    /// Which turns carry reasoning.
    pub scope: ReasoningScope,
    /// Opening marker (empty for [`ReasoningMode::Delimited`]).
    pub start: String,
    /// Closing marker.
    pub end: String,
    /// Where the markers were read.
    pub source: MarkerSource,
    /// What the template renders in a turn without reasoning.
    pub without_reasoning: WithoutReasoning,
    /// Past reasoning renders only when given as a `{"type": "thinking"}` content part (not as
    /// `reasoning_content`).
    pub from_content_part: bool,
    /// What the generation prompt wrote with `enable_thinking` true.
    pub prefill_thinking_on: Prefill,
    /// What the generation prompt wrote with `enable_thinking` false.
    pub prefill_thinking_off: Prefill,
    /// The separator the template splits reasoning at to write it in blocks between tool
    /// calls (several blocks in one output are joined with it), if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_join: Option<String>,
}

impl ReasoningAnalysis {
    /// No reasoning.
    pub fn none() -> ReasoningAnalysis {
        ReasoningAnalysis {
            mode: ReasoningMode::None,
            scope: ReasoningScope::Always,
            start: String::new(),
            end: String::new(),
            source: MarkerSource::None,
            without_reasoning: WithoutReasoning::Nothing,
            from_content_part: false,
            prefill_thinking_on: Prefill::None,
            prefill_thinking_off: Prefill::None,
            block_join: None,
        }
    }

    pub(crate) fn with_markers(start: &str, end: &str, source: MarkerSource) -> ReasoningAnalysis {
        // Leading whitespace before the opener is not part of it.
        let start = start.trim_start();
        ReasoningAnalysis {
            mode: if start.is_empty() {
                ReasoningMode::Delimited
            } else {
                ReasoningMode::Tagged
            },
            start: start.to_owned(),
            end: end.to_owned(),
            source,
            ..ReasoningAnalysis::none()
        }
    }

    /// Whether reasoning markers were found.
    pub fn found(&self) -> bool {
        self.mode != ReasoningMode::None
    }
}

/// The result of phase R: the analysis, the content start seen only after reasoning (for
/// content mode `wrapped_with_reasoning`), and a reason when the reasoning cannot be expressed.
#[derive(Debug, Clone)]
pub struct ReasoningOutcome {
    /// The reasoning analysis.
    pub analysis: ReasoningAnalysis,
    /// Text between the end marker and the content that appears only with reasoning.
    pub content_start_after_reasoning: String,
    /// The body of the content + reasoning turn (for content analysis).
    pub reasoning_body: Option<String>,
    /// Why the reasoning part is unsupported, if it is.
    pub unsupported: Option<String>,
}

/// Runs phase R.
pub fn analyze(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: Option<&Scenario>,
) -> ReasoningOutcome {
    let mut outcome = ReasoningOutcome {
        analysis: ReasoningAnalysis::none(),
        content_start_after_reasoning: String::new(),
        reasoning_body: None,
        unsupported: None,
    };
    // Reasoning as `reasoning_content`, else as a `thinking` content part.
    for as_part in [false, true] {
        let content_only = Scenario::with_turn(Turn::content(CONTENT));
        let with_reasoning = compare(renderer, &content_only, |s| {
            if let Some(turn) = s.turn.as_mut() {
                turn.reasoning = Some(REASONING.to_owned());
                turn.reasoning_as_part = as_part;
            }
        });
        let Ok(comparison) = with_reasoning else {
            continue;
        };
        let body = frame.body(&comparison.b, false);
        // A template that prints the content list verbatim shows our own keys, not markers.
        let found = from_content_turn(&body, &frame.content_body).filter(|(a, _)| {
            let dump = |m: &str| {
                ["'type'", "\"type\"", "'text'", "\"text\""]
                    .iter()
                    .any(|k| m.contains(k))
            };
            !as_part || !(dump(&a.start) || dump(&a.end))
        });
        if let Some(found) = found {
            outcome.analysis = found.0;
            outcome.analysis.from_content_part = as_part;
            outcome.content_start_after_reasoning = found.1;
            outcome.reasoning_body = Some(body);
            break;
        }
        if !as_part {
            outcome.reasoning_body = Some(body);
        }
    }
    if !outcome.analysis.found() {
        if let Some(found) = tool_scope(renderer, frame, tool_scenario) {
            outcome.analysis = found;
        }
    }
    if !outcome.analysis.found() {
        if let Some(found) = from_prompts(frame) {
            outcome.analysis = found;
        }
    }
    if !outcome.analysis.found() {
        outcome.unsupported = outcome.reasoning_body.as_deref().and_then(bare_reasoning);
    }
    classify_prefills(&mut outcome.analysis, frame);
    outcome
}

/// Why reasoning that renders in `body` (a content turn given reasoning) cannot be read back
/// when no marker was found around it: it is written as bare text beside the content.
fn bare_reasoning(body: &str) -> Option<String> {
    let (r, c) = (body.find(REASONING)?, body.find(CONTENT)?);
    let between = if r < c {
        &body[r + REASONING.len()..c]
    } else {
        &body[c + CONTENT.len()..r]
    };
    Some(format!(
        "reasoning_content renders as bare text, {between:?} between it and the content, with \
         no marker of its own: it cannot be told from the content"
    ))
}

/// Classifies what each generation prompt (thinking on and off) already wrote of `a`.
pub(crate) fn classify_prefills(a: &mut ReasoningAnalysis, frame: &Frame) {
    let on = format!("{}{}", frame.header, frame.prompt_thinking_on);
    let off = format!("{}{}", frame.header, frame.prompt_thinking_off);
    a.prefill_thinking_on = classify_prefill(&on, &a.start, &a.end);
    a.prefill_thinking_off = classify_prefill(&off, &a.start, &a.end);
}

/// A reasoning end read from a content turn that also holds the content's opener (a closer
/// shared by every block, then `<open-answer>`): the part of the end that a turn with
/// reasoning and no content also writes after the reasoning is the end; the rest, when it
/// holds a marker, opens the content only (phase C then reads it as the content's start).
/// The prefill classification follows the shorter end.
pub fn split_content_opener_by_reasoning_only_turn(
    renderer: &Renderer<'_>,
    frame: &Frame,
    outcome: &mut ReasoningOutcome,
) {
    let a = &mut outcome.analysis;
    // Only where nothing was read as the content's opener yet.
    if a.source != MarkerSource::Turn
        || a.from_content_part
        || !outcome.content_start_after_reasoning.trim().is_empty()
    {
        return;
    }
    let turn = Turn {
        content: Some(String::new()),
        reasoning: Some(REASONING.to_owned()),
        ..Turn::default()
    };
    let Ok(render) = renderer.render(&Scenario::with_turn(turn)) else {
        return;
    };
    let whole = frame.after_header(&render);
    let Some(at) = whole.find(REASONING) else {
        return;
    };
    let after = &whole[at + REASONING.len()..];
    let keep = marker_prefix_len(&a.end, after);
    let (end, opener) = a.end.split_at(keep);
    // The rest re-opening the turn (its header) is a role switch that belongs to the end.
    let reopens = frame.header.trim_start().starts_with(opener.trim());
    if end.trim().is_empty() || opener.trim().is_empty() || reopens {
        return;
    }
    a.end = end.to_owned();
    classify_prefills(a, frame);
}

/// R1: markers around the reasoning probe in a content turn body.
fn from_content_turn(body: &str, content_body: &str) -> Option<(ReasoningAnalysis, String)> {
    let r = body.find(REASONING)?;
    let start = &body[..r];
    let after = &body[r + REASONING.len()..];
    let between = &after[..after.find(CONTENT)?];
    let content_pre = &content_body[..content_body.find(CONTENT)?];
    let mut without = WithoutReasoning::Nothing;
    let mut rest = "";
    let end = if !content_pre.trim().is_empty() && format!("{start}{between}") == content_pre {
        without = WithoutReasoning::EmptyBlock;
        between
    } else if !content_pre.trim().is_empty() && between == content_pre {
        without = WithoutReasoning::EndMarker;
        between
    } else if !content_pre.trim().is_empty() && between.ends_with(content_pre) {
        let own = &between[..between.len() - content_pre.len()];
        if own.trim().is_empty() {
            // No closer of its own: the content's opener ends the block (each part of the
            // turn opens with its marker and runs to the next one's), as it ends an answer's
            // turn without reasoning.
            without = WithoutReasoning::EndMarker;
            between
        } else {
            own
        }
    } else {
        let (end, after_end) = split_after_first_marker(between);
        rest = after_end;
        end
    };
    if end.trim().is_empty() {
        return None;
    }
    let mut analysis = ReasoningAnalysis::with_markers(start, end, MarkerSource::Turn);
    analysis.without_reasoning = without;
    Some((analysis, rest.to_owned()))
}

/// R3: reasoning rendered only in tool-call turns.
fn tool_scope(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: Option<&Scenario>,
) -> Option<ReasoningAnalysis> {
    let scenario =
        tool_scenario?.with_calls(vec![Call::first(&ProbeSet::PRIMARY, 2)], Some(REASONING));
    let body = frame.body(&renderer.render(&scenario).ok()?, true);
    let r = body.find(REASONING)?;
    let (end, _) = split_after_first_marker(&body[r + REASONING.len()..]);
    if end.trim().is_empty() || end.contains(ProbeSet::PRIMARY.fn_first) {
        return None;
    }
    let mut analysis = ReasoningAnalysis::with_markers(&body[..r], end, MarkerSource::Turn);
    analysis.scope = ReasoningScope::ToolCallsOnly;
    Some(analysis)
}

/// R2: markers from the generation prompts. A block the prompt opens and that no render
/// closes is closed by its conventional closing form (`<think>` by `</think>`), whether or
/// not the template strips reasoning at it from earlier turns.
fn from_prompts(frame: &Frame) -> Option<ReasoningAnalysis> {
    let on = frame.prompt_thinking_on.trim_end();
    let off = frame.prompt_thinking_off.trim_end();
    let markers = |t: &str| -> Vec<String> {
        marker_spans(t)
            .into_iter()
            .map(|(from, to)| t[from..to].to_owned())
            .collect()
    };
    // The opener may sit at the end of the turn header when every turn starts with it; its
    // conventional closing form in the thinking-off prompt confirms it.
    let header = frame.header.trim_end();
    let opener = opening_marker(on).map(str::to_owned).or_else(|| {
        trailing_marker(header)
            .filter(|m| on.is_empty() && closing_form(m).is_some_and(|c| off.contains(&c)))
            .map(str::to_owned)
    });
    let off_markers = markers(off);
    let (start, end) = match opener {
        Some(start) => match off_markers.last().filter(|m| **m != start) {
            Some(end) if on != off => (start, end.clone()),
            _ => {
                let end = closing_form(&start)?;
                (start, end)
            }
        },
        None if on.is_empty() && off_markers.len() >= 2 => {
            let (first, last) = (&off_markers[0], &off_markers[off_markers.len() - 1]);
            if off.starts_with(first.as_str()) && off.ends_with(last.as_str()) {
                // The empty block is all marker: a label written between its tags
                // (`<|ch>thought⏎<ch|>`) is part of the opener, never reasoning.
                let inside = &off[first.len()..off.len() - last.len()];
                let start = if inside.trim().is_empty() {
                    first.clone()
                } else {
                    off[..off.len() - last.len()].trim_end().to_owned()
                };
                (start, last.clone())
            } else {
                return None;
            }
        }
        None => return None,
    };
    if opens_call(frame, &start, &end) {
        return None;
    }
    Some(ReasoningAnalysis::with_markers(
        &start,
        &end,
        MarkerSource::GenerationPrompt,
    ))
}

/// Whether the block a generation prompt opens (`start` … `end`) is a tool call: in the
/// tool-call turn, the function's name follows `start` before `end` (a template that forces
/// calls ends its prompt with `<tool_call>`). Such a prompt opens a call, not reasoning.
fn opens_call(frame: &Frame, start: &str, end: &str) -> bool {
    let (start, end) = (start.trim(), end.trim());
    let Some(body) = frame.tool_body.as_deref() else {
        return false;
    };
    let Some(at) = body.find(start).filter(|_| !start.is_empty()) else {
        return false;
    };
    let rest = &body[at + start.len()..];
    let name = rest.find(ProbeSet::PRIMARY.fn_first);
    let close = rest.find(end).filter(|_| !end.is_empty());
    name.is_some_and(|n| close.is_none_or(|c| n < c))
}

/// The marker a generation prompt leaves open: its last one, with only text (what the prompt
/// writes inside the block, `<think>Plan:`) or nothing after it.
fn opening_marker(prompt: &str) -> Option<&str> {
    last_marker(prompt)
}

/// The conventional closing form of an opening marker: `<x>` → `</x>`, `[X]` → `[/X]`, and
/// the same in the other bracket pairs (`⟦x⟧` → `⟦/x⟧`).
pub(crate) fn closing_form(start: &str) -> Option<String> {
    let (open, close) = (start.chars().next()?, start.chars().last()?);
    let inner = start.get(open.len_utf8()..start.len().checked_sub(close.len_utf8())?)?;
    let plain = |c: char| c.is_alphanumeric() || c == '_' || c == '-' || c == ':';
    if (matches!((open, close), ('<', '>') | ('[', ']')) || is_bracket_pair(open, close))
        && !inner.is_empty()
        && inner.chars().all(plain)
    {
        Some(format!("{open}/{inner}{close}"))
    } else {
        None
    }
}

/// `text` without a leading empty reasoning block (whitespace inside it too), lone end marker
/// or lone start marker (what a template renders for a turn without reasoning, or replays of
/// an opened prefill), ignoring whitespace around it.
pub fn strip_residue<'a>(text: &'a str, reasoning: &ReasoningAnalysis) -> &'a str {
    if !reasoning.found() {
        return text;
    }
    let block = format!("{}{}", reasoning.start, reasoning.end);
    let strip_one = |text: &'a str| {
        [
            block.as_str(),
            reasoning.end.as_str(),
            reasoning.start.as_str(),
        ]
        .into_iter()
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .find_map(|r| text.trim_start().strip_prefix(r))
    };
    // The opener, then the closer after it (an empty block written with whitespace inside,
    // `<think>\n\n</think>`), is residue as a whole.
    match strip_one(text) {
        Some(rest) if text.trim_start().starts_with(reasoning.start.trim()) => {
            match rest.trim_start().strip_prefix(reasoning.end.trim()) {
                Some(after) if !reasoning.end.trim().is_empty() => after,
                _ => rest,
            }
        }
        Some(rest) => rest,
        None => text,
    }
}

/// What `prompt` (the generation prompt, turn header included) already wrote.
pub fn classify_prefill(prompt: &str, start: &str, end: &str) -> Prefill {
    let p = prompt.trim();
    let (s, e) = (start.trim(), end.trim());
    if !e.is_empty() && p.ends_with(e) {
        Prefill::ReasoningClosed
    } else if s.is_empty() && !e.is_empty() {
        // Delimited reasoning starts right after the prompt, whatever it wrote.
        Prefill::ReasoningOpen
    } else if !s.is_empty() && (p.ends_with(s) || opening_marker(p) == Some(s)) {
        Prefill::ReasoningOpen
    } else {
        Prefill::None
    }
}
