#!/usr/bin/env bash
# Regenerates the seed corpora of the render_template, analyze and stream fuzz targets
# (corpus/<target>/). render_template:
# from the chat templates in shared/templates/ ($CHATPARSE_SHARED, else ../shared) plus the
# small hand-written snippets below (one Jinja feature each).
#
#   scripts/fuzz-seeds.sh
#
# Each template becomes two seeds: the bare template (rendered with the fixed conversation and
# a generation prompt) and `<template>\0<flags>` with flags 0x0e (tools, enable_thinking,
# continue the final message). See fuzz/fuzz_targets/common/render_template.rs for the input
# encoding. Old `tpl-*`/`snippet-*` seeds are replaced; inputs the fuzzer added are kept.
set -euo pipefail
cd "$(dirname "$0")/.."

shared="${CHATPARSE_SHARED:-../shared}"
if [ ! -d "$shared/templates" ]; then
  echo "NOTICE: no shared/templates directory (set CHATPARSE_SHARED); seeds not regenerated"
  exit 0
fi

out=corpus/render_template
mkdir -p "$out"
rm -f "$out"/tpl-* "$out"/snippet-*

for file in "$shared"/templates/*.jinja; do
  name=$(basename "$file" .jinja)
  cp "$file" "$out/tpl-$name"
  { cat "$file"; printf '\0\016'; } >"$out/tpl-$name-tools-thinking-continue"
done

snippet() { printf '%s' "$2" >"$out/snippet-$1"; }
snippet namespace-list '{% set ns = namespace(ids=[], n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% do ns.ids.append(m.role) %}{% endfor %}{{ ns.ids|join(",") }}{{ ns.ids.pop(0) }}{{ ns.n }}'
snippet macro-recursion '{% macro walk(v, d) %}{% if v is mapping %}{% for k, x in v|items %}{{ k }}={{ walk(x, d + 1) }}{% endfor %}{% elif v is sequence and v is not string %}[{% for x in v %}{{ walk(x, d + 1) }}{% endfor %}]{% else %}{{ v }}{% endif %}{% endmacro %}{{ walk(messages, 0) }}{{ walk(tools, 0) }}'
snippet loop-controls '{% for m in messages %}{% if loop.first %}{{ bos_token }}{% endif %}{% if m.role == "tool" %}{% continue %}{% endif %}{{ loop.index }}:{{ m.content|trim }}{% if loop.index > 3 %}{% break %}{% endif %}{% endfor %}'
snippet tojson-filters '{{ tools|tojson(indent=2) }}{{ messages[2].tool_calls[0].function.arguments|tojson(separators=(",", ":"), sort_keys=true) }}{{ "{\"a\": [1, 2.5, null]}"|from_json|tojson(ensure_ascii=true) }}'
snippet strings '{{ "  Hi <|im_start|>x</think>  "|trim|replace("x", "y", 1)|upper }}{{ "a,b,,c".split(",")|length }}{{ "k: v".rsplit(":", 1) }}{{ "abc".removeprefix("a").removesuffix("c") }}{{ "%d-%s"|format(1, "x") }}{{ "{} {}".format(1, 2) }}{{ strftime_now("%Y-%m-%d %H:%M %A %b") }}'
snippet raise '{% if messages[0].role != "user" %}{{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}{% endif %}'
snippet generation '{% for m in messages %}{% if m.role == "assistant" %}{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}{% else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}'
snippet whitespace-control '{%- for m in messages -%}
  {{- "<|" + m.role + "|>" -}}
  {%- if m.reasoning_content is defined and m.reasoning_content -%}<think>{{ m.reasoning_content }}</think>{%- endif -%}
  {{ m.content | default("", true) }}
{% endfor -%}
{# comment #}{% raw %}{{ not rendered }}{% endraw %}'
snippet tool-calls '{% for m in messages %}{% for c in m.tool_calls|default([]) %}<tool_call>{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments|tojson }}}</tool_call>[TOOL_CALLS]{{ c.id }}{% endfor %}{% endfor %}'
snippet slicing-tests '{{ messages[1:]|map(attribute="role")|list }}{{ messages[-1]["content"][::-1] }}{{ (messages|selectattr("role", "equalto", "user")|first).content }}{{ tools is none }}{{ messages is iterable }}{{ messages[0] is sequence }}{{ 7 // 2 }}{{ 2 ** 10 }}{{ "x" * 3 }}{{ [1, 2] + [3] }}{{ 1 if true else 2 }}{{ range(3)|list }}{{ dict(a=1)|items|list }}'
snippet set-block '{% set sys %}{% if messages[0].role == "system" %}{{ messages[0].content }}{% endif %}{% endset %}{% set parts = sys.split(" ") %}{{ parts|join("|") }}{% filter upper %}{{ sys }}{% endfilter %}'
printf '{{ messages|tojson }}\0\001[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image"}]},{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{\\"x\\":1}"}}]}]' \
  >"$out/snippet-json-messages"

echo "$(find "$out" -type f | wc -l) inputs in $out/"

# analyze: each template as is (the whole input is the template source): the shared templates
# and the fixtures' own templates.
out=corpus/analyze
mkdir -p "$out"
rm -f "$out"/tpl-* "$out"/fixture-*
for file in "$shared"/templates/*.jinja; do
  cp "$file" "$out/tpl-$(basename "$file" .jinja)"
done
for file in fixtures/*/template.jinja; do
  cp "$file" "$out/fixture-$(basename "$(dirname "$file")")"
done
echo "$(find "$out" -type f | wc -l) inputs in $out/"

# stream: `[fixture][n][lengths][output]` (see fuzz/fuzz_targets/common/stream.rs) for every
# case output of the fixtures with their own template, in the order of FIXTURES there (sorted
# names), once whole (n = 0) and once in 1-, 3- and 7-byte chunks.
out=corpus/stream
mkdir -p "$out"
rm -f "$out"/case-*
i=0
for dir in $(ls -d fixtures/*/ | sort); do
  [ -f "$dir/template.jinja" ] || continue
  name=$(basename "$dir")
  for txt in "$dir"/*.txt; do
    [ -f "$txt" ] || continue
    case_name=$(basename "$txt" .txt)
    { printf "\\$(printf '%03o' "$i")\\000"; cat "$txt"; } >"$out/case-$name-$case_name"
    { printf "\\$(printf '%03o' "$i")\\003\\001\\003\\007"; cat "$txt"; } >"$out/case-$name-$case_name-chunked"
  done
  i=$((i + 1))
done
echo "$(find "$out" -type f | wc -l) inputs in $out/"
