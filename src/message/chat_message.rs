//! The parsed assistant message: content, reasoning and tool calls.
//!
//! [`ChatMessage`] serialises to the OpenAI chat-completions message shape and deserialises from
//! both that shape and the flat shape of the conformance cases' `expected` field.

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A chat message as produced by parsing model output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// The role; `assistant` for parsed output.
    pub role: String,
    /// The visible content (may be empty).
    pub content: String,
    /// The reasoning text (empty when there is none or it stays inline).
    pub reasoning_content: String,
    /// The tool calls, in output order.
    pub tool_calls: Vec<ToolCall>,
}

impl Default for ChatMessage {
    fn default() -> Self {
        ChatMessage::assistant()
    }
}

impl ChatMessage {
    /// An empty assistant message.
    pub fn assistant() -> Self {
        ChatMessage {
            role: "assistant".to_owned(),
            content: String::new(),
            reasoning_content: String::new(),
            tool_calls: Vec::new(),
        }
    }

    /// Whether the message has no content, reasoning or tool calls.
    pub fn is_empty(&self) -> bool {
        self.content.is_empty() && self.reasoning_content.is_empty() && self.tool_calls.is_empty()
    }

    /// The flat shape of the conformance cases' `expected` field:
    /// `{role, content, reasoning_content, tool_calls: [{name, arguments, id}]}`.
    pub fn to_case_value(&self) -> Value {
        let calls: Vec<Value> = self
            .tool_calls
            .iter()
            .map(|c| serde_json::json!({"name": c.name, "arguments": c.arguments, "id": c.id}))
            .collect();
        serde_json::json!({
            "role": self.role,
            "content": self.content,
            "reasoning_content": self.reasoning_content,
            "tool_calls": calls,
        })
    }
}

/// One tool call of a [`ChatMessage`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCall {
    /// The call id; empty when the format carries none.
    pub id: String,
    /// The function name.
    pub name: String,
    /// The arguments as JSON text (normally an object; may be partial while streaming).
    pub arguments: String,
}

impl ToolCall {
    /// A call with the given id, name and JSON argument text.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// OpenAI shape: `content` is `null` when it is empty and the message has tool calls, a string
/// otherwise; `reasoning_content` appears only when non-empty; `tool_calls` only when non-empty,
/// as `[{id, type: "function", function: {name, arguments}}]`.
impl Serialize for ChatMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("role", &self.role)?;
        if self.content.is_empty() && !self.tool_calls.is_empty() {
            map.serialize_entry("content", &Value::Null)?;
        } else {
            map.serialize_entry("content", &self.content)?;
        }
        if !self.reasoning_content.is_empty() {
            map.serialize_entry("reasoning_content", &self.reasoning_content)?;
        }
        if !self.tool_calls.is_empty() {
            map.serialize_entry("tool_calls", &self.tool_calls)?;
        }
        map.end()
    }
}

impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let function = serde_json::json!({"name": self.name, "arguments": self.arguments});
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("type", "function")?;
        map.serialize_entry("function", &function)?;
        map.end()
    }
}

#[derive(Deserialize)]
struct MessageRepr {
    #[serde(default = "assistant_role")]
    role: String,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCall>>,
}

fn assistant_role() -> String {
    "assistant".to_owned()
}

/// Accepts the OpenAI shape and the flat case shape; `null` or absent fields are empty.
impl<'de> Deserialize<'de> for ChatMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let repr = MessageRepr::deserialize(deserializer)?;
        Ok(ChatMessage {
            role: repr.role,
            content: repr.content.unwrap_or_default(),
            reasoning_content: repr.reasoning_content.unwrap_or_default(),
            tool_calls: repr.tool_calls.unwrap_or_default(),
        })
    }
}

#[derive(Deserialize)]
struct CallRepr {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    function: Option<FunctionRepr>,
}

#[derive(Deserialize)]
struct FunctionRepr {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

/// Accepts `{id, type, function: {name, arguments}}` and the flat `{id, name, arguments}`;
/// arguments given as a JSON value rather than text are serialised.
impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let repr = CallRepr::deserialize(deserializer)?;
        let (name, arguments) = match repr.function {
            Some(f) => (f.name, f.arguments),
            None => (repr.name, repr.arguments),
        };
        let arguments = match arguments {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text,
            Some(other) => other.to_string(),
        };
        Ok(ToolCall {
            id: repr.id.unwrap_or_default(),
            name: name.unwrap_or_default(),
            arguments,
        })
    }
}
