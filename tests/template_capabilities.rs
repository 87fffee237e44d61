//! Probes every template in `shared/templates`, prints the capability table, and renders a
//! standard set of conversations with each template: every scenario a template supports (per
//! its probed capabilities) must render without error.

use std::path::PathBuf;

use chatparse::shared_data::shared_path_or_skip;
use chatparse::template::{
    ArgumentsForm, Capabilities, ChatTemplate, Clock, RenderInput, TemplateErrorKind,
};
use serde_json::{json, Value};

fn templates() -> Option<Vec<(String, PathBuf)>> {
    let dir = shared_path_or_skip("templates", "template_capabilities")?;
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    found.sort();
    Some(found)
}

fn tool(name: &str) -> Value {
    json!({"type": "function", "function": {"name": name, "description": "Looks it up.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string",
        "description": "The city."}},
        "required": ["city"]}}})
}

/// Templates that cannot render without caller-specific variables (transformers fails the same
/// way), with the reason; their scenarios are reported, not required.
const NEEDS_CALLER_VARIABLES: [(&str, &str); 1] = [(
    "fireworks-ai-llama-3-firefunction-v2.jinja",
    "needs the caller variables `functions` and `datetime`",
)];

/// A standard scenario: its name, whether the template must support it, and the input.
fn scenarios(caps: &Capabilities) -> Vec<(&'static str, bool, RenderInput)> {
    let user = json!({"role": "user", "content": "Hello there"});
    let system = json!({"role": "system", "content": "Be brief."});
    let assistant = json!({"role": "assistant", "content": "Hi!"});
    let arguments = if caps.arguments == ArgumentsForm::String {
        json!("{\"city\": \"Paris\"}")
    } else {
        json!({"city": "Paris"})
    };
    let call = json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c00000001",
        "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]});
    let result = json!({"role": "tool", "tool_call_id": "c00000001", "name": "get_weather",
        "content": "sunny"});
    let tools = Some(vec![tool("get_weather")]);
    let base = |m: Vec<Value>| {
        RenderInput::new(m)
            .with_var("bos_token", "<s>")
            .with_var("eos_token", "</s>")
            .with_clock(Clock::Fixed(1_795_305_600))
    };
    vec![
        (
            "system+user",
            caps.system_role,
            base(vec![system, user.clone()]).with_generation_prompt(true),
        ),
        ("user+assistant", true, base(vec![user.clone(), assistant])),
        ("user, no generation prompt", true, base(vec![user.clone()])),
        (
            "user, generation prompt",
            true,
            base(vec![user.clone()]).with_generation_prompt(true),
        ),
        (
            "tools+call+result",
            caps.tool_calls,
            base(vec![user.clone(), call, result])
                .with_tools(tools)
                .with_generation_prompt(true),
        ),
        (
            "enable_thinking=true",
            true,
            base(vec![user.clone()])
                .with_generation_prompt(true)
                .with_var("enable_thinking", true),
        ),
        (
            "enable_thinking=false",
            true,
            base(vec![user])
                .with_generation_prompt(true)
                .with_var("enable_thinking", false),
        ),
    ]
}

fn mark(yes: bool) -> &'static str {
    if yes {
        "yes"
    } else {
        "-"
    }
}

#[test]
fn every_template_renders_its_supported_scenarios() {
    let Some(templates) = templates() else {
        return;
    };
    assert!(!templates.is_empty());
    let mut table = vec![format!(
        "{:<52} {:>6} {:>5} {:>5} {:>8} {:>4} {:>6} {:>5} {:>8}",
        "template", "system", "tools", "calls", "parallel", "ids", "args", "typed", "thinking"
    )];
    let mut failures = Vec::new();
    let mut unsupported = Vec::new();
    for (name, path) in &templates {
        let source = std::fs::read_to_string(path).unwrap();
        let template = match ChatTemplate::new(name.clone(), source) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{name}: does not compile: {e}"));
                continue;
            }
        };
        let caps = Capabilities::probe(&template);
        let args = match caps.arguments {
            ArgumentsForm::Object => "object",
            ArgumentsForm::String => "string",
            ArgumentsForm::Both => "both",
            ArgumentsForm::None => "-",
        };
        table.push(format!(
            "{:<52} {:>6} {:>5} {:>5} {:>8} {:>4} {:>6} {:>5} {:>8}",
            name,
            mark(caps.system_role),
            mark(caps.tools),
            mark(caps.tool_calls),
            mark(caps.parallel_tool_calls),
            mark(caps.tool_call_ids),
            args,
            mark(caps.typed_content),
            mark(caps.enable_thinking)
        ));
        let exempt = NEEDS_CALLER_VARIABLES.iter().find(|(n, _)| n == name);
        if let Some((_, why)) = exempt {
            unsupported.push(format!("{name}: all scenarios: {why}"));
        }
        for (scenario, required, input) in scenarios(&caps) {
            match (template.render(&input), required && exempt.is_none()) {
                (Ok(_), _) => {}
                (Err(e), true) => failures.push(format!("{name} / {scenario}: {e}")),
                (Err(e), false) => unsupported.push(format!("{name} / {scenario}: {e}")),
            }
        }
    }
    eprintln!("{}", table.join("\n"));
    eprintln!(
        "{} templates; scenarios failing where the template does not support them ({}):",
        templates.len(),
        unsupported.len()
    );
    for u in &unsupported {
        eprintln!("  {u}");
    }
    assert!(
        failures.is_empty(),
        "supported scenarios failed:\n{}",
        failures.join("\n")
    );
}

#[test]
fn known_capabilities_of_some_templates() {
    let Some(templates) = templates() else {
        return;
    };
    let probe = |name: &str| {
        let (_, path) = templates.iter().find(|(n, _)| n == name).unwrap();
        let source = std::fs::read_to_string(path).unwrap();
        Capabilities::probe(&ChatTemplate::new(name, source).unwrap())
    };
    let gemma2 = probe("google-gemma-2-2b-it.jinja");
    assert!(!gemma2.system_role && !gemma2.tools && !gemma2.tool_calls);
    let qwen3 = probe("Qwen-Qwen3-0.6B.jinja");
    assert!(qwen3.system_role && qwen3.tools && qwen3.tool_calls && qwen3.parallel_tool_calls);
    assert!(qwen3.enable_thinking && qwen3.arguments == ArgumentsForm::Both);
    let kimi = probe("Kimi-K2-Instruct.jinja");
    assert!(kimi.tool_calls && kimi.parallel_tool_calls, "{kimi:?}");
}

/// The default fuel budget is far above what real templates need: a 400-message conversation
/// with tools renders with every template without hitting a limit.
#[test]
fn long_conversations_stay_within_default_limits() {
    let Some(templates) = templates() else {
        return;
    };
    let mut messages = Vec::new();
    for i in 0..200 {
        messages.push(json!({"role": "user", "content": format!("Question {i}")}));
        messages.push(json!({"role": "assistant", "content": format!("Answer {i}")}));
    }
    messages.push(json!({"role": "user", "content": "Last"}));
    for (name, path) in &templates {
        let template =
            ChatTemplate::new(name.clone(), std::fs::read_to_string(path).unwrap()).unwrap();
        let input = RenderInput::new(messages.clone())
            .with_tools(Some(vec![tool("get_weather"), tool("get_time")]))
            .with_generation_prompt(true)
            .with_clock(Clock::Fixed(0));
        if let Err(e) = template.render(&input) {
            assert_ne!(e.kind(), TemplateErrorKind::Limit, "{e}");
        }
    }
}
