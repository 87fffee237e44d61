//! The OpenAI streaming chunk shape (`choices[].delta`) and folding deltas back into a message.

use serde::{Deserialize, Serialize};

use super::chat_message::{ChatMessage, ToolCall};

/// One streamed delta: `{role?, content?, reasoning_content?, tool_calls?}`. Absent fields are
/// not serialised.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatDelta {
    /// `assistant`, on the first delta of a stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Content text to append.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Reasoning text to append.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Tool-call fragments, by call index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

impl ChatDelta {
    /// Whether the delta carries nothing.
    pub fn is_empty(&self) -> bool {
        self.role.is_none()
            && self.content.is_none()
            && self.reasoning_content.is_none()
            && self.tool_calls.as_ref().is_none_or(Vec::is_empty)
    }
}

/// A fragment of the tool call at `index`: `{index, id?, type?, function: {name?, arguments?}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallDelta {
    /// The call's position in the message's tool calls.
    pub index: usize,
    /// The call id, on the call's first fragment (when it has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `function`, on the call's first fragment.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The name and argument fragments.
    #[serde(default)]
    pub function: FunctionDelta,
}

/// The function part of a [`ToolCallDelta`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionDelta {
    /// The complete function name, on the call's first fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Argument text to append.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
}

/// A delta that cannot be folded: it names a call index past the next new one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool call delta index {index} skips ahead: only {calls} calls so far")]
pub struct AccumulateError {
    /// The index in the delta.
    pub index: usize,
    /// How many calls the message had.
    pub calls: usize,
}

/// Folds deltas into a [`ChatMessage`], the way a streaming client does: text fields (and ids,
/// names, arguments) are appended; a call index equal to the number of calls starts a new call.
#[derive(Debug, Clone, Default)]
pub struct DeltaAccumulator {
    message: ChatMessage,
}

impl DeltaAccumulator {
    /// An accumulator holding an empty assistant message.
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds one delta in. On error nothing of the delta's tool calls from the bad one on is
    /// applied.
    pub fn apply(&mut self, delta: &ChatDelta) -> Result<(), AccumulateError> {
        let message = &mut self.message;
        if let Some(role) = &delta.role {
            message.role.clone_from(role);
        }
        if let Some(text) = &delta.content {
            message.content.push_str(text);
        }
        if let Some(text) = &delta.reasoning_content {
            message.reasoning_content.push_str(text);
        }
        for fragment in delta.tool_calls.iter().flatten() {
            let calls = message.tool_calls.len();
            if fragment.index > calls {
                return Err(AccumulateError {
                    index: fragment.index,
                    calls,
                });
            }
            if fragment.index == calls {
                message.tool_calls.push(ToolCall::default());
            }
            let call = &mut message.tool_calls[fragment.index];
            let parts = [
                (&mut call.id, &fragment.id),
                (&mut call.name, &fragment.function.name),
                (&mut call.arguments, &fragment.function.arguments),
            ];
            for (field, text) in parts {
                if let Some(text) = text {
                    field.push_str(text);
                }
            }
        }
        Ok(())
    }

    /// The message accumulated so far.
    pub fn message(&self) -> &ChatMessage {
        &self.message
    }

    /// The accumulated message.
    pub fn into_message(self) -> ChatMessage {
        self.message
    }
}

/// Folds a sequence of deltas into a message.
pub fn accumulate<'a>(
    deltas: impl IntoIterator<Item = &'a ChatDelta>,
) -> Result<ChatMessage, AccumulateError> {
    let mut acc = DeltaAccumulator::new();
    for delta in deltas {
        acc.apply(delta)?;
    }
    Ok(acc.into_message())
}
