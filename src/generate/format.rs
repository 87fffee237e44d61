//! The turn format: a small declarative description of one assistant turn (reasoning markers,
//! content markers, tool-call format), the single input of the grammar generator.
//!
//! A [`TurnFormat`] is plain data (serde): it is derived from an [`Analysis`] by
//! [`TurnFormat::from_analysis`], and formats the generic analysis cannot express are written
//! as data too (see [`families`](super::families)), never as code per model.

use serde::{Deserialize, Serialize};

use crate::analyze::markers::{pairs, units};
use crate::analyze::reasoning::WithoutReasoning;
use crate::analyze::{Analysis, ReasoningMode, ReasoningScope, ToolAnalysis};

/// How reasoning is delimited in the output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningFormat {
    /// Opening marker; empty when reasoning runs from the start of the output to `end`.
    pub start: String,
    /// Closing marker; empty when the template has no reasoning.
    pub end: String,
    /// Reasoning only appears in turns that call tools.
    #[serde(default)]
    pub tool_calls_only: bool,
    /// What several reasoning blocks of one output are joined with (as the template splits
    /// reasoning between calls); `None`: they are joined as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_join: Option<String>,
    /// With no opening marker (`start` empty): whether the output starts inside the
    /// reasoning, as every turn writes the closer (a turn without reasoning writes it alone) or
    /// the prompt wrote the block's opening text. Reasoning the output leaves unclosed is then
    /// reasoning; otherwise text is reasoning only once its closer follows.
    #[serde(default)]
    pub opened_by_turn: bool,
}

impl ReasoningFormat {
    /// Whether reasoning markers exist at all.
    pub fn is_enabled(&self) -> bool {
        !self.end.trim().is_empty()
    }

    /// Whether the output starts inside reasoning that has no opening marker (see
    /// [`opened_by_turn`](Self::opened_by_turn)).
    pub fn starts_unmarked(&self) -> bool {
        self.opened_by_turn && self.start.trim().is_empty()
    }
}

/// How content is wrapped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentFormat {
    /// Opening marker (empty: plain content).
    pub start: String,
    /// Closing marker.
    pub end: String,
    /// What pieces of content separated by calls or reasoning are joined with (as the
    /// template splits content around calls); `None`: the text between them is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_join: Option<String>,
}

/// Everything the generator needs to know about an assistant turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnFormat {
    /// Reasoning markers.
    pub reasoning: ReasoningFormat,
    /// Content markers.
    pub content: ContentFormat,
    /// Tool-call format (`None`: no tool calls).
    pub tools: Option<ToolAnalysis>,
    /// Text the assistant turn ends with (end-of-turn marker), dropped when it ends the output.
    #[serde(default)]
    pub turn_end: String,
    /// Text a turn that calls tools ends with, when it differs from `turn_end` (`<|eom|>`);
    /// dropped when it ends the output.
    #[serde(default)]
    pub tool_turn_end: String,
    /// Markers that wrap tool results (`<｜tool▁output▁begin｜>`): a model imitating a tool's
    /// answer writes them, and no field holds them (the text between them stays content).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_result_markers: Vec<String>,
    /// The assistant turn's header (written by the prompt): a model that repeats it, or its
    /// last marker, at the start of its output has not started the turn yet (dropped).
    #[serde(default)]
    pub turn_start: String,
    /// Markers a server must keep as special tokens.
    #[serde(default)]
    pub preserved_tokens: Vec<String>,
    /// Tagged argument values are Python/JSON literals written with their own quotes
    /// (`name="text"`, `flag=True`), not raw text between markers.
    #[serde(default)]
    pub literal_values: bool,
    /// The turn is a sequence of channel messages (see [`ChannelFormat`]); when set, it
    /// replaces the reasoning/content/tool layout.
    #[serde(default)]
    pub channels: Option<ChannelFormat>,
    /// The turn is a run of messages that re-open the assistant header, each picking its kind
    /// by what follows the header (see [`SwitchFormat`]); when set, reasoning and tool-call
    /// blocks start only at a message start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch: Option<SwitchFormat>,
}

/// A turn of messages that re-open the assistant header (`HEADER KIND body MESSAGE_END`,
/// repeated): the reasoning start ([`ReasoningFormat::start`]) or the tool-call section start
/// right after the header makes the message reasoning or calls; otherwise it is content, after
/// the content suffix. The generation prompt writes the first header.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchFormat {
    /// The header every message opens with (`<|im_start|>assistant`).
    pub header: String,
    /// What ends a message before the header re-opens (`<|im_end|>`).
    pub message_end: String,
    /// What a content message starts with after the header (dropped; often a newline).
    pub content: String,
}

/// A turn made of channel messages: `HEADER_START channel [RECIPIENT] [CONSTRAIN type]
/// HEADER_END body MESSAGE_END`, messages separated by `REOPEN`; the recipient may also come
/// first. The channel says where the body goes; a tool recipient makes the body a call's JSON
/// arguments; other recipients' messages are dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelFormat {
    /// Opens a message header (`<|channel|>`).
    pub header_start: String,
    /// Ends a header, starts the body (`<|message|>`).
    pub header_end: String,
    /// Texts that end a message body.
    pub message_ends: Vec<String>,
    /// Re-opens the assistant turn between messages (`<|start|>assistant`).
    pub reopen: String,
    /// Introduces a recipient (`to=`).
    pub recipient: String,
    /// Recipient prefix of tool calls (`functions.`); the rest is the function name.
    pub tool_recipient: String,
    /// Introduces a body type (`<|constrain|>`).
    pub constrain: String,
    /// Channels whose body is reasoning.
    pub reasoning_channels: Vec<String>,
    /// Channels whose body is content.
    pub content_channels: Vec<String>,
}

impl TurnFormat {
    /// The format the analysis describes for a request that passes tool definitions
    /// (`with_tools`) or not: content wrapping can differ between the two.
    pub fn for_request(analysis: &Analysis, with_tools: bool) -> TurnFormat {
        let mut format = TurnFormat::from_analysis(analysis);
        let content_with_tools = analysis
            .content_with_tools
            .as_ref()
            .filter(|_| with_tools && format.switch.is_none());
        if let Some(c) = content_with_tools {
            format.content.start.clone_from(&c.start);
            format.content.end.clone_from(&c.end);
        }
        format
    }

    /// The format the analysis describes.
    pub fn from_analysis(analysis: &Analysis) -> TurnFormat {
        let r = &analysis.reasoning;
        let reasoning = match r.mode {
            ReasoningMode::None => ReasoningFormat::default(),
            ReasoningMode::Tagged | ReasoningMode::Delimited => ReasoningFormat {
                start: r.start.clone(),
                end: r.end.clone(),
                tool_calls_only: r.scope == ReasoningScope::ToolCallsOnly,
                block_join: r.block_join.clone(),
                opened_by_turn: r.without_reasoning != WithoutReasoning::Nothing,
            },
        };
        let mut reasoning = reasoning;
        if reasoning.start.trim().is_empty() {
            // The opener the prompt writes every turn: at the end of the header, or of the
            // generation prompt with thinking on.
            let gp = &analysis.generation_prompt;
            if let Some(opener) = opener_in_header(&reasoning.end, &gp.header)
                .or_else(|| opener_in_header(&reasoning.end, &gp.thinking_on))
            {
                reasoning.start = opener;
            }
        }
        let mut tools = analysis.tools.clone();
        let literal_values = tools.as_mut().is_some_and(quoted_values_to_literals);
        if let Some(s) = &analysis.role_switch {
            return TurnFormat {
                reasoning: ReasoningFormat {
                    start: s.reasoning.clone(),
                    end: s.message_end.clone(),
                    tool_calls_only: false,
                    block_join: None,
                    opened_by_turn: false,
                },
                content: ContentFormat {
                    start: String::new(),
                    end: String::new(),
                    block_join: analysis.content.block_join.clone(),
                },
                turn_end: s.content_end.clone(),
                // A calls message ends with its section end when that ends the message, else
                // with the tool-call turns' own end.
                tool_turn_end: tools
                    .as_ref()
                    .map(|t| t.section_end.trim().to_owned())
                    .filter(|e| e.starts_with(s.message_end.as_str()))
                    .or_else(|| {
                        let end = analysis.generation_prompt.tool_turn_end.trim();
                        (!end.is_empty()).then(|| end.to_owned())
                    })
                    .unwrap_or_else(|| s.message_end.clone()),
                tools,
                literal_values,
                turn_start: s.header.clone(),
                tool_result_markers: Vec::new(),
                preserved_tokens: analysis.preserved_tokens.clone(),
                channels: None,
                switch: Some(SwitchFormat {
                    header: s.header.clone(),
                    message_end: s.message_end.clone(),
                    content: s.content.clone(),
                }),
            };
        }
        // Turns without an end of their own end where the next turn opens: a model stops by
        // writing that marker.
        let gp = &analysis.generation_prompt;
        let or_else =
            |end: &str, next: &str| if end.trim().is_empty() { next } else { end }.to_owned();
        TurnFormat {
            switch: None,
            channels: analysis.channels.clone(),
            literal_values,
            reasoning,
            content: ContentFormat {
                start: analysis.content.start.clone(),
                end: analysis.content.end.clone(),
                block_join: analysis.content.block_join.clone(),
            },
            tools,
            turn_end: or_else(&gp.turn_end, &gp.next_turn),
            tool_turn_end: or_else(&gp.tool_turn_end, &gp.tool_next_turn),
            tool_result_markers: gp.tool_result_markers.clone(),
            turn_start: gp.header.clone(),
            preserved_tokens: analysis.preserved_tokens.clone(),
        }
    }
}

/// The opener of the reasoning when the assistant header ends with it (the template opens
/// reasoning in every turn header): the header's last marker sequence, when it pairs with the
/// reasoning's closing marker (`<think>`/`</think>`, `[THINK]`/`[/THINK]`,
/// `<|open|>think<|sep|>`/`<|close|>think<|sep|>`). It belongs to the reasoning, not to the
/// header.
fn opener_in_header(end: &str, header: &str) -> Option<String> {
    let header = header.trim_end();
    let last_unit = units(header).pop()?;
    // Markers the segmentation does not know (`⁅think⁆`) end at whitespace.
    let last_word = header.rsplit(char::is_whitespace).next()?;
    [last_unit, last_word]
        .into_iter()
        .find(|o| pairs(o, end))
        .map(str::to_owned)
}

/// A tagged format whose string values carry their own quotes (`string_open`/`string_close`)
/// while other values are bare writes values as literals.
fn quoted_values_to_literals(tools: &mut ToolAnalysis) -> bool {
    let a = &tools.arguments;
    tools.format == crate::analyze::ToolFormat::TagWithTagged
        && a.non_string_values == crate::analyze::tools::NonStringValues::StringsQuoted
        && !a.string_open.trim().is_empty()
}
