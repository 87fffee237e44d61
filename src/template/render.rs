//! [`ChatTemplate`]: compile once, render many; [`RenderInput`]: what a render sees.

use std::borrow::Cow;
use std::sync::OnceLock;

use std::collections::BTreeMap;

use minijinja::machinery::{self, Instructions};
use minijinja::{AutoEscape, Environment, Value};
use serde::{Deserialize, Serialize};
use serde_json::Map;

use super::environment::{self, Limits};
use super::error::{TemplateError, TemplateErrorKind};
use super::globals::CLOCK_VAR;
use super::guard;
use super::preprocess::{rewrite_generation_tags, rewrite_namespace_sets};
use super::value::{from_json, ValueMap};

/// Where `strftime_now` takes "now" from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Clock {
    /// The system clock (UTC).
    #[default]
    System,
    /// A fixed instant, in seconds since the Unix epoch (UTC); makes renders deterministic.
    Fixed(i64),
}

/// Whether the render continues the final message instead of closing it, as transformers'
/// `continue_final_message` does: the continued field gets a marker appended, the template is
/// rendered, and the prompt is cut just before the marker, so it ends inside the final message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Continuation {
    /// Render the conversation normally.
    #[default]
    None,
    /// Continue the final message's `content`.
    Content,
    /// Continue the final message's reasoning (`reasoning_content` and its aliases).
    Reasoning,
}

/// The inputs of one render, as transformers' `apply_chat_template` passes them.
///
/// The template sees `messages`, `tools` (`none` when absent, as in transformers),
/// `documents` (`none`), `add_generation_prompt`, and every entry of `extra` as a top-level
/// variable (`enable_thinking`, `bos_token`, `eos_token`, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RenderInput {
    /// OpenAI-style messages (`role`, `content`, `tool_calls`, `reasoning_content`, ...).
    pub messages: Vec<serde_json::Value>,
    /// OpenAI-style tool definitions; `None` renders as `tools = none`.
    pub tools: Option<Vec<serde_json::Value>>,
    /// Whether the template should open an assistant turn at the end.
    pub add_generation_prompt: bool,
    /// Further top-level variables; they override the standard ones of the same name.
    pub extra: Map<String, serde_json::Value>,
    /// The clock behind `strftime_now`.
    pub clock: Clock,
    /// Whether to continue the final message (transformers' `continue_final_message`).
    pub continuation: Continuation,
}

impl RenderInput {
    /// An input with these messages, no tools, no generation prompt and the system clock.
    pub fn new(messages: Vec<serde_json::Value>) -> RenderInput {
        RenderInput {
            messages,
            ..RenderInput::default()
        }
    }

    /// Sets the tool definitions.
    pub fn with_tools(mut self, tools: Option<Vec<serde_json::Value>>) -> RenderInput {
        self.tools = tools;
        self
    }

    /// Sets `add_generation_prompt`.
    pub fn with_generation_prompt(mut self, yes: bool) -> RenderInput {
        self.add_generation_prompt = yes;
        self
    }

    /// Sets one extra top-level variable (for example `enable_thinking`).
    pub fn with_var(mut self, name: &str, value: impl Into<serde_json::Value>) -> RenderInput {
        self.extra.insert(name.to_string(), value.into());
        self
    }

    /// Sets `bos_token` and `eos_token` to the stand-ins every probe render uses (`<s>`,
    /// `</s>`): the analysis finds the turn end a template writes with `eos_token` as these,
    /// so a render compared with the analysis must write the same ones.
    pub fn with_stand_in_special_tokens(self) -> RenderInput {
        self.with_var("bos_token", "<s>")
            .with_var("eos_token", "</s>")
    }

    /// Sets whether the final message is continued.
    pub fn with_continuation(mut self, continuation: Continuation) -> RenderInput {
        self.continuation = continuation;
        self
    }

    /// This input with every string content given as one text part
    /// (`[{"type": "text", "text": ...}]`).
    fn with_text_parts(&self) -> RenderInput {
        let mut parts = self.clone();
        for m in &mut parts.messages {
            if let Some(text) = m.get("content").and_then(serde_json::Value::as_str) {
                m["content"] = serde_json::json!([{"type": "text", "text": text}]);
            }
        }
        parts
    }

    /// This input with every tool definition in the OpenAI shape
    /// (`{"type": "function", "function": {...}}`) given as `shape` says: flat, the function
    /// object itself (`{"name", "description", "parameters"}`), and with Cohere's v1
    /// `parameter_definitions` beside `parameters` where the shape says so.
    fn with_tool_shape(&self, shape: ToolShape) -> RenderInput {
        let mut flat = self.clone();
        if shape == ToolShape::OpenAi {
            return flat;
        }
        for tool in flat.tools.iter_mut().flatten() {
            if let Some(function) = tool.get("function").filter(|f| f.is_object()) {
                *tool = function.clone();
            }
            if shape == ToolShape::ParameterDefinitions {
                let definitions = parameter_definitions(tool.get("parameters"));
                if let Some(object) = tool.as_object_mut() {
                    object.insert("parameter_definitions".into(), definitions);
                }
            }
        }
        flat
    }

    /// Inputs that mean the same as this one to a template that raises on it, in the order to
    /// try them: assistant messages without reasoning given empty reasoning (templates that
    /// demand the field), and `enable_thinking` false turned true (templates that cannot
    /// disable thinking: what they render with it on is all they serve).
    pub fn equivalents(&self) -> Vec<RenderInput> {
        let mut out = Vec::new();
        let mut with_reasoning = self.clone();
        let mut added = false;
        for m in with_reasoning.messages.iter_mut() {
            let lacks = m["role"] == "assistant"
                && REASONING_FIELDS
                    .iter()
                    .all(|k| m.get(*k).is_none_or(serde_json::Value::is_null));
            if let (true, Some(map)) = (lacks, m.as_object_mut()) {
                map.insert("reasoning_content".into(), "".into());
                added = true;
            }
        }
        if added {
            out.push(with_reasoning);
        }
        if self.extra.get("enable_thinking") == Some(&serde_json::Value::Bool(false)) {
            let on: Vec<RenderInput> = out
                .iter()
                .chain(std::iter::once(self))
                .map(|i| i.clone().with_var("enable_thinking", true))
                .collect();
            out.extend(on);
        }
        out
    }

    /// Sets the clock behind `strftime_now`.
    pub fn with_clock(mut self, clock: Clock) -> RenderInput {
        self.clock = clock;
        self
    }
}

/// The message fields transformers treats as reasoning, in its lookup order.
const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

/// The marker transformers appends to the continued field (see [`Continuation`]).
const CONTINUE_TAG: &str = "CONTINUE_FINAL_MESSAGE_TAG ";

/// transformers' reasoning aliasing (`_alias_reasoning_fields`): a message with reasoning under
/// any of the names gets it as `thinking` (first key, unless the message has its own `thinking`)
/// and as `reasoning_content` (last key unless present).
fn alias_reasoning(message: &serde_json::Value) -> Cow<'_, serde_json::Value> {
    let serde_json::Value::Object(map) = message else {
        return Cow::Borrowed(message);
    };
    let Some(reasoning) = REASONING_FIELDS
        .iter()
        .find_map(|k| map.get(*k).filter(|v| !v.is_null()))
    else {
        return Cow::Borrowed(message);
    };
    let mut out = Map::with_capacity(map.len() + 2);
    out.insert("thinking".to_string(), reasoning.clone());
    for (k, v) in map {
        out.insert(k.clone(), v.clone());
    }
    out.insert("reasoning_content".to_string(), reasoning.clone());
    Cow::Owned(serde_json::Value::Object(out))
}

/// Appends the continuation tag to `field` of `message` (to the last text part when the field
/// is a list of parts); returns the field's original text.
fn tag_field(message: &mut serde_json::Value, field: &str) -> Option<String> {
    match message.get_mut(field)? {
        serde_json::Value::String(s) => {
            let original = s.clone();
            s.push_str(CONTINUE_TAG);
            Some(original)
        }
        serde_json::Value::Array(parts) => parts.iter_mut().rev().find_map(|part| {
            let text = part.get_mut("text")?.as_str()?.to_string();
            part["text"] = serde_json::Value::String(format!("{text}{CONTINUE_TAG}"));
            Some(text)
        }),
        _ => None,
    }
}

/// A compiled program with the memory guard's checks (see [`super::guard`]).
struct Instrumented<'a> {
    root: Instructions<'a>,
    blocks: BTreeMap<&'a str, Instructions<'a>>,
}

impl std::fmt::Debug for Instrumented<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instrumented").finish_non_exhaustive()
    }
}

/// Instruments the program of template `name` in `env` (see [`super::guard::instrument`]).
fn instrument_program<'env>(
    env: &'env Environment<'static>,
    name: &str,
) -> Result<Instrumented<'env>, minijinja::Error> {
    let template = env.get_template(name)?;
    let compiled = machinery::get_compiled_template(&template);
    Ok(Instrumented {
        root: guard::instrument(&compiled.instructions)?,
        blocks: compiled
            .blocks
            .iter()
            .map(|(name, block)| Ok((*name, guard::instrument(block)?)))
            .collect::<Result<_, minijinja::Error>>()?,
    })
}

/// A compiled chat template. Compile once with [`ChatTemplate::new`], then call
/// [`ChatTemplate::render`] as often as needed; renders share no state.
#[derive(Debug)]
pub struct ChatTemplate {
    name: String,
    source: String,
    limits: Limits,
    /// The instrumented program, built once. Its instructions borrow strings (the template's
    /// name and source, names inside instructions) that `env` owns on the heap; the `'static`
    /// is a lie that this struct keeps true: `env` is never modified after construction, it is
    /// declared after this field (so dropped after it), and the program is only lent out for
    /// the lifetime of a `&self` borrow.
    program: Instrumented<'static>,
    env: Environment<'static>,
    /// See [`ChatTemplate::free_variables`].
    free_variables: OnceLock<Vec<String>>,
    /// See [`ChatTemplate::wants_text_parts`].
    text_parts: OnceLock<bool>,
    /// See [`ChatTemplate::tool_shape`].
    tool_shape: OnceLock<ToolShape>,
    /// See [`ChatTemplate::with_variables`].
    variables: Map<String, serde_json::Value>,
}

impl ChatTemplate {
    /// Compiles `source` under `name` (used in error messages) with the default [`Limits`].
    pub fn new(
        name: impl Into<String>,
        source: impl Into<String>,
    ) -> Result<ChatTemplate, TemplateError> {
        ChatTemplate::with_limits(name, source, Limits::default())
    }

    /// Compiles `source` under `name` with explicit resource limits.
    pub fn with_limits(
        name: impl Into<String>,
        source: impl Into<String>,
        limits: Limits,
    ) -> Result<ChatTemplate, TemplateError> {
        let name = name.into();
        let source = source.into();
        let mut env =
            environment::build(limits).map_err(|e| TemplateError::from_minijinja(&name, &e))?;
        let rewritten = rewrite_generation_tags(&source);
        let rewritten = rewrite_namespace_sets(&rewritten).into_owned();
        let syntax = environment::syntax().map_err(|e| TemplateError::from_minijinja(&name, &e))?;
        guard::check_constant_folding(&rewritten, syntax, limits.max_value_bytes)
            .map_err(|e| TemplateError::from_minijinja(&name, &e))?;
        env.add_template_owned(name.clone(), rewritten)
            .map_err(|e| TemplateError::from_minijinja(&name, &e))?;
        // Instrumenting fails on reserved names: reported here, once.
        let program = instrument_program(&env, &name)
            .map_err(|e| TemplateError::from_minijinja(&name, &e))?;
        // SAFETY: `program` borrows only from heap data that `env` owns (the compiled template
        // stored by `add_template_owned`: its name, source and the strings it points into),
        // plus `'static` constants. Moving `env` into the struct below moves no heap data;
        // `env` is never mutated afterwards (no `ChatTemplate` method takes `&mut self`), and
        // the field order drops `program` before `env`. The program is only used through
        // `&self` (see `render`), never handed out with the `'static` lifetime.
        let program: Instrumented<'static> =
            unsafe { std::mem::transmute::<Instrumented<'_>, Instrumented<'static>>(program) };
        Ok(ChatTemplate {
            name,
            source,
            limits,
            program,
            env,
            free_variables: OnceLock::new(),
            text_parts: OnceLock::new(),
            tool_shape: OnceLock::new(),
            variables: Map::new(),
        })
    }

    /// The same template with `variables` set on every render, as a server passes a request's
    /// `chat_template_kwargs` (a template option such as a tool-call format switch). A render's
    /// own variables ([`RenderInput::extra`], `enable_thinking`, ...) take precedence. The
    /// analysis of the result is the analysis under these variables ([`analyze_cached`] keys
    /// on them).
    ///
    /// [`analyze_cached`]: crate::analyze::analyze_cached
    pub fn with_variables(mut self, variables: Map<String, serde_json::Value>) -> ChatTemplate {
        self.variables = variables;
        self.text_parts = OnceLock::new();
        self.tool_shape = OnceLock::new();
        self
    }

    /// The variables set on every render (see [`with_variables`](Self::with_variables)).
    pub fn variables(&self) -> &Map<String, serde_json::Value> {
        &self.variables
    }

    /// This template compiled again with `variables` (see
    /// [`with_variables`](Self::with_variables)).
    pub fn recompiled_with(
        &self,
        variables: Map<String, serde_json::Value>,
    ) -> Result<ChatTemplate, TemplateError> {
        Ok(
            ChatTemplate::with_limits(self.name.clone(), self.source.clone(), self.limits)?
                .with_variables(variables),
        )
    }

    /// The instrumented program, with the lifetime of `self`.
    fn program(&self) -> &Instrumented<'_> {
        &self.program
    }

    /// The name given at construction.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The template source as given (before the `{% generation %}` rewrite).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Renders the template with `input`; when the template raises on it, with the first of
    /// [`RenderInput::equivalents`] it renders (the error is the one `input` raised).
    pub fn render_or_equivalent(&self, input: &RenderInput) -> Result<String, TemplateError> {
        self.render(input).or_else(|e| {
            input
                .equivalents()
                .iter()
                .find_map(|other| self.render(other).ok())
                .ok_or(e)
        })
    }

    /// Renders the template with `input`. A template that reads message content only as a
    /// list of parts ([`wants_text_parts`](Self::wants_text_parts)) gets string content as one
    /// text part, as inference servers pass it.
    ///
    /// A template that reads tool definitions only in another shape than OpenAI's
    /// ([`tool_shape`](Self::tool_shape)) gets them in that shape.
    pub fn render(&self, input: &RenderInput) -> Result<String, TemplateError> {
        let flat;
        let input =
            if input.tools.as_ref().is_some_and(|t| !t.is_empty()) && self.wants_flat_tools() {
                flat = input.with_tool_shape(self.tool_shape());
                &flat
            } else {
                input
            };
        if self.wants_text_parts() {
            return self.render_as_given(&input.with_text_parts());
        }
        self.render_as_given(input)
    }

    /// Whether the template reads tool definitions only flat (`tool.name`,
    /// `tool.description`, `tool.parameters`, or Cohere's v1 `tool.parameter_definitions`),
    /// as written for callers that pass the function schemas themselves (see
    /// [`tool_shape`](Self::tool_shape)).
    pub fn wants_flat_tools(&self) -> bool {
        self.tool_shape() != ToolShape::OpenAi
    }

    /// The shape the template reads tool definitions in: the OpenAI shape unless, with a tool
    /// so, it raises or shows no tool name while the same tool flat (or flat with Cohere's v1
    /// `parameter_definitions`, for templates written for that API) renders and shows it
    /// (checked once, with one user message).
    pub fn tool_shape(&self) -> ToolShape {
        *self.tool_shape.get_or_init(|| {
            const NAME: &str = "flat_tools_probe_q7";
            let tool = serde_json::json!({
                "type": "function",
                "function": {
                    "name": NAME,
                    "description": "Probe tool.",
                    "parameters": {
                        "type": "object",
                        "properties": {"x": {"type": "string", "description": "A value."}},
                        "required": ["x"]
                    }
                }
            });
            let input =
                RenderInput::new(vec![serde_json::json!({"role": "user", "content": "Hi"})])
                    .with_tools(Some(vec![tool]));
            let shows = |shape: ToolShape| {
                let input = input.with_tool_shape(shape);
                let input = if self.wants_text_parts() {
                    input.with_text_parts()
                } else {
                    input
                };
                self.render_as_given(&input)
                    .is_ok_and(|text| text.contains(NAME))
            };
            [
                ToolShape::OpenAi,
                ToolShape::Flat,
                ToolShape::ParameterDefinitions,
            ]
            .into_iter()
            .find(|&shape| shows(shape))
            .unwrap_or(ToolShape::OpenAi)
        })
    }

    /// Whether the template reads message content only as a list of parts
    /// (`[{"type": "text", "text": ...}]`): string content raises or renders nothing, while the
    /// same text as a part renders (checked once, with a user and an assistant message).
    pub fn wants_text_parts(&self) -> bool {
        *self.text_parts.get_or_init(|| {
            const PROBES: [&str; 2] = ["PartsProbeU1k", "PartsProbeA2m"];
            let as_string = RenderInput::new(vec![
                serde_json::json!({"role": "user", "content": PROBES[0]}),
                serde_json::json!({"role": "assistant", "content": PROBES[1]}),
            ]);
            let shows = |r: Result<String, TemplateError>| {
                r.is_ok_and(|text| PROBES.iter().all(|p| text.contains(p)))
            };
            if shows(self.render_as_given(&as_string)) {
                return false;
            }
            shows(self.render_as_given(&as_string.with_text_parts()))
        })
    }

    /// Renders the template with `input` as given.
    fn render_as_given(&self, input: &RenderInput) -> Result<String, TemplateError> {
        for (i, m) in input.messages.iter().enumerate() {
            if !m.is_object() {
                return Err(TemplateError::new(
                    TemplateErrorKind::Input,
                    &self.name,
                    None,
                    format!("message {i} is not a JSON object"),
                ));
            }
        }
        let mut messages: Vec<Cow<'_, serde_json::Value>> =
            input.messages.iter().map(alias_reasoning).collect();
        let continued = match input.continuation {
            Continuation::None => None,
            Continuation::Content | Continuation::Reasoning => {
                Some(self.tag_final_message(&mut messages, input.continuation)?)
            }
        };
        let mut ctx = ValueMap::new();
        // The template's variables first: the render's own replace them.
        for (k, v) in &self.variables {
            ctx.insert(Value::from(k.as_str()), from_json(v));
        }
        let messages: Vec<Value> = messages.iter().map(|m| from_json(m)).collect();
        ctx.insert(Value::from("messages"), Value::from(messages));
        let tools = match &input.tools {
            Some(tools) => Value::from(tools.iter().map(from_json).collect::<Vec<_>>()),
            None => Value::from(()),
        };
        ctx.insert(Value::from("tools"), tools);
        ctx.insert(Value::from("documents"), Value::from(()));
        ctx.insert(
            Value::from("add_generation_prompt"),
            Value::from(input.add_generation_prompt),
        );
        for (k, v) in &input.extra {
            ctx.insert(Value::from(k.as_str()), from_json(v));
        }
        if let Clock::Fixed(t) = input.clock {
            ctx.insert(Value::from(CLOCK_VAR), Value::from(t));
        }
        let first = self.render_context(ctx.clone())?;
        // A template that fails without tools (it takes the length of `tools`, which is
        // none) renders as servers that always pass a tool list see it: with an empty one.
        let first = match first {
            Err(e) if input.tools.is_none() => {
                let mut with_empty = ctx.clone();
                with_empty.insert(Value::from("tools"), Value::from(Vec::<Value>::new()));
                match self.render_context(with_empty)? {
                    Ok(rendered) => Ok(rendered),
                    Err(_) => Err(e),
                }
            }
            other => other,
        };
        let rendered = match first {
            Ok(rendered) => rendered,
            Err(e) => {
                // Variables the template reads that no caller passes (a `functions` or
                // `datetime` an inference server adds for this one template) render as empty
                // strings, as servers pass them when they have nothing to say; only when the
                // render failed on an undefined value, so templates that test `is defined`
                // and render fine never see them.
                let unbound: Vec<&String> = self
                    .free_variables()
                    .iter()
                    .filter(|v| !ctx.contains_key(&Value::from(v.as_str())))
                    .collect();
                if unbound.is_empty() || !e.to_string().contains("undefined") {
                    return Err(TemplateError::from_minijinja(&self.name, &e));
                }
                let mut ctx = ctx;
                for v in unbound {
                    ctx.insert(Value::from(v.as_str()), Value::from(""));
                }
                self.render_context(ctx)?
                    .map_err(|e| TemplateError::from_minijinja(&self.name, &e))?
            }
        };
        match continued {
            None => Ok(rendered),
            Some(original) => self.cut_at_continuation(rendered, &original),
        }
    }

    /// Renders `template` with `ctx`. minijinja 3.0.5 can panic on some inputs (a
    /// negative-step slice of an empty string or tuple, `""[::-1]`, indexes an empty vector);
    /// such a panic becomes a render error (the outer `Err`).
    fn render_context(
        &self,
        ctx: ValueMap,
    ) -> Result<Result<String, minijinja::Error>, TemplateError> {
        // minijinja 3.0.5 can panic on some inputs (a negative-step slice of an empty string or
        // tuple, `""[::-1]`, indexes an empty vector); such a panic becomes a render error.
        let ctx = Value::from(ctx);
        let _scope = guard::enter(self.limits);
        let program = self.program();
        let run = || -> Result<String, minijinja::Error> {
            let mut rendered = String::new();
            machinery::eval(
                &self.env,
                &program.root,
                ctx,
                &program.blocks,
                &mut machinery::make_string_output(&mut rendered),
                AutoEscape::None,
            )?;
            Ok(rendered)
        };
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).map_err(|panic| {
            let detail = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            TemplateError::new(
                TemplateErrorKind::Render,
                &self.name,
                None,
                format!("the template engine panicked: {detail}"),
            )
        })
    }

    /// The top-level variables the template reads without setting them, less the globals
    /// (functions such as `namespace` or `raise_exception`); computed once.
    fn free_variables(&self) -> &[String] {
        self.free_variables.get_or_init(|| {
            let Ok(template) = self.env.get_template(&self.name) else {
                return Vec::new();
            };
            let globals: Vec<&str> = self.env.globals().map(|(name, _)| name).collect();
            let mut free: Vec<String> = template
                .undeclared_variables(false)
                .into_iter()
                .filter(|v| !globals.contains(&v.as_str()))
                .collect();
            free.sort();
            free
        })
    }

    /// Tags the continued field(s) of the final message; returns the field's original text.
    fn tag_final_message(
        &self,
        messages: &mut [Cow<'_, serde_json::Value>],
        continuation: Continuation,
    ) -> Result<String, TemplateError> {
        let input_error = |msg: &str| {
            TemplateError::new(TemplateErrorKind::Input, &self.name, None, msg.to_string())
        };
        let last = messages
            .last_mut()
            .ok_or_else(|| input_error("continuation requested but there are no messages"))?
            .to_mut();
        let fields: Vec<&str> = match continuation {
            Continuation::Reasoning => {
                let value = REASONING_FIELDS
                    .iter()
                    .find_map(|k| last.get(*k).filter(|v| !v.is_null()));
                let value = value.cloned().unwrap_or(serde_json::Value::Null);
                REASONING_FIELDS
                    .into_iter()
                    .filter(|k| !value.is_null() && last.get(*k) == Some(&value))
                    .collect()
            }
            _ => vec!["content"],
        };
        if fields.is_empty() || last.get(fields[0]).is_none_or(|v| v.is_null()) {
            return Err(input_error("the final message has no text to continue"));
        }
        if !fields.iter().any(|f| self.source.contains(f)) {
            return Err(input_error("the template does not use the continued field"));
        }
        // Tag every alias of the continued text (the template may read any of them); keep the
        // first field's original text.
        let mut original = None;
        for field in fields {
            let text = tag_field(last, field);
            original = original.or(text);
        }
        original.ok_or_else(|| input_error("the final message has no text to continue"))
    }

    /// Cuts the render just before the continuation tag, like transformers.
    fn cut_at_continuation(
        &self,
        rendered: String,
        original: &str,
    ) -> Result<String, TemplateError> {
        let tag = CONTINUE_TAG.trim_end();
        let Some(at) = rendered
            .rfind(tag)
            .filter(|_| rendered.contains(original.trim()))
        else {
            return Err(TemplateError::new(
                TemplateErrorKind::Input,
                &self.name,
                None,
                "the continued final message does not appear in the render",
            ));
        };
        let mut out = rendered;
        let keeps_spacing = out[at..].starts_with(CONTINUE_TAG);
        out.truncate(at);
        if !keeps_spacing {
            out.truncate(out.trim_end().len());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod equivalent_tests {
    use super::*;
    use serde_json::json;

    const DEMANDS_REASONING: &str = "{% for m in messages %}{% if m.role == 'assistant' %}\
        {% if m.reasoning_content is not defined %}{{ raise_exception('no reasoning') }}{% endif %}\
        [{{ m.reasoning_content }}]{{ m.content }}{% else %}{{ m.content }}{% endif %}{% endfor %}";

    const ALWAYS_THINKS: &str =
        "{% if enable_thinking is false %}{{ raise_exception('always on') }}\
        {% endif %}{{ messages[0].content }}{% if add_generation_prompt %}<think>{% endif %}";

    #[test]
    fn a_turn_without_reasoning_renders_with_empty_reasoning() {
        let t = ChatTemplate::new("demands", DEMANDS_REASONING).unwrap();
        let input = RenderInput::new(vec![
            json!({"role": "user", "content": "Q"}),
            json!({"role": "assistant", "content": "A"}),
        ]);
        assert!(t.render(&input).is_err());
        assert_eq!(t.render_or_equivalent(&input).unwrap(), "Q[]A");
        // Reasoning given is never replaced.
        let given = RenderInput::new(vec![
            json!({"role": "user", "content": "Q"}),
            json!({"role": "assistant", "content": "A", "reasoning_content": "R"}),
        ]);
        assert!(given.equivalents().is_empty());
    }

    #[test]
    fn thinking_off_renders_as_on_where_it_cannot_be_disabled() {
        let t = ChatTemplate::new("thinks", ALWAYS_THINKS).unwrap();
        let off = RenderInput::new(vec![json!({"role": "user", "content": "Q"})])
            .with_generation_prompt(true)
            .with_var("enable_thinking", false);
        assert!(t.render(&off).is_err());
        assert_eq!(t.render_or_equivalent(&off).unwrap(), "Q<think>");
        // A template that raises for another reason still raises, with its own error.
        let broken = ChatTemplate::new("broken", "{{ raise_exception('nope') }}").unwrap();
        let err = broken.render_or_equivalent(&off).unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }

    #[test]
    fn variables_render_under_the_inputs_own() {
        let source = "{{ style | default('a') }}-{{ enable_thinking }}-{{ messages | length }}";
        let plain = ChatTemplate::new("vars", source).unwrap();
        let mut vars = serde_json::Map::new();
        vars.insert("style".into(), json!("b"));
        vars.insert("enable_thinking".into(), json!(false));
        vars.insert("messages".into(), json!([]));
        let with = plain.recompiled_with(vars.clone()).unwrap();
        assert_eq!(with.variables(), &vars);
        let input = RenderInput::new(vec![json!({"role": "user", "content": "Q"})])
            .with_var("enable_thinking", true);
        assert_eq!(plain.render(&input).unwrap(), "a-True-1");
        // The template's variables fill in; the render's own (enable_thinking, messages) win.
        assert_eq!(with.render(&input).unwrap(), "b-True-1");
        let without = RenderInput::new(vec![json!({"role": "user", "content": "Q"})]);
        assert_eq!(with.render(&without).unwrap(), "b-False-1");
    }
}

/// The shape a template reads tool definitions in (see [`ChatTemplate::tool_shape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolShape {
    /// `{"type": "function", "function": {"name", "description", "parameters"}}`.
    OpenAi,
    /// The function object itself: `{"name", "description", "parameters"}`.
    Flat,
    /// Flat, with Cohere's v1 `parameter_definitions` beside `parameters`:
    /// `{"city": {"description", "type": "str", "required": true}}`.
    ParameterDefinitions,
}

/// Cohere's v1 `parameter_definitions` of a JSON schema's properties: per parameter its
/// description, its Python type name and whether it is required.
fn parameter_definitions(schema: Option<&serde_json::Value>) -> serde_json::Value {
    let empty = serde_json::Map::new();
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(serde_json::Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(serde_json::Value::as_array)
        .map(|r| r.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    let definitions: serde_json::Map<String, serde_json::Value> = properties
        .iter()
        .map(|(name, p)| {
            let definition = serde_json::json!({
                "description": p.get("description").and_then(serde_json::Value::as_str).unwrap_or(""),
                "type": python_type(p, 0),
                "required": required.contains(&name.as_str()),
            });
            (name.clone(), definition)
        })
        .collect();
    serde_json::Value::Object(definitions)
}

/// The Python type name of a JSON schema (`str`, `int`, `List[str]`), depth-bounded.
fn python_type(schema: &serde_json::Value, depth: usize) -> String {
    let ty = schema
        .get("type")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    match ty {
        "string" => "str".into(),
        "integer" => "int".into(),
        "number" => "float".into(),
        "boolean" => "bool".into(),
        "object" => "Dict".into(),
        "array" if depth < 4 => match schema.get("items") {
            Some(items) => format!("List[{}]", python_type(items, depth + 1)),
            None => "List".into(),
        },
        "array" => "List".into(),
        _ => "Any".into(),
    }
}

#[cfg(test)]
mod flat_tools_tests {
    use super::*;
    use serde_json::json;

    fn tool() -> serde_json::Value {
        json!({"type": "function", "function": {"name": "lookup", "description": "Look up.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}})
    }

    fn render(source: &str) -> (bool, String) {
        let t = ChatTemplate::new("t", source).unwrap();
        let input = RenderInput::new(vec![json!({"role": "user", "content": "Q"})])
            .with_tools(Some(vec![tool()]));
        (t.wants_flat_tools(), t.render(&input).unwrap())
    }

    #[test]
    fn a_template_that_raises_on_the_openai_shape_gets_tools_flat() {
        let (flat, text) =
            render("{% for t in tools %}{{ '// ' + t.description }} {{ t.name }}{% endfor %}");
        assert!(flat);
        assert_eq!(text, "// Look up. lookup");
    }

    #[test]
    fn a_template_that_shows_no_name_with_the_openai_shape_gets_tools_flat() {
        let (flat, text) = render("{% for t in tools %}<tool name=\"{{ t.name }}\">{% endfor %}");
        assert!(flat);
        assert_eq!(text, "<tool name=\"lookup\">");
    }

    #[test]
    fn openai_shaped_and_shape_agnostic_templates_keep_the_openai_shape() {
        let (flat, text) =
            render("{% for t in tools %}{{ t.function.name }}:{{ t.type }}{% endfor %}");
        assert!(!flat);
        assert_eq!(text, "lookup:function");
        let (flat, text) =
            render("{% for t in tools %}{% set f = t.function or t %}{{ f.name }}{% endfor %}");
        assert!(!flat);
        assert_eq!(text, "lookup");
        let (flat, _) = render("{{ tools | tojson }}");
        assert!(!flat);
    }

    #[test]
    fn a_template_written_for_parameter_definitions_gets_them() {
        let source = "{% for t in tools %}def {{ t.name }}({% for n, d in \
            t.parameter_definitions.items() %}{{ n }}: {{ d.type }}{% if not d.required %} = None\
            {% endif %}{% if not loop.last %}, {% endif %}{% endfor %}){% endfor %}";
        let t = ChatTemplate::new("t", source).unwrap();
        assert_eq!(t.tool_shape(), ToolShape::ParameterDefinitions);
        let tool = json!({"type": "function", "function": {"name": "find", "parameters": {
            "type": "object", "required": ["q"],
            "properties": {"q": {"type": "string"}, "tags": {"type": "array", "items": {"type": "integer"}}}}}});
        let input = RenderInput::new(vec![json!({"role": "user", "content": "Q"})])
            .with_tools(Some(vec![tool]));
        assert_eq!(
            t.render(&input).unwrap(),
            "def find(q: str, tags: List[int] = None)"
        );
        // Flat templates keep the plain flat shape.
        assert_eq!(
            ChatTemplate::new("f", "{% for t in tools %}{{ t.name }}{% endfor %}")
                .unwrap()
                .tool_shape(),
            ToolShape::Flat
        );
    }
}
