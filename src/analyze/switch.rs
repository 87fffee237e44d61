//! Role-switch headers: turns written as a run of messages of one role, where the header the
//! generation prompt writes is left open and what the model writes right after it picks the
//! message's kind (reasoning, content, tool calls).
//!
//! ```text
//! HEADER REASONING_SUFFIX reasoning MESSAGE_END HEADER CONTENT_SUFFIX content MESSAGE_END
//!   HEADER TOOL_SUFFIX calls TOOL_END
//! ```
//!
//! Recognised from renders only: a turn with reasoning and content (and one with content and
//! a call) shows the assistant header [`Frame::header`] again between the two parts; what
//! comes before it there ends a message, what comes after it opens the next part. The result
//! is kept only when the generated parser reads the rendered turns (reasoning + content,
//! content + call, content alone, a call alone) back as the probe values.

use serde::{Deserialize, Serialize};

use crate::generate::{ChatParser, TurnFormat};
use crate::message::{ChatRequest, Tool};

use super::compare::Renderer;
use super::frame::Frame;
use super::markers::trailing_marker;
use super::scenario::{Call, ProbeSet, Scenario, Turn, CONTENT, REASONING};
use super::Analysis;

/// A turn made of messages that re-open the assistant header, each picking its kind by the
/// text right after the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleSwitch {
    /// The assistant header every message opens with (`<|im_start|>assistant`).
    pub header: String,
    /// What ends a message before the header re-opens (`<|im_end|>`).
    pub message_end: String,
    /// What follows the header in a reasoning message (`/think\n`); empty when reasoning does
    /// not render as a message of its own.
    pub reasoning: String,
    /// What follows the header in a content message (`\n`).
    pub content: String,
    /// How a turn that ends with content ends (`<|im_end|><|endofturn|>`).
    pub content_end: String,
}

/// The parts of one rendered body, split at the re-opened header.
struct Split<'a> {
    before: &'a str,
    end: &'a str,
    after: &'a str,
}

/// Splits the text between two probe values at the last occurrence of `header`: the text
/// before it must end with a marker (the message end), with only whitespace after it.
fn split_at_header<'a>(between: &'a str, header: &str) -> Option<Split<'a>> {
    let at = between.rfind(header)?;
    let before = between[..at].trim_end();
    let end = trailing_marker(before)?;
    let end_at = before.len() - end.len();
    Some(Split {
        before: &between[..end_at],
        end: &between[end_at..at],
        after: &between[at + header.len()..],
    })
}

/// The rendered body of a turn of `scenario`.
fn body(
    renderer: &Renderer<'_>,
    frame: &Frame,
    scenario: &Scenario,
    tools: bool,
) -> Option<String> {
    let render = renderer.render(scenario).ok()?;
    Some(frame.body(&render, tools))
}

/// The role-switch layout of the template, if its turns are messages re-opening the header.
pub fn detect(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: Option<&Scenario>,
    analysis: &Analysis,
) -> Option<RoleSwitch> {
    let header = frame.header.trim();
    if header.is_empty() || analysis.channels.is_some() {
        return None;
    }
    let p = &ProbeSet::PRIMARY;
    // Reasoning, then content: `SUFFIX reasoning END HEADER SUFFIX content`.
    let reasoning_turn = Scenario::with_turn(Turn {
        reasoning: Some(REASONING.to_owned()),
        ..Turn::content(CONTENT)
    });
    let mut found: Option<(String, String, String)> = None;
    if let Some(b) = body(renderer, frame, &reasoning_turn, false) {
        if let (Some(r), Some(c)) = (b.find(REASONING), b.rfind(CONTENT)) {
            let split = (r < c)
                .then(|| split_at_header(&b[r + REASONING.len()..c], header))
                .flatten()
                .filter(|s| s.before.trim().is_empty());
            let suffix = b[..r].to_owned();
            if let Some(s) = split.filter(|_| !suffix.trim().is_empty()) {
                found = Some((s.end.trim().to_owned(), suffix, s.after.to_owned()));
            }
        }
    }
    // Content, then a call: `SUFFIX content END HEADER TOOL_SUFFIX call`.
    let mut call_content = None;
    if let Some(scenario) = tool_scenario.filter(|_| analysis.tools.is_some()) {
        let mut s = scenario.with_calls(vec![Call::first(p, 2)], None);
        if let Some(turn) = s.turn.as_mut() {
            turn.content = Some(CONTENT.to_owned());
        }
        if let Some(b) = body(renderer, frame, &s, true) {
            if let (Some(c), Some(f)) = (b.find(CONTENT), b.find(p.fn_first)) {
                if let Some(split) = (c < f)
                    .then(|| split_at_header(&b[c + CONTENT.len()..f], header))
                    .flatten()
                    .filter(|s| s.before.trim().is_empty())
                {
                    let end = split.end.trim().to_owned();
                    match &found {
                        Some((e, _, _)) if *e != end => return None,
                        Some(_) => {}
                        // Reasoning messages are the evidence of the layout: without them a
                        // header between content and calls is the calls' own opener.
                        None => return None,
                    }
                    call_content = Some(b);
                }
            }
        }
    }
    let (message_end, reasoning, content) = found?;
    // A turn that ends with content: its suffix, the content, then the message end and what
    // ends the turn.
    let content_turn = Scenario::with_turn(Turn::content(CONTENT));
    let body = &frame.after_header(&renderer.render(&content_turn).ok()?);
    let at = body.find(CONTENT)?;
    if body[..at].trim() != content.trim() {
        return None;
    }
    // It may end otherwise than a message another message follows (`<|final|>` for the
    // last message, `<|stop|>` before the next): both end content.
    let content_end = body[at + CONTENT.len()..].trim();
    let switch = RoleSwitch {
        header: header.to_owned(),
        message_end,
        reasoning,
        content,
        content_end: content_end.to_owned(),
    };
    let mut checked = analysis.clone();
    checked.role_switch = Some(switch.clone());
    let mut samples = vec![(body.clone(), "", CONTENT, 0)];
    if !switch.reasoning.trim().is_empty() {
        samples.push((
            frame.after_header(&renderer.render(&reasoning_turn).ok()?),
            REASONING,
            CONTENT,
            0,
        ));
    }
    if let Some(b) = call_content {
        samples.push((b, "", CONTENT, 1));
    }
    if let Some(b) = frame.tool_body.clone() {
        samples.push((b, "", "", 1));
    }
    round_trip(&checked, &samples).ok()?;
    Some(switch)
}

/// Parses each rendered body (what the model writes after the prompt's header) with the
/// role-switch format and checks it gives the probe values: `(body, reasoning, content,
/// calls)`.
fn round_trip(analysis: &Analysis, samples: &[(String, &str, &str, usize)]) -> Result<(), String> {
    let format = TurnFormat::from_analysis(analysis);
    let tools: Vec<Tool> = ProbeSet::PRIMARY
        .tools()
        .into_iter()
        .filter_map(|t| serde_json::from_value(t).ok())
        .collect();
    let request = ChatRequest {
        tools,
        ..ChatRequest::default()
    };
    let parser = ChatParser::from_format("role-switch", format, &request, String::new())
        .map_err(|e| e.message)?;
    for (body, reasoning, content, calls) in samples {
        let m = parser.parse(body).message;
        let ok = m.reasoning_content.trim() == *reasoning
            && m.content.trim() == *content
            && m.tool_calls.len() == *calls
            && m.tool_calls
                .iter()
                .all(|c| c.name == ProbeSet::PRIMARY.fn_first);
        if !ok {
            return Err(format!("{body:?} parses back as {m:?}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_the_reopened_header() {
        let s = split_at_header("<|end|>\n<|start|>bot\n", "<|start|>bot").unwrap();
        assert_eq!((s.before, s.end, s.after), ("", "<|end|>\n", "\n"));
        assert!(split_at_header("plain text <|start|>bot", "<|start|>bot").is_none());
        assert!(split_at_header("<|end|>", "<|start|>bot").is_none());
    }
}
