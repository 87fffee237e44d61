//! The engine-protocol adapter for SGLang Model Gateway's parsers: `tool-parser` 1.10.0 for
//! tool calls and `reasoning-parser` 1.10.0 (same project) for reasoning, used as its server
//! does: the reasoning parser first, then the tool parser on the normal text; streaming with
//! `parse_reasoning_streaming_incremental` / `parse_incremental`, and at the end `flush`,
//! `get_unstreamed_tool_args` and `take_unstreamed_normal_text`. The tool parser gives no call
//! ids (its server makes them up), so calls carry none.

use chatparse::engine::protocol::Request;
use chatparse::message::{ChatDelta, ChatMessage, ToolCall};
use chatparse_peer_adapters::{
    call, content, lookup, message, prompt_opens_reasoning, reasoning, reasoning_inline, serve,
    tools, Adapter, Parsers, Row, THINK,
};
use openai_protocol::common::Tool;
use reasoning_parser::{ParserFactory as ReasoningFactory, ReasoningParser};
use tool_parser::{ParserFactory as ToolFactory, ToolParser};

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

/// Fixture folder (and template files) → tool-parser / reasoning-parser names. Folders not
/// listed have no parser for their format in these crates.
const TABLE: &[Row] = &[
    row(
        "cohere2moe",
        &["Cohere2MoE.jinja"],
        Some("cohere"),
        Some("cohere_cmd"),
        ("<|START_THINKING|>", "<|END_THINKING|>"),
    ),
    row(
        "command-r-plus",
        &["CohereForAI-c4ai-command-r-plus-tool_use.jinja"],
        Some("cohere"),
        None,
        THINK,
    ),
    row(
        "command-r7b",
        &["CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja"],
        Some("cohere"),
        Some("cohere_cmd"),
        ("<|START_THINKING|>", "<|END_THINKING|>"),
    ),
    row(
        "deepseek-r1-distill",
        &["deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"],
        Some("deepseek"),
        Some("deepseek_r1"),
        THINK,
    ),
    row(
        "deepseek-v3.1",
        &["deepseek-ai-DeepSeek-V3.1.jinja"],
        Some("deepseek31"),
        Some("deepseek_v31"),
        THINK,
    ),
    row(
        "deepseek-v3.2",
        &["deepseek-ai-DeepSeek-V3.2.jinja"],
        Some("deepseek32"),
        Some("deepseek_v31"),
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
        Some("glm45_moe"),
        Some("glm45"),
        THINK,
    ),
    row(
        "glm-4.7-flash",
        &["GLM-4.7-Flash.jinja"],
        Some("glm47_moe"),
        Some("glm45"),
        THINK,
    ),
    row(
        "granite-4.0",
        &["ibm-granite-granite-4.0.jinja"],
        Some("qwen"),
        None,
        THINK,
    ),
    row(
        "hermes-2-pro",
        &["NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"],
        Some("qwen"),
        None,
        THINK,
    ),
    row(
        "kimi-k2",
        &["moonshotai-Kimi-K2.jinja"],
        Some("kimik2"),
        None,
        THINK,
    ),
    row(
        "kimi-k2-thinking",
        &["Kimi-K2-Thinking.jinja"],
        Some("kimik2"),
        Some("kimi_thinking"),
        THINK,
    ),
    row(
        "lfm2.5",
        &["LFM2.5-8B-A1B.jinja"],
        Some("pythonic"),
        Some("qwen3"),
        THINK,
    ),
    row(
        "llama-3.1",
        &["meta-llama-Llama-3.1-8B-Instruct.jinja"],
        Some("llama"),
        None,
        THINK,
    ),
    row(
        "mimo-vl",
        &["MiMo-VL.jinja"],
        Some("qwen"),
        Some("qwen3"),
        THINK,
    ),
    row(
        "minimax-m2",
        &["MiniMax-M2.jinja"],
        Some("minimax_m2"),
        Some("minimax"),
        THINK,
    ),
    row(
        "ministral-3-reasoning",
        &["mistralai-Ministral-3-14B-Reasoning-2512.jinja"],
        Some("mistral"),
        None,
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
        Some("qwen_xml"),
        Some("nano_v3"),
        THINK,
    ),
    row(
        "qwen2.5",
        &["Qwen-Qwen2.5-7B-Instruct.jinja"],
        Some("qwen"),
        None,
        THINK,
    ),
    row("qwen3", &[], Some("qwen"), Some("qwen3"), THINK),
    row(
        "qwen3-coder",
        &["Qwen3-Coder.jinja"],
        Some("qwen_coder"),
        None,
        THINK,
    ),
    row(
        "qwen3.5",
        &["Qwen3.5-4B.jinja"],
        Some("qwen_xml"),
        Some("qwen3"),
        THINK,
    ),
    row(
        "qwq",
        &["Qwen-QwQ-32B.jinja"],
        Some("qwen"),
        Some("qwen3"),
        THINK,
    ),
    row(
        "r1-style",
        &[],
        Some("deepseek"),
        Some("deepseek_r1"),
        THINK,
    ),
    row(
        "smollm3",
        &["HuggingFaceTB-SmolLM3-3B.jinja"],
        Some("qwen"),
        Some("qwen3"),
        THINK,
    ),
    row(
        "stepfun-3.5",
        &["StepFun3.5-Flash.jinja"],
        Some("qwen_xml"),
        Some("qwen3"),
        THINK,
    ),
];

struct Smg {
    tools: ToolFactory,
    reasoning: ReasoningFactory,
    runtime: tokio::runtime::Runtime,
}

impl Smg {
    fn reasoning_parser(
        &self,
        parsers: Parsers,
        request: &Request,
    ) -> Result<Option<Box<dyn ReasoningParser>>, String> {
        let Some(name) = parsers
            .reasoning
            .filter(|_| !reasoning_inline(&request.request))
        else {
            return Ok(None);
        };
        let mut parser = self
            .reasoning
            .registry()
            .create_parser(name)
            .ok_or_else(|| format!("reasoning-parser has no parser {name}"))?;
        if prompt_opens_reasoning(request.prompt.as_deref(), parsers.markers) {
            parser.mark_reasoning_started();
            parser.mark_think_start_stripped();
        }
        Ok(Some(parser))
    }

    fn tool_parser(&self, parsers: Parsers) -> Result<Option<Box<dyn ToolParser>>, String> {
        parsers
            .tool
            .map(|name| {
                self.tools
                    .registry()
                    .create_parser(name)
                    .ok_or_else(|| format!("tool-parser has no parser {name}"))
            })
            .transpose()
    }
}

fn tool_list(request: &Request) -> Result<Vec<Tool>, String> {
    tools(&request.request)
        .into_iter()
        .map(|t| serde_json::from_value(t).map_err(|e| format!("tool: {e}")))
        .collect()
}

impl Adapter for Smg {
    fn parsers(&self, request: &Request) -> Option<Parsers> {
        lookup(TABLE, request)
    }

    fn one_shot(
        &mut self,
        parsers: Parsers,
        request: &Request,
        output: &str,
    ) -> Result<ChatMessage, String> {
        let (normal, reasoning) = match self.reasoning_parser(parsers, request)? {
            Some(mut parser) => {
                let result = parser
                    .detect_and_parse_reasoning(output)
                    .map_err(|e| format!("reasoning-parser: {e}"))?;
                (result.normal_text, result.reasoning_text)
            }
            None => (output.to_owned(), String::new()),
        };
        let tools = tool_list(request)?;
        let (content, calls) = match self.tool_parser(parsers)? {
            Some(parser) => self
                .runtime
                .block_on(parser.parse_complete_with_tools(&normal, &tools))
                .map_err(|e| format!("tool-parser: {e}"))?,
            None => (normal, Vec::new()),
        };
        let calls = calls
            .into_iter()
            .map(|c| ToolCall::new("", c.function.name, c.function.arguments))
            .collect();
        Ok(message(content, reasoning, calls))
    }

    fn stream(
        &mut self,
        parsers: Parsers,
        request: &Request,
        chunks: &[String],
        finish: bool,
    ) -> Result<Vec<Vec<ChatDelta>>, String> {
        let mut reasoning_parser = self.reasoning_parser(parsers, request)?;
        let mut tool_parser = self.tool_parser(parsers)?;
        let tools = tool_list(request)?;
        let mut out = Vec::new();
        for chunk in chunks {
            let mut deltas = Vec::new();
            let normal = match reasoning_parser.as_mut() {
                Some(parser) => {
                    let result = parser
                        .parse_reasoning_streaming_incremental(chunk)
                        .map_err(|e| format!("reasoning-parser: {e}"))?;
                    deltas.extend(reasoning(&result.reasoning_text));
                    result.normal_text
                }
                None => chunk.clone(),
            };
            self.tool_step(&mut tool_parser, &normal, &tools, &mut deltas)?;
            out.push(deltas);
        }
        if finish {
            let mut deltas = Vec::new();
            if let Some(parser) = reasoning_parser.as_mut() {
                let result = parser
                    .flush()
                    .map_err(|e| format!("reasoning-parser: {e}"))?;
                deltas.extend(reasoning(&result.reasoning_text));
                self.tool_step(&mut tool_parser, &result.normal_text, &tools, &mut deltas)?;
            }
            if let Some(parser) = tool_parser.as_mut() {
                for item in parser.get_unstreamed_tool_args().unwrap_or_default() {
                    deltas.push(call(
                        item.tool_index,
                        None,
                        item.name,
                        Some(item.parameters),
                    ));
                }
                deltas.extend(content(&parser.take_unstreamed_normal_text()));
            }
            out.push(deltas);
        }
        Ok(out)
    }
}

impl Smg {
    fn tool_step(
        &self,
        parser: &mut Option<Box<dyn ToolParser>>,
        text: &str,
        tools: &[Tool],
        deltas: &mut Vec<ChatDelta>,
    ) -> Result<(), String> {
        if text.is_empty() {
            return Ok(());
        }
        let Some(parser) = parser.as_mut() else {
            deltas.extend(content(text));
            return Ok(());
        };
        let result = self
            .runtime
            .block_on(parser.parse_incremental(text, tools))
            .map_err(|e| format!("tool-parser: {e}"))?;
        deltas.extend(content(&result.normal_text));
        for item in result.calls {
            deltas.push(call(
                item.tool_index,
                None,
                item.name,
                Some(item.parameters),
            ));
        }
        Ok(())
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut adapter = Smg {
        tools: ToolFactory::new(),
        reasoning: ReasoningFactory::new(),
        runtime,
    };
    serve(&mut adapter);
}
