//! The probe conversations the analyzer renders: distinctive strings, tool definitions, and a
//! [`Scenario`] builder that turns them into a [`RenderInput`].
//!
//! Every probe string is distinctive enough that finding it in a render locates the value the
//! template was given, and none is a substring of another. [`ProbeSet::PRIMARY`] drives the
//! analysis; [`ProbeSet::CHECK`] holds different values used to validate the extracted markers
//! on fresh renders.

use serde_json::{json, Value};

use crate::template::{ArgumentsForm, Clock, RenderInput};

/// The user message of every scenario.
pub const USER: &str = "UserAsksQ7f1";
/// A second user message, for conversations that continue after an assistant turn.
pub const USER_AGAIN: &str = "UserAgainQ3d8";
/// Assistant content.
pub const CONTENT: &str = "AnswerC5a1";
/// Assistant reasoning.
pub const REASONING: &str = "ThinkingR9e4";
/// The result of a tool call, in a tool message after a tool-call turn.
pub const TOOL_RESULT: &str = "ToolResultT6k2";

/// A non-string argument value (its digits are distinctive in a render).
pub const NUMBER_VALUE: u64 = 7531;

/// One set of probe values for tool calls: two function names, two argument names, two values,
/// two call ids, and content/reasoning strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeSet {
    /// The first function's name.
    pub fn_first: &'static str,
    /// The second function's name.
    pub fn_second: &'static str,
    /// The first argument's name.
    pub arg_first: &'static str,
    /// The second argument's name.
    pub arg_second: &'static str,
    /// The first argument's value.
    pub value_first: &'static str,
    /// The second argument's value.
    pub value_second: &'static str,
    /// The first call's id.
    pub id_first: &'static str,
    /// The second call's id.
    pub id_second: &'static str,
    /// Assistant content.
    pub content: &'static str,
    /// Assistant reasoning.
    pub reasoning: &'static str,
}

impl ProbeSet {
    /// The probe values the analysis runs on.
    pub const PRIMARY: ProbeSet = ProbeSet {
        fn_first: "probe_fn_alpha",
        fn_second: "probe_fn_beta",
        arg_first: "probe_arg_first",
        arg_second: "probe_arg_second",
        value_first: "XXXX",
        value_second: "YYYY",
        id_first: "call00001",
        id_second: "call99999",
        content: CONTENT,
        reasoning: REASONING,
    };

    /// Different values, used to check that extracted markers hold on a fresh render.
    pub const CHECK: ProbeSet = ProbeSet {
        fn_first: "verify_gamma_fn",
        fn_second: "verify_delta_fn",
        arg_first: "verify_one",
        arg_second: "verify_two",
        value_first: "WWWW",
        value_second: "VVVV",
        id_first: "call42424",
        id_second: "call31313",
        content: "ResponseK8q2",
        reasoning: "PonderingM4w6",
    };

    /// Every probe string of the set (used to reject markers that contain one).
    pub fn all(&self) -> [&'static str; 10] {
        [
            self.fn_first,
            self.fn_second,
            self.arg_first,
            self.arg_second,
            self.value_first,
            self.value_second,
            self.id_first,
            self.id_second,
            self.content,
            self.reasoning,
        ]
    }

    /// The tool definitions: both functions take both arguments, as strings.
    pub fn tools(&self) -> Vec<Value> {
        self.tools_with_first_type("string")
    }

    /// The tool definitions with the first argument declared as `first_type` (a JSON Schema
    /// type): templates that write a parameter's declared type beside its value render the
    /// type of the value a probe passes.
    pub fn tools_with_first_type(&self, first_type: &str) -> Vec<Value> {
        [self.fn_first, self.fn_second]
            .iter()
            .map(|name| {
                json!({
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": "Probe function.",
                        "parameters": {
                            "type": "object",
                            "properties": {
                                self.arg_first: {"type": first_type, "description": "First."},
                                self.arg_second: {"type": "string", "description": "Second."},
                            },
                            "required": [self.arg_first, self.arg_second],
                        }
                    }
                })
            })
            .collect()
    }
}

/// One tool call of an assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The function name.
    pub name: String,
    /// The arguments, in order (string values unless a scenario needs another type).
    pub args: Vec<(String, Value)>,
    /// The call id.
    pub id: String,
}

impl Call {
    /// The first call of `probes` with `arg_count` (0, 1 or 2) arguments.
    pub fn first(probes: &ProbeSet, arg_count: usize) -> Call {
        Call::new(probes.fn_first, probes.id_first, probes, arg_count)
    }

    /// The second call of `probes` (other name and id, same arguments).
    pub fn second(probes: &ProbeSet, arg_count: usize) -> Call {
        Call::new(probes.fn_second, probes.id_second, probes, arg_count)
    }

    fn new(name: &str, id: &str, probes: &ProbeSet, arg_count: usize) -> Call {
        let args = [
            (probes.arg_first, probes.value_first),
            (probes.arg_second, probes.value_second),
        ];
        Call {
            name: name.to_owned(),
            args: args
                .iter()
                .take(arg_count)
                .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                .collect(),
            id: id.to_owned(),
        }
    }

    /// The first call of `probes` with two arguments, the first one the number
    /// [`NUMBER_VALUE`] instead of a string.
    pub fn first_with_number(probes: &ProbeSet) -> Call {
        Call::first_with_value(probes, Value::from(NUMBER_VALUE))
    }

    /// The first call of `probes` with two arguments, the first one `value` instead of a
    /// string.
    pub fn first_with_value(probes: &ProbeSet, value: Value) -> Call {
        let mut call = Call::first(probes, 2);
        call.args[0].1 = value;
        call
    }

    /// The arguments as a JSON object.
    pub fn args_object(&self) -> Value {
        Value::Object(self.args.iter().cloned().collect())
    }

    fn to_json(&self, form: ArgumentsForm) -> Value {
        let args = match form {
            ArgumentsForm::String => Value::String(self.args_object().to_string()),
            _ => self.args_object(),
        };
        json!({"id": self.id, "type": "function", "function": {"name": self.name, "arguments": args}})
    }
}

/// The assistant turn that ends a scenario.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    /// `content` (`None`: the field is absent).
    pub content: Option<String>,
    /// `reasoning_content` (`None`: absent).
    pub reasoning: Option<String>,
    /// `tool_calls` (empty: absent).
    pub calls: Vec<Call>,
    /// Pass the reasoning as a `{"type": "thinking", "thinking": ...}` part of a content list
    /// (followed by a `text` part with the content) instead of `reasoning_content`.
    pub reasoning_as_part: bool,
}

impl Turn {
    /// A turn with this content only.
    pub fn content(text: &str) -> Turn {
        Turn {
            content: Some(text.to_owned()),
            ..Turn::default()
        }
    }

    fn to_json(&self, form: ArgumentsForm) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("role".into(), "assistant".into());
        let content = self.content.clone().map_or(Value::Null, Value::String);
        match (&self.reasoning, self.reasoning_as_part) {
            (Some(r), true) => {
                let mut parts = vec![json!({"type": "thinking", "thinking": r})];
                if let Value::String(text) = &content {
                    parts.push(json!({"type": "text", "text": text}));
                }
                m.insert("content".into(), Value::Array(parts));
            }
            _ => {
                m.insert("content".into(), content);
            }
        }
        if let Some(r) = self.reasoning.as_ref().filter(|_| !self.reasoning_as_part) {
            m.insert("reasoning_content".into(), Value::String(r.clone()));
        }
        if !self.calls.is_empty() {
            let calls = self.calls.iter().map(|c| c.to_json(form)).collect();
            m.insert("tool_calls".into(), Value::Array(calls));
        }
        Value::Object(m)
    }
}

/// A probe conversation: a user message, optionally an assistant turn (and optionally a second
/// user message after it), tools, the generation prompt flag and `enable_thinking`.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The assistant turn after the user message, if any.
    pub turn: Option<Turn>,
    /// Whether a second user message follows the assistant turn.
    pub user_after: bool,
    /// Whether a tool message with [`TOOL_RESULT`] (for the first call) follows the assistant
    /// turn.
    pub tool_result_after: bool,
    /// Whether the tool definitions are passed.
    pub tools: bool,
    /// `add_generation_prompt`.
    pub generation_prompt: bool,
    /// `enable_thinking`.
    pub enable_thinking: bool,
    /// How tool-call arguments are passed (object or JSON string).
    pub arguments: ArgumentsForm,
    /// The probe set for tool definitions.
    pub probes: ProbeSet,
    /// Tool-call turns get `content: null` instead of `""` (some templates render calls only
    /// without content).
    pub null_call_content: bool,
    /// Each call's id is its function name (templates that write the id where the name goes,
    /// and never the name: the analysis then finds the name's place).
    pub ids_are_names: bool,
    /// The declared type of the first probe argument (`None`: string), for probes that pass
    /// it another type of value.
    pub first_arg_type: Option<&'static str>,
}

impl Scenario {
    /// Just the user message: no tools, no generation prompt, thinking enabled.
    pub fn user_only() -> Scenario {
        Scenario {
            turn: None,
            user_after: false,
            tool_result_after: false,
            tools: false,
            generation_prompt: false,
            enable_thinking: true,
            arguments: ArgumentsForm::Object,
            probes: ProbeSet::PRIMARY,
            null_call_content: false,
            ids_are_names: false,
            first_arg_type: None,
        }
    }

    /// This scenario ending with an assistant turn that makes `calls` (and optionally has
    /// reasoning).
    pub fn with_calls(&self, calls: Vec<Call>, reasoning: Option<&str>) -> Scenario {
        Scenario {
            turn: Some(Turn {
                content: (!self.null_call_content).then(String::new),
                reasoning: reasoning.map(str::to_owned),
                calls,
                reasoning_as_part: false,
            }),
            ..self.clone()
        }
    }

    /// This scenario ending with an assistant turn that writes `content` and then makes
    /// `calls`.
    pub fn with_content_and_calls(&self, content: &str, calls: Vec<Call>) -> Scenario {
        let mut scenario = self.with_calls(calls, None);
        if let Some(turn) = scenario.turn.as_mut() {
            turn.content = Some(content.to_owned());
        }
        scenario
    }

    /// The user message followed by `turn`.
    pub fn with_turn(turn: Turn) -> Scenario {
        Scenario {
            turn: Some(turn),
            ..Scenario::user_only()
        }
    }

    /// The render input of this scenario (fixed clock, `bos_token`/`eos_token` set).
    pub fn to_input(&self) -> RenderInput {
        let mut messages = vec![json!({"role": "user", "content": USER})];
        if let Some(turn) = &self.turn {
            let mut turn = turn.clone();
            if self.ids_are_names {
                for call in &mut turn.calls {
                    call.id.clone_from(&call.name);
                }
            }
            messages.push(turn.to_json(self.arguments));
        }
        if let Some(call) = self
            .turn
            .as_ref()
            .and_then(|t| t.calls.first())
            .filter(|_| self.tool_result_after)
        {
            let id = if self.ids_are_names {
                &call.name
            } else {
                &call.id
            };
            messages.push(json!({"role": "tool", "tool_call_id": id, "name": call.name, "content": TOOL_RESULT}));
        }
        if self.user_after {
            messages.push(json!({"role": "user", "content": USER_AGAIN}));
        }
        RenderInput::new(messages)
            .with_tools(self.tools.then(|| {
                self.probes
                    .tools_with_first_type(self.first_arg_type.unwrap_or("string"))
            }))
            .with_generation_prompt(self.generation_prompt)
            .with_var("enable_thinking", self.enable_thinking)
            .with_stand_in_special_tokens()
            .with_clock(Clock::Fixed(0))
    }
}
