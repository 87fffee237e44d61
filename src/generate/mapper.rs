//! The mapper: walks the AST of a (possibly partial) turn parse and drives a
//! [`MessageBuilder`], incrementally.
//!
//! # Incremental mapping
//! Partial parses of growing prefixes only change at the frontier: nodes left of it are final,
//! and only the open (partial) nodes on the rightmost path grow (see [`crate::peg`]). The
//! mapper therefore keeps a cursor over the pre-order node list: nodes before `next` were
//! entered once; the open nodes form a stack; the open text leaf remembers how many of its
//! bytes were pushed. An [`update`](Mapper::update) enters the new nodes, pushes only the new
//! text of the open leaf, and exits the nodes that completed: O(new nodes + new text + stack
//! depth). Should an open node vanish (an alternative that looked like a call failed and its
//! text became content), the mapper starts again from a fresh builder; the stream then reports
//! the retraction as a conflict instead of emitting it.
//!
//! # Rules
//! - Names are set when their node completes (partial names are flagged not final), so
//!   argument text waits in the builder's buffer until the name is known.
//! - Tagged argument values: string-typed parameters (per the tool's JSON schema) stream as
//!   JSON strings; other values are pushed whole when their value ends, as JSON, or as the
//!   string written when they are not valid JSON (`{not json` stays that text: a container
//!   streamed as it came could only be cut at its first invalid byte, losing the rest).
//! - Tagged values are first decoded as the analysis says the template writes them
//!   ([`ValueFormat`]): a wrapper is taken off and escapes are undone, streaming (a decoder
//!   holds back what may be the start of a marker or an escape, see
//!   [`value_text`](crate::message::value_text)). A wrapped value is a string when the
//!   template wraps strings only. Where the template writes non-strings as Python literals, a
//!   value that is not JSON but a Python literal of another type than string becomes that
//!   JSON value; string-typed parameters keep the text.
//! - Python-dict arguments are normalised to JSON by the builder.
//! - Reasoning and content lose their outer whitespace: leading whitespace is dropped, and
//!   trailing whitespace is held back until more text follows (trimming both ways is
//!   monotone, so streams never emit what the final message trims).

use std::borrow::Cow;
use std::ops::Range;

use crate::analyze::slots::Slot;
use crate::analyze::{ElementValues, NonStringValues, ToolAnalysis};
use crate::message::request::declared_types;
use crate::message::{
    Appended, ArgumentKind, MessageBuilder, PartialMessage, Prefill, Tool, ValueDecoder, ValueText,
};
use crate::peg::{Ast, Grammar, Session, TagId};

use super::grammar::tags;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Reasoning,
    Content,
    Tool,
    Id,
    Name,
    Args,
    Arg,
    ArgName,
    ArgValue(Typed),
    Other,
}

/// What decides how a tagged value is written: the tool's schema, or the markers the value
/// was written with (formats whose non-string values have their own markers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Typed {
    /// The parameter's schema.
    Schema,
    /// String markers: a string.
    String,
    /// Non-string markers: JSON.
    Json,
}

impl Kind {
    fn of(tag: &str) -> Kind {
        match tag {
            tags::REASONING => Kind::Reasoning,
            tags::CONTENT => Kind::Content,
            tags::TOOL => Kind::Tool,
            tags::TOOL_ID => Kind::Id,
            tags::TOOL_NAME => Kind::Name,
            tags::TOOL_ARGS => Kind::Args,
            tags::TOOL_ARG => Kind::Arg,
            tags::TOOL_ARG_NAME => Kind::ArgName,
            tags::TOOL_ARG_VALUE => Kind::ArgValue(Typed::Schema),
            tags::TOOL_ARG_STRING => Kind::ArgValue(Typed::String),
            tags::TOOL_ARG_JSON => Kind::ArgValue(Typed::Json),
            _ => Kind::Other,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Open {
    index: usize,
    tag: TagId,
    kind: Kind,
    start: usize,
    /// Offset up to which the node's text was pushed.
    pushed: usize,
}

/// How a tagged value is written into the arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueMode {
    /// Raw text as a JSON string.
    String,
    /// JSON pushed when complete (a string when it is not valid JSON).
    Whole,
    /// A nullable string pushed when complete: `null`, or the raw text as a string.
    WholeString,
    /// A Python/JSON literal, normalised to JSON when complete.
    Literal,
    /// A literal that is a quoted string: its decoded text streamed as it comes.
    LiteralString(LiteralString),
    /// A string in the template's own multi-character quotes (`<|"|>text<|"|>`): its text,
    /// written as it is, streamed as it comes.
    DelimitedString,
}

/// The state of a streamed string literal (`'text'`, `"text"`): its quote, and whether a
/// backslash waits for the escaped character. The parser tells where the literal ends (a
/// quote is text unless it is the value's last character: models write nested quotes
/// unescaped), so its closing quote is never decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LiteralString {
    quote: char,
    backslash: bool,
    /// Written as it is (no escapes, see [`crate::analyze::ArgumentMarkers::verbatim_strings`]).
    verbatim: bool,
}

impl LiteralString {
    /// The text `piece` (the next part of the literal, its opening quote excluded and its
    /// closing quote held back) stands for; a trailing backslash is held until the escaped
    /// character comes (or the literal ends, [`Self::finish`]). Escapes are Python's: `\n`,
    /// `\t`, `\r`, `\0`, a backslash or a quote after one stands for that character, any other
    /// keeps its backslash (`\d`).
    ///
    /// Where the template writes strings verbatim, only a backslash or a quote after one is
    /// an escape: models trained on a Python-like call syntax escape them even where the
    /// template does not (`'Martha\'s'`), and the verbatim reading of such text (a value
    /// holding a backslash right before a quote) is the unlikely one. Any other backslash is
    /// text (`'C:\new'`, `mul_symbol='\,'`), as the template writes it.
    fn decode(&mut self, piece: &str) -> String {
        let mut out = String::with_capacity(piece.len());
        for c in piece.chars() {
            if self.backslash {
                self.backslash = false;
                match c {
                    '\\' | '\'' | '"' => out.push(c),
                    'n' if !self.verbatim => out.push('\n'),
                    't' if !self.verbatim => out.push('\t'),
                    'r' if !self.verbatim => out.push('\r'),
                    '0' if !self.verbatim => out.push('\0'),
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            } else if c == '\\' {
                self.backslash = true;
            } else {
                out.push(c);
            }
        }
        out
    }

    /// The text a backslash still held at the literal's end stands for: itself (a verbatim
    /// string may end in one, `'C:\'`).
    fn finish(self) -> &'static str {
        if self.backslash {
            "\\"
        } else {
            ""
        }
    }
}

/// How tagged values are written, from the analysis: what the mapper undoes before a value
/// becomes JSON (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct ValueFormat {
    /// The wrapper and escapes of strings.
    text: ValueText,
    /// The wrapper and escapes of other values.
    json_text: ValueText,
    /// A wrapped value is a string where the schema allows one (the template wraps strings
    /// only).
    wrapped_strings: bool,
    /// Non-string values may be Python literals.
    python: bool,
    /// Literal strings are written in their quotes as they are (no escapes).
    verbatim_literals: bool,
    /// Strings are written bare in Python calls: a quoted one is a Python string literal
    /// (see [`ToolAnalysis::python_calls_with_bare_strings`]).
    quoted_python_strings: bool,
    /// Objects and arrays are written as elements.
    elements: Option<ElementValues>,
    /// The template writes every value between a pair of quotes (`key="%s"`): whitespace
    /// inside them is the value's, not layout.
    quoted: bool,
    /// Strings are written bare with the markers of other values (JSON text): a value that
    /// reads as a JSON string literal is a string holding its quotes, as the template would
    /// write one.
    bare_strings: bool,
    /// The non-string markers write the parameter's declared type (a type slot): the schema,
    /// not the markers, tells a value's type.
    typed_slot: bool,
}

impl ValueFormat {
    /// The wrapper and escapes of string values.
    pub(crate) fn text(&self) -> &ValueText {
        &self.text
    }

    /// Strings are written bare with the markers of other values.
    pub(crate) fn bare_strings(&self) -> bool {
        self.bare_strings
    }

    /// Non-string values may be Python literals.
    pub(crate) fn python(&self) -> bool {
        self.python
    }

    /// Literal strings in the template's own quotes are written as they are (no escapes).
    pub(crate) fn verbatim_literals(&self) -> bool {
        self.verbatim_literals
    }

    /// The value format of tagged arguments (plain for other formats).
    pub(crate) fn of(tools: Option<&ToolAnalysis>) -> ValueFormat {
        let Some(a) = tools.map(|t| &t.arguments) else {
            return ValueFormat::default();
        };
        ValueFormat {
            text: a.value_text(),
            json_text: a.non_string_text(),
            wrapped_strings: a.value_wrapper.as_ref().is_some_and(|w| w.strings_only),
            python: !a.python_values.is_empty()
                || tools.is_some_and(ToolAnalysis::python_calls_with_quoted_values),
            verbatim_literals: a.verbatim_strings,
            quoted_python_strings: tools.is_some_and(ToolAnalysis::python_calls_with_bare_strings),
            elements: a.element_values.clone(),
            quoted: ['"', '\''].into_iter().any(|q| {
                let before = format!("{}{}", a.name_suffix, a.value_prefix);
                before.trim_end().ends_with(q) && a.value_suffix.trim_start().starts_with(q)
            }),
            bare_strings: a.non_string_values == NonStringValues::SameMarkers
                && a.string_open.is_empty()
                && a.string_close.is_empty()
                && a.python_values.is_empty(),
            typed_slot: a
                .non_string
                .as_ref()
                .is_some_and(|n| n.name_suffix.contains(Slot::Type.char())),
        }
    }

    /// The JSON text of a complete value of a parameter that may be another type than
    /// string: JSON as it is, a Python literal (where the template writes them) as JSON,
    /// otherwise `None`.
    fn json_of(&self, value: &str) -> Option<String> {
        if serde_json::from_str::<serde_json::Value>(value).is_ok() {
            return Some(value.to_owned());
        }
        if !self.python {
            return None;
        }
        crate::json::python_to_json(value).ok()
    }

    /// The JSON of a complete value whose parameter may be another type than string (`raw`:
    /// its text as written; `may_be_string`: the schema allows a string): a wrapped string
    /// when the template wraps strings only, else JSON or a Python literal read from the
    /// text as other values are written, else the string (trimmed, unless the template
    /// quotes every value).
    ///
    /// `types` are the parameter's declared types. Where strings are written bare like other
    /// values and the schema allows a string, text whose JSON the schema does not allow (a
    /// `true` for `["string", "object"]`, a quoted `"x"`) is the string as written.
    fn whole(&self, raw: &str, may_be_string: bool, types: &[String]) -> String {
        let (json_text, wrapped) = self.json_text.decode(raw);
        if wrapped && self.wrapped_strings && may_be_string {
            // A wrapped string is the wrapper's text exactly.
            return serde_json::Value::String(self.text.decode(raw).0).to_string();
        }
        if let Some(json) = self.json_of(json_text.trim()) {
            let as_written = self.bare_strings
                && may_be_string
                && types.iter().any(|t| t == "string")
                && !bare_value_fits(&json, types);
            if !as_written {
                return json;
            }
        }
        if let Some(json) = escaped_container(json_text.trim(), types) {
            return json;
        }
        if let Some(json) = crate::message::request::padded_integer(&json_text, types) {
            return json.to_string();
        }
        let text = self.text.decode(raw).0;
        let text = if self.quoted { &text } else { text.trim() };
        serde_json::Value::String(text.to_owned()).to_string()
    }
}

/// The names under which models wrap a call's arguments in one more object (`{"arguments":
/// {"city": "Paris"}}`, DeepSeek's and MiniCPM's `input` and `properties`), where the tool
/// declares no parameter of that name.
const ARGUMENT_WRAPPERS: [&str; 4] = ["arguments", "parameters", "properties", "input"];

/// The members of the arguments object a wrapper argument's value (`json`) holds: an object,
/// or a JSON string holding one (`"{\"city\": \"Paris\"}"`). `None` for other values.
fn wrapped_arguments(json: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    let value = match value {
        serde_json::Value::String(text) => serde_json::from_str(&text).ok()?,
        other => other,
    };
    match value {
        serde_json::Value::Object(members) => Some(members),
        _ => None,
    }
}

/// The JSON of an array or object the schema wants (`types`) that the model wrote inside a
/// JSON string's escapes, as if the value were a string (`[{\"id\": \"1\"}]`): the text
/// is read as a JSON string's contents, and what that string holds must be such a container.
/// `None` for any other text (kept as written).
fn escaped_container(text: &str, types: &[String]) -> Option<String> {
    if !text.starts_with(['[', '{']) || !text.contains("\\\"") {
        return None;
    }
    let inner: String = serde_json::from_str(&format!("\"{text}\"")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&inner).ok()?;
    let wanted = |kind: &str| types.iter().any(|t| t == kind);
    ((value.is_array() && wanted("array")) || (value.is_object() && wanted("object")))
        .then(|| value.to_string())
}

/// Whether the JSON text `json` of a value written bare is of one of the non-string `types`
/// (`integer` for numbers with no fractional part, as JSON Schema has it; `number` for any). A JSON string literal never is: a
/// bare string is written without quotes.
fn bare_value_fits(json: &str, types: &[String]) -> bool {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(json) else {
        return false;
    };
    let kind = match &value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(n)
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) =>
        {
            "integer"
        }
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => return false,
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    };
    types
        .iter()
        .any(|t| t == kind || (kind == "integer" && t == "number"))
}

/// The kind of each mapped tag of a grammar (looked up once per parser, not per parse).
#[derive(Debug, Clone, Default)]
pub(crate) struct TagKinds(Vec<(TagId, Kind)>);

impl TagKinds {
    /// The tags of `grammar` the mapper reads; with `drop_reasoning`, reasoning nodes are not
    /// read (their text goes to no field).
    pub(crate) fn of(grammar: &Grammar, drop_reasoning: bool) -> TagKinds {
        TagKinds(
            [
                tags::REASONING,
                tags::CONTENT,
                tags::TOOL,
                tags::TOOL_ID,
                tags::TOOL_NAME,
                tags::TOOL_ARGS,
                tags::TOOL_ARG,
                tags::TOOL_ARG_NAME,
                tags::TOOL_ARG_VALUE,
                tags::TOOL_ARG_STRING,
                tags::TOOL_ARG_JSON,
            ]
            .into_iter()
            .filter(|t| !(drop_reasoning && *t == tags::REASONING))
            .filter_map(|t| grammar.tag_id(t).map(|id| (id, Kind::of(t))))
            .collect(),
        )
    }
}

/// Incremental AST → message mapping (see the module docs).
#[derive(Debug)]
pub struct Mapper<'t> {
    tools: &'t [Tool],
    values: &'t ValueFormat,
    /// Decodes the open tagged value.
    decoder: ValueDecoder,
    kinds: &'t [(TagId, Kind)],
    /// Calls carry ids: a call is held back from streams until its id is known.
    expects_id: bool,
    /// The name slot holds the call's id, which names the function (see
    /// [`id_name`](super::id_name)): the name is final only with the whole id.
    name_in_id: bool,
    /// Tagged values are literals with these string quotes.
    literal_quotes: Option<super::literal::LiteralSyntax>,
    python: bool,
    prefill: Prefill,
    builder: MessageBuilder,
    next: usize,
    /// Tag and start of the node at `next - 1` (the last one entered): it must still be there.
    last_entered: Option<(TagId, usize)>,
    stack: Vec<Open>,
    tool_name: String,
    arg_name: String,
    /// Trailing whitespace of reasoning and content, held back until more text follows.
    pending_ws: [String; 2],
    /// What a new block of reasoning (0) or content (1) is joined to the field with, when the
    /// template splits the field around calls (see `analyze::joins`).
    joins: [Option<String>; 2],
    /// The kind of the last block entered: reasoning 0, content 1, a call 2.
    last_block: Option<u8>,
    /// A new block of the field started after another kind of block: its leading whitespace
    /// is layout, and the join goes before its text.
    block_start: [bool; 2],
    /// The message as it was before the last restart, until taken.
    before_restart: Option<PartialMessage>,
    value_mode: ValueMode,
    /// The open value's parameter may be a string (its schema allows one, or is unknown).
    value_may_be_string: bool,
    call_has_args: bool,
    /// The open argument's key is held back: the call's first argument, undeclared, named
    /// like an arguments object (see [`ARGUMENT_WRAPPERS`]); its value decides whether it
    /// wraps the arguments.
    wrapper_key: bool,
    args_is_string: bool,
    restarts: usize,
    /// The spans of the content nodes entered so far, in text order (the open one up to what
    /// was pushed of it).
    content_spans: Vec<Range<usize>>,
    /// Where the output starts in the text, when the prompt's own text before it (a call
    /// opener the prompt left open) may be read as content: none of it is.
    content_from: usize,
    work: u64,
}

impl<'t> Mapper<'t> {
    /// A mapper for the grammar whose tags are `kinds`, for calls to `tools`; `values`: how
    /// tagged values are written; `python`: arguments are Python dicts; `prefill`: what a
    /// continued message already holds.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        kinds: &'t TagKinds,
        tools: &'t [Tool],
        values: &'t ValueFormat,
        python: bool,
        literal_quotes: Option<super::literal::LiteralSyntax>,
        expects_id: bool,
        name_in_id: bool,
        prefill: Prefill,
        joins: [Option<String>; 2],
    ) -> Self {
        Mapper {
            name_in_id,
            joins,
            last_block: None,
            block_start: [false; 2],
            tools,
            values,
            decoder: ValueDecoder::new(),
            kinds: &kinds.0,
            expects_id,
            literal_quotes,
            python,
            builder: MessageBuilder::with_prefill(&prefill),
            prefill,
            next: 0,
            last_entered: None,
            stack: Vec::new(),
            tool_name: String::new(),
            arg_name: String::new(),
            pending_ws: Default::default(),
            before_restart: None,
            value_mode: ValueMode::Whole,
            value_may_be_string: true,
            call_has_args: false,
            wrapper_key: false,
            args_is_string: false,
            restarts: 0,
            content_spans: Vec::new(),
            content_from: 0,
            work: 0,
        }
    }

    /// The message mapped so far (no healing).
    pub fn message(&self) -> &PartialMessage {
        self.builder.message()
    }

    /// Whether the innermost open node is content that already covers `from..to` (text
    /// offsets): a cheap sufficient test that a content node of the tree covers that range.
    pub(crate) fn open_content_covers(&self, from: usize, to: usize) -> bool {
        self.stack
            .last()
            .is_some_and(|o| o.kind == Kind::Content && o.start <= from && to <= o.pushed)
    }

    /// The spans (text offsets) of the content nodes mapped so far, in text order.
    pub(crate) fn content_spans(&self) -> &[Range<usize>] {
        &self.content_spans
    }

    /// The message as it was before the latest restart (once per restart).
    pub fn take_restarted(&mut self) -> Option<PartialMessage> {
        self.before_restart.take()
    }

    /// How many times an open node vanished and mapping restarted.
    pub fn restarts(&self) -> usize {
        self.restarts
    }

    /// Units of mapping work (nodes visited plus bytes pushed), for linearity tests.
    pub fn work(&self) -> u64 {
        self.work
    }

    /// Finishes the message (`partial`: the output was cut off).
    pub fn finish(self, partial: bool) -> PartialMessage {
        self.builder.finish(partial)
    }

    /// Maps the session's tree as it is now: a window of it from where this mapper may still
    /// look ([`Session::ast_from`]), so a step costs O(nodes not finished with) rather than
    /// O(all nodes); the whole tree when the mapping restarts.
    pub fn follow(&mut self, session: &Session<'_>) {
        let mut hint = self.next.saturating_sub(1);
        if let Some(outer) = self.stack.first() {
            hint = hint.min(outer.index);
        }
        let ast = session.ast_from(hint);
        if ast.base() == 0 || self.consistent(&ast) {
            self.update(&ast, session.text());
        } else {
            self.update(&session.ast(), session.text());
        }
    }

    /// Maps what `ast` (over `text`) adds to the previous update. A window ([`Ast::base`])
    /// must hold the nodes from the last one entered and the open ones on (see
    /// [`follow`](Self::follow)).
    pub fn update(&mut self, ast: &Ast<'_>, text: &str) {
        if !self.consistent(ast) {
            self.restarts += 1;
            let old = std::mem::replace(
                &mut self.builder,
                MessageBuilder::with_prefill(&self.prefill),
            );
            self.before_restart = Some(old.finish(true));
            self.next = 0;
            self.last_entered = None;
            self.stack.clear();
            self.tool_name.clear();
            self.pending_ws = Default::default();
            self.last_block = None;
            self.block_start = [false; 2];
            self.content_spans.clear();
        }
        // The open leaf grew.
        if let Some(top) = self.stack.last().copied() {
            let end = ast.get(top.index).map_or(top.pushed, |n| n.span().end);
            self.push_text(top, end, text);
        }
        while self.next < ast.end() {
            let index = self.next;
            self.next += 1;
            self.work += 1;
            let Some(node) = ast.get(index) else {
                // Before the window: cannot happen for a consistent mapper (see `window`).
                continue;
            };
            let parent = node.parent().map(|p| p.index());
            while let Some(top) = self.stack.last().copied() {
                if Some(top.index) == parent || self.is_ancestor(ast, top.index, index) {
                    break;
                }
                self.stack.pop();
                self.exit(top, ast, text);
            }
            let span = node.span();
            self.last_entered = Some((node.tag_id(), span.start));
            let open = Open {
                index,
                tag: node.tag_id(),
                kind: self.kind(node.tag_id()),
                start: span.start,
                pushed: span.start,
            };
            self.enter(open);
            self.stack.push(open);
            self.push_text(open, span.end, text);
        }
        while let Some(top) = self.stack.last().copied() {
            if ast.get(top.index).is_some_and(|n| n.is_partial()) {
                break;
            }
            self.stack.pop();
            self.exit(top, ast, text);
        }
        // Partial names are shown (not final) while they grow.
        if let Some(top) = self.stack.last().copied() {
            if top.kind == Kind::Name && !self.name_in_id {
                if let Some(node) = ast.get(top.index) {
                    let name = partial_name(text.get(node.span()).unwrap_or_default());
                    self.builder.set_partial_name(&name);
                }
            }
        }
    }

    /// Maps a step of the parse that only moved the frontier (see
    /// [`Change::Frontier`](crate::peg::Change::Frontier)): the AST of the previous update
    /// with every partial node now ending at `frontier`. O(new text): only the open leaf's new
    /// text is pushed, no node is visited.
    ///
    /// Returns the one field of the message the step appended to when nothing else changed
    /// (the delta tracker then looks at that field only); `None`: look at everything.
    pub fn grow(&mut self, frontier: usize, text: &str) -> Option<Appended> {
        let top = self.stack.last_mut()?;
        let end = frontier.max(top.start);
        // The common step, text streaming into the content or the reasoning, inline (what
        // `push_text` does for them).
        let field = match top.kind {
            Kind::Reasoning => Some((0, Appended::Reasoning)),
            Kind::Content => Some((1, Appended::Content)),
            _ => None,
        };
        if let Some((field, appended)) = field {
            if end > top.pushed {
                let from = top.pushed;
                let piece = text.get(from..end)?;
                top.pushed = end;
                self.push_trimmed(field, piece);
                self.work += (end - from) as u64;
                if field == 1 {
                    if let Some(span) = self.content_spans.last_mut() {
                        span.end = span.end.max(end);
                    }
                }
            }
            return Some(appended);
        }
        let top = *top;
        self.push_text(top, end, text);
        match top.kind {
            Kind::Name if self.name_in_id => None,
            Kind::Name => {
                let name = partial_name(text.get(top.start..end).unwrap_or_default());
                self.builder.set_partial_name(&name);
                None
            }
            Kind::Content => Some(Appended::Content),
            Kind::Reasoning => Some(Appended::Reasoning),
            // Argument text goes to the open call (the last one), or to its buffer while its
            // name is not final (then nothing visible changed).
            Kind::Args | Kind::ArgValue(_) => self
                .builder
                .message()
                .tool_calls
                .len()
                .checked_sub(1)
                .map(Appended::Arguments),
            _ => None,
        }
    }

    fn kind(&self, tag: TagId) -> Kind {
        self.kinds
            .iter()
            .find(|(t, _)| *t == tag)
            .map_or(Kind::Other, |(_, k)| *k)
    }

    fn consistent(&self, ast: &Ast<'_>) -> bool {
        ast.end() >= self.next
            && self.last_entered.is_none_or(|(tag, start)| {
                self.next
                    .checked_sub(1)
                    .and_then(|i| ast.get(i))
                    .is_some_and(|n| n.tag_id() == tag && n.span().start == start)
            })
            && self.stack.iter().all(|o| {
                // Same tag too: a failed call alternative can leave a content node at the same
                // index and start (`<tool_call> t...` turning into content).
                ast.get(o.index).is_some_and(|n| {
                    n.tag_id() == o.tag && n.span().start == o.start && n.span().end >= o.pushed
                })
            })
    }

    fn is_ancestor(&self, ast: &Ast<'_>, ancestor: usize, mut index: usize) -> bool {
        while let Some(parent) = ast.get(index).and_then(|n| n.parent()) {
            if parent.index() == ancestor {
                return true;
            }
            index = parent.index();
        }
        false
    }

    fn enter(&mut self, open: Open) {
        match open.kind {
            Kind::Tool => {
                self.builder.start_tool_call();
                if self.expects_id {
                    self.builder.expect_id();
                }
                self.tool_name.clear();
                self.call_has_args = false;
                self.wrapper_key = false;
            }
            Kind::Id => self.builder.expect_id(),
            Kind::Args => self.call_has_args = true,
            Kind::Content => {
                self.content_spans.push(open.start..open.start);
                self.start_block(1);
            }
            Kind::Reasoning => self.start_block(0),
            _ => {}
        }
        if open.kind == Kind::Tool {
            self.last_block = Some(2);
        }
    }

    /// Reads no content before `offset` of the text (the prompt's text before the output).
    pub(crate) fn content_from(mut self, offset: usize) -> Self {
        self.content_from = offset;
        self
    }

    /// A block of reasoning (`field` 0) or content (1) begins: after a block of another kind,
    /// with a join, it is joined to what the field holds.
    fn start_block(&mut self, field: u8) {
        let after_other = self.last_block.is_some_and(|b| b != field);
        if after_other && self.joins[field as usize].is_some() {
            self.block_start[field as usize] = true;
        }
        self.last_block = Some(field);
    }

    /// Pushes the text of an open leaf up to `end`.
    fn push_text(&mut self, open: Open, end: usize, text: &str) {
        let top = match self.stack.last_mut() {
            Some(top) if top.index == open.index => top,
            _ => return,
        };
        if end <= top.pushed {
            return;
        }
        let from = top.pushed;
        let piece = match text.get(from..end) {
            Some(piece) => piece,
            None => return,
        };
        let pushed = match open.kind {
            Kind::Reasoning => {
                self.push_trimmed(0, piece);
                end
            }
            Kind::Content => {
                let skip = self.content_from.saturating_sub(from).min(piece.len());
                if let Some(rest) = piece.get(skip..).filter(|r| !r.is_empty()) {
                    self.push_trimmed(1, rest);
                }
                end
            }
            Kind::Args => {
                if from == open.start {
                    self.args_is_string = piece.starts_with('"');
                }
                if self.args_is_string {
                    // Arguments as a JSON-encoded string: pushed whole when complete.
                    return;
                }
                if self.python {
                    self.builder.push_python_arguments(piece);
                    end
                } else {
                    // A cut literal (`t` of `true`, or of a word that is no JSON) waits until
                    // it is whole: a stream never shows a value the model did not write.
                    let args = text.get(open.start..end).unwrap_or(piece);
                    let kept = piece.len() - cut_literal(args).len().min(piece.len());
                    self.builder.push_arguments(&piece[..kept]);
                    from + kept
                }
            }
            Kind::ArgValue(typed) => {
                if from == open.start {
                    self.start_value(piece, typed);
                }
                match self.value_mode {
                    ValueMode::String => {
                        let text = self.decode(piece);
                        self.builder.push_json_string_content(&text);
                        end
                    }
                    ValueMode::LiteralString(mut state) => {
                        // The opening quote was read when the value started.
                        let piece = if from == open.start {
                            let trimmed = piece.trim_start();
                            trimmed.get(state.quote.len_utf8()..).unwrap_or_default()
                        } else {
                            piece
                        };
                        // A quote at the end may close the value; held back until text
                        // follows it (the closing one never is).
                        let held = if piece.ends_with(state.quote) {
                            state.quote.len_utf8()
                        } else {
                            0
                        };
                        let decoded = state.decode(&piece[..piece.len() - held]);
                        self.value_mode = ValueMode::LiteralString(state);
                        self.builder.push_json_string_content(&decoded);
                        end - held
                    }
                    ValueMode::DelimitedString => {
                        let (quote_open, quote_close) = match &self.literal_quotes {
                            Some(l) => (l.open.as_str(), l.close.as_str()),
                            None => ("", ""),
                        };
                        // The opener was read when the value started.
                        let piece = if from == open.start {
                            let trimmed = piece.trim_start();
                            trimmed.get(quote_open.len()..).unwrap_or_default()
                        } else {
                            piece
                        };
                        // An end that may be (a part of) the closer waits for what follows
                        // (the closer itself never goes out).
                        let held = (1..=quote_close.len().min(piece.len()))
                            .rev()
                            .find(|&n| {
                                piece.is_char_boundary(piece.len() - n)
                                    && quote_close.starts_with(&piece[piece.len() - n..])
                            })
                            .unwrap_or(0);
                        self.builder
                            .push_json_string_content(&piece[..piece.len() - held]);
                        end - held
                    }
                    ValueMode::Whole | ValueMode::WholeString | ValueMode::Literal => return,
                }
            }
            _ => return,
        };
        self.work += (pushed - from) as u64;
        if let Some(top) = self.stack.last_mut() {
            top.pushed = pushed;
        }
        if open.kind == Kind::Content {
            if let Some(span) = self.content_spans.last_mut() {
                span.end = span.end.max(pushed);
            }
        }
    }

    /// Appends text to reasoning (`field` 0) or content (1) without its outer whitespace:
    /// leading whitespace of the field is dropped, trailing whitespace waits until more text
    /// follows (so the stream never emits what the final message trims).
    fn push_trimmed(&mut self, field: usize, piece: &str) {
        let message = self.builder.message();
        let empty = if field == 0 {
            message.reasoning_content.is_empty()
        } else {
            message.content.is_empty()
        };
        let mut piece = piece;
        if self.block_start[field] {
            // A new block: its leading whitespace is layout; once it has text, the join
            // replaces whatever whitespace was held.
            piece = piece.trim_start();
            if piece.is_empty() {
                return;
            }
            self.block_start[field] = false;
            if !empty {
                if let Some(join) = &self.joins[field] {
                    self.pending_ws[field].clone_from(join);
                }
            }
        }
        // The common step: text after text, ending in a visible ASCII character (neither
        // trimmed nor held), with no whitespace held back.
        if !empty
            && self.pending_ws[field].is_empty()
            && matches!(piece.as_bytes().last(), Some(0x21..=0x7E))
        {
            if field == 0 {
                self.builder.push_reasoning(piece);
            } else {
                self.builder.push_content(piece);
            }
            return;
        }
        let piece = if empty { piece.trim_start() } else { piece };
        let body = piece.trim_end();
        let pending = &mut self.pending_ws[field];
        if body.is_empty() {
            if !empty {
                pending.push_str(piece);
            }
            return;
        }
        let held = !pending.is_empty();
        if held {
            // The held whitespace goes first (no allocation: pushed, then cleared).
            if field == 0 {
                self.builder.push_reasoning(pending);
            } else {
                self.builder.push_content(pending);
            }
            pending.clear();
        }
        let trailing = &piece[body.len()..];
        if !trailing.is_empty() {
            pending.push_str(trailing);
        }
        if field == 0 {
            self.builder.push_reasoning(body);
        } else {
            self.builder.push_content(body);
        }
    }

    /// The decoded text of the open string value's next raw `piece` (what the decoder
    /// settles).
    fn decode<'p>(&mut self, piece: &'p str) -> Cow<'p, str> {
        let syntax = &self.values.text;
        if syntax.is_plain() {
            return Cow::Borrowed(piece);
        }
        let mut out = String::with_capacity(piece.len());
        self.decoder.push(syntax, piece, &mut out);
        Cow::Owned(out)
    }

    /// Ends the open streamed string value: what the decoder held back.
    fn finish_streamed_value(&mut self) {
        let mut out = String::new();
        self.decoder.finish(&self.values.text, &mut out);
        self.builder.push_json_string_content(&out);
    }

    /// Whether the current parameter's schema declares types and none of them is `string`.
    fn schema_rules_out_string(&self) -> bool {
        let types = self
            .parameter_schema()
            .map(declared_types)
            .unwrap_or_default();
        !types.is_empty() && !types.iter().any(|t| t == "string")
    }

    fn start_value(&mut self, first: &str, typed: Typed) {
        // Markers that write the declared type say what the schema says.
        let typed = match typed {
            Typed::Json if self.values.typed_slot => Typed::Schema,
            other => other,
        };
        self.decoder = ValueDecoder::new();
        if self.wrapper_key {
            // A value that may be the arguments object is read whole (also when marked as a
            // string: `string="true"` before `{"city": "Paris"}`).
            self.value_may_be_string = true;
            self.value_mode = ValueMode::Whole;
            return;
        }
        self.value_may_be_string = typed != Typed::Json;
        match typed {
            Typed::Schema => {}
            // Marked as a string where the parameter's schema allows no string: the schema
            // decides, as for an unmarked value.
            Typed::String if self.schema_rules_out_string() => {}
            Typed::String => {
                self.open_string_value();
                self.value_mode = ValueMode::String;
                return;
            }
            Typed::Json => {
                self.value_mode = ValueMode::Whole;
                return;
            }
        }
        let schema = self.parameter_schema();
        let types = schema.map(declared_types).unwrap_or_default();
        let kind = schema.map_or(ArgumentKind::Json, ArgumentKind::of_schema);
        let nullable = types.iter().any(|t| t == "null");
        let stringy = types.iter().any(|t| t == "string");
        self.value_may_be_string = stringy || types.is_empty();
        // A Python/JSON string literal streams like a string value.
        let quote = first
            .trim_start()
            .chars()
            .next()
            .filter(|c| matches!(c, '\'' | '"'));
        let literal_string = |verbatim: bool| {
            ValueMode::LiteralString(LiteralString {
                quote: quote.unwrap_or('"'),
                backslash: false,
                verbatim,
            })
        };
        if let Some(open) = self.literal_quotes.as_ref().map(|l| l.open.clone()) {
            // Until its opener is whole the value stays a literal (nothing is pushed, so
            // the next step decides again).
            if quote.is_none()
                && open.chars().count() > 1
                && first.trim_start().starts_with(open.as_str())
            {
                self.open_string_value();
                self.value_mode = ValueMode::DelimitedString;
                return;
            }
            self.value_mode = match quote {
                Some(q) if open == "'" || open == "\"" => {
                    self.open_string_value();
                    // The template's own quote; a string in the other one is a Python
                    // literal.
                    literal_string(self.values.verbatim_literals && open.starts_with(q))
                }
                _ => ValueMode::Literal,
            };
            return;
        }
        if quote.is_some() && self.values.quoted_python_strings && self.value_may_be_string {
            // Strings written bare in a template that writes other values as Python: a
            // quoted one is a Python string literal (the parser read it as one).
            self.open_string_value();
            self.value_mode = literal_string(false);
            return;
        }
        self.value_mode = match kind {
            // `null` for a nullable string is decided when the value is complete.
            ArgumentKind::String if nullable => ValueMode::WholeString,
            ArgumentKind::String => {
                self.open_string_value();
                ValueMode::String
            }
            ArgumentKind::Json => ValueMode::Whole,
        };
    }

    fn exit(&mut self, open: Open, ast: &Ast<'_>, text: &str) {
        let Some(node) = ast.get(open.index) else {
            return;
        };
        let raw = text.get(node.span()).unwrap_or_default();
        if open.kind == Kind::Content {
            if let Some(span) = self.content_spans.last_mut() {
                span.end = node.span().end;
            }
        }
        match open.kind {
            Kind::Name if self.name_in_id => {
                let id = decode_name(raw);
                let declared = self.tools.iter().map(|t| t.function.name.as_str());
                let name = super::id_name::name_in_id(&id, declared).to_owned();
                self.builder.set_id(&id);
                self.builder.set_name(&name);
                self.tool_name = name;
            }
            Kind::Name => {
                let name = decode_name(raw);
                self.builder.set_name(&name);
                self.tool_name = name;
            }
            Kind::Id => self.builder.set_id(&decode_name(raw)),
            Kind::Args if self.args_is_string => {
                // Arguments as a JSON-encoded string: the arguments are the JSON text it
                // holds. One that holds no JSON (`"hello"`) is its own value, kept as the
                // JSON string (valid JSON arguments, nothing decoded away); an empty one
                // holds no arguments.
                let inner = serde_json::from_str::<String>(raw).unwrap_or_default();
                let arguments = if inner.trim().is_empty() {
                    "{}"
                } else if serde_json::from_str::<serde::de::IgnoredAny>(&inner).is_ok() {
                    inner.as_str()
                } else {
                    raw.trim()
                };
                self.builder.push_arguments(arguments);
            }
            // The grammar tags arguments only around a JSON value (`tag(tool_args, json())`):
            // a completed node is one complete value the scanner validated, pushed verbatim.
            Kind::Args if !self.python && open.pushed == node.span().end => {
                self.builder.arguments_complete();
            }
            Kind::ArgName => {
                self.flush_wrapper_key();
                self.arg_name = raw.trim().to_owned();
                if self.may_wrap_arguments() {
                    self.wrapper_key = true;
                } else {
                    self.builder.push_argument_key(&self.arg_name);
                }
                self.call_has_args = true;
                self.value_mode = ValueMode::Whole;
            }
            Kind::ArgValue(typed) => {
                if open.pushed == open.start && raw.is_empty() {
                    self.start_value(raw, typed);
                }
                if self.value_mode != ValueMode::Whole {
                    self.flush_wrapper_key();
                }
                match self.value_mode {
                    ValueMode::Literal => {
                        let syntax = self.literal_quotes.clone().unwrap_or_default();
                        let json = super::literal::literal_to_json_in(raw, &syntax);
                        self.builder.push_arguments(&json);
                    }
                    ValueMode::WholeString | ValueMode::Whole
                        if let Some(json) = self.element_value(raw) =>
                    {
                        self.flush_wrapper_key();
                        self.builder.push_argument_value(&json);
                    }
                    ValueMode::WholeString => {
                        // `null`, or the string.
                        let value = match self.values.whole(raw, true, &[]) {
                            null if null == "null" => null,
                            _ => serde_json::Value::String(self.values.text.decode(raw).0)
                                .to_string(),
                        };
                        self.builder.push_argument_value(&value);
                    }
                    ValueMode::Whole => {
                        let types = self
                            .parameter_schema()
                            .map(declared_types)
                            .unwrap_or_default();
                        let json = self.values.whole(raw, self.value_may_be_string, &types);
                        if self.wrapper_key {
                            self.wrapper_key = false;
                            if let Some(members) = wrapped_arguments(&json) {
                                // The arguments object itself: its members are the arguments.
                                for (key, value) in members {
                                    self.builder.push_argument_key(&key);
                                    self.builder.push_argument_value(&value.to_string());
                                }
                                return;
                            }
                            self.builder.push_argument_key(&self.arg_name);
                        }
                        self.builder.push_argument_value(&json);
                    }
                    ValueMode::String => self.finish_streamed_value(),
                    // Streamed and closed as it went (but for a backslash held at its end).
                    ValueMode::LiteralString(state) => {
                        self.builder.push_json_string_content(state.finish());
                    }
                    ValueMode::DelimitedString => {}
                }
            }
            Kind::Arg => self.builder.end_argument_value(),
            Kind::Tool => {
                self.flush_wrapper_key();
                if !self.call_has_args {
                    self.builder.push_arguments("{}");
                }
                if !self.builder.has_final_name() {
                    // A call whose reference names no tool: the tool its arguments fit, else
                    // the reference as written.
                    let fitting =
                        super::id_name::tool_fitting(self.builder.buffered_arguments(), self.tools);
                    let name = fitting.map_or_else(|| self.builder.current_id(), str::to_owned);
                    self.builder.set_name(&name);
                    self.tool_name = name;
                }
                self.builder.end_tool_call();
            }
            _ => {}
        }
    }
}

impl<'t> Mapper<'t> {
    /// Whether the argument just named may wrap the call's arguments (`<param
    /// name="arguments">{…}</param>`): the call's first argument, its name one of
    /// [`ARGUMENT_WRAPPERS`], and the call's tool declared without a parameter of that name.
    fn may_wrap_arguments(&self) -> bool {
        ARGUMENT_WRAPPERS.contains(&self.arg_name.as_str())
            && !self.call_has_args
            && self
                .tools
                .iter()
                .find(|t| t.name() == self.tool_name)
                .is_some_and(|t| t.parameter(&self.arg_name).is_none())
    }

    /// Writes the held-back key of the open argument (its value wraps nothing).
    fn flush_wrapper_key(&mut self) {
        if std::mem::take(&mut self.wrapper_key) {
            self.builder.push_argument_key(&self.arg_name);
        }
    }

    /// Opens a string value, after the held-back key if any.
    fn open_string_value(&mut self) {
        self.flush_wrapper_key();
        self.builder.open_string_value();
    }

    /// The JSON text of a complete value written as elements (typed by the parameter's
    /// schema), when the template writes containers so and `raw` is one.
    fn element_value(&self, raw: &str) -> Option<String> {
        let e = self.values.elements.as_ref()?;
        super::elements::element_json(raw, e, self.parameter_schema()).map(|v| v.to_string())
    }

    /// The schema of the open argument (its tool's parameter of that name), if declared.
    fn parameter_schema(&self) -> Option<&'t serde_json::Value> {
        self.tools
            .iter()
            .find(|t| t.name() == self.tool_name)
            .and_then(|t| t.parameter(&self.arg_name))
    }
}

/// A complete name: a JSON/Python string is decoded, raw text is trimmed.
fn decode_name(raw: &str) -> String {
    let raw = raw.trim();
    if raw.starts_with('"') {
        if let Ok(s) = serde_json::from_str::<String>(raw) {
            return s;
        }
    }
    if raw.len() >= 2 && raw.starts_with('\'') && raw.ends_with('\'') {
        return raw[1..raw.len() - 1].to_owned();
    }
    if let Ok(serde_json::Value::Number(n)) = serde_json::from_str::<serde_json::Value>(raw) {
        return n.to_string();
    }
    raw.to_owned()
}

/// A name cut short: without its opening quote.
fn partial_name(raw: &str) -> String {
    raw.trim().trim_start_matches(['"', '\'']).to_owned()
}

/// The end of `text` that is a cut JSON literal: a strict prefix of `true`, `false` or `null`
/// where a value starts (after `:`, `[`, `,` or whitespace); empty otherwise.
pub(crate) fn cut_literal(text: &str) -> &str {
    let word_start = text.len() - text.len().min(5);
    let word_start = text
        .char_indices()
        .rev()
        .take_while(|&(i, c)| i >= word_start && c.is_ascii_lowercase())
        .last()
        .map_or(text.len(), |(i, _)| i);
    let word = &text[word_start..];
    let at_value = text[..word_start]
        .chars()
        .next_back()
        .is_some_and(|c| matches!(c, ':' | '[' | ',') || c.is_whitespace());
    let cut = !word.is_empty()
        && ["true", "false", "null"]
            .iter()
            .any(|k| k.len() > word.len() && k.starts_with(word));
    if cut && at_value {
        word
    } else {
        ""
    }
}
