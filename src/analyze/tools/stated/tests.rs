//! Phase S on small authored templates, and a cross-check against templates that both state
//! and render their calls.

use crate::analyze::compare::Renderer;
use crate::analyze::scenario::Scenario;
use crate::analyze::{analyze, Part};
use crate::template::{ArgumentsForm, ChatTemplate};

/// Reads the stated format of `template` even when its calls render.
fn stated(template: &ChatTemplate) -> Result<(super::ToolAnalysis, super::StatedFormat), String> {
    let analysis = analyze(template);
    let renderer = Renderer::new(template);
    let scenario = Scenario {
        tools: true,
        arguments: ArgumentsForm::Object,
        ..Scenario::user_only()
    };
    super::analyze(&renderer, &scenario, &analysis)
}

/// A template whose system turn lists the tools and then writes `preamble` (Jinja), and whose
/// assistant turns render their content only.
fn template(preamble: &str) -> ChatTemplate {
    let source = format!(
        "<|sys|>{{%- if tools %}}Tools: {{{{ tools | tojson }}}}\n{preamble}{{% endif -%}}<|end|>\
         {{%- for m in messages -%}}<|{{{{ m.role }}}}|>{{{{ m.content or '' }}}}<|end|>{{%- endfor -%}}\
         {{%- if add_generation_prompt -%}}<|assistant|>{{%- endif -%}}"
    );
    ChatTemplate::new("stated-test", source).unwrap()
}

/// The analysis of a template with `preamble`: the tools, or why they are unsupported.
fn read(preamble: &str) -> Result<(super::ToolAnalysis, super::StatedFormat), String> {
    let a = analyze(&template(preamble));
    match (a.tools.clone(), a.stated.clone()) {
        (Some(t), Some(s)) => Ok((t, s)),
        _ => Err(a
            .unsupported_reason(Part::Tools)
            .unwrap_or_default()
            .to_owned()),
    }
}

#[test]
fn no_statement_stays_unsupported() {
    let why = read("Use the tools when they help.").unwrap_err();
    assert!(why.starts_with(super::super::NO_CALLS), "{why}");
    assert!(
        why.contains("states no call format") && why.contains("no marker"),
        "{why}"
    );
    // A marker named in prose, with no example of a call and no JSON said to follow it: the
    // reason names it.
    let why = read("To call one, answer with <|fn|> and the tool's name.").unwrap_err();
    assert!(why.contains("«<|fn|>»"), "{why}");
}

#[test]
fn a_marker_said_to_precede_json_states_json_calls() {
    let (t, s) = read("To call one, answer with <|fn|> and JSON.").unwrap();
    assert_eq!(s.source, "prose:json_object");
    assert_eq!(t.per_call_start, "<|fn|>");
    let (t, s) = read("Reply with [CALLS] followed by a JSON array of calls.").unwrap();
    assert_eq!(s.source, "prose:json_list");
    assert_eq!(t.section_start, "[CALLS]");
    let json = t.json.unwrap();
    assert!(json.array_wrapped);
    assert_eq!(
        (json.name_field.as_deref(), json.arguments_field.as_deref()),
        (Some("name"), Some("arguments"))
    );
}

#[test]
fn json_example_with_placeholders() {
    let (t, s) =
        read("Call: <call>{\"fn\": \"<tool name>\", \"with\": {<arguments>}}</call>").unwrap();
    assert_eq!(s.source, "json");
    assert_eq!(
        (t.per_call_start.as_str(), t.per_call_end.as_str()),
        ("<call>", "</call>")
    );
    let json = t.json.unwrap();
    assert_eq!(json.name_field.as_deref(), Some("fn"));
    assert_eq!(json.arguments_field.as_deref(), Some("with"));
}

#[test]
fn example_built_from_the_first_declared_tool() {
    // The keys come from the values: the declared name is under `target`, not under `name`.
    let (t, s) = read(
        "Example: <<calls>>[ {\"name\": \"demo\", \"target\": {{ tools[0].function.name | tojson }}, \
         \"payload\": {}} ]<</calls>>",
    )
    .unwrap();
    assert_eq!(s.calls, 1);
    let json = t.json.unwrap();
    assert_eq!(json.name_field.as_deref(), Some("target"));
    assert_eq!(json.arguments_field.as_deref(), Some("payload"));
    assert!(json.array_wrapped);
    // The same example, inside a larger JSON value of the preamble.
    let (t, _) = read(
        "Example: {\"demo\": [\"<<calls>>\", [{\"fn\": {{ tools[0].function.name | tojson }}, \
         \"args\": {\"k\": 1}}]]}",
    )
    .unwrap();
    assert_eq!(t.json.unwrap().arguments_field.as_deref(), Some("args"));
}

#[test]
fn an_example_that_follows_the_tools_elsewhere_is_refused() {
    // The example writes the tool count too: not the same example with other tools.
    let why = read(
        "Example: <call>{\"fn\": {{ tools[0].function.name | tojson }}, \"args\": {}, \
         \"n\": \"{{ tools[0].function.name[-2:] }}\"}</call>",
    )
    .unwrap_err();
    assert!(why.contains("changes with the declared tools"), "{why}");
}

#[test]
fn call_list_and_elements() {
    let (t, s) = read("Reply [[FN]][func_name(arg=\"v\"), other_func(x=1)][[/FN]].").unwrap();
    assert_eq!((s.source.as_str(), s.calls), ("call_list", 2));
    assert_eq!(t.section_start, "[[FN]][");
    assert_eq!(t.arguments.string_open, "\"");
    let (t, s) = read("Use\n<run tool=\"$TOOL\"><set key=\"$KEY\">$VALUE</set></run>").unwrap();
    assert_eq!(s.source, "call_elements");
    assert_eq!(t.function.name_prefix, "<run tool=\"");
    assert_eq!(t.arguments.name_prefix, "<set key=\"");
}

#[test]
fn a_family_applies_by_its_tokens_vocabulary_only() {
    // The bundled bracketed family needs `<|tool_call_start|>`/`<|tool_call_end|>`: a preamble
    // showing tokens of that vocabulary selects it; other tokens do not.
    let (_, s) = read("<|tool_defs_start|>see above<|tool_defs_end|>").unwrap();
    assert_eq!(s.source, "family:bracketed-python-calls");
    assert!(read("<|tool_defs_begin|>see above<|tool_defs_finish|>").is_err());
    assert!(read("<|defs_start|>see above<|defs_end|>").is_err());
}

/// `CHATPARSE_STATED_DIR=DIR cargo test --lib stated_cross_check -- --ignored --nocapture`:
/// for every template of DIR, the format its preamble states next to the one its rendered
/// calls show (a template that does both must agree with itself).
#[test]
#[ignore = "reads templates from CHATPARSE_STATED_DIR"]
fn stated_cross_check() {
    let Some(dir) = std::env::var_os("CHATPARSE_STATED_DIR") else {
        println!("NOTICE: CHATPARSE_STATED_DIR not set; nothing to cross-check");
        return;
    };
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
        .collect();
    paths.sort();
    for path in paths {
        let source = std::fs::read_to_string(&path).unwrap();
        let Ok(template) = ChatTemplate::new("x", source) else {
            continue;
        };
        let rendered = analyze(&template);
        println!("== {}", path.display());
        println!(
            "   rendered: {}",
            rendered.tools.as_ref().map_or_else(
                || format!("{:?}", rendered.unsupported_reason(Part::Tools)),
                |t| serde_json::to_string(t).unwrap()
            )
        );
        match stated(&template) {
            Ok((t, s)) => println!(
                "   stated:   {}\n   from:     {} {:?}",
                serde_json::to_string(&t).unwrap(),
                s.source,
                s.example
            ),
            Err(why) => println!("   stated:   {why}"),
        }
    }
}
