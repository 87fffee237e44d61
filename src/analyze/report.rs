//! The human-readable report of an [`Analysis`] (`chatparse analyze TEMPLATE`).
//!
//! Markers are shown between `«` and `»` with whitespace made visible on one line: `⏎` is a line
//! break, `→` a tab, `·` a space at either end of the marker; an empty marker is `«»`.

use std::fmt::Write;

use super::tools::{CallIdPosition, ToolAnalysis, ToolFormat};
use super::{Analysis, ContentMode, ReasoningMode};

/// `marker` on one line with visible whitespace, between `«` and `»`.
pub fn show(marker: &str) -> String {
    let inner: String = marker
        .chars()
        .enumerate()
        .map(|(i, c)| match c {
            '\n' => "⏎".to_owned(),
            '\t' => "→".to_owned(),
            '\r' => "␍".to_owned(),
            ' ' if i == 0 || i + 1 == marker.chars().count() => "·".to_owned(),
            c => match super::slots::Slot::of(c) {
                Some(slot) => slot.label().to_owned(),
                None => c.to_string(),
            },
        })
        .collect();
    format!("«{inner}»")
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn line(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "  {label:<22}{value}");
}

fn enum_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The report of `analysis` for the template `name`.
pub fn render(name: &str, analysis: &Analysis) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Template {name}: {} renders", analysis.renders);
    let c = &analysis.capabilities;
    let _ = writeln!(out, "Capabilities");
    line(&mut out, "system role", yes(c.system_role));
    line(&mut out, "tools", yes(c.tools));
    line(&mut out, "tool calls", yes(c.tool_calls));
    line(&mut out, "parallel tool calls", yes(c.parallel_tool_calls));
    line(&mut out, "tool call ids", yes(c.tool_call_ids));
    line(&mut out, "arguments", &enum_name(&c.arguments));
    line(&mut out, "typed content", yes(c.typed_content));
    line(&mut out, "enable_thinking", yes(c.enable_thinking));

    let g = &analysis.generation_prompt;
    let _ = writeln!(out, "Assistant turn");
    line(&mut out, "header", &show(&g.header));
    line(&mut out, "prompt, thinking on", &show(&g.thinking_on));
    line(&mut out, "prompt, thinking off", &show(&g.thinking_off));
    line(&mut out, "turn end", &show(&g.turn_end));
    if g.tool_turn_end != g.turn_end {
        line(&mut out, "tool-call turn end", &show(&g.tool_turn_end));
    }
    if !g.tool_result_markers.is_empty() {
        let shown: Vec<String> = g.tool_result_markers.iter().map(|m| show(m)).collect();
        line(&mut out, "tool result markers", &shown.join(" "));
    }

    let r = &analysis.reasoning;
    let _ = writeln!(out, "Reasoning: {}", enum_name(&r.mode));
    if r.mode != ReasoningMode::None {
        line(&mut out, "start", &show(&r.start));
        line(&mut out, "end", &show(&r.end));
        line(&mut out, "scope", &enum_name(&r.scope));
        line(&mut out, "read from", &enum_name(&r.source));
        line(
            &mut out,
            "without reasoning",
            &enum_name(&r.without_reasoning),
        );
    }
    line(
        &mut out,
        "prefill, thinking on",
        &enum_name(&r.prefill_thinking_on),
    );
    line(
        &mut out,
        "prefill, thinking off",
        &enum_name(&r.prefill_thinking_off),
    );

    let content = &analysis.content;
    let _ = writeln!(out, "Content: {}", enum_name(&content.mode));
    if content.mode != ContentMode::Plain {
        line(&mut out, "start", &show(&content.start));
        line(&mut out, "end", &show(&content.end));
    }

    match &analysis.tools {
        Some(t) => {
            tools(&mut out, t);
            if let Some(s) = &analysis.stated {
                let calls = if s.calls == 1 { "call" } else { "calls" };
                let source = match s.source.strip_prefix("family:") {
                    Some(family) => format!("family {family}, its example ({} {calls})", s.calls),
                    None => format!("the preamble's example ({}, {} {calls})", s.source, s.calls),
                };
                let _ = writeln!(out, "  calls do not render; read from {source}:");
                let _ = writeln!(out, "    {}", show(&s.example));
            }
        }
        None => {
            let _ = writeln!(out, "Tools: none");
        }
    }
    if let Some(c) = &analysis.channels {
        let names = |n: &[String]| n.join(", ");
        let _ = writeln!(
            out,
            "Turns: channel messages {}NAME{} (reasoning: {}; content: {}), re-opened with {}",
            show(&c.header_start),
            show(&c.header_end),
            names(&c.reasoning_channels),
            names(&c.content_channels),
            show(&c.reopen)
        );
    }
    if let Some(s) = &analysis.role_switch {
        let _ = writeln!(
            out,
            "Turns: messages re-opening {} after {} (reasoning: {}; content: {}; turn end {})",
            show(&s.header),
            show(&s.message_end),
            show(&s.reasoning),
            show(&s.content),
            show(&s.content_end)
        );
    }
    let tokens: Vec<String> = analysis.preserved_tokens.iter().map(|t| show(t)).collect();
    let _ = writeln!(out, "Preserved tokens: {}", tokens.join(" "));
    if !analysis.unsupported.is_empty() {
        let _ = writeln!(out, "Unsupported");
        for u in &analysis.unsupported {
            let _ = writeln!(out, "  {}: {}", enum_name(&u.part), u.reason);
        }
    }
    out
}

fn tools(out: &mut String, t: &ToolAnalysis) {
    let parallel = if t.parallel_calls {
        "parallel calls"
    } else {
        "single call"
    };
    let _ = writeln!(out, "Tools: {} ({parallel})", enum_name(&t.format));
    line(out, "section start", &show(&t.section_start));
    line(out, "section end", &show(&t.section_end));
    line(out, "per-call start", &show(&t.per_call_start));
    line(out, "per-call end", &show(&t.per_call_end));
    line(out, "call separator", &show(&t.call_separator));
    line(out, "name prefix", &show(&t.function.name_prefix));
    line(out, "name suffix", &show(&t.function.name_suffix));
    if t.name_in_id {
        line(
            out,
            "name",
            "inside the call id (written where the name goes)",
        );
    }
    line(out, "function close", &show(&t.function.close));
    if let Some(w) = &t.stated_wrapper {
        let wrapper = format!(
            "{} … {} (stated by the tools preamble)",
            show(&w.open),
            show(&w.close)
        );
        line(out, "calls also inside", &wrapper);
    }
    let a = &t.arguments;
    if a.markers().iter().any(|m| !m.is_empty()) {
        line(out, "arguments start", &show(&a.start));
        line(out, "arguments end", &show(&a.end));
        line(out, "arg name prefix", &show(&a.name_prefix));
        line(out, "arg name suffix", &show(&a.name_suffix));
        line(out, "arg value prefix", &show(&a.value_prefix));
        line(out, "arg value suffix", &show(&a.value_suffix));
        line(out, "arg separator", &show(&a.separator));
        if !a.string_open.is_empty() || !a.string_close.is_empty() {
            line(out, "string value open", &show(&a.string_open));
            line(out, "string value close", &show(&a.string_close));
            if a.verbatim_strings {
                line(out, "strings written", "verbatim (no escapes)");
            }
        }
        line(out, "non-string values", &enum_name(&a.non_string_values));
        if let Some(e) = &a.element_values {
            let shape = format!(
                "{} (items {})",
                show(&e.element("NAME", "VALUE")),
                show(&e.element(&e.item, "VALUE"))
            );
            line(out, "objects and arrays", &format!("as elements: {shape}"));
        }
        if let Some(n) = &a.non_string {
            line(out, "json arg name suffix", &show(&n.name_suffix));
            line(out, "json arg value prefix", &show(&n.value_prefix));
            line(out, "json arg value suffix", &show(&n.value_suffix));
        }
    }
    if let Some(j) = t
        .json
        .as_ref()
        .filter(|_| t.format == ToolFormat::TagWithJson)
    {
        if j.python_dicts {
            line(out, "arguments", "python dicts");
        }
    }
    let id = &t.call_id;
    if id.position != CallIdPosition::None {
        let counter = if id.counter { " (call counter)" } else { "" };
        line(
            out,
            "call id",
            &format!("{}{counter}", enum_name(&id.position)),
        );
        line(out, "call id prefix", &show(&id.prefix));
        line(out, "call id suffix", &show(&id.suffix));
    }
    if let Some(j) = t
        .json
        .as_ref()
        .filter(|_| t.format == ToolFormat::JsonNative)
    {
        let field = |f: &Option<String>| f.as_deref().map_or("-".to_owned(), |f| format!("{f:?}"));
        line(out, "json function field", &field(&j.function_field));
        line(out, "json name field", &field(&j.name_field));
        line(out, "json arguments field", &field(&j.arguments_field));
        line(out, "json id field", &field(&j.id_field));
        line(out, "json generated id", &field(&j.generated_id_field));
        if !j.constant_fields.is_empty() {
            let fixed: Vec<String> = j
                .constant_fields
                .iter()
                .map(|(k, v)| format!("{k:?}: {v:?}"))
                .collect();
            line(out, "json constant fields", &fixed.join(", "));
        }
        let flags = [
            ("name is key", j.name_is_key),
            ("array wrapped", j.array_wrapped),
            ("python dicts", j.python_dicts),
            ("arguments as string", j.arguments_as_string),
        ];
        let set: Vec<&str> = flags.iter().filter(|f| f.1).map(|f| f.0).collect();
        line(
            out,
            "json flags",
            &if set.is_empty() {
                "-".to_owned()
            } else {
                set.join(", ")
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::show;

    #[test]
    fn shows_whitespace() {
        assert_eq!(show("<tool_call>\n"), "«<tool_call>⏎»");
        assert_eq!(show(" a b "), "«·a b·»");
        assert_eq!(show(""), "«»");
    }
}
