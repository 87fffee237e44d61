//! Unit tests of the grammar generator's parts.

use super::ir::{CharSet, Expr};

#[test]
fn charset_complement_round_trips() {
    let set = CharSet::new([('a', 'z'), ('0', '9')]).unwrap();
    let comp = set.complement().unwrap();
    assert!(!comp.contains('q'));
    assert!(comp.contains('-'));
    assert_eq!(comp.complement().unwrap(), set);
}

#[test]
fn seq_merges_literals() {
    assert_eq!(
        Expr::seq([Expr::lit("a"), Expr::lit("b"), Expr::Empty]),
        Expr::lit("ab")
    );
}

use super::{constraint, GrammarError, GrammarFlavor};
use crate::analyze::analyze;
use crate::generate::ChatParser;
use crate::message::ChatRequest;
use crate::template::ChatTemplate;
use serde_json::json;

fn example_parser(parameters: serde_json::Value) -> ChatParser {
    example_parser_calls(parameters, false)
}

fn example_parser_calls(parameters: serde_json::Value, parallel: bool) -> ChatParser {
    let source = include_str!("../../examples/chatml-tools.jinja");
    let template = ChatTemplate::new("chatml-tools", source).unwrap();
    let mut request: ChatRequest = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"type": "function", "function": {"name": "f"}}]
    }))
    .unwrap();
    request.tools[0].function.parameters = parameters;
    request.parallel_tool_calls = parallel;
    // From the format (no prompt render: the template would print the schema).
    let format = crate::generate::TurnFormat::from_analysis(&analyze(&template));
    ChatParser::from_format("chatml-tools", format, &request, String::new()).unwrap()
}

#[test]
fn a_schema_nested_ten_thousand_deep_is_an_error() {
    // A big stack for dropping the value (serde_json drops recursively), not for generating.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(|| {
            let mut schema = json!({"type": "string"});
            for _ in 0..10_000 {
                // Moved in, not through `json!` (which would copy the value each time).
                let mut properties = serde_json::Map::new();
                properties.insert("x".to_owned(), schema);
                let mut object = serde_json::Map::new();
                object.insert("type".to_owned(), json!("object"));
                object.insert("properties".to_owned(), properties.into());
                schema = object.into();
            }
            let parser = example_parser(schema);
            match constraint(&parser) {
                Err(GrammarError::Schema(why)) => assert!(why.contains("deeper"), "{why}"),
                other => panic!("expected a schema error, got {other:?}"),
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn gbnf_escapes_markers_and_names_rules_with_identifier_characters() {
    let parser = example_parser(json!({
        "type": "object",
        "properties": {"q\"uote": {"type": "string", "enum": ["a\nb", "日本\\"]}},
        "required": ["q\"uote"]
    }));
    let c = constraint(&parser).unwrap();
    for rule in c.rules.rules() {
        assert!(rule
            .name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
    }
    let gbnf = c.print(GrammarFlavor::Gbnf).grammar;
    assert!(
        gbnf.contains(r#""\"a\nb\"""#) || gbnf.contains(r#"\"a\\nb\""#),
        "{gbnf}"
    );
    assert!(gbnf.contains("日本"), "{gbnf}");
    assert!(gbnf.starts_with("root ::= "));
}

#[test]
fn excluding_automaton_forbids_only_the_delimiters() {
    use super::gbnf::Automaton;
    let a = Automaton::new(&["</a>".to_owned(), "\n</a>".to_owned()]);
    // Walk "x</b</a": every step allowed; then ">" completes a delimiter.
    let mut state = 0;
    for c in "x</b</a".chars() {
        state = a.step(state, c).expect("no delimiter yet");
    }
    assert_eq!(a.step(state, '>'), None);
}

#[test]
fn lark_output_compiles_in_llguidance() {
    use llguidance::api::TopLevelGrammar;
    use llguidance::toktrie::{ApproximateTokEnv, InferenceCapabilities};
    use llguidance::{Matcher, ParserFactory};
    let parser = example_parser(json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["city"]
    }));
    let lark = parser
        .decoding_grammar(GrammarFlavor::Lark)
        .unwrap()
        .grammar;
    let env = ApproximateTokEnv::single_byte_env();
    let factory = ParserFactory::new(&env, InferenceCapabilities::default(), &[]).unwrap();
    let mut m = Matcher::new(factory.create_parser(TopLevelGrammar::from_lark(lark.clone())));
    assert!(!m.is_error(), "{:?}\n{lark}", m.get_error());
    let text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"city\": \"Paris\", \"n\": 3}}\n</tool_call>";
    let tokens: Vec<u32> = text.bytes().map(u32::from).collect();
    assert_eq!(
        m.try_consume_tokens(&tokens).unwrap(),
        tokens.len(),
        "{lark}"
    );
    assert!(m.is_accepting().unwrap());
    let mut m = Matcher::new(factory.create_parser(TopLevelGrammar::from_lark(lark.clone())));
    let bad = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"city\": 5}}";
    let tokens: Vec<u32> = bad.bytes().map(u32::from).collect();
    assert!(m.try_consume_tokens(&tokens).unwrap() < tokens.len());
}

/// Consumes `text` with a fresh matcher of `lark`: whether it is accepted whole.
fn lark_accepts(lark: &str, text: &str) -> bool {
    use llguidance::api::TopLevelGrammar;
    use llguidance::toktrie::{ApproximateTokEnv, InferenceCapabilities};
    use llguidance::{Matcher, ParserFactory};
    let env = ApproximateTokEnv::single_byte_env();
    let factory = ParserFactory::new(&env, InferenceCapabilities::default(), &[]).unwrap();
    let mut m = Matcher::new(factory.create_parser(TopLevelGrammar::from_lark(lark.to_owned())));
    let tokens: Vec<u32> = text.bytes().map(u32::from).collect();
    m.try_consume_tokens(&tokens).ok() == Some(tokens.len()) && m.is_accepting().unwrap_or(false)
}

/// The Lark grammar of the example template for a tool with a required string `city`.
fn city_call_lark() -> String {
    let parser = example_parser(json!({
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"]
    }));
    parser
        .decoding_grammar(GrammarFlavor::Lark)
        .unwrap()
        .grammar
}

#[test]
fn a_json_call_object_holds_each_member_at_most_once_in_any_order() {
    let lark = city_call_lark();
    let call = |members: &str| format!("<tool_call>\n{{{members}}}\n</tool_call>");
    let args = r#""arguments": {"city": "Paris"}"#;
    let name = r#""name": "f""#;
    assert!(lark_accepts(&lark, &call(&format!("{name}, {args}"))));
    assert!(lark_accepts(&lark, &call(&format!("{args}, {name}"))));
    assert!(!lark_accepts(
        &lark,
        &call(&format!("{name}, {args}, {args}"))
    ));
    assert!(!lark_accepts(
        &lark,
        &call(&format!("{name}, {args}, {name}"))
    ));
    assert!(!lark_accepts(&lark, &call(args)), "the name is required");
}

#[test]
fn json_strings_escape_characters_and_surrogate_pairs_never_a_lone_surrogate() {
    let lark = city_call_lark();
    let call = |city: &str| {
        format!("<tool_call>\n{{\"name\": \"f\", \"arguments\": {{\"city\": \"{city}\"}}}}\n</tool_call>")
    };
    assert!(lark_accepts(&lark, &call(r"\u00e9 \uD83D\uDE00 \u20ac")));
    // The JSON parser rejects a lone surrogate: the grammar writes none.
    assert!(!lark_accepts(&lark, &call(r"\ud800")));
    assert!(!lark_accepts(&lark, &call(r"\udc00")));
    assert!(!lark_accepts(&lark, &call(r"\ud83d\u0041")));
}

#[test]
fn text_and_the_turn_end_may_follow_the_calls_but_no_unmarked_call() {
    let parser = example_parser_calls(json!({"type": "object", "properties": {}}), true);
    let lark = parser
        .decoding_grammar(GrammarFlavor::Lark)
        .unwrap()
        .grammar;
    let call = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
    assert!(lark_accepts(&lark, &format!("{call}\n{call}")));
    assert!(lark_accepts(&lark, &format!("{call}\nDone.")));
    assert!(lark_accepts(&lark, &format!("{call}\nDone.<|im_end|>")));
    // Text holds no call opener: a call after text is not constrained as one.
    assert!(!lark_accepts(&lark, &format!("{call}\nDone.\n{call}")));
}

#[test]
fn literal_values_read_back_as_the_values_written() {
    use super::schema::literal_text;
    let q = "<|\"|>";
    let value = json!({"room": "B-2", "n": 3, "ok": true, "tags": ["a, b", "c"], "my key": null});
    let text = literal_text(&value, q, q).unwrap();
    assert!(text.contains("room:<|\"|>B-2<|\"|>"), "{text}");
    assert!(text.contains("<|\"|>my key<|\"|>:null"), "{text}");
    let back: serde_json::Value =
        serde_json::from_str(&crate::generate::literal::literal_to_json(&text, q, q)).unwrap();
    assert_eq!(back, value);
    // A string holding the closing quote cannot be written.
    assert_eq!(literal_text(&json!("a<|\"|>b"), q, q), None);
}

#[test]
fn container_arguments_may_be_written_as_the_templates_elements() {
    // A recursive schema (a tree with three recursive members) stays a reference per `$ref`:
    // built at once, never expanded level by level.
    let source = include_str!("../../fixtures/elements-arg-attr/template.jinja");
    let template = ChatTemplate::new("elements", source).unwrap();
    let analysis = analyze(&template);
    let node = json!({
        "type": "object",
        "properties": {
            "label": {"type": "string"},
            "a": {"$ref": "#/$defs/node"},
            "b": {"$ref": "#/$defs/node"},
            "c": {"$ref": "#/$defs/node"}
        },
        "required": ["label"]
    });
    let mut request: ChatRequest = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"type": "function", "function": {"name": "plant", "parameters": {
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/node"}, "sizes": {"type": "array", "items": {"type": "integer"}}},
            "required": ["tree"],
            "$defs": {"node": node}
        }}}]
    }))
    .unwrap();
    request.parallel_tool_calls = false;
    let parser = ChatParser::new(&template, &analysis, &request).unwrap();
    let lark = parser
        .decoding_grammar(GrammarFlavor::Lark)
        .unwrap()
        .grammar;
    let output = "<calls>\n<invoke name=\"plant\">\n<arg name=\"tree\">\n<label>root</label>\n<b>\n<label>kid</label>\n</b>\n</arg>\n<arg name=\"sizes\">\n<li>3</li>\n<li>-4</li>\n</arg>\n</invoke>\n</calls>";
    assert!(lark_accepts(&lark, output), "{lark}");
    let message = parser.parse(output).message;
    let args: serde_json::Value = serde_json::from_str(&message.tool_calls[0].arguments).unwrap();
    assert_eq!(
        args,
        json!({"tree": {"label": "root", "b": {"label": "kid"}}, "sizes": [3, -4]})
    );
    // Members come in the schema's order, and a required one is present.
    let swapped = output.replace(
        "<label>root</label>\n<b>\n<label>kid</label>\n</b>",
        "<b>\n<label>kid</label>\n</b>\n<label>root</label>",
    );
    assert!(!lark_accepts(&lark, &swapped));
    assert!(!lark_accepts(
        &lark,
        &output.replace("<label>kid</label>\n", "")
    ));
    // JSON stays allowed.
    let json = output.replace(
        "\n<label>root</label>\n<b>\n<label>kid</label>\n</b>\n",
        r#"{"label": "root", "b": {"label": "kid"}}"#,
    );
    assert!(lark_accepts(&lark, &json));
}

#[test]
fn free_form_objects_in_literal_values_take_bare_keys_with_spaces() {
    // The template writes a key as it is (`{Model Name:1}`): the grammar allows what the
    // parser reads, words with one space between them, and no key that starts blank.
    let source = include_str!("../../fixtures/quoted-strings-pipe/template.jinja");
    let template = ChatTemplate::new("quoted", source).unwrap();
    let analysis = analyze(&template);
    let request: ChatRequest = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"type": "function", "function": {"name": "tag", "parameters": {
            "type": "object",
            "properties": {"attrs": {"type": "object", "additionalProperties": true}},
            "required": ["attrs"]
        }}}]
    }))
    .unwrap();
    let parser = ChatParser::new(&template, &analysis, &request).unwrap();
    let lark = parser
        .decoding_grammar(GrammarFlavor::Lark)
        .unwrap()
        .grammar;
    let call = |attrs: &str| format!("<|fn|>tag{{attrs={attrs}}}<|/fn|>");
    let output = call("{Model Name:1, two words:{inner key:<|s|>x y<|/s|>}}");
    assert!(lark_accepts(&lark, &output), "{lark}");
    let message = parser.parse(&output).message;
    let args: serde_json::Value = serde_json::from_str(&message.tool_calls[0].arguments).unwrap();
    assert_eq!(
        args,
        json!({"attrs": {"Model Name": 1, "two words": {"inner key": "x y"}}})
    );
    assert!(!lark_accepts(&lark, &call("{Model  Name:1}")));
    assert!(!lark_accepts(&lark, &call("{:1}")));
}

#[test]
fn a_call_opener_the_prompt_wrote_starts_the_grammar_at_the_output_start() {
    // Every message opens with `<|to|>` and its recipient; the prompt ends with `<|to|>`, so
    // the first call is the output's first text, with no trigger word of its own.
    let source = "{% for m in messages %}{% if m.role == 'user' %}<|u|>{{ m.content }}<|end|>\
        {% elif m.role == 'assistant' %}<|a|>{% if m.content %}<|to|>user<|body|>{{ m.content }}\
        {% endif %}{% for c in m.tool_calls or [] %}<|to|>{{ c.function.name }}<|body|>\
        {{ c.function.arguments | tojson }}{% endfor %}<|end|>{% endif %}{% endfor %}\
        {% if add_generation_prompt %}<|a|><|to|>{% endif %}";
    let template = ChatTemplate::new("recipients", source).unwrap();
    let request: ChatRequest = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"type": "function", "function": {"name": "lookup",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}],
        "parallel_tool_calls": true
    }))
    .unwrap();
    let parser = ChatParser::new(&template, &analyze(&template), &request).unwrap();
    assert_eq!(parser.prefill_text(), "<|to|>");
    let grammar = parser.decoding_grammar(GrammarFlavor::Lark).unwrap();
    let anchored: Vec<&str> = grammar
        .triggers
        .iter()
        .filter(|t| t.value.starts_with('^'))
        .map(|t| t.value.as_str())
        .collect();
    // Through the marker after the bare name: the name alone is a word text also holds.
    assert_eq!(
        anchored,
        [r"^(?:lookup[\t\n\r ]*<\|body\|>)"],
        "{:?}",
        grammar.triggers
    );
    let call = r#"lookup<|body|>{"q": "x"}"#;
    assert!(lark_accepts(&grammar.grammar, call));
    assert!(lark_accepts(
        &grammar.grammar,
        &format!("{call}<|to|>lookup<|body|>{{\"q\": \"y\"}}")
    ));
    assert!(!lark_accepts(&grammar.grammar, r#"lookup<|body|>{"r": 1}"#));
}
