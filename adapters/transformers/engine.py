#!/usr/bin/env python3
"""chatparse engine-protocol adapter for Hugging Face transformers' response templates.

Reads one JSON request per line on stdin and answers one JSON response per line on stdout (the
schema, version 1, is in chatparse's README, "Testing another parser"). The parser is
transformers' own: `parse_response` for a whole output, `ResponseParser` (`initial_events`,
`feed`, `finalize`) for a stream, with the prompt as `prefix` and the request's tools. A case
without a response template is answered `unsupported`.

Streamed events become chat deltas the way a server would map them: text of a `content`
region streams as content, of a `thinking` / `reasoning` / `reasoning_content` region as
reasoning; a `tool_calls` region streams nothing until it closes, then its value is one whole
call. The final message of a stream is `finalize()`'s dict.
"""

import json
import sys

from transformers.utils.chat_parsing import ResponseParser, parse_response

PROTOCOL = 1
REASONING_FIELDS = ("thinking", "reasoning", "reasoning_content")


def text_of(value):
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def call_of(value, index):
    function = value.get("function", value) if isinstance(value, dict) else {}
    arguments = function.get("arguments") if isinstance(function, dict) else None
    call = {
        "index": index,
        "type": "function",
        "function": {"name": text_of(function.get("name")), "arguments": text_of(arguments)},
    }
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        call["id"] = value["id"]
    return call


def message_of(parsed):
    """The parser's dict as an OpenAI-style message."""
    reasoning = ""
    for field in REASONING_FIELDS:
        if field in parsed:
            reasoning = text_of(parsed[field])
            break
    calls = parsed.get("tool_calls") or []
    if not isinstance(calls, list):
        calls = [calls]
    message = {
        "role": parsed.get("role", "assistant"),
        "content": text_of(parsed.get("content")),
        "reasoning_content": reasoning,
        "tool_calls": [],
    }
    for index, value in enumerate(calls):
        call = call_of(value, index)
        message["tool_calls"].append(
            {"id": call.get("id", ""), "type": "function", "function": call["function"]}
        )
    return message


class Deltas:
    """Maps response-template events to chat deltas."""

    def __init__(self):
        self.calls = 0

    def of(self, event):
        field = event.get("field")
        if event["type"] == "region_chunk":
            if event.get("dirty") or not event.get("text"):
                return None
            if field == "content":
                return {"content": event["text"]}
            if field in REASONING_FIELDS:
                return {"reasoning_content": event["text"]}
            return None
        if event["type"] == "region_close" and field == "tool_calls":
            values = event["value"] if isinstance(event["value"], list) else [event["value"]]
            fragments = []
            for value in values:
                fragments.append(call_of(value, self.calls))
                self.calls += 1
            return {"tool_calls": fragments}
        return None

    def all(self, events):
        return [d for d in (self.of(e) for e in events) if d is not None]


def accumulate(deltas):
    message = {"role": "assistant", "content": "", "reasoning_content": "", "tool_calls": []}
    for delta in deltas:
        message["content"] += delta.get("content", "")
        message["reasoning_content"] += delta.get("reasoning_content", "")
        for fragment in delta.get("tool_calls", []):
            while len(message["tool_calls"]) <= fragment["index"]:
                message["tool_calls"].append(
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
            call = message["tool_calls"][fragment["index"]]
            call["id"] += fragment.get("id", "")
            call["function"]["name"] += fragment["function"].get("name", "")
            call["function"]["arguments"] += fragment["function"].get("arguments", "")
    return message


class Failed(Exception):
    def __init__(self, phase, error):
        super().__init__(f"{type(error).__name__}: {error}")
        self.phase = phase


def step(phase, fn, *args):
    try:
        return fn(*args)
    except Exception as error:  # the peer's errors are answers, never a crash
        raise Failed(phase, error) from error


def answer(request):
    template = request.get("response_template")
    if template is None:
        return {"error": {"kind": "unsupported", "message": "the model has no response template"}}
    prefix = request.get("prompt") or ""
    tools = (request.get("request") or {}).get("tools") or None
    if request["mode"] == "one_shot":
        output = request.get("output") or ""
        if request.get("partial"):
            parser = step("init", lambda: ResponseParser(template, prefix=prefix, tools=tools))
            deltas = Deltas()
            events = list(parser.initial_events) + step("feed", parser.feed, output)
            return {"message": accumulate(deltas.all(events))}
        parsed = step("feed", lambda: parse_response(output, template, prefix=prefix, tools=tools))
        return {"message": message_of(parsed)}
    parser = step("init", lambda: ResponseParser(template, prefix=prefix, tools=tools))
    deltas = Deltas()
    initial = deltas.all(parser.initial_events)
    out = []
    for k, chunk in enumerate(request.get("chunks") or []):
        now = initial if k == 0 else []
        now = now + deltas.all(step("feed", parser.feed, chunk))
        out.append(now)
    response = {"deltas": out}
    if request.get("finish", not request.get("partial")):
        parsed, events = step("finalize", parser.finalize)
        last = initial if not out else []
        out.append(last + deltas.all(events))
        response["message"] = message_of(parsed)
    return response


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request_id = ""
        try:
            request = json.loads(line)
            request_id = request.get("id", "")
            if request.get("v") != PROTOCOL:
                body = {"error": {"kind": "failed", "message": f"protocol version {request.get('v')} is not {PROTOCOL}"}}
            else:
                body = answer(request)
        except Failed as error:
            body = {"error": {"kind": "failed", "message": str(error), "phase": error.phase}}
        except Exception as error:
            body = {"error": {"kind": "failed", "message": f"{type(error).__name__}: {error}"}}
        body.update({"v": PROTOCOL, "id": request_id})
        sys.stdout.write(json.dumps(body) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
