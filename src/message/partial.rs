//! The message parsed from a (possibly partial) output, with what is final flagged.

use super::chat_message::{ChatMessage, ToolCall};
use super::heal::heal_str;

/// A snapshot of the message parsed from a prefix of the output, as a
/// [`MessageBuilder`](super::MessageBuilder) produces it and a
/// [`DeltaTracker`](super::DeltaTracker) consumes it.
///
/// Text fields hold only text that was really parsed: healing is kept apart in
/// [`PartialToolCall::healed_arguments`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartialMessage {
    /// The content so far.
    pub content: String,
    /// The reasoning so far.
    pub reasoning_content: String,
    /// The tool calls started so far.
    pub tool_calls: Vec<PartialToolCall>,
}

/// A tool call of a [`PartialMessage`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartialToolCall {
    /// The id so far (empty when none).
    pub id: String,
    /// Whether the id can no longer change: it was set, or the format carries none.
    pub id_final: bool,
    /// The name so far.
    pub name: String,
    /// Whether the name is complete.
    pub name_final: bool,
    /// The argument JSON text parsed so far, without any healing.
    pub arguments: String,
    /// Whether the call's arguments are complete.
    pub arguments_final: bool,
    /// For unfinished arguments: `arguments` healed into parsable JSON (see
    /// [`heal`](super::heal::heal)), when that is possible; `None` otherwise.
    pub healed_arguments: Option<String>,
}

impl PartialToolCall {
    /// Whether the call may be announced in a stream: its name is complete and its id final.
    pub fn is_announceable(&self) -> bool {
        self.name_final && self.id_final
    }

    /// Recomputes [`healed_arguments`](Self::healed_arguments) from the arguments (none when
    /// they are final or empty).
    pub fn refresh_healing(&mut self) {
        self.healed_arguments = if self.arguments_final || self.arguments.trim().is_empty() {
            None
        } else {
            heal_str(&self.arguments)
        };
    }
}

impl PartialMessage {
    /// The message as parsed: every call with its name, id and raw arguments as known so far.
    /// This is what the conformance cases' `expected` holds for partial outputs.
    pub fn to_message(&self) -> ChatMessage {
        let calls = self
            .tool_calls
            .iter()
            .map(|c| ToolCall::new(&c.id, &c.name, &c.arguments));
        self.message_with(calls.collect())
    }

    /// The part a stream may already show, which the accumulated deltas of a
    /// [`DeltaTracker`](super::DeltaTracker) reproduce: content, reasoning, and the calls up to
    /// (not including) the first one that is not [announceable](PartialToolCall::is_announceable),
    /// with raw arguments.
    pub fn stable_message(&self) -> ChatMessage {
        let calls = self
            .tool_calls
            .iter()
            .take_while(|c| c.is_announceable())
            .map(|c| ToolCall::new(&c.id, &c.name, &c.arguments));
        self.message_with(calls.collect())
    }

    /// The message for display: like [`to_message`](Self::to_message), with unfinished
    /// arguments replaced by their healed form where one exists.
    pub fn healed_message(&self) -> ChatMessage {
        let calls = self.tool_calls.iter().map(|c| {
            let arguments = c.healed_arguments.as_deref().unwrap_or(&c.arguments);
            ToolCall::new(&c.id, &c.name, arguments)
        });
        self.message_with(calls.collect())
    }

    /// A final snapshot of a complete message: everything flagged final.
    pub fn from_final(message: &ChatMessage) -> Self {
        let tool_calls = message
            .tool_calls
            .iter()
            .map(|c| PartialToolCall {
                id: c.id.clone(),
                id_final: true,
                name: c.name.clone(),
                name_final: true,
                arguments: c.arguments.clone(),
                arguments_final: true,
                healed_arguments: None,
            })
            .collect();
        PartialMessage {
            content: message.content.clone(),
            reasoning_content: message.reasoning_content.clone(),
            tool_calls,
        }
    }

    fn message_with(&self, tool_calls: Vec<ToolCall>) -> ChatMessage {
        ChatMessage {
            role: "assistant".to_owned(),
            content: self.content.clone(),
            reasoning_content: self.reasoning_content.clone(),
            tool_calls,
        }
    }
}
