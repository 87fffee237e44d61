//! End-to-end checks of marker slots: templates (written here) whose call markers carry a
//! per-call counter, the function name twice, or the argument name twice are analysed, and
//! messages with 1 to 3 calls rendered by them parse back to the same message.

use serde_json::json;

use super::slots::Slot;
use super::*;
use crate::fixtures::round_trip::{round_trip, RoundTrip};
use crate::message::{ChatMessage, ChatRequest, ToolCall};
use crate::template::ChatTemplate;

/// A chat template with `<|u|>`/`<|a|>` turns, tools in a system block, and `calls` as the
/// Jinja of the tool-call part of an assistant turn (`m` is the message).
fn template(calls: &str) -> ChatTemplate {
    let source = format!(
        "{{%- if tools %}}<|sys|>{{{{ tools | tojson }}}}<|e|>{{% endif -%}}\
         {{%- for m in messages -%}}\
         {{%- if m.role == 'user' -%}}<|u|>{{{{ m.content }}}}<|e|>\
         {{%- elif m.role == 'assistant' -%}}<|a|>{{{{ m.content or '' }}}}{calls}<|e|>\
         {{%- endif -%}}{{%- endfor -%}}\
         {{%- if add_generation_prompt -%}}<|a|>{{%- endif -%}}"
    );
    ChatTemplate::new("slots", source).unwrap()
}

fn request() -> ChatRequest {
    let mut request: ChatRequest =
        serde_json::from_value(json!({"messages": [{"role": "user", "content": "Hi"}]})).unwrap();
    let tool = |name: &str| {
        json!({"type": "function", "function": {"name": name, "parameters": {
            "type": "object", "properties": {
                "city": {"type": "string"}, "days": {"type": "integer"}}}}})
    };
    request.tools = serde_json::from_value(json!([
        tool("get_weather"),
        tool("weather.get-current"),
        tool("ping")
    ]))
    .unwrap();
    request.parallel_tool_calls = true;
    request
}

/// Messages with 1, 2 and 3 calls (dotted and dashed names, string and number values).
fn messages() -> Vec<ChatMessage> {
    let call = |name: &str, city: &str, days: u32| {
        ToolCall::new("", name, json!({"city": city, "days": days}).to_string())
    };
    let calls = [
        call("get_weather", "Paris", 1),
        call("weather.get-current", "Oslo \"Norway\"", 2),
        call("get_weather", "東京", 3),
    ];
    (1..=3)
        .map(|n| {
            let mut m = ChatMessage::assistant();
            m.tool_calls = calls[..n].to_vec();
            m
        })
        .collect()
}

/// Analyses the template, checks its tool markers hold `slot`, and round-trips every message.
fn check(calls: &str, slot: Slot) -> Analysis {
    let template = template(calls);
    let analysis = analyze(&template);
    let tools = analysis
        .tools
        .as_ref()
        .unwrap_or_else(|| panic!("tools unsupported: {:?}", analysis.unsupported));
    assert!(
        tools.markers().iter().any(|m| m.contains(slot.char())),
        "no {slot:?} slot in {tools:#?}"
    );
    for message in messages() {
        match round_trip(&template, &analysis, &request(), &message) {
            RoundTrip::Passed => {}
            other => panic!(
                "{} call(s): {other:?}\n{tools:#?}",
                message.tool_calls.len()
            ),
        }
    }
    analysis
}

#[test]
fn counter_before_the_name_from_one() {
    let a = check(
        "{% for c in m.tool_calls or [] %}<|call idx=\"{{ loop.index }}\"|>{{ c.function.name }}\
         <|args|>{{ c.function.arguments | tojson }}<|/call|>{% endfor %}",
        Slot::Counter,
    );
    assert_eq!(a.tools.unwrap().counter_base, Some(1));
}

#[test]
fn counter_in_an_attribute_after_the_name_from_zero() {
    let a = check(
        "{% if m.tool_calls %}<calls>\n{% for c in m.tool_calls %}<call name=\"{{ c.function.name }}\" \
         n=\"{{ loop.index0 }}\">\n{% for k, v in c.function.arguments.items() %}<arg key=\"{{ k }}\">\
         {{ v }}</arg>\n{% endfor %}</call>\n{% endfor %}</calls>{% endif %}",
        Slot::Counter,
    );
    assert_eq!(a.tools.unwrap().counter_base, Some(0));
}

#[test]
fn counter_in_the_closing_marker() {
    check(
        "{% for c in m.tool_calls or [] %}[CALL]{{ c.function.name }}[ARGS]\
         {{ c.function.arguments | tojson }}[/CALL {{ loop.index }}]{% endfor %}",
        Slot::Counter,
    );
}

#[test]
fn function_name_written_twice() {
    check(
        "{% for c in m.tool_calls or [] %}<|to|>{{ c.function.name }}<|msg|><invoke name=\"\
         {{ c.function.name }}\">{{ c.function.arguments | tojson }}</invoke><|eom|>{% endfor %}",
        Slot::Name,
    );
}

#[test]
fn argument_name_written_twice() {
    check(
        "{% for c in m.tool_calls or [] %}<call>{{ c.function.name }}\n{% for k, v in \
         c.function.arguments.items() %}<{{ k }}>{{ v }}</{{ k }}>\n{% endfor %}</call>{% endfor %}",
        Slot::Key,
    );
}

#[test]
fn type_word_in_argument_markers() {
    let calls = "{% for c in m.tool_calls or [] %}<|call|>{{ c.function.name }}<|sep|>\
         {% for k, v in c.function.arguments.items() %}<|arg|>{{ k }}|\
         {% if v is string %}text{% elif v is boolean %}flag{% elif v is number %}num\
         {% elif v is mapping %}map{% else %}list{% endif %}<|sep|>\
         {% if v is string %}{{ v }}{% else %}{{ v | tojson }}{% endif %}<|/arg|>{% endfor %}\
         <|/call|>{% endfor %}";
    let template = template(calls);
    let analysis = analyze(&template);
    let tools = analysis
        .tools
        .as_ref()
        .unwrap_or_else(|| panic!("tools unsupported: {:?}", analysis.unsupported));
    let typed = tools.arguments.non_string.as_ref().expect("typed markers");
    assert!(typed.name_suffix.contains(Slot::Type.char()), "{typed:?}");
    let mut message = ChatMessage::assistant();
    let args = json!({"city": "Oslo", "days": 3, "flag": true, "meta": {"a": [1, 2]},
                      "tags": ["x", "y"]});
    message.tool_calls = vec![ToolCall::new("", "get_weather", args.to_string())];
    match round_trip(&template, &analysis, &request(), &message) {
        RoundTrip::Passed => {}
        other => panic!("{other:?}\n{tools:#?}"),
    }
}
