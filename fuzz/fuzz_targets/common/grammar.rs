//! Body of the `grammar` fuzz target: constrained-decoding grammars generated from arbitrary
//! analyses (turn formats with markers drawn from the input) and arbitrary tool schemas.
//!
//! Input encoding: a byte stream read front to back. Each byte picks something: the tool
//! format and its flags, each marker (from a pool of marker-like strings, or the next few input
//! bytes as text), the request options (`tool_choice`, parallel calls), and the tool parameter
//! schemas (types, properties, `enum`, `anyOf`, `$ref`, arrays, nesting). A byte of `0xFF`
//! where a schema starts nests it 10,000 levels deep. A missing byte reads as 0.
//!
//! Checked: no panic, no stack overflow; building the parser and the grammar either works or
//! returns an error (a schema nested 10,000 deep is always `GrammarError::Schema`); a grammar
//! has at most `ir::MAX_RULES` rules, prints in both flavours to bounded text, names every rule
//! with llama.cpp identifier characters; a sampled text of the grammar parses without panic.
//!
//! Shared by `fuzz/fuzz_targets/grammar.rs` and the regression replay in
//! `tests/fuzz_regressions.rs`.

use chatparse::analyze::slots::Slot;
use chatparse::analyze::{
    ArgumentMarkers, CallIdMarkers, CallIdPosition, ElementValues, FunctionMarkers, JsonLayout,
    NonStringValues, StatedWrapper, ToolAnalysis, ToolFormat,
};
use chatparse::generate::{ChatParser, ReasoningFormat, TurnFormat};
use chatparse::grammar::{constraint, ir, sample, GrammarError, GrammarFlavor};
use chatparse::message::{ChatRequest, Tool, ToolChoice};
use serde_json::{json, Value};

/// Marker-like strings the input picks from.
const POOL: &[&str] = &[
    "",
    "<tool_call>",
    "</tool_call>",
    "<|tool▁call|>",
    "[TOOL_CALLS]",
    "[",
    "]",
    "{",
    "\n",
    " ",
    "<parameter=",
    ">",
    "</parameter>",
    "<arg>",
    "functions.",
    ":",
    "<think>",
    "</think>",
    "\"",
    "'",
    "<|end|>",
];

struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn marker(&mut self) -> String {
        let b = self.byte();
        if b < 200 {
            POOL[usize::from(b) % POOL.len()].to_owned()
        } else {
            let n = usize::from(b % 6);
            let start = self.at.min(self.data.len());
            let end = (start + n).min(self.data.len());
            self.at = end;
            String::from_utf8_lossy(&self.data[start..end]).into_owned()
        }
    }

    fn schema(&mut self, depth: usize) -> Value {
        let b = self.byte();
        if b == 0xFF {
            // 10,000 levels, built without recursion.
            let mut v = json!({"type": "string"});
            for _ in 0..10_000 {
                // Moved in, not through `json!` (which would copy the value each time).
                let mut object = serde_json::Map::new();
                object.insert("type".to_owned(), json!("array"));
                object.insert("items".to_owned(), v);
                v = object.into();
            }
            return v;
        }
        if depth > 4 {
            return json!({"type": "string"});
        }
        match b % 10 {
            0 => json!({"type": "string"}),
            1 => json!({"type": "integer"}),
            2 => json!({"type": ["number", "null"]}),
            3 => json!({"enum": ["a", 1, null, "x\"y"]}),
            4 => json!({"type": "boolean"}),
            5 => json!({"type": "array", "items": self.schema(depth + 1), "maxItems": 3}),
            6 => json!({"anyOf": [self.schema(depth + 1), self.schema(depth + 1)]}),
            7 => json!({"$ref": "#/$defs/x", "$defs": {"x": {"type": "string"}}}),
            8 => json!({"type": "object", "properties": {"k": self.schema(depth + 1)},
                         "required": ["k"]}),
            _ => self.object(depth + 1),
        }
    }

    fn object(&mut self, depth: usize) -> Value {
        let n = self.byte() % 4;
        let mut props = serde_json::Map::new();
        let mut required = Vec::new();
        for i in 0..n {
            let name = format!("p{i}{}", self.marker().replace(['"', '\\'], ""));
            if self.byte() % 2 == 0 {
                required.push(Value::String(name.clone()));
            }
            props.insert(name, self.schema(depth));
        }
        json!({"type": "object", "properties": props, "required": required})
    }
}

fn format(b: &mut Bytes<'_>) -> TurnFormat {
    let kind = match b.byte() % 3 {
        0 => ToolFormat::JsonNative,
        1 => ToolFormat::TagWithJson,
        _ => ToolFormat::TagWithTagged,
    };
    let tools = ToolAnalysis {
        format: kind,
        section_start: b.marker(),
        section_end: b.marker(),
        per_call_start: b.marker(),
        per_call_end: b.marker(),
        call_separator: b.marker(),
        parallel_calls: b.byte() % 2 == 0,
        function: FunctionMarkers {
            name_prefix: b.marker(),
            name_suffix: b.marker(),
            close: b.marker(),
        },
        arguments: ArgumentMarkers {
            start: b.marker(),
            end: b.marker(),
            name_prefix: b.marker(),
            name_suffix: b.marker(),
            value_prefix: b.marker(),
            value_suffix: b.marker(),
            separator: b.marker(),
            string_open: String::new(),
            string_close: String::new(),
            non_string_values: NonStringValues::default(),
            non_string: None,
            python_values: Vec::new(),
            value_wrapper: None,
            escapes: Vec::new(),
            escaped_strings_only: false,
            verbatim_strings: false,
            element_values: (b.byte() % 4 == 0).then(|| ElementValues {
                open: b.marker(),
                name_value: b.marker(),
                close: format!("{}{}{}", b.marker(), Slot::Key.char(), b.marker()),
                separator: String::new(),
                item: b.marker(),
            }),
        },
        call_id: CallIdMarkers {
            position: if b.byte() % 3 == 0 {
                CallIdPosition::PreFuncName
            } else {
                CallIdPosition::None
            },
            prefix: b.marker(),
            suffix: b.marker(),
            counter: false,
        },
        json: Some(JsonLayout {
            name_is_key: b.byte() % 5 == 0,
            array_wrapped: b.byte() % 5 == 0,
            python_dicts: b.byte() % 5 == 0,
            ..JsonLayout::default()
        }),
        counter_base: None,
        name_in_id: false,
        stated_wrapper: None,
    };
    let mut format = TurnFormat {
        reasoning: ReasoningFormat {
            start: b.marker(),
            end: b.marker(),
            tool_calls_only: false,
            block_join: None,
            opened_by_turn: false,
        },
        tools: Some(tools),
        turn_end: b.marker(),
        ..TurnFormat::default()
    };
    // Drawn last, so earlier corpus inputs keep their meaning.
    let name_in_id = kind != ToolFormat::JsonNative && b.byte() % 7 == 0;
    // A wrapper a preamble states around the calls (`word[` … `]`), drawn after that.
    let stated_wrapper = (b.byte() % 7 == 0).then(|| StatedWrapper {
        open: format!("{}[", b.marker()),
        close: "]".to_owned(),
        separator: ", ".to_owned(),
    });
    // Reasoning with no opener that every turn opens (unclosed, it is still reasoning), drawn
    // after that.
    format.reasoning.opened_by_turn = b.byte() % 2 == 0;
    if let Some(t) = format.tools.as_mut() {
        t.name_in_id = name_in_id;
        t.stated_wrapper = stated_wrapper;
    }
    format
}

fn tool(name: &str, parameters: Value) -> Tool {
    let mut t: Tool =
        serde_json::from_value(json!({"type": "function", "function": {"name": name}}))
            .expect("a tool deserialises");
    // Set after deserialising: a 10,000-deep value would overflow serde's recursion.
    t.function.parameters = parameters;
    t
}

/// Runs one input (see the module docs); panics on a violated property.
pub fn run(data: &[u8]) {
    if data.contains(&0xFF) {
        // A 10,000-deep schema may be built: serde_json clones and drops values recursively
        // (outside chatparse), which needs more stack than a sanitizer build's main thread
        // has. The generation itself is bounded (`MAX_SCHEMA_DEPTH`).
        let data = data.to_vec();
        std::thread::Builder::new()
            .stack_size(512 << 20)
            .spawn(move || check(&data))
            .expect("a thread")
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
    } else {
        check(data);
    }
}

fn check(data: &[u8]) {
    let mut b = Bytes { data, at: 0 };
    let format = format(&mut b);
    let deep_at = b.at;
    let deep = b.data.get(deep_at) == Some(&0xFF);
    let tools = vec![tool("get_weather", b.schema(0)), tool("ping", b.object(1))];
    let parallel_tool_calls = b.byte() % 2 == 0;
    let tool_choice = match b.byte() % 4 {
        0 => ToolChoice::Required,
        1 => ToolChoice::Function("ping".to_owned()),
        _ => ToolChoice::Auto,
    };
    let request = ChatRequest {
        tools,
        parallel_tool_calls,
        tool_choice,
        ..ChatRequest::default()
    };
    let Ok(parser) = ChatParser::from_format("fuzz", format, &request, String::new()) else {
        return;
    };
    match constraint(&parser) {
        Err(e) => {
            if deep && request.tool_choice != ToolChoice::Function("ping".to_owned()) {
                assert!(
                    matches!(e, GrammarError::Schema(_) | GrammarError::Empty(_)),
                    "a 10,000-deep schema is a schema error: {e}"
                );
            }
        }
        Ok(c) => {
            assert!(
                !deep || request.tool_choice == ToolChoice::Function("ping".to_owned()),
                "a 10,000-deep schema must not make a grammar"
            );
            assert!(c.rules.rules().len() <= ir::MAX_RULES);
            for rule in c.rules.rules() {
                assert!(
                    rule.name
                        .bytes()
                        .all(|x| x.is_ascii_alphanumeric() || x == b'-'),
                    "rule name {:?}",
                    rule.name
                );
            }
            for flavor in [GrammarFlavor::Gbnf, GrammarFlavor::Lark] {
                let text = c.print(flavor).grammar;
                assert!(text.len() < 256 << 20, "grammar text bounded");
            }
            let s = sample::sample(&c.rules, u64::from(b.byte()));
            let _ = parser.parse(&s.text);
        }
    }
}
