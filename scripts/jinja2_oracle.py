#!/usr/bin/env python3
"""Dev-time oracle: render chat templates the way Hugging Face transformers does.

Writes one JSON object per line: {"id", "template", "input", "expected"} where `input` is a
chatparse `RenderInput` (serde form) and `expected` is {"ok": prompt} or {"error": message}.
`tests/template_oracle.rs` replays the file through chatparse and reports the match rate:

    python3 scripts/jinja2_oracle.py > target/jinja2_oracle.jsonl
    CHATPARSE_ORACLE=target/jinja2_oracle.jsonl cargo test --test template_oracle -- --nocapture

Rendering goes through transformers' own `render_jinja_template` (pip install transformers
jinja2; no torch needed), so the environment, filters, globals, reasoning aliasing and
`continue_final_message` are exactly transformers'. `strftime_now` is pinned to a fixed instant.
Inputs: every template in shared/templates with a standard set of conversations, plus every
request of shared/cases/llama-cpp-chat.jsonl. Nothing here is needed by `cargo test`.
"""

import datetime as _dt
import json
import os
import sys
from pathlib import Path

import transformers.utils.chat_template_utils as ctu

FIXED_NOW = 1_795_305_600  # 2026-11-22T00:00:00Z, as in tests/template_reference.rs


class _FixedDatetime(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return _dt.datetime.fromtimestamp(FIXED_NOW, _dt.timezone.utc).replace(tzinfo=None)


ctu.datetime = _FixedDatetime  # strftime_now reads the module global at call time


def shared_dir() -> Path:
    env = os.environ.get("CHATPARSE_SHARED")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent.parent / "shared"


def tool(name):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"Tool {name}.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "A city."}},
                "required": ["city"],
            },
        },
    }


def call(name, city, call_id, as_string):
    args = {"city": city}
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args) if as_string else args},
    }


USER = {"role": "user", "content": "What is the weather like in Paris?"}
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
ASSISTANT = {"role": "assistant", "content": "It is sunny."}
TOOLS = [tool("get_weather"), tool("get_time")]


def call_turn(calls):
    msgs = [USER, {"role": "assistant", "content": "", "tool_calls": calls}]
    for c in calls:
        msgs.append(
            {"role": "tool", "tool_call_id": c["id"], "name": c["function"]["name"], "content": "22C"}
        )
    return msgs


def standard_scenarios():
    one = [call("get_weather", "Paris", "call_001", False)]
    one_str = [call("get_weather", "Paris", "call_001", True)]
    two = one + [call("get_time", "Paris", "call_002", False)]
    return [
        ("system_user", [SYSTEM, USER], None, True, {}),
        ("user_nogen", [USER], None, False, {}),
        ("user_assistant", [USER, ASSISTANT], None, False, {}),
        ("multi_turn", [SYSTEM, USER, ASSISTANT, {"role": "user", "content": "And tomorrow?"}], None, True, {}),
        ("tools_user", [USER], TOOLS, True, {}),
        ("tool_call_object", call_turn(one), TOOLS, True, {}),
        ("tool_call_string", call_turn(one_str), TOOLS, True, {}),
        ("parallel_calls", call_turn(two), TOOLS, True, {}),
        ("thinking_on", [USER], None, True, {"enable_thinking": True}),
        ("thinking_off", [USER], None, True, {"enable_thinking": False}),
        (
            "reasoning_history",
            [USER, dict(ASSISTANT, reasoning_content="Let me think."), {"role": "user", "content": "Thanks"}],
            None,
            True,
            {},
        ),
        ("typed_content", [{"role": "user", "content": [{"type": "text", "text": "Hi there"}]}], None, True, {}),
        ("continue_content", [USER, {"role": "assistant", "content": "It is "}], None, False, {"__continue": "content"}),
    ]


def render(source, inp):
    extra = dict(inp["extra"])
    cont = inp["continuation"]
    kwargs = {}
    if cont == "content":
        kwargs["continue_final_message"] = True
    elif cont == "reasoning":
        kwargs["continue_final_message"] = "reasoning_content"
    try:
        out, _ = ctu.render_jinja_template(
            conversations=[inp["messages"]],
            tools=inp["tools"],
            chat_template=source,
            add_generation_prompt=inp["add_generation_prompt"],
            **kwargs,
            **extra,
        )
        return {"ok": out[0]}
    except Exception as e:  # noqa: BLE001 - any template failure is an expected outcome
        return {"error": f"{type(e).__name__}: {e}"}


def make_input(messages, tools, gen, extra, continuation="none"):
    return {
        "messages": messages,
        "tools": tools,
        "add_generation_prompt": gen,
        "extra": extra,
        "clock": {"Fixed": FIXED_NOW},
        "continuation": continuation,
    }


def main():
    shared = shared_dir()
    templates = sorted((shared / "templates").glob("*.jinja"))
    sources = {p.name: p.read_text() for p in templates}
    out = sys.stdout
    for name, source in sources.items():
        for sid, messages, tools, gen, extra in standard_scenarios():
            extra = dict(extra, bos_token="<s>", eos_token="</s>")
            cont = extra.pop("__continue", "none")
            inp = make_input(messages, tools, gen, extra, cont)
            rec = {"id": f"{name}/{sid}", "template": name, "input": inp, "expected": render(source, inp)}
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    cases = shared / "cases" / "llama-cpp-chat.jsonl"
    for line in cases.read_text().splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        req = case["request"]
        tools = req["tools"] or None
        extra = {"enable_thinking": req["enable_thinking"], "bos_token": "", "eos_token": ""}
        inp = make_input(req["messages"], tools, req["add_generation_prompt"], extra, req["continue_final_message"])
        source = sources[case["template"]]
        rec = {"id": case["id"], "template": case["template"], "input": inp, "expected": render(source, inp)}
        out.write(json.dumps(rec, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
