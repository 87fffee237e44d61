//! Turns written as channel messages (`HEADER_START name HEADER_END body END`, re-opened with
//! the assistant header), recognised from what the rendered assistant turns show.
//!
//! The reasoning and content openers the analysis read must be one header form, the same
//! marker text around two different channel names. A documented
//! [family](crate::generate::families) applies when it agrees with everything the renders
//! show (header, channel names, message ends, the re-opening header, the tool recipient and
//! call end); it adds what renders cannot show (other channels and header words models
//! write). The result is checked by parsing the rendered markers back with the generated
//! parser. Nothing here is keyed to a marker string: the strings come from the renders and
//! are compared with the family's data.

use serde_json::{json, Value};

use crate::generate::{families, ChannelFormat, ChatParser, TurnFormat};
use crate::message::{ChatRequest, Tool};

use super::scenario::ProbeSet;
use super::{Analysis, ToolAnalysis};
use crate::diff::{common_prefix_len, common_suffix_len, splits_marker};

/// A channel header form: the text before and after the channel name, and the names of the
/// reasoning and content channels.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HeaderForm<'a> {
    start: &'a str,
    end: &'a str,
    reasoning: &'a str,
    content: &'a str,
}

/// The header form shared by the reasoning opener `a` and the content opener `b`, if they are
/// one form around two different words.
fn header_form<'a>(a: &'a str, b: &'a str) -> Option<HeaderForm<'a>> {
    // Common affixes that do not cut a marker (the channel name is the text between).
    let whole = |t: &str, at: usize| t.is_char_boundary(at) && !splits_marker(t, at);
    let mut p = common_prefix_len(a, b);
    while p > 0 && !(whole(a, p) && whole(b, p)) {
        p -= 1;
    }
    let (ra, rb) = (&a[p..], &b[p..]);
    let mut s = common_suffix_len(ra, rb);
    while s > 0 && !(whole(ra, ra.len() - s) && whole(rb, rb.len() - s)) {
        s -= 1;
    }
    let (start, end) = (&a[..p], &a[a.len() - s..]);
    let (reasoning, content) = (&a[p..a.len() - s], &b[p..b.len() - s]);
    (!start.trim().is_empty() && !end.trim().is_empty() && is_word(reasoning) && is_word(content))
        .then_some(HeaderForm {
            start,
            end,
            reasoning,
            content,
        })
}

/// Whether `w` is one word (a channel name).
fn is_word(w: &str) -> bool {
    !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Everything a rendered call writes before its function name.
fn call_opener(t: &ToolAnalysis) -> String {
    format!(
        "{}{}{}",
        t.section_start, t.per_call_start, t.function.name_prefix
    )
}

/// Whether the channel layout `c` agrees with what `analysis` read from rendered turns.
fn agrees(c: &ChannelFormat, analysis: &Analysis, form: &HeaderForm<'_>) -> bool {
    let ends = |m: &str| m.trim().is_empty() || c.message_ends.iter().any(|e| e == m.trim());
    let reopen = analysis.generation_prompt.header.trim();
    let reasoning_end = analysis.reasoning.end.trim();
    let tools_agree = analysis.tools.as_ref().is_none_or(|t| {
        let recipient = format!("{}{}", c.recipient, c.tool_recipient);
        let suffix = t.function.name_suffix.trim();
        // The recipient before the header (`to=functions.NAME<|channel|>commentary…`), or
        // inside it after the channel name (`<|channel|>commentary to=functions.NAME …`).
        let recipient_first =
            t.function.name_prefix.trim() == recipient && suffix.starts_with(&c.header_start);
        let channel_first = call_opener(t)
            .trim()
            .strip_prefix(&c.header_start)
            .and_then(|rest| rest.strip_suffix(&recipient))
            .is_some_and(|channel| is_word(channel.trim()));
        (recipient_first || channel_first)
            && ends(&t.function.close)
            && suffix.ends_with(&c.header_end)
    });
    c.header_start == form.start
        && c.header_end == form.end
        && c.reasoning_channels.iter().any(|n| n == form.reasoning)
        && c.content_channels.iter().any(|n| n == form.content)
        && c.reopen == reopen
        && reasoning_end
            .strip_suffix(reopen)
            .is_some_and(|m| c.message_ends.iter().any(|e| e == m.trim()))
        && ends(&analysis.content.end)
        && tools_agree
}

/// A probe tool for the check.
fn probe_tools() -> Vec<Tool> {
    ProbeSet::PRIMARY
        .tools()
        .into_iter()
        .filter_map(|t| serde_json::from_value(t).ok())
        .collect()
}

/// Parses the turn the rendered markers write (reasoning, then content; and a call) with the
/// channel layout `c`.
fn round_trip(analysis: &Analysis, c: &ChannelFormat) -> Result<(), String> {
    let mut format = TurnFormat::from_analysis(analysis);
    format.channels = Some(c.clone());
    let request = ChatRequest {
        tools: probe_tools(),
        ..ChatRequest::default()
    };
    let parser = ChatParser::from_format("channels", format, &request, String::new())
        .map_err(|e| e.message)?;
    let (r, ct) = (&analysis.reasoning, &analysis.content);
    let p = &ProbeSet::PRIMARY;
    let turn = format!(
        "{}{}{}{}{}{}",
        r.start, p.reasoning, r.end, ct.start, p.content, ct.end
    );
    let m = parser.parse(&turn).message;
    if m.reasoning_content != p.reasoning || m.content != p.content || !m.tool_calls.is_empty() {
        return Err(format!("{turn:?} parses back as {m:?}"));
    }
    if let Some(t) = &analysis.tools {
        let args = json!({p.arg_first: p.value_first});
        let call = format!(
            "{}{}{}{}{}",
            call_opener(t).trim_start(),
            p.fn_first,
            t.function.name_suffix,
            args,
            t.function.close
        );
        let m = parser.parse(&call).message;
        let parsed: Option<Value> = m
            .tool_calls
            .first()
            .and_then(|c| serde_json::from_str(&c.arguments).ok());
        if m.tool_calls.len() != 1 || m.tool_calls[0].name != p.fn_first || parsed != Some(args) {
            return Err(format!("{call:?} parses back as {m:?}"));
        }
    }
    Ok(())
}

/// The channel layout of the template `analysis` describes, if its rendered turns are
/// channel messages that a documented family agrees with and that parse back.
pub fn select(analysis: &Analysis) -> Option<ChannelFormat> {
    let form = header_form(&analysis.reasoning.start, &analysis.content.start)?;
    families::families()
        .into_iter()
        .filter_map(|f| f.channels)
        .find(|c| agrees(c, analysis, &form) && round_trip(analysis, c).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_forms() {
        let f = header_form("<|c|>think<|m|>", "<|c|>say<|m|>").unwrap();
        assert_eq!(
            (f.start, f.end, f.reasoning, f.content),
            ("<|c|>", "<|m|>", "think", "say")
        );
        assert!(header_form("<think>", "<answer>").is_none());
        assert!(header_form("<think>", "").is_none());
    }
}
