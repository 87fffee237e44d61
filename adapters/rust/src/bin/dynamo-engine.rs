//! The engine-protocol adapter for NVIDIA Dynamo's `dynamo-parsers` 11.0.1, used as its
//! frontend does: the reasoning parser (`ReasoningParserType`) on each chunk, told when the
//! prompt opened the reasoning block (`set_in_reasoning`), then the normal text through the
//! tool-call jail (`JailedStream`), which holds text back once a call may be starting and
//! releases whole calls; one shot, `detect_and_parse_reasoning` then
//! `detect_and_parse_tool_call_with_recovery`. Dynamo invents call ids (UUIDs) where the
//! output has none; only ids the output holds are kept.

use std::pin::Pin;

use chatparse::engine::protocol::Request;
use chatparse::message::{ChatDelta, ChatMessage, ToolCall};
use chatparse_peer_adapters::{
    call, content, lookup, message, prompt_opens_reasoning, reasoning, reasoning_inline, serve,
    tools, Adapter, Parsers, Row, THINK,
};
use dynamo_parsers::reasoning::{ReasoningParser, ReasoningParserType};
use dynamo_parsers::tool_calling::jail::{Annotated, JailedStream};
use dynamo_parsers::tool_calling::parsers::detect_and_parse_tool_call_with_recovery;
use dynamo_parsers::tool_calling::ToolDefinition;
use dynamo_protocols::types::{
    ChatChoiceStream, ChatCompletionMessageContent, ChatCompletionStreamResponseDelta,
    CreateChatCompletionStreamResponse, FinishReason, Role,
};
use futures::channel::mpsc;
use futures::{FutureExt, Stream, StreamExt};
use serde_json::Value;

const fn row(
    folder: &'static str,
    templates: &'static [&'static str],
    tool: Option<&'static str>,
    reasoning: Option<&'static str>,
    markers: (&'static str, &'static str),
) -> Row {
    Row {
        folder,
        templates,
        parsers: Parsers {
            tool,
            reasoning,
            markers,
        },
    }
}

/// Fixture folder (and template files) → dynamo tool-call parser / reasoning parser names.
/// Folders not listed have no parser for their format in this crate.
const TABLE: &[Row] = &[
    row(
        "deepseek-r1-distill",
        &["deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"],
        Some("deepseek_v3"),
        Some("deepseek_r1"),
        THINK,
    ),
    row(
        "deepseek-v3.1",
        &["deepseek-ai-DeepSeek-V3.1.jinja"],
        Some("deepseek_v3_1"),
        Some("deepseek_v3_1"),
        THINK,
    ),
    row(
        "deepseek-v3.2",
        &["deepseek-ai-DeepSeek-V3.2.jinja"],
        Some("deepseek_v3_2"),
        Some("deepseek_v3_2"),
        THINK,
    ),
    row(
        "devstral",
        &["unsloth-mistral-Devstral-Small-2507.jinja"],
        Some("mistral"),
        None,
        THINK,
    ),
    row(
        "gemma-2",
        &["google-gemma-2-2b-it.jinja"],
        None,
        None,
        THINK,
    ),
    row(
        "gemma-4",
        &["google-gemma-4-31B-it.jinja"],
        Some("gemma4"),
        Some("gemma4"),
        ("<|channel>", "<channel|>"),
    ),
    row(
        "glm-4.6",
        &["GLM-4.6.jinja"],
        Some("glm47"),
        Some("glm45"),
        THINK,
    ),
    row(
        "glm-4.7-flash",
        &["GLM-4.7-Flash.jinja"],
        Some("glm47"),
        Some("glm45"),
        THINK,
    ),
    row(
        "gpt-oss",
        &["openai-gpt-oss-120b.jinja"],
        Some("harmony"),
        Some("gpt_oss"),
        ("<|channel|>analysis", "<|end|>"),
    ),
    row(
        "granite-4.0",
        &["ibm-granite-granite-4.0.jinja"],
        Some("hermes"),
        None,
        THINK,
    ),
    row(
        "hermes-2-pro",
        &["NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"],
        Some("hermes"),
        None,
        THINK,
    ),
    row(
        "kimi-k2",
        &["moonshotai-Kimi-K2.jinja"],
        Some("kimi_k2"),
        None,
        THINK,
    ),
    row(
        "kimi-k2-thinking",
        &["Kimi-K2-Thinking.jinja"],
        Some("kimi_k2"),
        Some("kimi_k25"),
        THINK,
    ),
    row(
        "lfm2.5",
        &["LFM2.5-8B-A1B.jinja"],
        Some("pythonic"),
        Some("basic"),
        THINK,
    ),
    row(
        "llama-3.1",
        &["meta-llama-Llama-3.1-8B-Instruct.jinja"],
        Some("llama3_json"),
        None,
        THINK,
    ),
    row(
        "mimo-vl",
        &["MiMo-VL.jinja"],
        Some("hermes"),
        Some("qwen3"),
        THINK,
    ),
    row(
        "minimax-m2",
        &["MiniMax-M2.jinja"],
        Some("minimax_m2"),
        Some("minimax_m2"),
        THINK,
    ),
    row(
        "ministral-3-reasoning",
        &["mistralai-Ministral-3-14B-Reasoning-2512.jinja"],
        Some("mistral"),
        Some("mistral"),
        ("[THINK]", "[/THINK]"),
    ),
    row(
        "mistral-nemo",
        &["mistralai-Mistral-Nemo-Instruct-2407.jinja"],
        Some("mistral"),
        None,
        THINK,
    ),
    row(
        "mistral-small-3.2",
        &["Mistral-Small-3.2-24B-Instruct-2506.jinja"],
        Some("mistral"),
        None,
        THINK,
    ),
    row(
        "nemotron-3-nano",
        &["NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja"],
        Some("qwen3_coder"),
        Some("nemotron_v3"),
        THINK,
    ),
    row(
        "nemotron-nano-v2",
        &["NVIDIA-Nemotron-Nano-v2.jinja"],
        Some("nemotron_deci"),
        Some("nemotron_nano"),
        THINK,
    ),
    row(
        "qwen2.5",
        &["Qwen-Qwen2.5-7B-Instruct.jinja"],
        Some("qwen25"),
        None,
        THINK,
    ),
    row("qwen3", &[], Some("hermes"), Some("qwen3"), THINK),
    row(
        "qwen3-coder",
        &["Qwen3-Coder.jinja"],
        Some("qwen3_coder"),
        None,
        THINK,
    ),
    row(
        "qwen3.5",
        &["Qwen3.5-4B.jinja"],
        Some("qwen3_coder"),
        Some("qwen3"),
        THINK,
    ),
    row(
        "qwq",
        &["Qwen-QwQ-32B.jinja"],
        Some("hermes"),
        Some("qwen3"),
        THINK,
    ),
    row(
        "r1-style",
        &[],
        Some("deepseek_v3"),
        Some("deepseek_r1"),
        THINK,
    ),
    row(
        "smollm3",
        &["HuggingFaceTB-SmolLM3-3B.jinja"],
        Some("hermes"),
        Some("qwen3"),
        THINK,
    ),
    row(
        "stepfun-3.5",
        &["StepFun3.5-Flash.jinja"],
        Some("qwen3_coder"),
        Some("qwen3"),
        THINK,
    ),
];

struct Dynamo {
    runtime: tokio::runtime::Runtime,
}

fn definitions(request: &Request) -> Vec<ToolDefinition> {
    tools(&request.request)
        .iter()
        .filter_map(|t| {
            let function = t.get("function").unwrap_or(t);
            Some(ToolDefinition {
                name: function.get("name")?.as_str()?.to_owned(),
                parameters: function.get("parameters").cloned(),
                strict: function.get("strict").and_then(Value::as_bool),
            })
        })
        .collect()
}

fn reasoning_parser(parsers: Parsers, request: &Request) -> Option<impl ReasoningParser> {
    let name = parsers
        .reasoning
        .filter(|_| !reasoning_inline(&request.request))?;
    let mut parser = ReasoningParserType::get_reasoning_parser_from_name(name);
    if prompt_opens_reasoning(request.prompt.as_deref(), parsers.markers) {
        parser.set_in_reasoning(true);
    }
    Some(parser)
}

/// An id the output carried: dynamo invents ids (UUIDs) for formats without them, and those
/// are not part of the parse; an id is kept only when the output holds it.
fn model_id(id: Option<&str>, output: &str) -> Option<String> {
    id.filter(|id| !id.is_empty() && output.contains(*id))
        .map(str::to_owned)
}

fn chunk(content: Option<String>, finish: bool) -> Annotated<CreateChatCompletionStreamResponse> {
    #[allow(deprecated)]
    let choice = ChatChoiceStream {
        index: 0,
        delta: ChatCompletionStreamResponseDelta {
            role: Some(Role::Assistant),
            content: content.map(ChatCompletionMessageContent::Text),
            tool_calls: None,
            function_call: None,
            refusal: None,
            reasoning_content: None,
        },
        finish_reason: finish.then_some(FinishReason::Stop),
        logprobs: None,
    };
    Annotated {
        data: Some(CreateChatCompletionStreamResponse {
            id: "chatparse".to_owned(),
            choices: vec![choice],
            created: 0,
            model: "chatparse".to_owned(),
            system_fingerprint: None,
            object: "chat.completion.chunk".to_owned(),
            usage: None,
            service_tier: None,
        }),
        id: None,
        event: None,
        comment: None,
        error: None,
    }
}

/// The chat deltas of one jail output.
fn deltas_of(
    out: &Annotated<CreateChatCompletionStreamResponse>,
    output: &str,
    into: &mut Vec<ChatDelta>,
) {
    let Some(data) = &out.data else { return };
    for choice in &data.choices {
        let delta = serde_json::to_value(&choice.delta).unwrap_or(Value::Null);
        if let Some(text) = delta.get("reasoning_content").and_then(Value::as_str) {
            into.extend(reasoning(text));
        }
        match delta.get("content") {
            Some(Value::String(text)) => into.extend(content(text)),
            Some(Value::Array(parts)) => {
                for part in parts {
                    if let Some(text) = part.get("text").and_then(Value::as_str) {
                        into.extend(content(text));
                    }
                }
            }
            _ => {}
        }
        for c in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = c.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
            let function = c.get("function");
            let text = |key: &str| {
                function
                    .and_then(|f| f.get(key))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            into.push(call(
                index,
                model_id(c.get("id").and_then(Value::as_str), output),
                text("name"),
                text("arguments"),
            ));
        }
    }
}

type Output = Pin<Box<dyn Stream<Item = Annotated<CreateChatCompletionStreamResponse>> + Send>>;

/// Everything the jail has ready now (without waiting).
fn drain_ready(out: &mut Output, output: &str, into: &mut Vec<ChatDelta>) {
    while let Some(Some(item)) = out.next().now_or_never() {
        deltas_of(&item, output, into);
    }
}

impl Adapter for Dynamo {
    fn parsers(&self, request: &Request) -> Option<Parsers> {
        lookup(TABLE, request)
    }

    fn one_shot(
        &mut self,
        parsers: Parsers,
        request: &Request,
        output: &str,
    ) -> Result<ChatMessage, String> {
        let (normal, reasoning) = match reasoning_parser(parsers, request) {
            Some(mut parser) => {
                let result = parser.detect_and_parse_reasoning(output, &[]);
                (result.normal_text, result.reasoning_text)
            }
            None => (output.to_owned(), String::new()),
        };
        let Some(family) = parsers.tool else {
            return Ok(message(normal, reasoning, Vec::new()));
        };
        let tools = definitions(request);
        let tools = (!tools.is_empty()).then_some(tools.as_slice());
        let (calls, content) = self
            .runtime
            .block_on(detect_and_parse_tool_call_with_recovery(
                &normal,
                Some(family),
                tools,
            ))
            .map_err(|e| format!("dynamo-parsers: {e}"))?;
        let calls = calls
            .into_iter()
            .map(|c| {
                ToolCall::new(
                    model_id(Some(&c.id), output).unwrap_or_default(),
                    c.function.name,
                    c.function.arguments,
                )
            })
            .collect();
        Ok(message(content.unwrap_or_default(), reasoning, calls))
    }

    fn stream(
        &mut self,
        parsers: Parsers,
        request: &Request,
        chunks: &[String],
        finish: bool,
    ) -> Result<Vec<Vec<ChatDelta>>, String> {
        let mut reasoning_parser = reasoning_parser(parsers, request);
        let (sender, receiver) = mpsc::unbounded();
        let mut jail: Option<Output> = parsers.tool.map(|family| {
            let mut builder = JailedStream::builder().tool_call_parser(family);
            let tools = definitions(request);
            if !tools.is_empty() {
                builder = builder.tool_definitions(tools);
            }
            Box::pin(builder.build().apply(receiver)) as Output
        });
        let _guard = self.runtime.enter();
        let output: String = chunks.concat();
        let mut out = Vec::new();
        for text in chunks {
            let mut deltas = Vec::new();
            let normal = match reasoning_parser.as_mut() {
                Some(parser) => {
                    let result = parser.parse_reasoning_streaming_incremental(text, &[]);
                    deltas.extend(reasoning(&result.reasoning_text));
                    result.normal_text
                }
                None => text.clone(),
            };
            match jail.as_mut() {
                Some(stream) => {
                    let _ = sender.unbounded_send(chunk(Some(normal), false));
                    drain_ready(stream, &output, &mut deltas);
                }
                None => deltas.extend(content(&normal)),
            }
            out.push(deltas);
        }
        if finish {
            let mut deltas = Vec::new();
            let rest = reasoning_parser
                .as_mut()
                .map(|p| p.finish_reasoning_stream())
                .unwrap_or_default();
            deltas.extend(reasoning(&rest.reasoning_text));
            match jail.as_mut() {
                Some(stream) => {
                    if !rest.normal_text.is_empty() {
                        let _ = sender.unbounded_send(chunk(Some(rest.normal_text), false));
                    }
                    let _ = sender.unbounded_send(chunk(None, true));
                    sender.close_channel();
                    while let Some(item) = self.runtime.block_on(stream.next()) {
                        deltas_of(&item, &output, &mut deltas);
                    }
                }
                None => deltas.extend(content(&rest.normal_text)),
            }
            out.push(deltas);
        }
        Ok(out)
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    serve(&mut Dynamo { runtime });
}
