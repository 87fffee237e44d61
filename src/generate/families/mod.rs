//! Format families the generic analysis misses, written as **data**.
//!
//! Each family is a JSON file in this directory: a `name`, a `description`, the text a rendered
//! prompt must show for the family to apply (`shows`), and the parts of a
//! [`TurnFormat`] it supplies (`tools`: a
//! [`ToolAnalysis`]; `literal_values`). A family only fills in what
//! the analysis could not express (it never overrides analysed markers) and is selected by what
//! the rendered template shows, never by the template's name.
//!
//! | family | selected when | supplies |
//! | --- | --- | --- |
//! | `bracketed-python-calls` | the prompt lists tools in `<\|tool_list_start\|>` but calls do not render | `<\|tool_call_start\|>[f(a=1), g(b='x')]<\|tool_call_end\|>` calls |
//! | `harmony-channels` | rendered turns show `<\|channel\|>` headers | the whole turn as channel messages ([`ChannelFormat`]) |

use serde::Deserialize;

use crate::analyze::ToolAnalysis;

use super::format::{ChannelFormat, TurnFormat};

/// One family description (see the module docs).
#[derive(Debug, Clone, Deserialize)]
pub struct Family {
    /// Short name.
    pub name: String,
    /// What the format is.
    pub description: String,
    /// Text the rendered prompt shows when the family applies.
    pub shows: String,
    /// The tool-call format.
    #[serde(default)]
    pub tools: Option<ToolAnalysis>,
    /// A channel-message turn layout.
    #[serde(default)]
    pub channels: Option<ChannelFormat>,
    /// Tagged values are literals.
    #[serde(default)]
    pub literal_values: bool,
}

const SOURCES: &[&str] = &[
    include_str!("bracketed_python_calls.json"),
    include_str!("harmony_channels.json"),
];

/// Every bundled family.
pub fn families() -> Vec<Family> {
    SOURCES
        .iter()
        .filter_map(|source| serde_json::from_str(source).ok())
        .collect()
}

/// Fills in what the analysis left out of `format` from the first family whose `shows` text
/// appears in `rendered_prompt` (the prompt rendered with the request's tools). Returns the
/// family's name when one applied.
pub fn refine(format: &mut TurnFormat, rendered_prompt: &str) -> Option<String> {
    // What the rendered template shows: the prompt, and the turn markers the analysis read
    // from rendered assistant turns.
    let shown = |text: &str| {
        rendered_prompt.contains(text)
            || [&format.reasoning.start, &format.content.start]
                .iter()
                .any(|m| m.contains(text))
    };
    if let Some(family) = families()
        .into_iter()
        .find(|f| f.channels.is_some() && !f.shows.is_empty() && shown(&f.shows))
    {
        format.channels = family.channels;
        return Some(family.name);
    }
    if format.tools.is_some() {
        return None;
    }
    let family = families()
        .into_iter()
        .find(|f| f.tools.is_some() && !f.shows.is_empty() && rendered_prompt.contains(&f.shows))?;
    let tools = family.tools?;
    for marker in tools.markers() {
        let marker = marker.trim();
        if !marker.is_empty() && !format.preserved_tokens.iter().any(|t| t == marker) {
            format.preserved_tokens.push(marker.to_owned());
        }
    }
    format.tools = Some(tools);
    format.literal_values |= family.literal_values;
    Some(family.name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn bundled_families_parse() {
        let families = super::families();
        assert_eq!(families.len(), super::SOURCES.len());
        assert!(families
            .iter()
            .all(|f| (f.tools.is_some() || f.channels.is_some()) && !f.description.is_empty()));
    }
}
