//! Phase tests on small hand-written templates.

use super::*;
use crate::template::ChatTemplate;

/// A chat template: `<|user|>...<|end|>` turns, tools as JSON in front, and the given Jinja for
/// the assistant turn body (`m` is the message) and for the generation prompt.
fn template(assistant: &str, generation: &str) -> ChatTemplate {
    let source = format!(
        "{{%- if tools %}}<|tools|>{{{{ tools | tojson }}}}<|end|>{{% endif -%}}\
         {{%- for m in messages -%}}\
         {{%- if m.role == 'user' -%}}<|user|>{{{{ m.content }}}}<|end|>\
         {{%- elif m.role == 'assistant' -%}}<|assistant|>{assistant}<|end|>\
         {{%- endif -%}}{{%- endfor -%}}\
         {{%- if add_generation_prompt -%}}<|assistant|>{generation}{{%- endif -%}}"
    );
    ChatTemplate::new("test", source).unwrap()
}

const CONTENT: &str = "{{ m.content or '' }}";

fn run(assistant: &str, generation: &str) -> Analysis {
    analyze(&template(assistant, generation))
}

fn calls(each: &str) -> String {
    format!("{CONTENT}{{% for c in m.tool_calls or [] %}}{each}{{% endfor %}}")
}

fn tools(a: &Analysis) -> &ToolAnalysis {
    a.tools
        .as_ref()
        .unwrap_or_else(|| panic!("tools unsupported: {:?}", a.unsupported))
}

#[test]
fn tag_reasoning() {
    let a = run(
        "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content }}",
        "",
    );
    assert_eq!(a.reasoning.mode, ReasoningMode::Tagged);
    assert_eq!(
        (a.reasoning.start.as_str(), a.reasoning.end.as_str()),
        ("<think>", "</think>")
    );
    assert_eq!(a.reasoning.source, MarkerSource::Turn);
    assert_eq!(a.reasoning.prefill_thinking_on, Prefill::None);
    assert_eq!(a.content.mode, ContentMode::Plain);
    // Tools render in the prompt but this template never renders calls.
    assert!(a.tools.is_none());
    let why = a.unsupported_reason(Part::Tools).unwrap_or_default();
    assert!(why.starts_with(tools::NO_CALLS), "{why}");
    assert!(why.contains("states no call format"), "{why}");
    assert_eq!(a.unsupported.len(), 1);
    assert_eq!(a.preserved_tokens, ["<think>", "</think>"]);
}

#[test]
fn delimiter_reasoning_has_an_empty_start() {
    let a = run(
        "{% if m.reasoning_content %}{{ m.reasoning_content }}[BEGIN ANSWER]{% endif %}{{ m.content }}",
        "",
    );
    assert_eq!(a.reasoning.mode, ReasoningMode::Delimited);
    assert_eq!(a.reasoning.start, "");
    assert_eq!(a.reasoning.end, "[BEGIN ANSWER]");
    assert_eq!(a.reasoning.prefill_thinking_on, Prefill::ReasoningOpen);
}

#[test]
fn forced_open_reasoning_from_the_generation_prompt() {
    // Past reasoning is dropped from content; the prompt opens `<think>`.
    let a = run(
        "{{ m.content.split('</think>')[-1] }}",
        "{% if enable_thinking %}<think>\n{% else %}<think>\n\n</think>{% endif %}",
    );
    assert_eq!(a.reasoning.mode, ReasoningMode::Tagged);
    assert_eq!(a.reasoning.source, MarkerSource::GenerationPrompt);
    assert_eq!(
        (a.reasoning.start.as_str(), a.reasoning.end.as_str()),
        ("<think>", "</think>")
    );
    assert_eq!(a.reasoning.prefill_thinking_on, Prefill::ReasoningOpen);
    assert_eq!(a.reasoning.prefill_thinking_off, Prefill::ReasoningClosed);
    assert_eq!(a.generation_prompt.thinking_on, "<think>\n");
}

#[test]
fn forced_open_without_confirmation_closes_conventionally() {
    // The prompt opens `<think>` and no render shows how reasoning ends: the block ends at
    // its conventional closing form.
    let a = run(CONTENT, "<think>\n");
    assert_eq!(a.reasoning.mode, ReasoningMode::Tagged);
    assert_eq!(a.reasoning.source, MarkerSource::GenerationPrompt);
    assert_eq!(a.reasoning.end, "</think>");
    assert_eq!(a.reasoning.prefill_thinking_on, Prefill::ReasoningOpen);
    assert!(a.unsupported_reason(Part::Reasoning).is_none());
}

#[test]
fn always_rendered_empty_block() {
    let a = run(
        "<think>\n{{ m.reasoning_content or '' }}\n</think>\n\n{{ m.content }}",
        "",
    );
    assert_eq!(a.reasoning.start, "<think>\n");
    assert_eq!(a.reasoning.end, "\n</think>\n\n");
    assert_eq!(a.reasoning.without_reasoning, WithoutReasoning::EmptyBlock);
    assert_eq!(a.content.mode, ContentMode::Plain);
}

#[test]
fn content_always_wrapped() {
    let a = run(
        "{% if m.content %}<response>{{ m.content }}</response>{% endif %}\
         {% for c in m.tool_calls or [] %}<call>{{ c.function.name }}\
         {{ c.function.arguments | tojson }}</call>{% endfor %}",
        "",
    );
    assert_eq!(a.content.mode, ContentMode::AlwaysWrapped);
    assert_eq!(
        (a.content.start.as_str(), a.content.end.as_str()),
        ("<response>", "</response>")
    );
    assert_eq!(a.generation_prompt.turn_end, "<|end|>");
}

#[test]
fn content_wrapped_only_with_reasoning() {
    let a = run(
        "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>\
         <response>{{ m.content }}</response>{% else %}{{ m.content }}{% endif %}",
        "",
    );
    assert_eq!(a.reasoning.end, "</think>");
    assert_eq!(a.content.mode, ContentMode::WrappedWithReasoning);
    assert_eq!(
        (a.content.start.as_str(), a.content.end.as_str()),
        ("<response>", "</response>")
    );
}

#[test]
fn json_native_flat_per_call() {
    let a = run(
        &calls(
            "<tool_call>\n{\"name\": \"{{ c.function.name }}\", \"arguments\": \
             {{ c.function.arguments | tojson }}}\n</tool_call>",
        ),
        "",
    );
    let t = tools(&a);
    assert_eq!(t.format, ToolFormat::JsonNative);
    assert_eq!(
        (t.per_call_start.as_str(), t.per_call_end.as_str()),
        ("<tool_call>\n", "\n</tool_call>")
    );
    assert_eq!(
        (t.section_start.as_str(), t.call_separator.as_str()),
        ("", "")
    );
    let j = t.json.as_ref().unwrap();
    assert_eq!(j.name_field.as_deref(), Some("name"));
    assert_eq!(j.arguments_field.as_deref(), Some("arguments"));
    assert!(!j.name_is_key && !j.array_wrapped && j.function_field.is_none());
}

#[test]
fn json_native_nested_function_with_id_in_a_section() {
    let a = run(
        "{{ m.content or '' }}{% if m.tool_calls %}<calls>{% for c in m.tool_calls %}\
         {% if not loop.first %}, {% endif %}{\"id\": \"{{ c.id }}\", \"function\": {\"name\": \
         \"{{ c.function.name }}\", \"parameters\": {{ c.function.arguments | tojson }}}}\
         {% endfor %}</calls>{% endif %}",
        "",
    );
    let t = tools(&a);
    assert_eq!(t.format, ToolFormat::JsonNative);
    assert_eq!(
        (t.section_start.as_str(), t.section_end.as_str()),
        ("<calls>", "</calls>")
    );
    assert_eq!(t.call_separator, ", ");
    let j = t.json.as_ref().unwrap();
    assert_eq!(j.function_field.as_deref(), Some("function"));
    assert_eq!(j.arguments_field.as_deref(), Some("parameters"));
    assert_eq!(j.id_field.as_deref(), Some("id"));
}

#[test]
fn json_native_name_as_key_in_an_array() {
    let a = run(
        "{{ m.content or '' }}{% if m.tool_calls %}[CALLS][{% for c in m.tool_calls %}\
         {% if not loop.first %}, {% endif %}{\"{{ c.function.name }}\": \
         {{ c.function.arguments | tojson }}}{% endfor %}]{% endif %}",
        "",
    );
    let t = tools(&a);
    let j = t.json.as_ref().unwrap();
    assert!(j.name_is_key && j.array_wrapped);
    assert_eq!(t.section_start, "[CALLS]");
    assert_eq!(t.call_separator, ", ");
}

#[test]
fn json_native_python_dicts() {
    let a = run(
        &calls("<call>{{ {'name': c.function.name, 'arguments': c.function.arguments} }}</call>"),
        "",
    );
    let j = tools(&a).json.clone().unwrap();
    assert!(j.python_dicts);
    assert_eq!(j.name_field.as_deref(), Some("name"));
}

#[test]
fn tag_with_json() {
    let a = run(
        &calls("<function={{ c.function.name }}>{{ c.function.arguments | tojson }}</function>"),
        "",
    );
    let t = tools(&a);
    assert_eq!(t.format, ToolFormat::TagWithJson);
    assert_eq!(t.function.name_prefix, "<function=");
    assert_eq!(t.function.name_suffix, ">");
    assert_eq!(t.function.close, "</function>");
}

#[test]
fn tag_with_tagged_arguments() {
    let a = run(
        &calls(
            "<tool_call>\n<function={{ c.function.name }}>\n{% for k, v in \
             c.function.arguments.items() %}<parameter={{ k }}>\n{{ v }}\n</parameter>\n\
             {% endfor %}</function>\n</tool_call>",
        ),
        "",
    );
    let t = tools(&a);
    assert_eq!(t.format, ToolFormat::TagWithTagged);
    assert_eq!(t.per_call_start, "<tool_call>\n");
    assert_eq!(t.per_call_end, "</tool_call>");
    assert_eq!(t.function.name_prefix, "<function=");
    assert_eq!(t.function.name_suffix, ">\n");
    assert_eq!(t.function.close, "</function>\n");
    let args = &t.arguments;
    assert_eq!(
        (args.name_prefix.as_str(), args.name_suffix.as_str()),
        ("<parameter=", ">\n")
    );
    assert_eq!(args.value_suffix, "\n</parameter>\n");
    assert_eq!(args.separator, "");
}

#[test]
fn call_id_between_name_and_arguments() {
    let a = run(
        &calls("[TOOL_CALLS]{{ c.function.name }}[CALL_ID]{{ c.id }}[ARGS]{{ c.function.arguments | tojson }}"),
        "",
    );
    let t = tools(&a);
    assert_eq!(t.call_id.position, CallIdPosition::BetweenFuncAndArgs);
    assert_eq!(
        (t.call_id.prefix.as_str(), t.call_id.suffix.as_str()),
        ("[CALL_ID]", "[ARGS]")
    );
    assert_eq!(t.per_call_start, "[TOOL_CALLS]");
}

#[test]
fn call_id_before_the_name() {
    let a = run(
        &calls("<call id={{ c.id }}><name>{{ c.function.name }}</name>{{ c.function.arguments | tojson }}</call>"),
        "",
    );
    let t = tools(&a);
    assert_eq!(t.call_id.position, CallIdPosition::PreFuncName);
    assert_eq!(t.call_id.prefix, "<call id=");
    assert_eq!(t.call_id.suffix, "><name>");
}

#[test]
fn call_id_after_the_arguments() {
    let a = run(
        &calls("<call>{{ c.function.name }}:{{ c.function.arguments | tojson }}<id>{{ c.id }}</id></call>"),
        "",
    );
    // Either expressed exactly (validated on a fresh render) or reported, never wrong.
    match &a.tools {
        Some(t) => assert_eq!(t.call_id.position, CallIdPosition::PostArgs),
        None => assert!(a.unsupported_reason(Part::Tools).is_some()),
    }
}

#[test]
fn call_counter_is_not_a_name_suffix() {
    let a = run(
        &calls("<call>functions.{{ c.function.name }}:{{ loop.index0 }}<args>{{ c.function.arguments | tojson }}</call>"),
        "",
    );
    let t = tools(&a);
    assert!(t.call_id.counter);
    assert_eq!(
        (t.call_id.prefix.as_str(), t.call_id.suffix.as_str()),
        (":", "<args>")
    );
    assert_eq!(t.function.name_prefix, "functions.");
}

#[test]
fn inconsistent_calls_are_unsupported_not_garbage() {
    // One call and two calls render with different markers.
    let a = run(
        "{{ m.content or '' }}{% if (m.tool_calls or []) | length == 1 %}<one>{{ m.tool_calls[0].function.name }}\
         {{ m.tool_calls[0].function.arguments | tojson }}</one>{% else %}{% for c in m.tool_calls or [] %}\
         <many>{{ c.function.name }}{{ c.function.arguments | tojson }}</many>{% endfor %}{% endif %}",
        "",
    );
    assert!(a.tools.is_none());
    assert!(a.unsupported_reason(Part::Tools).is_some());
}

#[test]
fn no_markers_contain_probe_strings() {
    let a = run(
        &calls("<call>{{ c.function.name }}{{ c.function.arguments | tojson }}</call>"),
        "",
    );
    let probes = scenario::ProbeSet::PRIMARY.all();
    for m in tools(&a).markers() {
        assert!(!probes.iter().any(|p| m.contains(p)), "{m}");
    }
}

#[test]
fn cache_returns_the_same_analysis() {
    let t = template(CONTENT, "");
    let cache = AnalysisCache::new();
    let first = cache.get(&t);
    let second = cache.get(&t);
    assert!(std::sync::Arc::ptr_eq(&first, &second));
    assert_eq!(cache.len(), 1);
}

#[test]
fn python_call_syntax_quotes_only_strings() {
    let a = run(
        "{{ m.content or '' }}{% if m.tool_calls %}<calls>[{% for c in m.tool_calls %}\
         {% if not loop.first %}, {% endif %}{{ c.function.name }}(\
         {% for k, v in c.function.arguments.items() %}{% if not loop.first %}, {% endif %}\
         {{ k }}={{ v | tojson if v is not string else \"'\" ~ v ~ \"'\" }}{% endfor %})\
         {% endfor %}]</calls>{% endif %}",
        "",
    );
    let t = tools(&a);
    assert_eq!(t.format, ToolFormat::TagWithTagged);
    let args = &t.arguments;
    assert_eq!(args.non_string_values, NonStringValues::StringsQuoted);
    assert_eq!(
        (args.string_open.as_str(), args.string_close.as_str()),
        ("'", "'")
    );
    assert_eq!(
        (args.name_suffix.as_str(), args.separator.as_str()),
        ("=", ", ")
    );
    assert_eq!(
        (t.section_start.as_str(), t.call_separator.as_str()),
        ("<calls>[", ", ")
    );
    assert_eq!(t.function.name_suffix, "(");
}

#[test]
fn typed_attributes_are_reported() {
    let a = run(
        &calls(
            "<invoke name=\"{{ c.function.name }}\">{% for k, v in c.function.arguments.items() %}\
             <param name=\"{{ k }}\" string=\"{{ 'true' if v is string else 'false' }}\">\
             {{ v if v is string else v | tojson }}</param>{% endfor %}</invoke>",
        ),
        "",
    );
    let args = &tools(&a).arguments;
    assert_eq!(args.non_string_values, NonStringValues::Typed);
    assert_eq!(args.name_suffix, "\" string=\"true\">");
    let typed = args.non_string.as_ref().expect("typed markers");
    assert_eq!(
        (
            typed.name_suffix.as_str(),
            typed.value_prefix.as_str(),
            typed.value_suffix.as_str()
        ),
        ("\" string=\"false\">", "", "</param>")
    );
    assert_eq!(a.unsupported_reason(Part::Tools), None);
    assert!(a
        .preserved_tokens
        .iter()
        .any(|t| t == "\" string=\"false\">"));
}

#[test]
fn typed_values_in_another_place_stay_unsupported() {
    // Non-string arguments render after all string ones: the markers cannot be read from the
    // gaps, so only string arguments are expressed.
    let a = run(
        &calls(
            "<invoke name=\"{{ c.function.name }}\">{% for k, v in c.function.arguments.items() %}\
             {% if v is string %}<param name=\"{{ k }}\">{{ v }}</param>{% endif %}{% endfor %}\
             {% for k, v in c.function.arguments.items() %}{% if v is not string %}\
             <json name=\"{{ k }}\">{{ v | tojson }}</json>{% endif %}{% endfor %}</invoke>",
        ),
        "",
    );
    let args = &tools(&a).arguments;
    assert_eq!(args.non_string_values, NonStringValues::Different);
    assert_eq!(args.non_string, None);
    assert!(a.unsupported_reason(Part::Tools).is_some());
}

#[test]
fn degenerate_templates_do_not_panic() {
    for source in [
        "",
        "{{ raise_exception('unsupported') }}",
        "{% for m in messages %}{{ m.content }}{% endfor %}",
        "{% for m in messages %}<{{ m.role }}>{% endfor %}",
        "{{ messages | tojson }}",
    ] {
        let a = analyze(&ChatTemplate::new("degenerate", source).unwrap());
        assert!(
            a.tools.is_none() || a.unsupported.is_empty(),
            "{source}: {a:?}"
        );
    }
}

#[test]
fn content_wrapped_without_tool_calls_ends_before_the_turn_end() {
    let a = run("<response>{{ m.content }}</response>", "");
    assert_eq!(a.content.mode, ContentMode::AlwaysWrapped);
    assert_eq!(
        (a.content.start.as_str(), a.content.end.as_str()),
        ("<response>", "</response>")
    );
    assert_eq!(a.generation_prompt.turn_end, "<|end|>");
}

#[test]
fn reasoning_from_a_thinking_content_part() {
    let a = run(
        "{% if m.content is string %}{{ m.content }}{% else %}{% for p in m.content %}\
         {% if p.type == 'thinking' %}[THINK]{{ p.thinking }}[/THINK]{% else %}{{ p.text }}\
         {% endif %}{% endfor %}{% endif %}",
        "",
    );
    assert_eq!(a.reasoning.mode, ReasoningMode::Tagged);
    assert!(a.reasoning.from_content_part);
    assert_eq!(
        (a.reasoning.start.as_str(), a.reasoning.end.as_str()),
        ("[THINK]", "[/THINK]")
    );
}

#[test]
fn compare_renders_both_variants_and_splits_them() {
    let t = template(CONTENT, "<think>\n");
    let renderer = compare::Renderer::new(&t);
    let base = scenario::Scenario::user_only();
    let c = compare::compare(&renderer, &base, |s| s.generation_prompt = true).unwrap();
    let split = c.split();
    assert_eq!((split.left, split.right), ("", "<|assistant|><think>"));
    // The base render is remembered: one more render for the new variant only.
    compare::compare(&renderer, &base, |s| s.enable_thinking = false).unwrap();
    assert_eq!(renderer.renders(), 3);
}

#[test]
fn a_plain_word_header_after_a_switch_only_the_prompt_writes() {
    // History answers open with ` Bot:`; the generation prompt writes ` /on Bot:<r>` or ` /off
    // Bot:<r></r>`: the header is the word the turns share, not the empty common start, and
    // no reasoning or content marker holds it.
    let source = "{% for m in messages %}{% if m.role == 'user' %} Me: {{ m.content }}\
        {% else %} Bot:{% if m.reasoning_content %}<r>{{ m.reasoning_content }}</r>{% endif %}\
        {{ m.content }}<eot>{% endif %}{% endfor %}{% if add_generation_prompt %}\
        {{ ' /on Bot:<r>' if enable_thinking is not false else ' /off Bot:<r></r>' }}{% endif %}";
    let a = analyze(&ChatTemplate::new("test", source).unwrap());
    assert_eq!(a.generation_prompt.header, "Bot:");
    assert_eq!(
        (a.reasoning.start.as_str(), a.reasoning.end.as_str()),
        ("<r>", "</r>")
    );
    assert_eq!(a.reasoning.prefill_thinking_on, Prefill::ReasoningOpen);
    assert_eq!(a.reasoning.prefill_thinking_off, Prefill::ReasoningClosed);
    assert_eq!(a.content.mode, ContentMode::Plain);
}

#[test]
fn reasoning_written_as_bare_text_is_unsupported_with_the_reason() {
    let a = run(
        "{% if m.reasoning_content %}{{ m.reasoning_content }}\n{% endif %}{{ m.content }}",
        "",
    );
    assert_eq!(a.reasoning.mode, ReasoningMode::None);
    let why = a.unsupported_reason(Part::Reasoning).unwrap_or_default();
    assert!(
        why.contains("bare text") && why.contains("\"\\n\""),
        "{why}"
    );
}

#[test]
fn reasoning_without_a_closer_ends_at_the_content_opener() {
    // Each part opens with its own marker and runs to the next one's: the reasoning's end is
    // the line break and the content's opener (an answer without reasoning writes the opener
    // alone).
    let a = run(
        "{% if m.reasoning_content %}<|r|>{{ m.reasoning_content }}\n{% endif %}\
         <|c|>{{ m.content }}",
        "",
    );
    assert_eq!(
        (a.reasoning.start.as_str(), a.reasoning.end.as_str()),
        ("<|r|>", "\n<|c|>")
    );
    assert_eq!(a.reasoning.without_reasoning, WithoutReasoning::EndMarker);
    assert_eq!(a.content.mode, ContentMode::Plain);
}
