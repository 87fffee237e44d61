//! The differential template analyzer: derives the output format of a chat template (reasoning
//! markers, content wrapping, tool-call format) by rendering it with controlled variations and
//! diffing the renders. Nothing depends on the template's name or source text.
//!
//! # Pipeline
//!
//! 1. [`Capabilities::probe`]: what renders at all (tools, tool calls, parallel calls, ids,
//!    arguments as object or string).
//! 2. `frame`: the assistant turn header and footer, and the generation prompts with thinking
//!    on and off (the *prefill*: what the prompt already wrote of the output).
//! 3. `reasoning` (phases R1–R3): reasoning markers, delimiter style (empty start), scope, and
//!    the prefill state for both thinking settings.
//!    Where none renders, `stated_reasoning` (phase R4) reads what the prompt states in words
//!    (a tag named by a thinking word, quoted labels), with the reply's wrapper.
//! 4. `content` (phase C1): content wrapping.
//! 5. `tools` (phases T1–T7, A1–A2): format classification (JSON native, tag + JSON arguments,
//!    tag + tagged arguments), section/per-call markers and separator, function-name markers,
//!    argument markers, call-id position and markers, JSON field layout.
//! 6. `validate`: every marker is checked on fresh renders with *other* probe values, and no
//!    marker may contain a probe string. A part that fails is reported in
//!    [`Analysis::unsupported`] and left empty, never returned with wrong markers.
//! 7. `tools::stated` (phase S): when tool definitions render but calls do not, the format
//!    the tools preamble states (an example call found by its shape), checked by parsing it
//!    back with the generated parser ([`Analysis::stated`] says where it came from).
//! 8. `channels`: rendered turns made of channel messages that a documented layout agrees
//!    with ([`Analysis::channels`]).
//! 9. `switch`: turns made of messages that re-open the assistant header, whose kind the text
//!    right after the header picks ([`Analysis::role_switch`]).
//!
//! Comparisons go through [`compare::compare`] (renders are memoized, so comparisons share
//! their base renders); probe conversations come from
//! [`scenario`]. Results are cached by template hash in [`cache`].

pub mod cache;
mod channels;
pub mod compare;
pub mod content;
mod frame;
mod joins;
pub mod markers;
pub mod prose;
pub mod reasoning;
pub mod report;
pub mod scenario;
pub mod slots;
mod stated_reasoning;
pub mod switch;
pub mod tools;
mod validate;

#[cfg(test)]
mod slot_tests;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::template::{ArgumentsForm, Capabilities, ChatTemplate};

pub use cache::{analyze_cached, with_variables_cached, AnalysisCache, TemplateVariant};
pub use content::{ContentAnalysis, ContentMode};
pub use reasoning::{
    MarkerSource, Prefill, ReasoningAnalysis, ReasoningMode, ReasoningScope, WithoutReasoning,
};
pub use switch::RoleSwitch;
pub use tools::stated::StatedFormat;
pub use tools::{
    ArgumentMarkers, CallIdMarkers, CallIdPosition, ElementValues, FunctionMarkers, JsonLayout,
    NonStringValues, StatedWrapper, ToolAnalysis, ToolFormat, TypedValueMarkers,
};

use compare::Renderer;
use frame::Frame;
use scenario::Scenario;

/// The part of an analysis a limitation applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// The whole template (nothing could be analysed).
    Template,
    /// Reasoning markers.
    Reasoning,
    /// Content wrapping.
    Content,
    /// Tool calls.
    Tools,
}

/// A part of the format the analysis cannot express, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unsupported {
    /// Which part.
    pub part: Part,
    /// Why.
    pub reason: String,
}

/// How a reason in [`Analysis::unsupported`] starts when the analysis refuses the template as
/// broken: its own renders contradict the call (e.g. argument values it cannot delimit), so
/// parsing would give wrong arguments. Such a part is refused, not merely unexpressed.
pub const REFUSED: &str = "refused: ";

/// The generation prompts, after the assistant turn header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerationPrompt {
    /// The header every assistant turn starts with (`<|im_start|>assistant\n`).
    pub header: String,
    /// What the prompt adds after the header with `enable_thinking` true.
    pub thinking_on: String,
    /// What the prompt adds after the header with `enable_thinking` false.
    pub thinking_off: String,
    /// The common end of assistant turns (end-of-turn marker), when it could be told apart.
    pub turn_end: String,
    /// The end of tool-call turns when it differs from `turn_end` (`<|eom_id|>`).
    pub tool_turn_end: String,
    /// When turns have no end of their own: the marker the next (user) turn opens with,
    /// which models stop by writing (`<|user|>`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub next_turn: String,
    /// The same after tool-call turns (the tool result's turn opens with it:
    /// `<|observation|>`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool_next_turn: String,
    /// Markers only tool results are written with (`<｜tool▁output▁begin｜>`,
    /// `<tool_response>`), which no user or assistant turn holds: a model that writes them
    /// (imitating a tool's answer) writes no field's text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_result_markers: Vec<String>,
}

/// Everything the analysis found out about a chat template's output format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Analysis {
    /// What the template renders at all.
    pub capabilities: Capabilities,
    /// The assistant turn frame and generation prompts.
    pub generation_prompt: GenerationPrompt,
    /// Reasoning markers and prefill.
    pub reasoning: ReasoningAnalysis,
    /// Content wrapping.
    pub content: ContentAnalysis,
    /// Tool-call format (`None`: tool calls do not render, or their format is unsupported).
    pub tools: Option<ToolAnalysis>,
    /// Every non-empty marker, trimmed, deduplicated, in discovery order.
    pub preserved_tokens: Vec<String>,
    /// Content wrapping when the tool definitions are passed, where it differs from
    /// [`content`](Self::content) (a template that prefixes content only in tool-enabled
    /// conversations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_with_tools: Option<ContentAnalysis>,
    /// Parts the analysis cannot express, with reasons.
    pub unsupported: Vec<Unsupported>,
    /// When calls do not render: where [`tools`](Self::tools) was read from instead (the
    /// format the tools preamble states).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated: Option<StatedFormat>,
    /// Rendered turns are channel messages of a documented layout (see `channels`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<crate::generate::ChannelFormat>,
    /// Rendered turns are messages that re-open the assistant header, each picking its kind
    /// (reasoning, content, calls) by what follows the header (see `switch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role_switch: Option<RoleSwitch>,
    /// How many renders the analysis took (capability probes excluded).
    #[serde(skip)]
    pub renders: u32,
}

impl Analysis {
    fn empty(capabilities: Capabilities) -> Analysis {
        Analysis {
            capabilities,
            generation_prompt: GenerationPrompt {
                header: String::new(),
                thinking_on: String::new(),
                thinking_off: String::new(),
                turn_end: String::new(),
                tool_turn_end: String::new(),
                next_turn: String::new(),
                tool_next_turn: String::new(),
                tool_result_markers: Vec::new(),
            },
            reasoning: ReasoningAnalysis::none(),
            content: ContentAnalysis::plain(),
            tools: None,
            preserved_tokens: Vec::new(),
            content_with_tools: None,
            unsupported: Vec::new(),
            stated: None,
            channels: None,
            role_switch: None,
            renders: 0,
        }
    }

    fn mark_unsupported(&mut self, part: Part, reason: impl Into<String>) {
        self.unsupported.push(Unsupported {
            part,
            reason: reason.into(),
        });
    }

    /// The reason `part` is unsupported, if it is.
    pub fn unsupported_reason(&self, part: Part) -> Option<&str> {
        self.unsupported
            .iter()
            .find(|u| u.part == part)
            .map(|u| u.reason.as_str())
    }
}

/// Phase R4: reasoning, and the content's wrapper, that the prompt states (see
/// `stated_reasoning`), read from the prompt of one user message with thinking on.
fn read_stated_reasoning(renderer: &Renderer<'_>, frame: &Frame, analysis: &mut Analysis) {
    let scenario = Scenario {
        generation_prompt: true,
        ..Scenario::user_only()
    };
    let Ok(prompt) = renderer.render(&scenario) else {
        return;
    };
    let Some(stated) = stated_reasoning::read(&prompt, frame) else {
        return;
    };
    analysis.reasoning = stated.reasoning;
    reasoning::classify_prefills(&mut analysis.reasoning, frame);
    if let Some((start, end)) = stated.content {
        analysis.content = ContentAnalysis {
            mode: ContentMode::AlwaysWrapped,
            start,
            end,
            block_join: None,
        };
    }
}

/// Analyses `template` (uncached; see [`analyze_cached`]).
pub fn analyze(template: &ChatTemplate) -> Analysis {
    let capabilities = Capabilities::probe(template);
    let mut analysis = Analysis::empty(capabilities.clone());
    let renderer = Renderer::new(template);
    // Tool calls are probed even when capabilities say otherwise: some templates render calls
    // without rendering the tool definitions, or reject the capability probe's call ids.
    let mut tool_scenario = Some(Scenario {
        tools: true,
        arguments: match capabilities.arguments {
            ArgumentsForm::String => ArgumentsForm::String,
            _ => ArgumentsForm::Object,
        },
        ..Scenario::user_only()
    });
    let frame = match Frame::build(&renderer, tool_scenario.as_mut()) {
        Ok(frame) => frame,
        Err(e) => {
            analysis.mark_unsupported(Part::Template, format!("probe render failed: {e}"));
            analysis.renders = renderer.renders();
            return analysis;
        }
    };
    analysis.generation_prompt = GenerationPrompt {
        header: frame.header.clone(),
        thinking_on: frame.prompt_thinking_on.clone(),
        thinking_off: frame.prompt_thinking_off.clone(),
        turn_end: frame.footer.clone(),
        tool_turn_end: frame.tool_footer.clone(),
        next_turn: frame.next_turn.clone(),
        tool_next_turn: frame.tool_next_turn.clone(),
        tool_result_markers: frame.tool_result_markers.clone(),
    };

    let reasoning = reasoning::analyze(&renderer, &frame, tool_scenario.as_ref());
    if let Some(reason) = &reasoning.unsupported {
        analysis.mark_unsupported(Part::Reasoning, reason.clone());
    }
    let mut reasoning = reasoning;
    content::split_content_opener(&mut reasoning.analysis, &frame.content_body);
    reasoning::split_content_opener_by_reasoning_only_turn(&renderer, &frame, &mut reasoning);
    analysis.reasoning = reasoning.analysis.clone();
    match content::analyze(&frame.content_body, &reasoning) {
        Ok(content) => analysis.content = content,
        Err(reason) => analysis.mark_unsupported(Part::Content, reason),
    }
    if !analysis.reasoning.found()
        && reasoning.unsupported.is_none()
        && analysis.content.mode == ContentMode::Plain
    {
        read_stated_reasoning(&renderer, &frame, &mut analysis);
    }
    let tools_render = frame.tool_body.is_some() || capabilities.tools;
    if let Some(scenario) = tool_scenario.as_ref().filter(|_| tools_render) {
        analysis.content_with_tools =
            content_with_tools(&renderer, &frame, scenario, &reasoning, &analysis.content);
        let lacks_closer = [
            Some(&analysis.content),
            analysis.content_with_tools.as_ref(),
        ]
        .into_iter()
        .flatten()
        .any(ContentAnalysis::lacks_closer);
        if let Some(closer) = lacks_closer
            .then(|| content::closer_before_calls(&renderer, &frame, scenario))
            .flatten()
        {
            analysis.content.close_with(&closer);
            if let Some(with_tools) = analysis.content_with_tools.as_mut() {
                with_tools.close_with(&closer);
            }
        }
        if analysis.content.mode == ContentMode::Plain && analysis.content_with_tools.is_none() {
            if let Some(wrapped) =
                content::wrapper_before_calls(&renderer, &frame, scenario, &analysis.reasoning)
            {
                analysis.content = wrapped;
            }
        }
    }
    if let Some(scenario) = tool_scenario.as_ref().filter(|_| tools_render) {
        match tools::analyze(
            &renderer,
            &frame,
            scenario,
            &analysis.reasoning,
            &analysis.content,
        ) {
            Ok(t) => {
                if t.arguments.non_string_values == tools::NonStringValues::Different {
                    analysis.mark_unsupported(
                        Part::Tools,
                        "non-string argument values render with other markers than strings \
                         (only string arguments are expressed)",
                    );
                }
                analysis.tools = Some(t);
            }
            Err(reason) => analysis.mark_unsupported(Part::Tools, reason),
        }
    }
    if analysis.tools.is_some() {
        joins::analyze(
            &renderer,
            &frame,
            tool_scenario.as_ref(),
            &mut analysis.reasoning,
            &mut analysis.content,
        );
    }
    validate::validate(&renderer, &frame, tool_scenario.as_ref(), &mut analysis);
    if let Some(scenario) = tool_scenario.as_ref() {
        read_stated_tools(&renderer, scenario, &mut analysis);
        if analysis.stated.is_none() {
            if let Some(t) = analysis.tools.as_mut() {
                t.stated_wrapper = tools::stated::wrapper(&renderer, scenario, t);
            }
        }
    }
    analysis.preserved_tokens = collect_preserved_tokens(&analysis);
    analysis.channels = channels::select(&analysis);
    analysis.role_switch = switch::detect(&renderer, &frame, tool_scenario.as_ref(), &analysis);
    if let Some(s) = &analysis.role_switch {
        for token in [&s.header, &s.message_end] {
            if !analysis.preserved_tokens.contains(token) {
                analysis.preserved_tokens.push(token.clone());
            }
        }
    }
    analysis.renders = renderer.renders();
    analysis
}

/// The content wrapping of a content turn rendered with the tool definitions, when it differs
/// from `plain` (the wrapping without them).
fn content_with_tools(
    renderer: &Renderer<'_>,
    frame: &Frame,
    tool_scenario: &Scenario,
    reasoning: &reasoning::ReasoningOutcome,
    plain: &ContentAnalysis,
) -> Option<ContentAnalysis> {
    let scenario = Scenario {
        turn: Some(scenario::Turn::content(scenario::CONTENT)),
        ..tool_scenario.clone()
    };
    let render = renderer.render(&scenario).ok()?;
    let body = frame.content_body_with_tools(&render)?;
    let content = content::analyze(&body, reasoning).ok()?;
    (content != *plain).then_some(content)
}

/// Phase S: when tool definitions render but calls do not, the format the tools preamble
/// states; the reason given says what the preamble shows when none checks.
fn read_stated_tools(renderer: &Renderer<'_>, scenario: &Scenario, analysis: &mut Analysis) {
    let Some(at) = analysis
        .unsupported
        .iter()
        .position(|u| u.part == Part::Tools && u.reason == tools::NO_CALLS)
    else {
        return;
    };
    match tools::stated::analyze(renderer, scenario, analysis) {
        Ok((tools, stated)) => {
            analysis.unsupported.remove(at);
            analysis.tools = Some(tools);
            analysis.stated = Some(stated);
        }
        Err(why) => analysis.unsupported[at].reason = format!("{}; {why}", tools::NO_CALLS),
    }
}

/// The union of all non-empty markers, trimmed, in discovery order.
fn collect_preserved_tokens(a: &Analysis) -> Vec<String> {
    let mut markers: Vec<&str> = vec![
        &a.reasoning.start,
        &a.reasoning.end,
        &a.content.start,
        &a.content.end,
    ];
    if let Some(t) = &a.tools {
        markers.extend(t.markers());
    }
    let mut out: Vec<String> = Vec::new();
    // A marker with slots contributes its fixed pieces.
    for piece in markers.into_iter().flat_map(slots::pieces) {
        let slots::Piece::Text(m) = piece else {
            continue;
        };
        let m = m.trim();
        if !m.is_empty() && !out.iter().any(|o| o == m) {
            out.push(m.to_owned());
        }
    }
    out
}
