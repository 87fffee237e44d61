//! [`ChatParser`]: the built parser for one assistant turn, with one-shot parsing.

use std::fmt;

use crate::analyze::{Analysis, CallIdPosition, Part};
use crate::message::{
    ChatMessage, ChatRequest, PartialMessage, Prefill, Tool, ToolCall, ToolChoice,
};
use crate::peg::{Ast, BuildError, Grammar, ParseError, Status};
use crate::template::ChatTemplate;

use super::commit::{content_nodes, content_spans, CommitCursor};
use super::format::{ReasoningFormat, TurnFormat};
use super::grammar::{build_grammar, GrammarOptions};
use super::mapper::{Mapper, TagKinds, ValueFormat};
use super::prompt;
use super::stream::ChatStream;

/// Why a parser could not be built.
#[derive(Debug, Clone)]
pub struct GenerateError {
    /// The template's name.
    pub template: String,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "template {}: {}", self.template, self.message)
    }
}

impl std::error::Error for GenerateError {}

/// Where parsing the output stopped being what the format describes: the text from there on
/// is kept as content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseProblem {
    /// The template's name.
    pub template: String,
    /// Byte offset in the model output.
    pub offset: usize,
    /// 1-based line in the model output.
    pub line: usize,
    /// 1-based column (in characters) in the model output.
    pub column: usize,
    /// What was expected there.
    pub expected: String,
}

impl fmt::Display for ParseProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "template {}: at byte {} (line {}, column {}): expected {}",
            self.template, self.offset, self.line, self.column, self.expected
        )
    }
}

/// The result of a parse: the message, and the problem if the output did not fully follow the
/// format (the message then keeps the unparsed text as content).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The parsed message.
    pub message: ChatMessage,
    /// Where the format was not followed, if anywhere.
    pub problem: Option<ParseProblem>,
}

/// The parser for one assistant turn, built from a template analysis and a request.
///
/// Immutable and `Send + Sync`: build once per request and parse or [`stream`](Self::stream)
/// the output.
#[derive(Debug, Clone)]
pub struct ChatParser {
    pub(crate) grammar: Grammar,
    pub(crate) format: TurnFormat,
    pub(crate) options: GrammarOptions,
    pub(crate) prefill_text: String,
    pub(crate) prefill: Prefill,
    pub(crate) tools: Vec<Tool>,
    pub(crate) python: bool,
    pub(crate) expects_id: bool,
    pub(crate) literal_quotes: Option<super::literal::LiteralSyntax>,
    /// How tagged values are written.
    pub(crate) values: ValueFormat,
    /// The fast path for outputs without any marker (plain content), when there is no prefill.
    pub(crate) plain_scan: Option<PlainScan>,
    pub(crate) template: String,
    pub(crate) triggers: Vec<String>,
    /// Every marker that can start a call (section, per-call and name markers): where the
    /// commit rule looks for calls that broke (see `commit.rs`).
    pub(crate) call_starts: Vec<String>,
    /// A call may open the output where no trigger marks it (a bare name, a message of its
    /// own, or a call the prompt opened): a finished output that is all content may then have
    /// ended inside one (see `commit.rs`).
    pub(crate) calls_open_output: bool,
    /// One pass over the call starts' first bytes (when they have at most three).
    pub(crate) call_start_scan: Option<PlainScan>,
    /// The mapper's view of the grammar's tags.
    tag_kinds: TagKinds,
    /// Every content node stops where a call start begins (see
    /// [`BuiltGrammar::content_stops`](super::grammar::BuiltGrammar::content_stops)), and the
    /// prefill holds no content: a call start can only begin a content node.
    pub(crate) call_starts_begin_content: bool,
    /// What the request asks of the turn, checked after parsing.
    pub(crate) tool_choice: ToolChoice,
    pub(crate) json_schema: Option<serde_json::Value>,
}

impl ChatParser {
    /// Builds the parser for `request` from `template` and its `analysis` (renders the prompt
    /// to find the prefill). A request whose `chat_template_kwargs` the template was not built
    /// with is served by the template under them and its analysis
    /// ([`with_variables_cached`](crate::analyze::with_variables_cached)), not by `analysis`.
    pub fn new(
        template: &ChatTemplate,
        analysis: &Analysis,
        request: &ChatRequest,
    ) -> Result<ChatParser, GenerateError> {
        // The request's template variables can change the format: the analysis must be the
        // one of the template rendered with them (a cached variant of the template).
        if request
            .chat_template_kwargs
            .iter()
            .any(|(k, v)| template.variables().get(k.as_str()) != Some(v))
        {
            let mut variables = template.variables().clone();
            variables.extend(request.chat_template_kwargs.clone());
            let variant =
                crate::analyze::with_variables_cached(template, &variables).map_err(|e| {
                    GenerateError {
                        template: template.name().to_owned(),
                        message: format!("the request's chat_template_kwargs: {e}"),
                    }
                })?;
            return Self::new(&variant.0, &variant.1, request);
        }
        let mut format = TurnFormat::for_request(analysis, !request.tools.is_empty());
        if !format.reasoning.is_enabled()
            && !analysis
                .unsupported
                .iter()
                .any(|u| u.part == Part::Reasoning)
        {
            // No reasoning markers render: models trained on such templates may still think in
            // the conventional `<think>` block at the start of the output.
            format.reasoning = ReasoningFormat {
                start: "<think>".to_owned(),
                end: "</think>".to_owned(),
                tool_calls_only: false,
                block_join: None,
                opened_by_turn: false,
            };
        }
        let rendered = prompt::render_prompt(template, request, true).unwrap_or_default();
        let generation_prompt = if request.continued_message().is_some() {
            String::new()
        } else {
            prompt::generation_prompt_of(template, request, &rendered)
        };
        let mut prefill_text = prompt::prefill_text(
            &generation_prompt,
            &analysis.generation_prompt.header,
            &format,
        );
        // Reasoning with no opener, whose opening text the prompt wrote (`Here are my reasoning
        // steps:`): the output starts inside it.
        if format.reasoning.start.trim().is_empty() && !prefill_text.trim().is_empty() {
            format.reasoning.opened_by_turn = true;
        }
        // Reasoning kept inline: a closed (empty) block the prompt wrote is not part of what the
        // model said; an opened one is. What the prompt wrote after the closed block (a call
        // opener of a forced-tool-use prompt) stays the prefill.
        let end = format.reasoning.end.trim();
        let inline = !request.extracts_reasoning() && request.json_schema.is_none();
        if inline && !end.is_empty() {
            if let Some(at) = prefill_text.rfind(end) {
                let rest = prefill_text[at + end.len()..].trim_start();
                prefill_text = if rest.is_empty() {
                    String::new()
                } else {
                    rest.to_owned()
                };
            }
        }
        Self::from_format(template.name(), format, request, prefill_text)
    }

    /// Builds the parser from an explicit format; `prefill_text` is what the prompt already
    /// wrote of the turn.
    pub fn from_format(
        template_name: &str,
        format: TurnFormat,
        request: &ChatRequest,
        prefill_text: String,
    ) -> Result<ChatParser, GenerateError> {
        // A response format's content is the JSON alone: reasoning kept inline
        // (`reasoning_format: none`) cannot be part of it, so it is read apart and not
        // reported.
        let drop_reasoning = !request.extracts_reasoning() && request.json_schema.is_some();
        let mut options = GrammarOptions {
            extract_reasoning: request.extracts_reasoning() || drop_reasoning,
            tools: request.tools_enabled(),
            parallel_tool_calls: request.parallel_tool_calls,
            reasoning_open: false,
            starts_in_reasoning: false,
            json_schema: request.json_schema.is_some(),
            tool_names: request.tool_names().map(str::to_owned).collect(),
            parameter_names: parameter_names(request),
        };
        // Whitespace alone (the end of the assistant header) changes nothing.
        let mut prefill_text = if prefill_text.trim().is_empty() {
            String::new()
        } else {
            prefill_text
        };
        if let Some((start, reasoning_may_open)) = prompt::continuation_start(request, &format) {
            prefill_text = start;
            options.extract_reasoning &= reasoning_may_open;
        }
        let (start, end) = (format.reasoning.start.trim(), format.reasoning.end.trim());
        options.reasoning_open = !start.is_empty()
            && prefill_text
                .rfind(start)
                .is_some_and(|at| end.is_empty() || !prefill_text[at..].contains(end));
        // A prefill that is only the reasoning opener: the grammar starts inside the
        // reasoning and the output is read alone (no copy of it behind the prefill).
        if options.reasoning_open
            && options.extract_reasoning
            && format.channels.is_none()
            && format.switch.is_none()
            && format.reasoning.is_enabled()
            && prefill_text.trim() == start
        {
            options.starts_in_reasoning = true;
            prefill_text.clear();
        }
        let built = build_grammar(&format, &options, template_name).map_err(|e: BuildError| {
            GenerateError {
                template: template_name.to_owned(),
                message: e.to_string(),
            }
        })?;
        let prefill = request.prefill();
        // Without markers, the output is all content (unless it starts inside reasoning).
        // Reasoning with no opener that every turn opens: text without markers is reasoning.
        let plain_scan = (prefill_text.is_empty()
            && !options.starts_in_reasoning
            && !(options.extract_reasoning && format.reasoning.starts_unmarked())
            && prefill.content.is_empty()
            && prefill.reasoning_content.is_empty())
        .then(|| PlainScan::new(&built.markers))
        .flatten();
        let content_stops = built.content_stops;
        let calls_are_messages = built.calls_are_messages;
        let bare_call_starts = built.bare_call_starts;
        let grammar = built.grammar;
        let tag_kinds = TagKinds::of(&grammar, drop_reasoning);
        let python = format
            .tools
            .as_ref()
            .and_then(|t| t.json.as_ref())
            .is_some_and(|j| j.python_dicts);
        let literal_quotes = format
            .tools
            .as_ref()
            .filter(|_| format.literal_values)
            .map(|t| super::literal::LiteralSyntax::of(&t.arguments));
        let mut call_starts: Vec<String> = format
            .tools
            .as_ref()
            .filter(|_| options.tools)
            .map(|t| {
                // A marker with a slot (a counter: `<call_{counter}>`) starts with its text
                // before the slot.
                [&t.section_start, &t.per_call_start, &t.function.name_prefix]
                    .into_iter()
                    // A separator that leads calls (`<|to|>`, or `>>>` ending the turn header)
                    // opens every call after the first (and the first, where the prompt wrote
                    // it).
                    .chain(
                        Some(&t.call_separator)
                            .filter(|_| super::grammar::separator_leads_calls(&format, t)),
                    )
                    .map(|m| crate::analyze::slots::head(m.trim()).trim().to_owned())
                    .filter(|m| !m.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        // The trigger is the outermost call-start marker.
        let triggers: Vec<String> = call_starts.iter().take(1).cloned().collect();
        // Calls that no marker opens (bare JSON objects) start with their bracket: the commit
        // rule watches it, so a call announced while streaming stays a call in one shot.
        if call_starts.is_empty() {
            if let Some(t) = format
                .tools
                .as_ref()
                .filter(|t| options.tools && t.format == crate::analyze::ToolFormat::JsonNative)
            {
                let wrapped = t.json.as_ref().is_some_and(|j| j.array_wrapped);
                if wrapped {
                    call_starts.push("[".to_owned());
                }
                call_starts.push("{".to_owned());
            }
        }
        call_starts.dedup();
        // A call may open the output unmarked: calls are messages of their own, a bare start
        // is no call start (a brace: no trigger finds it), or the prompt (its prefill, or the
        // turn header itself) ends with a call start, so the output opens with the call's name.
        let calls_open_output = calls_are_messages
            || bare_call_starts.iter().any(|b| !call_starts.contains(b))
            || call_starts.iter().any(|start| {
                prefill_text.trim_end().ends_with(start.as_str())
                    || format.turn_start.trim_end().ends_with(start.as_str())
            });
        let call_starts_begin_content = prefill.content.is_empty()
            && content_stops.as_ref().is_some_and(|stops| {
                call_starts.iter().all(|start| {
                    stops
                        .iter()
                        .any(|stop| !stop.is_empty() && start.starts_with(stop.as_str()))
                })
            });
        let expects_id = format.tools.as_ref().is_some_and(|t| {
            t.call_id.position != CallIdPosition::None
                || t.json
                    .as_ref()
                    .is_some_and(|j| j.id_field.is_some() || j.generated_id_field.is_some())
        });
        let values = ValueFormat::of(format.tools.as_ref());
        Ok(ChatParser {
            expects_id,
            literal_quotes,
            values,
            grammar,
            format,
            options,
            prefill_text,
            prefill,
            plain_scan,
            tools: request.tools.clone(),
            python,
            template: template_name.to_owned(),
            triggers,
            calls_open_output,
            call_start_scan: PlainScan::new(&call_starts),
            tag_kinds,
            call_starts_begin_content,
            call_starts,
            tool_choice: if request.tools_enabled() {
                request.tool_choice.clone()
            } else {
                ToolChoice::None
            },
            json_schema: request.json_schema.clone(),
        })
    }

    /// The turn format the parser was built from.
    pub fn format(&self) -> &TurnFormat {
        &self.format
    }

    /// The request options the grammar was built with.
    pub fn options(&self) -> &GrammarOptions {
        &self.options
    }

    /// The grammar (for dumps and debugging).
    pub fn grammar(&self) -> &Grammar {
        &self.grammar
    }

    /// What the prompt already wrote of the turn; the parser reads it before the output.
    pub fn prefill_text(&self) -> &str {
        &self.prefill_text
    }

    /// Texts that start a tool call: a server with lazy grammar-constrained decoding switches
    /// the constraint on when the model writes one.
    pub fn triggers(&self) -> &[String] {
        &self.triggers
    }

    /// Markers a server must keep as special tokens (not strip when detokenising).
    pub fn preserved_tokens(&self) -> &[String] {
        &self.format.preserved_tokens
    }

    /// Parses a complete output.
    pub fn parse(&self, output: &str) -> Parsed {
        self.parse_with(output, false)
    }

    /// Parses an output that may be cut off (open calls stay open, arguments are not closed).
    pub fn parse_partial(&self, output: &str) -> PartialMessage {
        let mut session = self.grammar.session();
        session.feed_str(&self.prefill_text);
        session.feed_str(output);
        let mut mapper = self.mapper();
        let ast = session.ast();
        mapper.update(&ast, session.text());
        let partial = session.status() == Status::NeedMore;
        let message = mapper.finish(partial);
        match self.commit(
            session.text(),
            &content_spans(&self.grammar, &ast),
            &message,
            true,
            &mut CommitCursor::new(self),
        ) {
            Some(committed) => committed.message,
            None => message,
        }
    }

    fn parse_with(&self, output: &str, partial: bool) -> Parsed {
        if let Some(scan) = self
            .plain_scan
            .as_ref()
            .filter(|_| partial || !self.calls_open_output)
        {
            if !scan.has_marker(output.as_bytes()) {
                // Nothing but content: the grammar would give one content node.
                let mut message = ChatMessage::assistant();
                message.content = output.trim().to_owned();
                let problem = self.request_problem(&message, output);
                return Parsed { message, problem };
            }
        }
        let owned;
        let text: &str = if self.prefill_text.is_empty() {
            output
        } else {
            owned = format!("{}{output}", self.prefill_text);
            &owned
        };
        let parse = if partial {
            self.grammar.parse_partial(text)
        } else {
            self.grammar.parse(text)
        };
        if let (Status::Failure, Some(error)) = (parse.status, parse.error.as_ref()) {
            // A call a stream announced before the output ended inside it stays a call (the
            // commit rule; a call that opens the output with no trigger, as a message of its
            // own, fails the whole parse).
            if let Some(committed) = (!partial).then(|| self.ended_in_open_call(text)).flatten() {
                return Parsed {
                    message: into_message(committed.message),
                    problem: Some(committed.problem),
                };
            }
            let mut message = ChatMessage::assistant();
            message.content = format!("{}{output}", self.prefill.content);
            message.reasoning_content = self.prefill.reasoning_content.clone();
            return Parsed {
                message,
                problem: Some(self.problem(error, output)),
            };
        }
        let mut mapper = self.mapper();
        mapper.update(&parse.ast, text);
        let last_content = mapper.content_spans().last().cloned();
        let mapped = mapper.finish(partial);
        // One scan for call starts left in the content: without any, neither the commit rule
        // nor a call left in the content applies (the triggers are call starts). When content
        // nodes stop at every call start, one can only begin a content node: checking the
        // node starts rules most outputs out without scanning the content again.
        let has_call_start = (!self.call_starts_begin_content
            || self.content_node_starts_a_call(&parse.ast, text))
            && self.has_trigger(mapped.content.as_bytes());
        if has_call_start
            || (!partial && self.may_end_in_call(text, last_content, mapped.tool_calls.len()))
        {
            let content = content_spans(&self.grammar, &parse.ast);
            let mut cursor = CommitCursor::new(self);
            if let Some(committed) = self.commit(text, &content, &mapped, partial, &mut cursor) {
                return Parsed {
                    message: into_message(committed.message),
                    problem: Some(committed.problem),
                };
            }
        }
        let message = into_message(mapped);
        let problem = if has_call_start {
            self.problem_of(&message, output, Some((&parse.ast, text)))
        } else {
            self.request_problem(&message, output)
        };
        Parsed { message, problem }
    }

    /// The first problem of a parsed turn: a call left in the content, then what the request
    /// asked that the turn does not do (see [`request_problem`](Self::request_problem)).
    /// `parse`: the AST and session text (prefill included) the message was mapped from, to
    /// locate a call left in the content.
    pub(crate) fn problem_of(
        &self,
        message: &ChatMessage,
        output: &str,
        parse: Option<(&Ast<'_>, &str)>,
    ) -> Option<ParseProblem> {
        self.unparsed_call(message, output, parse)
            .or_else(|| self.request_problem(message, output))
    }

    /// What the request asked that the parsed turn does not do. The message is kept as parsed
    /// (the parser never drops what the model wrote); the problem says what is missing:
    /// - `tool_choice: required`: no call; a named function: no call, or a call to another
    ///   function;
    /// - a `json_schema` response format: content that is not JSON, or JSON the schema
    ///   rejects (the [`schema`](crate::json::schema) subset); a turn with calls and no content
    ///   is not checked.
    ///
    /// `parallel_tool_calls: false` is enforced by the grammar (one call per turn; a second
    /// call stays content and is reported as a call left in the content).
    pub(crate) fn request_problem(
        &self,
        message: &ChatMessage,
        output: &str,
    ) -> Option<ParseProblem> {
        let at_end =
            |expected: String| Some(located(&self.template, output, output.len(), expected));
        match &self.tool_choice {
            ToolChoice::Required if message.tool_calls.is_empty() => {
                return at_end("a tool call (tool_choice is required)".to_owned());
            }
            ToolChoice::Function(name) => {
                if message.tool_calls.is_empty() {
                    return at_end(format!("a call to `{name}` (tool_choice names it)"));
                }
                if let Some(other) = message.tool_calls.iter().find(|c| &c.name != name) {
                    let offset = output.find(other.name.as_str()).unwrap_or(0);
                    return Some(located(
                        &self.template,
                        output,
                        offset,
                        format!(
                            "a call to `{name}` (tool_choice names it), not `{}`",
                            other.name
                        ),
                    ));
                }
            }
            _ => {}
        }
        let schema = self.json_schema.as_ref()?;
        let content = message.content.trim();
        if content.is_empty() && !message.tool_calls.is_empty() {
            return None;
        }
        let offset = output.find(content).unwrap_or(0);
        let why = match serde_json::from_str::<serde_json::Value>(content) {
            Err(e) => format!("JSON content (response format): {e}"),
            Ok(value) => crate::json::schema::validate(&value, schema)
                .err()
                .map(|why| format!("content matching the response format's JSON schema ({why})"))?,
        };
        Some(located(&self.template, output, offset, why))
    }

    pub(crate) fn mapper(&self) -> Mapper<'_> {
        Mapper::new(
            &self.tag_kinds,
            &self.tools,
            &self.values,
            self.python,
            self.literal_quotes.clone(),
            self.expects_id,
            self.format.tools.as_ref().is_some_and(|t| t.name_in_id),
            self.prefill.clone(),
            [
                self.format.reasoning.block_join.clone(),
                self.format.content.block_join.clone(),
            ],
        )
        .content_from(self.prompt_call_opener_len())
    }

    /// The length of the prefill when it is a call opener the prompt left open (a template
    /// for forced tool use ends its prompt with `<tool_call>`): when the output writes no call
    /// there, that opener is the prompt's text, never content. Otherwise 0.
    fn prompt_call_opener_len(&self) -> usize {
        let prefill = self.prefill_text.trim();
        let opens_call = !prefill.is_empty()
            && self
                .call_starts
                .iter()
                .any(|s| !s.trim().is_empty() && prefill.ends_with(s.trim()));
        if opens_call {
            self.prefill_text.len()
        } else {
            0
        }
    }

    /// A parse failure, located in the output (not counting the prefill).
    pub(crate) fn problem(&self, error: &ParseError, output: &str) -> ParseProblem {
        let offset = error.offset().saturating_sub(self.prefill_text.len());
        located(
            &self.template,
            output,
            offset,
            error.expected().join(" or "),
        )
    }

    /// Whether a content node of `ast` (over `text`) begins with a call start.
    fn content_node_starts_a_call(&self, ast: &Ast<'_>, text: &str) -> bool {
        content_nodes(&self.grammar, ast).any(|span| {
            let at = text.get(span.start..).unwrap_or_default();
            self.call_starts
                .iter()
                .any(|start| at.starts_with(start.as_str()))
        })
    }

    /// A trigger left in the content: a call started there but did not parse. Located at the
    /// first content node of `parse` that holds it (not at an earlier trigger that did start
    /// a call), else at its first occurrence in the output.
    fn unparsed_call(
        &self,
        message: &ChatMessage,
        output: &str,
        parse: Option<(&Ast<'_>, &str)>,
    ) -> Option<ParseProblem> {
        for trigger in &self.triggers {
            if find(&message.content, trigger).is_some() {
                let in_content = parse.and_then(|(ast, text)| {
                    content_nodes(&self.grammar, ast)
                        .filter_map(|span| {
                            let hay = text.get(span.clone())?;
                            find(hay, trigger).map(|i| span.start + i)
                        })
                        .min()
                });
                let offset = in_content
                    .map(|at| at.saturating_sub(self.prefill_text.len()))
                    .or_else(|| find(output, trigger))
                    .unwrap_or(0);
                return Some(located(
                    &self.template,
                    output,
                    offset,
                    format!("a tool call after `{trigger}` (kept as content)"),
                ));
            }
        }
        None
    }

    /// Starts a stream over the output.
    pub fn stream(&self) -> ChatStream<'_> {
        ChatStream::new(self)
    }
}

/// The first occurrence of `needle` in `hay`: `memchr::memmem` (SIMD), several times faster
/// than `str::contains`/`str::find` on long texts.
pub(crate) fn find(hay: &str, needle: &str) -> Option<usize> {
    memchr::memmem::find(hay.as_bytes(), needle.as_bytes())
}

pub(crate) fn located(
    template: &str,
    output: &str,
    offset: usize,
    expected: String,
) -> ParseProblem {
    let mut offset = offset.min(output.len());
    while !output.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &output[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    ParseProblem {
        template: template.to_owned(),
        offset,
        line,
        column,
        expected,
    }
}

/// A finished snapshot as a message, moving the text instead of copying it.
fn into_message(partial: PartialMessage) -> ChatMessage {
    let mut message = ChatMessage::assistant();
    message.content = partial.content;
    message.reasoning_content = partial.reasoning_content;
    message.tool_calls = partial
        .tool_calls
        .into_iter()
        .map(|c| ToolCall {
            id: c.id,
            name: c.name,
            arguments: c.arguments,
        })
        .collect();
    message
}

/// Finds whether any marker occurs in a text: one `memchr` pass over the markers' first bytes
/// (at most three distinct ones), checking the markers only where one of them occurs.
#[derive(Debug, Clone)]
pub(crate) struct PlainScan {
    firsts: Vec<u8>,
    markers: Vec<String>,
}

impl PlainScan {
    fn new(markers: &[String]) -> Option<PlainScan> {
        let mut firsts: Vec<u8> = markers.iter().filter_map(|m| m.bytes().next()).collect();
        firsts.sort_unstable();
        firsts.dedup();
        (firsts.len() <= 3 && markers.iter().all(|m| !m.is_empty())).then(|| PlainScan {
            firsts,
            markers: markers.to_vec(),
        })
    }

    pub(crate) fn has_marker(&self, bytes: &[u8]) -> bool {
        let hit = |at: usize| {
            self.markers
                .iter()
                .any(|m| bytes[at..].starts_with(m.as_bytes()))
        };
        match self.firsts.as_slice() {
            [a] => memchr::memchr_iter(*a, bytes).any(hit),
            [a, b] => memchr::memchr2_iter(*a, *b, bytes).any(hit),
            [a, b, c] => memchr::memchr3_iter(*a, *b, *c, bytes).any(hit),
            [] => false,
            _ => true,
        }
    }
}

/// The parameter names the request's tools declare, each once, in declaration order.
fn parameter_names(request: &ChatRequest) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in request.tools.iter().flat_map(Tool::parameter_names) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    names
}
