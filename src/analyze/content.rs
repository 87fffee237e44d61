//! Phase C: how assistant content is wrapped.
//!
//! The content-only turn body is `start + content + end`. When the template renders an empty
//! reasoning block in every turn, that block is removed first. Markers that appear only after
//! reasoning (found by phase R) make the mode [`ContentMode::WrappedWithReasoning`].
//! A closer the turn end starts with is told apart by a turn where calls follow the content
//! ([`closer_before_calls`]).

use serde::{Deserialize, Serialize};

use super::compare::Renderer;
use super::frame::Frame;
use super::markers::{marker_prefix_len, marker_spans, pairs, trailing_marker, units};
use super::reasoning::{strip_residue, ReasoningAnalysis, ReasoningOutcome};
use super::scenario::{Call, ProbeSet, Scenario, Turn, CONTENT};

/// How assistant content is wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentMode {
    /// No content markers.
    Plain,
    /// Content is always `start` content `end`.
    AlwaysWrapped,
    /// Content is wrapped only when reasoning precedes it.
    WrappedWithReasoning,
    /// Content is wrapped only in turns where tool calls follow it (the wrapper is written,
    /// empty, in a call turn without content).
    WrappedBeforeCalls,
}

/// The content part of an [`Analysis`](super::Analysis).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentAnalysis {
    /// How content is wrapped.
    pub mode: ContentMode,
    /// Opening marker (empty when plain).
    pub start: String,
    /// Closing marker (empty when plain or not told apart from the end of turn).
    pub end: String,
    /// The separator the template splits content at to write it in pieces around tool
    /// calls (pieces in one output are joined with it), if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_join: Option<String>,
}

impl ContentAnalysis {
    /// Plain content.
    pub fn plain() -> ContentAnalysis {
        ContentAnalysis {
            mode: ContentMode::Plain,
            start: String::new(),
            end: String::new(),
            block_join: None,
        }
    }
}

/// A reasoning closer that also opens the content block (`<|close|>think<|sep|>` then
/// `<|open|>response<|sep|>`, read as one end marker because the content always follows it):
/// when the content-only body ends with a closer that pairs with the last marker sequence of
/// the reasoning end, that sequence opens the content and is taken off the reasoning end.
/// Phase C then reads it as the content's start.
pub fn split_content_opener(reasoning: &mut ReasoningAnalysis, content_body: &str) {
    let Some(at) = content_body.rfind(CONTENT) else {
        return;
    };
    let post = content_body[at + CONTENT.len()..].trim();
    let end = reasoning.end.trim_end();
    let parts = units(end);
    let Some(last) = parts.last().filter(|_| parts.len() >= 2) else {
        return;
    };
    if post.is_empty() || !pairs(last, post) {
        return;
    }
    let keep = end.len() - last.len();
    reasoning.end = end[..keep].to_owned();
}

/// Runs phase C on the content-only turn body. `Err` when the content probe does not render.
pub fn analyze(
    content_body: &str,
    reasoning: &ReasoningOutcome,
) -> Result<ContentAnalysis, String> {
    let at = content_body
        .find(CONTENT)
        .ok_or("assistant content does not render")?;
    let mut pre = &content_body[..at];
    let post = &content_body[at + CONTENT.len()..];
    let r = &reasoning.analysis;
    pre = strip_residue(pre, r);
    // Text after the content with nothing before it is the end of a content turn (an
    // end-of-turn token), not a wrapper.
    if !pre.trim().is_empty() {
        return Ok(ContentAnalysis {
            mode: ContentMode::AlwaysWrapped,
            start: pre.trim_start().to_owned(),
            end: post.to_owned(),
            block_join: None,
        });
    }
    let start = &reasoning.content_start_after_reasoning;
    if !start.trim().is_empty() {
        let end = reasoning
            .reasoning_body
            .as_deref()
            .and_then(|b| b.rfind(CONTENT).map(|at| &b[at + CONTENT.len()..]))
            .unwrap_or("");
        return Ok(ContentAnalysis {
            mode: ContentMode::WrappedWithReasoning,
            start: start.clone(),
            end: end.to_owned(),
            block_join: None,
        });
    }
    Ok(ContentAnalysis::plain())
}

/// The closer of wrapped content that the analysis could not tell from the turn end (the
/// content-only turn ends `content <closer><turn end>`): what follows the content both in
/// that turn and in a turn where tool calls follow it, when it holds a marker and the call
/// comes after it. `None` when calls follow the content directly.
pub fn closer_before_calls(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: &Scenario,
) -> Option<String> {
    let after_content = |scenario: &Scenario| -> Option<String> {
        let whole = frame.after_header(&renderer.render(scenario).ok()?);
        let at = whole.find(CONTENT)?;
        Some(whole[at + CONTENT.len()..].to_owned())
    };
    let with_call =
        tool_scenario.with_content_and_calls(CONTENT, vec![Call::first(&ProbeSet::PRIMARY, 1)]);
    let before_call = after_content(&with_call)?;
    let before_end = after_content(&Scenario::with_turn(Turn::content(CONTENT)))?;
    let k = marker_prefix_len(&before_call, &before_end);
    let closer = &before_call[..k];
    // Calls in a message of their own after the turn header again: a role switch, read with
    // its message end (see `switch`).
    let header = frame.header.trim();
    let reopens = !header.is_empty() && before_call[k..].trim_start().starts_with(header);
    let call_follows = before_call[k..].contains(ProbeSet::PRIMARY.fn_first);
    (!closer.trim().is_empty() && !reopens && call_follows).then(|| closer.to_owned())
}

/// The wrapper of content that only turns with tool calls write: in a call turn the content
/// sits between two markers that a content-only turn does not write (`<|a|>content<|b|>`, then
/// the calls). `None` when the content is not wrapped there, or when the wrapper is not
/// followed by the call.
pub fn wrapper_before_calls(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: &Scenario,
    reasoning: &ReasoningAnalysis,
) -> Option<ContentAnalysis> {
    let with_call =
        tool_scenario.with_content_and_calls(CONTENT, vec![Call::first(&ProbeSet::PRIMARY, 1)]);
    let whole = frame.after_header(&renderer.render(&with_call).ok()?);
    let whole = strip_residue(&whole, reasoning);
    let at = whole.find(CONTENT)?;
    let (pre, post) = (whole[..at].trim_start(), &whole[at + CONTENT.len()..]);
    // Both sides are whole markers: the opener ends right before the content, the closer
    // starts right after it, and the call comes after the closer.
    let opener = trailing_marker(pre).filter(|m| m.len() == pre.len())?;
    let closer_len = marker_spans(post).first().filter(|s| s.0 == 0)?.1;
    let (closer, rest) = post.split_at(closer_len);
    if !rest.contains(ProbeSet::PRIMARY.fn_first) {
        return None;
    }
    Some(ContentAnalysis {
        mode: ContentMode::WrappedBeforeCalls,
        start: opener.to_owned(),
        end: closer.to_owned(),
        block_join: None,
    })
}

impl ContentAnalysis {
    /// Wrapped content with no closer of its own (see [`closer_before_calls`]).
    pub fn lacks_closer(&self) -> bool {
        self.mode != ContentMode::Plain && self.end.trim().is_empty()
    }

    /// Takes `closer` as the end when [`lacks_closer`](Self::lacks_closer).
    pub fn close_with(&mut self, closer: &str) {
        if self.lacks_closer() {
            self.end = closer.to_owned();
        }
    }
}
