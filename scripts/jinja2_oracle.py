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


# Small templates exercising one Jinja2 behaviour each (rendered with no messages).
SNIPPETS = [
    "{{ x.y }}",
    "{{ d.missing }}|{{ d['missing'] }}|{{ [1, 2][5] }}",
    "{{ d.missing.other }}",
    "{{ 'abc'[1:] }}|{{ [1, 2, 3][-1] }}|{{ 'abc'[::-1] }}|{{ [1, 2, 3][:2] }}",
    "{{ 7 // 2 }}|{{ 7 / 2 }}|{{ 2 ** 3 }}|{{ 7 % 3 }}|{{ -7 // 2 }}|{{ 4 / 2 }}|{{ 0.1 + 0.2 }}",
    "{{ 1 == 1.0 }}|{{ 'a' in 'abc' }}|{{ 'k' in {'k': 1} }}|{{ 2 in [1, 2] }}",
    "{{ [3, 1, 2] | sort }}|{{ ['a', 'b'] | join(', ') }}|{{ {'b': 1, 'a': 2} | dictsort }}",
    "{{ x | default('d') }}|{{ none | default('d') }}|{{ '' | default('d', true) }}",
    "{{ [1, 2] | first }}|{{ [1, 2] | last }}|{{ 'ab cd' | title }}|{{ 'ab' | capitalize }}|{{ ' a ' | trim }}",
    "{{ 'aXa' | replace('a', 'b') }}|{{ 3.14159 | round(2) }}|{{ 2.5 | round }}|{{ 3 | float }}|{{ 'x' | float }}",
    "{{ [{'a': 1}, {'a': 2}] | map(attribute='a') | list }}|{{ [{'a': 1}, {'a': 2}] | selectattr('a', 'equalto', 1) | list }}",
    "{{ [1, 2, 3] | select('odd') | list }}|{{ [1, 2, 3] | reject('odd') | list }}|{{ range(3) | list }}",
    "{% for x in ['a', 'b', 'c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }};{% endfor %}",
    "{% for x in ['a', 'b'] %}{{ loop.previtem }}/{{ loop.nextitem }};{% endfor %}",
    "{{ 'Hello %s, %d' % ('x', 3) }}",
    "{{ '{} and {}'.format(1, 'b') }}",
    "{% set x = [] %}{{ x + [1] }}|{{ {'a': 1}.items() | list }}|{{ {'a': 1}.keys() | list }}",
    "{{ 10 | string + 'x' }}|{{ true and 'x' }}|{{ none or 'y' }}|{{ 1 if false }}|{{ 0 or none }}",
    "{{ [1, 2, 3] | sum }}|{{ [1, 2, 3] | max }}|{{ [1, 2, 3] | min }}|{{ [1, 1, 2] | unique | list }}|{{ [1, 2] | reverse | list }}",
    "{{ (1, 2) }}|{{ 'abc' | list }}|{{ 1e20 }}|{{ 10 ** 20 }}|{{ 1.5e-7 }}|{{ -0.0 }}",
    "{% macro m(a, b='x') %}[{{ a }}{{ b }}]{% endmacro %}{{ m(1) }}{{ m(2, b='y') }}",
    "{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}{% for x in [] %}a{% else %}empty{% endfor %}",
    "{{ 'x' if y is defined else 'z' }}|{{ -1 | abs }}|{{ 'ABC' | lower }}|{{ 'x'.upper() }}|{{ 'a,b'.split(',') }}",
    "{{ '\\n' }}|{{ 'tab\\there' }}|{{ \"quote's\" }}|{{ 'caf\\u00e9' }}",
    "A\n{# comment #}\nB\n  {#- c -#}  \nC",
    "{% raw %}{{ not rendered }}{% endraw %}|  {{ 'x' }}\n  {% if true %}y{% endif %}",
    "{%- if true %}\n  a\n{%- endif %}\n{% for i in [1] -%}\n  b{{ i }}\n{% endfor -%}\nc",
    "{{ messages | length }}|{{ messages is iterable }}|{{ tools is none }}|{{ add_generation_prompt is false }}",
    "{{ {'a': [1, {'b': none}]} }}|{{ [true, 'x\\ny'] }}|{{ {'k': 'v'} | string }}",
    "{{ x | length }}",
    "{{ 'abc' | length }}|{{ {'a': 1} | length }}|{{ [1] | length }}",
    "{{ 'a b  c'.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'xxhixx'.strip('x') }}|{{ 'ab'.startswith(('a', 'z')) }}",
    "{{ {'a': 1}.get('b') }}|{{ {'a': 1}.get('a') }}|{{ {'a': 1}['a'] }}",
    "{% set d = {'z': 1, 'a': 2} %}{{ d | tojson }}|{{ d | items | list }}|{{ d.values() | list }}",
    "{{ 5 is divisibleby 5 }}|{{ 3 is odd }}|{{ 'x' is lower }}|{{ none is none }}|{{ 1 is number }}|{{ true is boolean }}|{{ 1.0 is float }}|{{ 1 is integer }}",
    "{{ [1, 2, 3] | batch(2) | list }}|{{ [1, 2, 3] | slice(2) | list }}",
    "{{ 'a' < 'b' }}|{{ [1, 2] == [1, 2] }}|{{ {'a': 1} == {'a': 1} }}|{{ none == none }}",
    "{% set a, b = [1, 2] %}{{ a }}{{ b }}|{% set t %}block{% endset %}{{ t }}",
    "{{ 'x' | indent }}|{{ 'a\\nb' | indent(first=true) }}|{{ 'a\\nb' | indent(2) }}",
    "{{ '  x  ' | trim('x ') }}|{{ 'x' | center(5) }}|{{ 'hello world' | wordcount }}|{{ 'abc' | truncate(2) }}",
    "{{ '<b>&' | e }}|{{ '<b>' | safe }}|{{ '</script>' | tojson }}|{{ none | tojson }}|{{ 'x' | tojson }}|{{ 1.0 | tojson }}",
    "{{ [' a', 'b '] | map('trim') | list }}|{{ ['a'] | map('upper') | join }}|{{ [1, 2] | join('-') }}",
    "{{ [{'x': 1}, {}] | selectattr('x', 'defined') | list }}|{{ [{'r': 'u'}, {'r': 's'}] | selectattr('r', 'equalto', 'u') | list | length }}",
    "{{ 'a' in ['a'] }}|{{ 'abc' | last }}|{{ '%s-%s' | format(1, 'x') }}|{% filter upper %}x{% endfilter %}",
    "{% for m in [1, 2, 3, 4] if m is even %}{{ m }}{{ loop.index }};{% endfor %}",
    "{% for x in [[1, [2]], [3]] recursive %}{% if x is iterable %}{{ loop(x) }}{% else %}{{ x }}@{{ loop.depth }};{% endif %}{% endfor %}",
    "{{ range(1, 10, 3) | list }}|{{ {'a': 1} | tojson(indent=4) }}|{{ '%.2f' | format(3.14159) }}|{{ 1 ~ 2 }}",
    "{% set ns = namespace(a=[]) %}{% set ns.a = ns.a + [1] %}{{ ns.a }}|{{ 'abc'.find('b') }}|{{ 'a\\nb'.splitlines() }}",
    "{{ 0 is false }}|{{ false is false }}|{{ none is false }}|{{ [] is true }}|{{ true is true }}|{{ '' is false }}",
    "{{ {'a': 1} is mapping }}|{{ [] is mapping }}|{{ 'x' is string }}|{{ 1 is string }}|{{ none is defined }}|{{ nope is undefined }}",
    "{% for i in range(3) %}{{ loop.cycle('a', 'b') }}{% endfor %}|{{ [1, 2, 3] | map('string') | join(',') }}",
    "{{ 'x' * 3 }}|{{ [1] * 2 }}|{{ 'a' + 'b' }}|{{ 3 - 1.5 }}|{{ 10 / 4 }}|{{ 2 * 1.0 }}|{{ 7 // 2.0 }}",
    "{% if not x %}nx{% endif %}|{% if d %}d{% else %}empty-d{% endif %}|{{ d | length }}|{{ d.x | default('dx') }}",
    "{{ ['b', 'a'] | sort(reverse=true) }}|{{ [{'n': 2}, {'n': 1}] | sort(attribute='n') }}|{{ ['B', 'a'] | sort }}",
    "{{ 'a-b-c'.split('-', 1) }}|{{ 'abc'.count('b') }}|{{ 'a b'.title() }}|{{ ' x'.isspace() }}|{{ 'abc'.endswith('c') }}",
    "{{ 'x' | replace('x', 'y', 1) }}|{{ 'aaa' | replace('a', 'b', 2) }}|{{ [1, 2, 3] | first }}|{{ 'Tab\\t' | trim }}",
    "{{ 12345678901234567890 }}|{{ 1.0e0 }}|{{ 100.0 }}|{{ 1e16 }}|{{ 123456789.123 }}|{{ 0.0001 }}",
    "{{ {'a': none} }}|{{ {1: 'x'} }}|{{ {'a': 1}.a }}|{{ ({'a': 1}).get('a') }}",
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
    for i, snippet in enumerate(SNIPPETS):
        inp = make_input([], None, False, {"d": {}})
        rec = {"id": f"snippet/{i:02}", "template": f"snippet{i:02}.jinja", "source": snippet, "input": inp,
               "expected": render(snippet, inp)}
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
