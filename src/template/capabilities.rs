//! Capability probing: what a chat template supports, found by rendering probe conversations.
//!
//! Every probe renders the template with distinctive strings and looks for them in the output;
//! nothing depends on the template's name or source text. A probe whose render fails counts as
//! "not supported", and the failure is recorded in [`Capabilities::notes`].

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::render::{ChatTemplate, Clock, RenderInput};

const SYSTEM_TEXT: &str = "SysProbe7f3a";
const USER_TEXT: &str = "UserProbe2b9c";
const TYPED_TEXT: &str = "TypedProbe5e1d";
const ASSISTANT_TEXT: &str = "AssistantProbe4c8e";
const TOOL_A: &str = "probe_tool_alpha";
const TOOL_B: &str = "probe_tool_beta";
const ARG_A: &str = "ArgProbe9d2f";
const ARG_B: &str = "ArgProbe6a7b";
/// Call ids are 9 alphanumeric characters: Mistral templates reject any other shape.
const CALL_ID: &str = "Xq7Zp3Lk9";
const CALL_ID_B: &str = "Yr8Wm4Nj2";
const RESULT_TEXT: &str = "ResultProbe3e5a";

/// How a template accepts tool-call `arguments`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentsForm {
    /// Only as a JSON object (a mapping).
    Object,
    /// Only as a JSON-encoded string.
    String,
    /// Either form renders the arguments.
    Both,
    /// Neither form renders them (or tool calls are not supported).
    None,
}

/// What a chat template supports, as found by [`Capabilities::probe`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// A system message's text appears in the render.
    pub system_role: bool,
    /// A tool's name appears when tools are passed.
    pub tools: bool,
    /// An assistant tool call's arguments appear in the render.
    pub tool_calls: bool,
    /// Both of two tool calls in one assistant turn appear.
    pub parallel_tool_calls: bool,
    /// A tool call's id appears in the render.
    pub tool_call_ids: bool,
    /// Which `arguments` form renders.
    pub arguments: ArgumentsForm,
    /// Content given as a list of `{type: text, text}` parts renders its text.
    pub typed_content: bool,
    /// The render changes with `enable_thinking` true vs false.
    pub enable_thinking: bool,
    /// Probe renders that failed, with the error (informational).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn tool_def(name: &str) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": "Probe tool.",
            "parameters": {
                "type": "object",
                "properties": {"arg": {"type": "string", "description": "Probe argument."}},
                "required": ["arg"]
            }
        }
    })
}

fn call(name: &str, arg: &str, id: &str, as_string: bool) -> Value {
    let arguments = if as_string {
        Value::String(json!({ "arg": arg }).to_string())
    } else {
        json!({ "arg": arg })
    };
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

/// A conversation where the assistant makes `calls`, followed by one tool result per call.
fn call_conversation(calls: &[Value]) -> Vec<Value> {
    let mut messages = vec![
        user(USER_TEXT),
        json!({"role": "assistant", "content": "", "tool_calls": calls}),
    ];
    for c in calls {
        messages.push(json!({
            "role": "tool",
            "tool_call_id": c["id"],
            "name": c["function"]["name"],
            "content": RESULT_TEXT,
        }));
    }
    messages
}

struct Prober<'a> {
    template: &'a ChatTemplate,
    notes: Vec<String>,
}

impl Prober<'_> {
    fn render(&mut self, what: &str, input: RenderInput) -> Option<String> {
        let input = input
            .with_stand_in_special_tokens()
            .with_clock(Clock::Fixed(0));
        match self.template.render_or_equivalent(&input) {
            Ok(text) => Some(text),
            Err(e) => {
                self.notes.push(format!("{what}: {e}"));
                None
            }
        }
    }

    fn tools() -> Option<Vec<Value>> {
        Some(vec![tool_def(TOOL_A), tool_def(TOOL_B)])
    }

    /// Renders a tool-call conversation; retries without the tool results if they fail.
    fn render_calls(&mut self, what: &str, calls: &[Value]) -> Option<String> {
        let full = RenderInput::new(call_conversation(calls)).with_tools(Self::tools());
        if let Some(text) = self.render(what, full) {
            return Some(text);
        }
        let mut short = call_conversation(calls);
        short.truncate(2);
        self.render(
            &format!("{what} (no tool results)"),
            RenderInput::new(short).with_tools(Self::tools()),
        )
    }
}

impl Capabilities {
    /// Probes `template` by rendering it with probe conversations.
    pub fn probe(template: &ChatTemplate) -> Capabilities {
        let mut p = Prober {
            template,
            notes: Vec::new(),
        };

        let system_role = p
            .render(
                "system",
                RenderInput::new(vec![
                    json!({"role": "system", "content": SYSTEM_TEXT}),
                    user(USER_TEXT),
                ]),
            )
            .is_some_and(|r| r.contains(SYSTEM_TEXT));

        let baseline = p.render(
            "tools",
            RenderInput::new(vec![user(USER_TEXT)]).with_tools(Prober::tools()),
        );
        let tools = baseline.as_ref().is_some_and(|r| r.contains(TOOL_A));
        let baseline_count = baseline.as_ref().map_or(0, |r| r.matches(TOOL_A).count());

        let shows = |r: &Option<String>, arg: &str| r.as_ref().is_some_and(|r| r.contains(arg));
        let as_object = p.render_calls(
            "call (object arguments)",
            &[call(TOOL_A, ARG_A, CALL_ID, false)],
        );
        let as_string = p.render_calls(
            "call (string arguments)",
            &[call(TOOL_A, ARG_A, CALL_ID, true)],
        );
        let arguments = match (shows(&as_object, ARG_A), shows(&as_string, ARG_A)) {
            (true, true) => ArgumentsForm::Both,
            (true, false) => ArgumentsForm::Object,
            (false, true) => ArgumentsForm::String,
            (false, false) => ArgumentsForm::None,
        };
        let string_args = arguments == ArgumentsForm::String;
        let single = if string_args { &as_string } else { &as_object };
        let tool_calls = arguments != ArgumentsForm::None
            && single
                .as_ref()
                .is_some_and(|r| r.matches(TOOL_A).count() > baseline_count);
        let tool_call_ids = tool_calls && shows(single, CALL_ID);

        let parallel_tool_calls = tool_calls && {
            let two = [
                call(TOOL_A, ARG_A, CALL_ID, string_args),
                call(TOOL_B, ARG_B, CALL_ID_B, string_args),
            ];
            let r = p.render_calls("parallel calls", &two);
            shows(&r, ARG_A) && shows(&r, ARG_B)
        };

        let typed_content = p
            .render(
                "typed content",
                RenderInput::new(vec![json!({
                    "role": "user",
                    "content": [{"type": "text", "text": TYPED_TEXT}],
                })]),
            )
            .is_some_and(|r| {
                r.contains(TYPED_TEXT)
                    && !r.contains(&format!("'text': '{TYPED_TEXT}'"))
                    && !r.contains(&format!("\"text\": \"{TYPED_TEXT}\""))
            });

        let mut enable_thinking = false;
        let conversations = [
            (vec![user(USER_TEXT)], true),
            (
                vec![
                    user(USER_TEXT),
                    json!({"role": "assistant", "content": ASSISTANT_TEXT}),
                    user(USER_TEXT),
                ],
                true,
            ),
        ];
        for (messages, gen) in conversations {
            let on = RenderInput::new(messages.clone())
                .with_generation_prompt(gen)
                .with_var("enable_thinking", true);
            let off = RenderInput::new(messages)
                .with_generation_prompt(gen)
                .with_var("enable_thinking", false);
            let (on, off) = (
                p.render("enable_thinking=true", on),
                p.render("enable_thinking=false", off),
            );
            if let (Some(on), Some(off)) = (on, off) {
                if on != off {
                    enable_thinking = true;
                    break;
                }
            }
        }

        Capabilities {
            system_role,
            tools,
            tool_calls,
            parallel_tool_calls,
            tool_call_ids,
            arguments,
            typed_content,
            enable_thinking,
            notes: p.notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_a_minimal_template() {
        let src = "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}";
        let caps = Capabilities::probe(&ChatTemplate::new("minimal", src).unwrap());
        assert!(caps.system_role);
        assert!(!caps.tools);
        assert!(!caps.tool_calls);
        assert_eq!(caps.arguments, ArgumentsForm::None);
        assert!(!caps.typed_content);
        assert!(!caps.enable_thinking);
    }

    #[test]
    fn probes_a_tool_template() {
        let src = "{% if tools %}{{ tools | tojson }}{% endif %}\
            {% for m in messages %}{% if m.content is string %}{{ m.content }}\
            {% else %}{% for p in m.content %}{{ p.text }}{% endfor %}{% endif %}\
            {% for c in m.tool_calls or [] %}<call id={{ c.id }}>{{ c.function.name }}\
            {{ c.function.arguments | tojson }}{% endfor %}{% endfor %}\
            {% if enable_thinking %}<think>{% endif %}";
        let caps = Capabilities::probe(&ChatTemplate::new("tools", src).unwrap());
        assert!(caps.tools && caps.tool_calls && caps.parallel_tool_calls && caps.tool_call_ids);
        assert_eq!(caps.arguments, ArgumentsForm::Both);
        assert!(caps.typed_content);
        assert!(caps.enable_thinking);
    }
}
