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
    let source = include_str!("../../examples/chatml-tools.jinja");
    let template = ChatTemplate::new("chatml-tools", source).unwrap();
    let mut request: ChatRequest = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"type": "function", "function": {"name": "f"}}]
    }))
    .unwrap();
    request.tools[0].function.parameters = parameters;
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
