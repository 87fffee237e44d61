//! The request an OpenAI-compatible server receives: messages, tools and the options that decide
//! how the model's output is parsed.
//!
//! Deserialisation is lenient: absent fields take the defaults documented on each field, unknown
//! fields are ignored (or kept in an `extra` map where a template may want them), message content
//! may be a string or a list of parts, and tool-call arguments may be a JSON object or JSON text.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A chat-completions request, as far as parsing the response is concerned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChatRequest {
    /// The conversation so far (OpenAI-style messages).
    #[serde(deserialize_with = "null_as_default")]
    pub messages: Vec<RequestMessage>,
    /// The tools the model may call. Default: none (`null` too).
    #[serde(deserialize_with = "null_as_default")]
    pub tools: Vec<Tool>,
    /// Whether and which tools must be called. Default: [`ToolChoice::Auto`].
    pub tool_choice: ToolChoice,
    /// Whether the model may emit several tool calls in one turn. Default: `false`.
    pub parallel_tool_calls: bool,
    /// Whether the template is asked to enable thinking. Default: `true`.
    pub enable_thinking: bool,
    /// Where reasoning text goes. Default: [`ReasoningFormat::Auto`].
    pub reasoning_format: ReasoningFormat,
    /// The response format's JSON schema: the content must be JSON matching it, so reasoning is
    /// never inline in it (with `reasoning_format: none` it is read apart and not reported, as
    /// llama.cpp does). Default: none.
    pub json_schema: Option<Value>,
    /// Whether the last message is an assistant turn being continued. Default:
    /// [`ContinueFinalMessage::None`].
    pub continue_final_message: ContinueFinalMessage,
    /// Whether the prompt ends with the assistant turn's opening. Default: `true`.
    pub add_generation_prompt: bool,
    /// Further variables the template is rendered with (a template's own options, such as a
    /// tool-call format switch), as servers accept them. They can change the format: parse with
    /// a template that carries them ([`ChatTemplate::with_variables`]). Default: none.
    ///
    /// [`ChatTemplate::with_variables`]: crate::template::ChatTemplate::with_variables
    #[serde(
        deserialize_with = "null_as_default",
        skip_serializing_if = "Map::is_empty"
    )]
    pub chat_template_kwargs: Map<String, Value>,
}

impl Default for ChatRequest {
    fn default() -> Self {
        ChatRequest {
            messages: Vec::new(),
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            parallel_tool_calls: false,
            enable_thinking: true,
            reasoning_format: ReasoningFormat::Auto,
            json_schema: None,
            continue_final_message: ContinueFinalMessage::None,
            add_generation_prompt: true,
            chat_template_kwargs: Map::new(),
        }
    }
}

impl ChatRequest {
    /// The names of the declared tools, in declaration order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(Tool::name)
    }

    /// The tool declared under `name`, if any (the first one when names repeat).
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name() == name)
    }

    /// Whether the parser should look for tool calls: tools are declared and `tool_choice` is not
    /// `none`.
    pub fn tools_enabled(&self) -> bool {
        !self.tools.is_empty() && self.tool_choice != ToolChoice::None
    }

    /// The assistant message being continued: the last message, when
    /// [`continue_final_message`](Self::continue_final_message) is not `none` and that message
    /// is an assistant turn.
    pub fn continued_message(&self) -> Option<&RequestMessage> {
        if self.continue_final_message == ContinueFinalMessage::None {
            return None;
        }
        self.messages.last().filter(|m| m.role == "assistant")
    }

    /// The part of the parsed message that the continued assistant turn already holds, which
    /// the parse must start from (the expected message is this plus the continuation):
    /// - `content`: the turn's content, and its reasoning when reasoning is extracted;
    /// - `reasoning`: the turn's reasoning (its content, normally empty, is dropped);
    /// - `none` (or no assistant turn last): nothing.
    ///
    /// This is the rule the recorded chat cases follow.
    pub fn prefill(&self) -> Prefill {
        let Some(turn) = self.continued_message() else {
            return Prefill::default();
        };
        let reasoning = turn.reasoning_content.clone().unwrap_or_default();
        match self.continue_final_message {
            ContinueFinalMessage::Content => Prefill {
                content: turn.text(),
                reasoning_content: if self.extracts_reasoning() {
                    reasoning
                } else {
                    String::new()
                },
            },
            ContinueFinalMessage::Reasoning => Prefill {
                content: String::new(),
                reasoning_content: reasoning,
            },
            ContinueFinalMessage::None => Prefill::default(),
        }
    }

    /// Whether reasoning goes to `reasoning_content` (`auto`, `deepseek`) rather than staying
    /// inline in the content (`none`).
    pub fn extracts_reasoning(&self) -> bool {
        self.reasoning_format != ReasoningFormat::None
    }
}

/// What a continued assistant turn already holds (see [`ChatRequest::prefill`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prefill {
    /// Content the parsed message starts with.
    pub content: String,
    /// Reasoning the parsed message starts with.
    pub reasoning_content: String,
}

/// One message of the conversation. Every field but `role` is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RequestMessage {
    /// `system`, `user`, `assistant`, `tool`, ...
    pub role: String,
    /// A string, a list of content parts, or absent/`null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<MessageContent>,
    /// Reasoning of an earlier assistant turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Tool calls of an earlier assistant turn.
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_default"
    )]
    pub tool_calls: Vec<RequestToolCall>,
    /// For `tool` messages: the call this is the result of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// An optional participant or tool name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Any other fields, kept for templates that read them.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl RequestMessage {
    /// The message's text: the string content, or its text parts joined; empty when absent.
    pub fn text(&self) -> String {
        self.content
            .as_ref()
            .map(MessageContent::text)
            .unwrap_or_default()
    }
}

/// Message content: a plain string or a list of typed parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MessageContent {
    /// `"content": "text"`.
    Text(String),
    /// `"content": [{"type": "text", "text": "..."}, ...]`.
    Parts(Vec<ContentPart>),
}

impl MessageContent {
    /// The text: the string itself, or the `text` of every part concatenated.
    pub fn text(&self) -> String {
        match self {
            MessageContent::Text(text) => text.clone(),
            MessageContent::Parts(parts) => {
                parts.iter().filter_map(|p| p.text.as_deref()).collect()
            }
        }
    }
}

/// One part of a multi-part content (`text`, `image_url`, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContentPart {
    /// The part type, e.g. `text`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The text of a `text` part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The other fields of the part (image URLs, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool call in an earlier assistant message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RequestToolCall {
    /// The call id (may be absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The call type, normally `function`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The function called.
    pub function: FunctionCall,
}

/// The function part of a [`RequestToolCall`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FunctionCall {
    /// The function name.
    pub name: String,
    /// The arguments: JSON text (OpenAI) or an already-parsed JSON value (some clients).
    pub arguments: Value,
}

impl FunctionCall {
    /// The arguments as a JSON value: a string is parsed as JSON text (and kept as a JSON string
    /// when it is not valid JSON); any other value is returned as is.
    pub fn arguments_value(&self) -> Value {
        match &self.arguments {
            Value::String(text) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
            other => other.clone(),
        }
    }

    /// The arguments as JSON text: a string is returned as is, any other value serialised.
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        }
    }
}

/// An OpenAI tool declaration: `{"type": "function", "function": {name, description, parameters}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// The tool type, normally `function`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The declared function.
    pub function: FunctionDef,
}

fn function_type() -> String {
    "function".to_owned()
}

/// The function of a [`Tool`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FunctionDef {
    /// The function name.
    pub name: String,
    /// A description for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON schema of the arguments (normally `{"type": "object", "properties": ...}`);
    /// `null` when absent.
    pub parameters: Value,
    /// Other fields (`strict`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Tool {
    /// The function name.
    pub fn name(&self) -> &str {
        &self.function.name
    }

    /// The arguments' JSON schema (`null` when none was declared).
    pub fn parameters(&self) -> &Value {
        &self.function.parameters
    }

    /// The declared parameter names, in declaration order (`properties` keys).
    pub fn parameter_names(&self) -> impl Iterator<Item = &str> {
        self.properties()
            .into_iter()
            .flat_map(|p| p.keys().map(String::as_str))
    }

    /// The schema of the parameter `name`, if declared under `properties`.
    pub fn parameter(&self, name: &str) -> Option<&Value> {
        self.properties()?.get(name)
    }

    /// The schema of the parameter `name` as a schema of its own: the tool's definitions
    /// (`$defs`, `definitions`) carried into it, so its local references (`#/$defs/Item`)
    /// resolve from it as they do from the whole parameters schema.
    pub fn parameter_schema(&self, name: &str) -> Option<Value> {
        let mut schema = self.parameter(name)?.clone();
        if let Value::Object(obj) = &mut schema {
            for key in ["$defs", "definitions"] {
                if let Some(defs) = self.function.parameters.get(key) {
                    obj.entry(key).or_insert_with(|| defs.clone());
                }
            }
        }
        Some(schema)
    }

    /// Whether `name` is listed in the schema's `required` array.
    pub fn is_required(&self, name: &str) -> bool {
        self.function
            .parameters
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|req| req.iter().any(|r| r.as_str() == Some(name)))
    }

    /// How the tagged-argument parser reads the value of parameter `name`: raw text for
    /// string-typed parameters, JSON otherwise (also for undeclared parameters).
    pub fn argument_kind(&self, name: &str) -> ArgumentKind {
        self.parameter(name)
            .map_or(ArgumentKind::Json, ArgumentKind::of_schema)
    }

    fn properties(&self) -> Option<&Map<String, Value>> {
        self.function.parameters.get("properties")?.as_object()
    }
}

/// How a tool argument's value is written in tagged formats (`<parameter=x>value</parameter>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentKind {
    /// The value is raw text, to be quoted as a JSON string.
    String,
    /// The value is JSON text (numbers, booleans, objects, ...).
    Json,
}

impl ArgumentKind {
    /// [`ArgumentKind::String`] when the schema's declared types, ignoring `null`, are exactly
    /// `string` (see [`declared_types`]); [`ArgumentKind::Json`] otherwise, including when no type
    /// is declared.
    pub fn of_schema(schema: &Value) -> ArgumentKind {
        let types = declared_types(schema);
        let mut non_null = types.iter().filter(|t| *t != "null").peekable();
        if non_null.peek().is_some() && non_null.all(|t| t == "string") {
            ArgumentKind::String
        } else {
            ArgumentKind::Json
        }
    }
}

/// The integer an integer written with leading zeros stands for (`018956`, `-07`), where the
/// declared `types` want a number (`integer` or `number`) and allow no string; `None` for any
/// other text (JSON's own integers are read as JSON).
pub fn padded_integer(text: &str, types: &[String]) -> Option<Value> {
    let number = types.iter().any(|t| t == "integer" || t == "number");
    if !number || types.iter().any(|t| t == "string") {
        return None;
    }
    let text = text.trim();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", text),
    };
    if digits.len() < 2 || !digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let trimmed = digits.trim_start_matches('0');
    let trimmed = if trimmed.is_empty() { "0" } else { trimmed };
    serde_json::from_str(&format!("{sign}{trimmed}")).ok()
}

/// The JSON types a schema declares, deduplicated in order of appearance: `type` (a string or an
/// array of strings), the types of `anyOf`/`oneOf` alternatives, or those implied by `const` /
/// `enum` values. Empty when nothing is declared. Depth-bounded on nested alternatives.
pub fn declared_types(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    collect_types(schema, &mut out, 0);
    out
}

fn collect_types(schema: &Value, out: &mut Vec<String>, depth: usize) {
    const MAX_DEPTH: usize = 16;
    let mut push = |t: &str| {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    };
    match schema.get("type") {
        Some(Value::String(t)) => return push(t),
        Some(Value::Array(ts)) => {
            ts.iter().filter_map(Value::as_str).for_each(push);
            return;
        }
        _ => {}
    }
    let values = match (schema.get("const"), schema.get("enum")) {
        (Some(c), _) => std::slice::from_ref(c),
        (None, Some(Value::Array(values))) => values.as_slice(),
        _ => &[],
    };
    values.iter().map(json_type_name).for_each(&mut push);
    if depth < MAX_DEPTH {
        for key in ["anyOf", "oneOf"] {
            for alt in schema
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                collect_types(alt, out, depth + 1);
            }
        }
    }
}

fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `tool_choice`: `"auto"`, `"required"`, `"none"`, or `{"type": "function", "function": {"name"}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (default).
    #[default]
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model must not call tools.
    None,
    /// The model must call the named function.
    Function(String),
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum ToolChoiceRepr {
    Mode(String),
    Named {
        #[serde(rename = "type", default = "function_type")]
        kind: String,
        function: NamedFunction,
    },
}

#[derive(Serialize, Deserialize)]
struct NamedFunction {
    name: String,
}

impl Serialize for ToolChoice {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let repr = match self {
            ToolChoice::Auto => ToolChoiceRepr::Mode("auto".into()),
            ToolChoice::Required => ToolChoiceRepr::Mode("required".into()),
            ToolChoice::None => ToolChoiceRepr::Mode("none".into()),
            ToolChoice::Function(name) => ToolChoiceRepr::Named {
                kind: function_type(),
                function: NamedFunction { name: name.clone() },
            },
        };
        repr.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Option::<ToolChoiceRepr>::deserialize(deserializer)? {
            None => Ok(ToolChoice::Auto),
            Some(ToolChoiceRepr::Named { function, .. }) => Ok(ToolChoice::Function(function.name)),
            Some(ToolChoiceRepr::Mode(mode)) => match mode.as_str() {
                "auto" => Ok(ToolChoice::Auto),
                "required" => Ok(ToolChoice::Required),
                "none" => Ok(ToolChoice::None),
                other => Err(serde::de::Error::unknown_variant(
                    other,
                    &["auto", "required", "none"],
                )),
            },
        }
    }
}

/// Where reasoning text goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningFormat {
    /// Reasoning stays inline in `content`.
    None,
    /// Reasoning goes to `reasoning_content` (default).
    #[default]
    Auto,
    /// Reasoning goes to `reasoning_content` (DeepSeek-style naming; same parse as `auto`).
    Deepseek,
}

/// Whether the last request message is an assistant turn being continued, and in which field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContinueFinalMessage {
    /// A new assistant turn (default).
    #[default]
    None,
    /// The final assistant message's content is continued.
    Content,
    /// The final assistant message's reasoning is continued.
    Reasoning,
}

fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}
