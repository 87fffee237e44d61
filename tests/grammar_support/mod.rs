//! What the grammar tests share: the llguidance matcher over a byte-level token set, where a
//! lazy grammar starts in an output, and the cases (fixture outputs and template round-trip
//! renders) the parser reads as tool calls.

#![allow(dead_code)]

use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use chatparse::analyze::analyze_cached;
use chatparse::fixtures::round_trip::prepare;
use chatparse::fixtures::samples::{default_request, sample_messages};
use chatparse::fixtures::{Corpus, Model};
use chatparse::generate::ChatParser;
use chatparse::grammar::schema::normalize;
use chatparse::grammar::{constraint, Constraint, GrammarFlavor, TriggerKind};
use chatparse::message::{ChatMessage, ChatRequest, ToolChoice};
use chatparse::template::ChatTemplate;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, InferenceCapabilities, TokEnv};
use llguidance::{Matcher, ParserFactory};

/// A compiled Lark grammar: a matcher in its start state, cloned for each text.
pub struct Lark {
    fresh: Matcher,
}

fn env() -> TokEnv {
    ApproximateTokEnv::single_byte_env()
}

impl Lark {
    /// Compiles `grammar`; `Err` is llguidance's message.
    pub fn compile(grammar: &str) -> Result<Lark, String> {
        let mut factory = ParserFactory::new(&env(), InferenceCapabilities::default(), &[])
            .map_err(|e| e.to_string())?;
        factory.quiet();
        let fresh =
            Matcher::new(factory.create_parser(TopLevelGrammar::from_lark(grammar.to_owned())));
        if fresh.is_error() {
            return Err(fresh.get_error().unwrap_or_default());
        }
        Ok(Lark { fresh })
    }

    /// Whether the grammar accepts `text` whole (every byte consumed, then an accepting state);
    /// `Err` says where it stopped.
    pub fn accepts(&self, text: &str) -> Result<(), String> {
        let mut m = self.fresh.clone();
        let tokens: Vec<u32> = text.bytes().map(u32::from).collect();
        let n = m.try_consume_tokens(&tokens).map_err(|e| e.to_string())?;
        if n < tokens.len() {
            let at = n.min(text.len());
            let mut cut = at;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            return Err(format!(
                "rejected at byte {at}: {:?} ^ {:?}",
                &text[..cut],
                &text[cut..]
            ));
        }
        if m.is_accepting().unwrap_or(false) {
            Ok(())
        } else {
            Err("the text ends before the grammar can".to_owned())
        }
    }
}

/// Where the grammar starts in `output`: 0 when not lazy; the first trigger otherwise (`None`:
/// no trigger occurs).
pub fn grammar_start(c: &Constraint, output: &str) -> Option<usize> {
    if !c.lazy {
        return Some(0);
    }
    c.triggers
        .iter()
        .filter_map(|t| match t.kind {
            TriggerKind::Word => output.find(&t.value),
            TriggerKind::Pattern => regex_automata::meta::Regex::new(&t.value)
                .ok()?
                .find(output)
                .map(|m| m.start()),
        })
        .min()
}

/// Builds the parser of a request for one template.
pub type MakeParser = Rc<dyn Fn(&ChatRequest) -> Option<ChatParser>>;

/// One output the parser reads as tool calls, with what it was made for.
pub struct CallCase {
    /// `fixtures/<model>/<case>` or `templates/<file>/<sample>`.
    pub id: String,
    /// The parser of the case's request.
    pub parser: ChatParser,
    /// The request.
    pub request: ChatRequest,
    /// The output.
    pub output: String,
    /// What the parser made of it.
    pub message: ChatMessage,
    /// Builds the parser of another request for the same template.
    pub make: MakeParser,
}

impl CallCase {
    /// Whether every call names an offered tool with arguments the (normalised) schema accepts
    /// and the parse found no problem: what a constrained decoder can write.
    pub fn offered_and_valid(&self) -> Result<(), String> {
        for call in &self.message.tool_calls {
            let Some(tool) = self.request.tool(&call.name) else {
                return Err(format!(
                    "calls `{}`, which the request does not offer",
                    call.name
                ));
            };
            let args: serde_json::Value = serde_json::from_str(&call.arguments)
                .map_err(|e| format!("arguments are not JSON: {e}"))?;
            let schema = normalize(tool.parameters(), 0).map_err(|e| e.to_string())?;
            chatparse::json::schema::validate(&args, &schema)
                .map_err(|e| format!("arguments of `{}` break the schema: {e}", call.name))?;
        }
        Ok(())
    }
}

/// Every complete fixture case whose parse holds tool calls (`notices` collects skipped models).
pub fn fixture_cases(corpus: &Path, notices: &mut Vec<String>) -> Vec<CallCase> {
    let mut out = Vec::new();
    let Ok(corpus) = Corpus::open(corpus) else {
        return out;
    };
    for dir in &corpus.models {
        let model = match Model::load(dir) {
            Ok(m) => m,
            Err(e) => {
                notices.push(format!("{}: {e:?}", dir.display()));
                continue;
            }
        };
        for path in Corpus::cases(dir) {
            let Ok(case) = chatparse::fixtures::Case::load(&path) else {
                continue;
            };
            if case.partial() {
                continue;
            }
            let Ok(request) = model.request(&case.overrides()) else {
                continue;
            };
            let Ok(parser) = ChatParser::new(model.template(), model.analysis(), &request) else {
                continue;
            };
            let parsed = parser.parse(&case.output);
            if parsed.message.tool_calls.is_empty() || parsed.problem.is_some() {
                continue;
            }
            let m = model.clone();
            out.push(CallCase {
                id: format!("fixtures/{}/{}", model.name, case.name),
                parser,
                request,
                output: case.output.clone(),
                message: parsed.message,
                make: Rc::new(move |r| ChatParser::new(m.template(), m.analysis(), r).ok()),
            });
        }
    }
    out
}

/// The round-trip renders with tool calls of every template of `dir` that has a tool format.
pub fn template_cases(dir: &Path) -> Vec<CallCase> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
        .collect();
    files.sort();
    for path in files {
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Ok(template) = ChatTemplate::new(name.clone(), source) else {
            continue;
        };
        let template = Arc::new(template);
        let analysis = analyze_cached(&template);
        if analysis.tools.is_none() {
            continue;
        }
        let base = default_request();
        for (sample, message) in sample_messages() {
            if message.tool_calls.is_empty() {
                continue;
            }
            let Ok((turn, _)) = prepare(&template, &analysis, &base, &message) else {
                continue;
            };
            let mut request = base.clone();
            request.parallel_tool_calls = message.tool_calls.len() > 1;
            let Ok(parser) = ChatParser::new(&template, &analysis, &request) else {
                continue;
            };
            let parsed = parser.parse(&turn);
            if parsed.message.tool_calls.is_empty() || parsed.problem.is_some() {
                continue;
            }
            let (t, a) = (template.clone(), analysis.clone());
            out.push(CallCase {
                id: format!("templates/{name}/{sample}"),
                parser,
                request,
                output: turn,
                message: parsed.message,
                make: Rc::new(move |r| ChatParser::new(&t, &a, r).ok()),
            });
        }
    }
    out
}

impl CallCase {
    /// The case's parser for the same request under another `tool_choice`.
    pub fn with_choice(&self, choice: ToolChoice) -> Option<ChatParser> {
        let mut request = self.request.clone();
        request.tool_choice = choice;
        (self.make)(&request)
    }
}

thread_local! {
    /// Grammars compiled in this test's thread, by text (cases of one model share them).
    static COMPILED: std::cell::RefCell<std::collections::HashMap<String, Rc<Lark>>> =
        Default::default();
}

/// The constraint and its Lark grammar, compiled (once per grammar text and thread).
pub fn compiled(parser: &ChatParser) -> Result<(Constraint, Rc<Lark>), String> {
    let c = constraint(parser).map_err(|e| e.to_string())?;
    let lark = c.print(GrammarFlavor::Lark).grammar;
    if let Some(done) = COMPILED.with(|m| m.borrow().get(&lark).cloned()) {
        return Ok((c, done));
    }
    let compiled =
        Rc::new(Lark::compile(&lark).map_err(|e| format!("{e}\n--- grammar ---\n{lark}"))?);
    COMPILED.with(|m| m.borrow_mut().insert(lark, compiled.clone()));
    Ok((c, compiled))
}
