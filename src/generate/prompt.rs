//! The prefill: what the rendered prompt already wrote of the assistant turn.
//!
//! The generation prompt is what `add_generation_prompt` adds to the rendered conversation.
//! Its part after the assistant header (or from the first format marker in it, when the header
//! itself holds one, such as an opened `<think>`) is part of the turn: the parser reads it
//! before the model output. A prompt tail that holds none of the format's markers (a mode tag
//! written after the header) is not read, unless reasoning has no opener (the tail starts it). A continued final message instead starts the parser
//! in the continued field.

use serde_json::Value;

use crate::analyze::markers::after_insertion;
use crate::message::{ChatRequest, ContinueFinalMessage};
use crate::template::{ChatTemplate, RenderInput, TemplateError};

use super::format::TurnFormat;

/// Renders the request's prompt (`add_generation_prompt` as asked), or an equivalent one when
/// the template raises on it (see [`ChatTemplate::render_or_equivalent`]).
pub fn render_prompt(
    template: &ChatTemplate,
    request: &ChatRequest,
    generation_prompt: bool,
) -> Result<String, TemplateError> {
    let messages = request
        .messages
        .iter()
        .map(|m| {
            let mut value = serde_json::to_value(m).unwrap_or(Value::Null);
            objects_for_arguments(&mut value);
            value
        })
        .collect();
    let tools = (!request.tools.is_empty()).then(|| {
        request
            .tools
            .iter()
            .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
            .collect()
    });
    let input = RenderInput::new(messages)
        .with_tools(tools)
        .with_generation_prompt(generation_prompt)
        .with_var("enable_thinking", request.enable_thinking);
    template.render_or_equivalent(&input)
}

/// Templates iterate tool-call arguments as a mapping: JSON text arguments become objects
/// (as inference servers pass them).
fn objects_for_arguments(message: &mut Value) {
    let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) else {
        return;
    };
    for call in calls {
        if let Some(arguments) = call.pointer_mut("/function/arguments") {
            if let Some(parsed) = arguments
                .as_str()
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .filter(Value::is_object)
            {
                *arguments = parsed;
            }
        }
    }
}

/// The generation prompt: what the prompt with `add_generation_prompt` adds to the prompt
/// without it.
pub fn generation_prompt(template: &ChatTemplate, request: &ChatRequest) -> String {
    let Ok(with) = render_prompt(template, request, true) else {
        return String::new();
    };
    generation_prompt_of(template, request, &with)
}

/// [`generation_prompt`] given the prompt rendered with the generation prompt: what follows
/// the conversation in it (also when it inserts a turn into the conversation).
pub fn generation_prompt_of(template: &ChatTemplate, request: &ChatRequest, with: &str) -> String {
    let without = render_prompt(template, request, false).unwrap_or_default();
    let common = with
        .bytes()
        .zip(without.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let mut start = common;
    while !with.is_char_boundary(start) {
        start -= 1;
    }
    // The prompt inserts a turn into the conversation (a default system turn written only
    // with the generation prompt): the generation prompt follows the rest of the conversation.
    if without[start..].trim().chars().count() > 1 {
        if let Some(end) = after_insertion(&without, with, start) {
            return with[end..].to_owned();
        }
    }
    with[start..].to_owned()
}

/// The part of `generation_prompt` the parser reads as the start of the turn (see the module
/// docs); `header` is the assistant turn header of the analysis.
pub fn prefill_text(generation_prompt: &str, header: &str, format: &TurnFormat) -> String {
    let gp = generation_prompt;
    let header = header.trim();
    let mut start = gp.len();
    if !header.is_empty() {
        if let Some(p) = gp.rfind(header) {
            start = p + header.len();
        }
    }
    let mut markers = vec![
        format.reasoning.start.as_str(),
        format.reasoning.end.as_str(),
        format.content.start.as_str(),
    ];
    if let Some(t) = &format.tools {
        markers.extend([t.section_start.as_str(), t.per_call_start.as_str()]);
    }
    let mut any_marker = false;
    for m in markers.into_iter().map(str::trim).filter(|m| !m.is_empty()) {
        if let Some(p) = gp.find(m) {
            start = start.min(p);
            any_marker = true;
        }
    }
    // Text of the prompt that holds none of the format's markers (a mode tag the template
    // writes after the header) is prompt, not part of what the model says; unless reasoning
    // has no opener, where the prompt's tail is how the reasoning starts.
    let delimited =
        format.reasoning.start.trim().is_empty() && !format.reasoning.end.trim().is_empty();
    if !any_marker && !delimited {
        return String::new();
    }
    gp[start..].to_owned()
}

/// For a continued final message: the text the parser starts with (the reasoning opener when
/// reasoning is continued), and whether reasoning may still open.
pub fn continuation_start(request: &ChatRequest, format: &TurnFormat) -> Option<(String, bool)> {
    request.continued_message()?;
    match request.continue_final_message {
        ContinueFinalMessage::Reasoning if request.extracts_reasoning() => {
            Some((format.reasoning.start.trim().to_owned(), true))
        }
        _ => Some((String::new(), false)),
    }
}
