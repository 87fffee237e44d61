//! Documented format families, written as **data**: formats a real template uses, kept as
//! examples of what the analysis derives, for templates that render too little to derive
//! them.
//!
//! Each family is a JSON file in this directory: a `name`, a `description`, the template
//! whose analysis it `documents`, and the parts of a [`TurnFormat`](super::TurnFormat) it supplies (`tools`: a
//! [`ToolAnalysis`], with an `example` output; or `channels`).
//!
//! | family | documents | supplies |
//! | --- | --- | --- |
//! | `bracketed-python-calls` | the rendered calls of a template writing `<\|tool_call_start\|>[f(a=1), g(b='x')]<\|tool_call_end\|>` | that tool-call format |
//! | `harmony-channels` | turns written as channel messages | the whole turn as channel messages ([`ChannelFormat`]) |
//!
//! **Selection is never by a template's name or wording.** A tool-call family applies (see
//! [`shown_by`]) when the tools preamble of a template whose calls do not render shows the
//! tokens the family's format needs, or tokens of the same vocabulary (the same delimiters and
//! words but one, changed the same way in every token: a template listing tools between
//! `<|x_list_start|>` and `<|x_list_end|>` shares the vocabulary of calls between
//! `<|x_call_start|>` and `<|x_call_end|>`); the analysis then checks the family by parsing its
//! example with the generated parser (`analyze::tools::stated`). A channel family applies when
//! the rendered assistant turns are channel messages it agrees with in every marker they show,
//! checked by parsing them back (`analyze::channels`).

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::analyze::ToolAnalysis;
use crate::diff::{segments, SegmentKind};

use super::format::ChannelFormat;

/// One family description (see the module docs).
#[derive(Debug, Clone, Deserialize)]
pub struct Family {
    /// Short name.
    pub name: String,
    /// What the format is.
    pub description: String,
    /// The template whose analysis the family documents, and how it was derived.
    #[serde(default)]
    pub documents: String,
    /// The tool-call format.
    #[serde(default)]
    pub tools: Option<ToolAnalysis>,
    /// An output in the tool-call format, with the calls it holds (the family's check).
    #[serde(default)]
    pub example: Option<FamilyExample>,
    /// A channel-message turn layout.
    #[serde(default)]
    pub channels: Option<ChannelFormat>,
}

/// An output written in a family's tool-call format, and its calls.
#[derive(Debug, Clone, Deserialize)]
pub struct FamilyExample {
    /// The output text.
    pub text: String,
    /// The calls it holds.
    pub calls: Vec<FamilyCall>,
}

/// One call of a [`FamilyExample`].
#[derive(Debug, Clone, Deserialize)]
pub struct FamilyCall {
    /// The function name.
    pub name: String,
    /// The arguments.
    pub arguments: Map<String, Value>,
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

/// The tokens a tool-call format needs: the `<...>`/`[...]` markers of its section and
/// per-call markers.
fn needed_tokens(tools: &ToolAnalysis) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for marker in [
        &tools.section_start,
        &tools.section_end,
        &tools.per_call_start,
        &tools.per_call_end,
    ] {
        for seg in segments(marker) {
            if seg.kind == SegmentKind::Marker
                && seg.text.chars().any(char::is_alphanumeric)
                && !out.contains(&seg.text)
            {
                out.push(seg.text);
            }
        }
    }
    out
}

/// A token split into its leading symbols, its words (and the separators between them), and
/// its trailing symbols: `<|tool_call_start|>` → `<|`, `tool _ call _ start`, `|>`.
fn token_parts(token: &str) -> Option<(&str, Vec<&str>, &str)> {
    let start = token.find(char::is_alphanumeric)?;
    let end = token.rfind(char::is_alphanumeric)? + 1;
    let inner = &token[start..end];
    let mut pieces = Vec::new();
    let mut from = 0;
    for (i, c) in inner.char_indices() {
        if !c.is_alphanumeric() {
            pieces.push(&inner[from..i]);
            pieces.push(&inner[i..i + c.len_utf8()]);
            from = i + c.len_utf8();
        }
    }
    pieces.push(&inner[from..]);
    Some((&token[..start], pieces, &token[end..]))
}

/// How `shown` differs from `needed` when both are tokens of one vocabulary: the same
/// symbols, separators and words but one (its position, and the two words).
fn one_word_apart<'a>(needed: &'a str, shown: &'a str) -> Option<(usize, &'a str, &'a str)> {
    let (l1, w1, t1) = token_parts(needed)?;
    let (l2, w2, t2) = token_parts(shown)?;
    if l1 != l2 || t1 != t2 || w1.len() != w2.len() || w1.len() < 3 {
        return None;
    }
    let differing: Vec<usize> = (0..w1.len()).filter(|&i| w1[i] != w2[i]).collect();
    match differing[..] {
        [i] if i % 2 == 0 => Some((i, w1[i], w2[i])),
        _ => None,
    }
}

/// Whether `shown` (the markers a tools preamble shows) holds every token `needed`, or, for
/// some, a token of the same vocabulary changed the same way for all of them.
fn tokens_shown(needed: &[&str], shown: &[&str]) -> bool {
    if needed.is_empty() {
        return false;
    }
    let mut change: Option<(usize, &str, &str)> = None;
    for token in needed {
        if shown.contains(token) {
            continue;
        }
        let consistent = shown.iter().find_map(|s| {
            let c = one_word_apart(token, s)?;
            change.is_none_or(|prev| prev == c).then_some(c)
        });
        match consistent {
            Some(c) => change = Some(c),
            None => return false,
        }
    }
    true
}

/// The tool-call families whose tokens `shown` shows (see the module docs), in order.
pub fn shown_by(shown: &[&str]) -> Vec<Family> {
    families()
        .into_iter()
        .filter(|f| {
            f.tools
                .as_ref()
                .is_some_and(|t| tokens_shown(&needed_tokens(t), shown))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_families_parse() {
        let families = families();
        assert_eq!(families.len(), SOURCES.len());
        assert!(families.iter().all(|f| {
            (f.tools.is_some() == f.example.is_some())
                && (f.tools.is_some() || f.channels.is_some())
                && !f.description.is_empty()
                && !f.documents.is_empty()
        }));
    }

    #[test]
    fn vocabulary_of_tokens() {
        let needed = ["<|x_call_start|>", "<|x_call_end|>"];
        assert!(tokens_shown(
            &needed,
            &["<|x_list_start|>", "<|x_list_end|>"]
        ));
        assert!(tokens_shown(
            &needed,
            &["<|x_call_start|>", "<|x_call_end|>"]
        ));
        // Changed differently, or with other delimiters: another vocabulary.
        assert!(!tokens_shown(
            &needed,
            &["<|x_list_start|>", "<|x_defs_end|>"]
        ));
        assert!(!tokens_shown(&needed, &["[x_list_start]", "[x_list_end]"]));
        assert!(!tokens_shown(&needed, &["<|x_list_start|>"]));
        assert!(!tokens_shown(&["<|call|>"], &["<|list|>"]));
    }
}
