#!/usr/bin/env python3
"""Differential oracle for response templates: runs Hugging Face transformers' own
`transformers.utils.chat_parsing` on cases and records what it does.

Install (no torch needed; a fresh machine with Python 3.9+):

    pip install transformers==5.23.0

Input (stdin): one case per line, `{"id", "template", "prefix", "text", "chunk_sizes"[, "tools"]}`
or `{"id", "template", "prefix", "ops"[, "tools"]}` (`chatparse response-cases` writes them).
Output (stdout): the same cases in the format of `../shared/cases/hf-response-templates.jsonl`,
which `chatparse conform` runs. A `parse` case gets:

- `expected` (the message) or `expected_error` `{type, message, phase}` (phase: load, init,
  feed, finalize) from loading the template, creating a parser with the prefix, one `feed` of
  the whole text and `finalize`;
- `events` `{initial, feed, final}` of that run;
- `streams`: per chunk size (in characters), the events of each feed, the final events and
  the output, or the `expected_error` of the stream.

An `ops` case (`[["feed", text], ["finalize"], ...]`) gets `initial_events` and one result per
call (`{events}`, `{output, events}` or `{error}`), or `expected_error` when loading or creating
the parser fails.

Where chatparse deviates from transformers on purpose (the README's table of deliberate
deviations), the case also gets `deviation` `{rows, ...expectations}`: what transformers does
once each deviation is applied to it (each row, `ROWS` below plus "chunk-dependent" and
"after-error", is a small patch of the reference or of the template it is given; `rows` names
those that change the recording). A case without `deviation` is one where no deviation changes
anything. Error messages are recorded but only phases are compared.

    target/release/chatparse response-cases --seed 1 --count 5000 > /tmp/cases.jsonl
    python3 scripts/hf_response_oracle.py < /tmp/cases.jsonl > /tmp/recorded.jsonl
    target/release/chatparse conform /tmp/recorded.jsonl

`python3 scripts/hf_response_oracle.py --check` exits 0 (printing the version) when the
reference is installed at the expected version; `tests/response_template_oracle.rs` uses it.
"""

import contextlib
import copy
import json
import math
import sys

REQUIRED_VERSION = "5.23.0"


def reference():
    """The reference modules, or an exit with the install instructions."""
    try:
        import transformers
        from transformers.utils.chat_parsing import content_parsers as cp
        from transformers.utils.chat_parsing import response_parser as rp
        from transformers.utils.chat_parsing import response_templates as rt
    except ImportError as e:
        sys.exit(f"transformers is not installed ({e}): pip install transformers=={REQUIRED_VERSION}")
    if transformers.__version__ != REQUIRED_VERSION:
        sys.exit(
            f"transformers {transformers.__version__} is installed, the oracle needs {REQUIRED_VERSION}: "
            f"pip install transformers=={REQUIRED_VERSION}"
        )
    return transformers, cp, rp, rt


TRANSFORMERS, CP, RP, RT = (None, None, None, None)


# ---------------------------------------------------------------------------------------------
# JSON encoding of the reference's values

def plain(value):
    """A JSON-encodable copy: non-finite floats (which JSON cannot carry) become
    `{"$nonfinite": "nan" | "inf" | "-inf"}`, which no parser output can equal."""
    if isinstance(value, float) and not math.isfinite(value):
        return {"$nonfinite": repr(value)}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def events_json(events):
    return [plain(copy.deepcopy(e)) for e in events]


def error_json(e, phase):
    message = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
    return {"type": type(e).__name__, "message": str(message), "phase": phase}


# ---------------------------------------------------------------------------------------------
# Running the reference

def run(template, prefix, pieces, tools, check=None):
    """Loads (after `check`, if given), creates a parser, feeds `pieces`, finalizes. Returns a
    dict with `initial`, `feeds`, `final`, `output`, or with `error` (and the events produced
    before it)."""
    record = {"initial": [], "feeds": [], "final": []}
    try:
        if check is not None:
            check(template)
        spec = RT.load_response_template(copy.deepcopy(template))
    except Exception as e:  # noqa: BLE001 - every reference error is data here
        record["error"] = error_json(e, "load")
        return record
    try:
        parser = RP.ResponseParser(spec, prefix=prefix, tools=copy.deepcopy(tools))
    except Exception as e:  # noqa: BLE001
        record["error"] = error_json(e, "init")
        return record
    record["initial"] = events_json(parser.initial_events)
    for piece in pieces:
        try:
            record["feeds"].append(events_json(parser.feed(piece)))
        except Exception as e:  # noqa: BLE001
            record["error"] = error_json(e, "feed")
            return record
    try:
        output, final = parser.finalize()
    except Exception as e:  # noqa: BLE001
        record["error"] = error_json(e, "finalize")
        return record
    record["final"] = events_json(final)
    record["output"] = plain(copy.deepcopy(output))
    return record


def run_ops(template, prefix, ops, tools, check=None, finished_after_error=False):
    """Runs the calls of an `ops` case. Returns `{initial_events, results}` (one result per
    call: `{events}`, `{output, events}` or `{error}`), or `{expected_error}` when loading or
    creating the parser fails. With `finished_after_error` (row "after-error"), every call
    after one that raised raises too."""
    try:
        if check is not None:
            check(template)
        spec = RT.load_response_template(copy.deepcopy(template))
    except Exception as e:  # noqa: BLE001
        return {"expected_error": error_json(e, "load")}
    try:
        parser = RP.ResponseParser(spec, prefix=prefix, tools=copy.deepcopy(tools))
    except Exception as e:  # noqa: BLE001
        return {"expected_error": error_json(e, "init")}
    record = {"initial_events": events_json(parser.initial_events), "results": []}
    failed = False
    for op in ops:
        name = op[0]
        if failed and finished_after_error:
            record["results"].append(
                {"error": {"type": "RuntimeError", "message": "the parser raised before", "phase": name}}
            )
            continue
        try:
            if name == "feed":
                record["results"].append({"events": events_json(parser.feed(op[1]))})
            else:
                output, events = parser.finalize()
                record["results"].append({"output": plain(copy.deepcopy(output)), "events": events_json(events)})
        except Exception as e:  # noqa: BLE001
            record["results"].append({"error": error_json(e, name)})
            failed = True
    return record


def ops_text(ops):
    """The text an `ops` case feeds before its first `finalize`."""
    text = []
    for op in ops:
        if op[0] == "finalize":
            break
        text.append(op[1])
    return "".join(text)


def ops_agree(record, whole):
    """Whether an `ops` recording gives the one-shot run's result (merged events up to the
    first finalize, and its output or error phase)."""
    events = list(record["initial_events"])
    for result in record["results"]:
        if "error" in result:
            return "error" in whole and whole["error"]["phase"] == result["error"]["phase"]
        events.extend(result["events"])
        if "output" in result:
            return "error" not in whole and merged(events) == all_events(whole) and result["output"] == whole["output"]
    return True


def record_ops(case, check=None, finished_after_error=False):
    return run_ops(
        case["template"], case.get("prefix"), case["ops"], case.get("tools"), check, finished_after_error
    )


def chunks(text, size):
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def merged(events):
    """Events with consecutive chunks of one field merged (chunk granularity is free)."""
    out = []
    for e in events:
        if (
            e["type"] == "region_chunk"
            and out
            and out[-1]["type"] == "region_chunk"
            and out[-1]["field"] == e["field"]
        ):
            out[-1] = dict(out[-1], text=out[-1]["text"] + e["text"])
        else:
            out.append(dict(e))
    return out


def all_events(record):
    events = list(record["initial"])
    for feed in record["feeds"]:
        events.extend(feed)
    events.extend(record["final"])
    return merged(events)


def record_case(case, check=None):
    """The case's recorded expectations under the reference as it is loaded now (with the
    extra load `check`, if given)."""
    template, prefix, text = case["template"], case.get("prefix"), case.get("text", "")
    tools = case.get("tools")
    out = {}
    whole = run(template, prefix, [text], tools, check)
    if "error" in whole:
        out["expected_error"] = whole["error"]
    else:
        out["expected"] = whole["output"]
        out["events"] = {
            "initial": whole["initial"],
            "feed": [e for feed in whole["feeds"] for e in feed],
            "final": whole["final"],
        }
    streams = []
    if "error" not in whole or whole["error"]["phase"] != "load":
        for size in case.get("chunk_sizes", []):
            r = run(template, prefix, chunks(text, size), tools, check)
            stream = {"chunk_size": size}
            if "error" in r:
                stream["expected_error"] = r["error"]
            else:
                stream.update(initial=r["initial"], feeds=r["feeds"], final=r["final"], output=r["output"])
            streams.append(stream)
    out["streams"] = streams
    return out, whole


# ---------------------------------------------------------------------------------------------
# Deliberate deviations (the README's table), as patches of the reference

ROWS = (
    "close-eos",
    "close-groups",
    "dollar",
    "empty-close",
    "implicit-empty",
    "json-strings",
    "non-finite",
    "strict-load",
)

CONTENT_TYPES = ("bool", "float", "int", "json", "kv-lines", "text", "xml-inline")
CONTENT_ARGS = {
    "json": {"allow_non_json", "string_delims", "strip", "unquoted_keys"},
    "xml-inline": {"merge_duplicates", "tag_pattern", "value_parser"},
    "kv-lines": {"kv_sep", "line_sep", "strip", "value_parser"},
}
BOOL_ARGS = ("allow_non_json", "merge_duplicates", "strip", "unquoted_keys")


def strict_content_args(content, args):
    """Row "strict-load": the content arguments chatparse checks at load (the reference
    ignores unknown ones and reads the others only when a region closes)."""
    if not isinstance(args, dict):
        raise ValueError("content_args must be a dict")
    unknown = set(args) - CONTENT_ARGS.get(content, {"strip"})
    if unknown:
        raise ValueError(f"content_args has unknown keys {sorted(unknown)}")
    for key in BOOL_ARGS:
        if key in args and not isinstance(args[key], bool):
            raise ValueError(f"content_args '{key}' must be a bool")
    for key in ("line_sep", "kv_sep"):
        if key in args and not (isinstance(args[key], str) and args[key]):
            raise ValueError(f"content_args '{key}' must be a non-empty string")
    if "string_delims" in args:
        delims = args["string_delims"]
        ok = isinstance(delims, list) and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(d, str) and d for d in p) for p in delims
        )
        if not ok:
            raise ValueError("content_args 'string_delims' must be [open, close] pairs of non-empty strings")
    if content == "xml-inline":
        pattern = args.get("tag_pattern")
        if not isinstance(pattern, str):
            raise ValueError("xml-inline requires a string content_args 'tag_pattern'")
        import regex

        groups = regex.compile(pattern, regex.DOTALL).groupindex
        if "key" not in groups or "value" not in groups:
            raise ValueError("xml-inline 'tag_pattern' needs named groups 'key' and 'value'")
    if "value_parser" in args:
        parser = args["value_parser"]
        if not isinstance(parser, dict) or set(parser) - {"name", "args"}:
            raise ValueError("value_parser must be a dict with 'name' and 'args'")
        name = parser.get("name", "text")
        if not isinstance(name, str) or name not in CONTENT_TYPES:
            raise ValueError(f"value_parser: unknown content parser {name!r}")
        strict_content_args(name, parser.get("args", {}))


def strict_template(template):
    """Row "strict-load": what chatparse rejects at load beyond the reference's checks: field
    flags that are not bools, and content arguments (`strict_content_args`)."""
    fields = template.get("fields") if isinstance(template, dict) else None
    for spec in fields.values() if isinstance(fields, dict) else []:
        if not isinstance(spec, dict):
            continue
        for key in ("repeats", "optional"):
            if key in spec and not isinstance(spec[key], bool):
                raise ValueError(f"'{key}' must be a bool")
        content = spec.get("content", "text")
        if not isinstance(content, str) or content not in CONTENT_TYPES:
            continue
        strict_content_args(content, spec.get("content_args", {}))


def string_literal_end(text, i):
    """The index after the JSON string literal starting at `text[i] == '"'` (or the end)."""
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == '"':
            return j + 1
        else:
            j += 1
    return len(text)


def apply_string_delims(text, delims):
    """Row "json-strings": chatparse's `string_delims` rewrite, outside JSON string literals."""
    out, i = [], 0
    while i < len(text):
        if text[i] == '"':
            end = string_literal_end(text, i)
            out.append(text[i:end])
            i = end
            continue
        for open_d, close_d in delims:
            if text.startswith(open_d, i):
                end = text.find(close_d, i + len(open_d))
                if end >= 0:
                    out.append(json.dumps(text[i + len(open_d) : end]))
                    i = end + len(close_d)
                    break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def quote_keys(text):
    """Row "json-strings": chatparse's `unquoted_keys` rewrite (the reference's
    `(?<=[{,])(\\w+):`), outside JSON string literals."""
    import regex

    word = regex.compile(r"\w+")
    out, i, after_open = [], 0, False
    while i < len(text):
        c = text[i]
        if c == '"':
            end = string_literal_end(text, i)
            out.append(text[i:end])
            i, after_open = end, False
            continue
        m = word.match(text, i) if after_open else None
        if m:
            if text.startswith(":", m.end()):
                out.append(f'"{m.group()}":')
                i = m.end() + 1
            else:
                out.append(m.group())
                i = m.end()
            after_open = False
            continue
        out.append(c)
        after_open = c in "{,"
        i += 1
    return "".join(out)


def reference_json_rewrite(text, args):
    """The reference's own rewrite in `_json` (to tell when chatparse's differs); `None` where
    it refuses the text (its sentinel characters)."""
    import regex

    delims = args.get("string_delims", [])
    if delims and ("\x01" in text or "\x02" in text):
        return None
    working, captured = text, []
    for open_d, close_d in delims:

        def capture(m):
            captured.append(m.group(1))
            return f"\x01{len(captured) - 1}\x02"

        pattern = regex.escape(open_d) + r"(.*?)" + regex.escape(close_d)
        working = regex.sub(pattern, capture, working, flags=regex.DOTALL)
    if args.get("unquoted_keys", False):
        working = regex.sub(r"(?<=[{,])(\w+):", r'"\1":', working)
    for i, s in enumerate(captured):
        working = working.replace(f"\x01{i}\x02", json.dumps(s))
    return working


class Deviations:
    """Applies chatparse's deliberate deviations (the `enabled` rows) to the reference;
    `triggered` collects the rows whose patch ran while a case ran."""

    def __init__(self, enabled=ROWS):
        self.enabled = set(enabled)
        self.triggered = set()
        # Row "chunk-dependent": while `observing`, each match the reference decides before
        # the end of the stream is checked against the text with each literal piece of the
        # template's delimiters completed after it (`literal_runs`); `premature` is set when
        # that would change the match (see `observe`).
        self.observing = False
        self.premature = False
        self.pieces = ()

    def check(self, template):
        """Row "strict-load": chatparse's extra load checks."""
        if "strict-load" not in self.enabled:
            return
        try:
            strict_template(template)
        except Exception:
            self.triggered.add("strict-load")
            raise

    def observe(self, parser, best):
        """Whether the match `best` the reference decided could change with more text: a
        delimiter piece cut off at the end of the buffer, completed, moves the match."""
        kind, field, m = best
        pattern = field.open_re if kind == "open" else field.close_re
        buffer = parser._buffer
        for piece in self.pieces:
            for j in range(1, len(piece)):
                if buffer.endswith(piece[:j]):
                    other = pattern.search(buffer + piece[j:], parser._pos)
                    if other is None or other.span() != m.span():
                        return True
        return False

    def template(self, template):
        """The template as chatparse reads it (rows "close-eos" and "dollar")."""
        self.pieces = tuple(literal_runs(template))
        if not isinstance(template, dict):
            return template
        template = copy.deepcopy(template)
        fields = template.get("fields")
        for spec in fields.values() if isinstance(fields, dict) else []:
            if not isinstance(spec, dict):
                continue
            # Row "close-eos": `close: "eos"` runs the region to the end of the stream.
            if "close-eos" in self.enabled and spec.get("close") == "eos" and "close_pattern" not in spec:
                del spec["close"]
                self.triggered.add("close-eos")
            for key in ("open_pattern", "close_pattern"):
                if isinstance(spec.get(key), str):
                    spec[key] = self.dollar(spec[key])
            args = spec.get("content_args")
            if isinstance(args, dict) and isinstance(args.get("tag_pattern"), str):
                args["tag_pattern"] = self.dollar(args["tag_pattern"])
        if isinstance(template.get("start_anchor_pattern"), str):
            template["start_anchor_pattern"] = self.dollar(template["start_anchor_pattern"])
        return template

    def dollar(self, pattern):
        """Row "dollar": Python `$` (end, or before a final newline) takes that newline."""
        if "dollar" not in self.enabled:
            return pattern
        out, i, in_class = [], 0, False
        while i < len(pattern):
            c = pattern[i]
            if c == "\\" and i + 1 < len(pattern):
                out.append(pattern[i : i + 2])
                i += 2
                continue
            if in_class:
                if c == "]":
                    in_class = False
                out.append(c)
            elif c == "[":
                in_class = True
                out.append(c)
                if pattern[i + 1 : i + 2] == "^":
                    out.append("^")
                    i += 1
                if pattern[i + 1 : i + 2] == "]":
                    out.append("]")
                    i += 1
            elif c == "$":
                out.append(r"(?:\n?\Z)")
                self.triggered.add("dollar")
            else:
                out.append(c)
            i += 1
        return "".join(out)

    @contextlib.contextmanager
    def patched(self):
        """The reference with the enabled rows "implicit-empty" and "non-finite" applied."""
        deviations = self
        original_close = RP.ResponseParser._close_current
        original_float = CP.CONTENT_PARSERS["float"]
        original_cp_json, original_rp_json = CP.json, RP.json

        # Row "implicit-empty": an empty value of the implicit field does not overwrite an
        # earlier non-empty value of it (events unchanged).
        def close_current(self, events):
            name = self._current
            if name is None or not self._opened:
                return original_close(self, events)
            present = self.__dict__.setdefault("_chatparse_present", set())
            field = self._spec.fields[name]
            keep = (
                name == self._implicit_name and field.join is None and not field.repeats and name in present
            )
            before = self._output.get(name)
            original_close(self, events)
            present.add(name)
            if keep and not is_empty(before) and is_empty(self._output.get(name)):
                self._output[name] = before
                deviations.triggered.add("implicit-empty")

        # Row "non-finite": non-finite numbers are errors (JSON cannot carry them).
        def finite_float(text, args):
            value = original_float(text, args)
            if not math.isfinite(value):
                deviations.triggered.add("non-finite")
                raise ValueError(f"could not convert string to a finite float: {text!r}")
            return value

        class FiniteJson:
            JSONDecodeError = json.JSONDecodeError
            dumps = staticmethod(json.dumps)

            @staticmethod
            def loads(s):
                def constant(name):
                    deviations.triggered.add("non-finite")
                    raise json.JSONDecodeError(f"non-finite number {name}", s, 0)

                def number(text):
                    value = float(text)
                    if not math.isfinite(value):
                        deviations.triggered.add("non-finite")
                        raise json.JSONDecodeError(f"number out of range {text}", s, 0)
                    return value

                return json.loads(s, parse_constant=constant, parse_float=number)

        # Row "json-strings": the dialect rewrites leave JSON string literals alone.
        original_json = CP.CONTENT_PARSERS["json"]

        def chatparse_json(text, args):
            working = text
            if args.get("string_delims"):
                working = apply_string_delims(working, args["string_delims"])
            if args.get("unquoted_keys", False):
                working = quote_keys(working)
            if working == reference_json_rewrite(text, args):
                return original_json(text, args)
            deviations.triggered.add("json-strings")
            try:
                return CP.json.loads(working)
            except json.JSONDecodeError as e:
                if args.get("allow_non_json"):
                    return CP._text(text, args)
                raise ValueError(f"json: could not parse after dialect transforms: {e}") from e

        # Row "close-groups": the named groups of the close delimiter join the transform's
        # scope (the reference's docs say so; its code keeps only the open's).
        original_scan = RP.ResponseParser._scan

        def scan(self, watch, eos):
            best, hold = original_scan(self, watch, eos)
            self._chatparse_best = best
            return best, hold

        def with_close_groups(close):
            def close_current(self, events):
                best = self.__dict__.pop("_chatparse_best", None)
                if best is not None and best[0] == "close" and self._current == best[1].name and self._opened:
                    groups = {k: v for k, v in best[2].groupdict().items() if v is not None}
                    if groups:
                        deviations.triggered.add("close-groups")
                        self._captures.update(groups)
                return close(self, events)

            return close_current

        # Row "empty-close": where the implicit field's close matches the empty string while its
        # region is empty, the reference stops there for good (`_process` breaks out at that
        # position in every later feed and at the end, so the rest of the text is lost).
        # chatparse takes that empty match (closing nothing) and then, as after any empty
        # match, takes no second empty match at the same position: the scan goes on from the
        # next character.
        def scan_on(self, watch, eos, scan):
            last_empty = self.__dict__.get("_chatparse_empty_at")
            best, hold = scan(self, watch, eos)
            if best is not None:
                kind, field, m = best
                empty = m.start() == m.end()
                stall = empty and kind == "close" and field.name == self._implicit_name and not self._opened
                if empty and m.start() == self._pos and (stall or last_empty == m.start()):
                    if stall:
                        deviations.triggered.add("empty-close")
                    self._chatparse_empty_at = m.start()
                    pos = self._pos
                    if pos >= len(self._buffer):
                        return None, len(self._buffer)
                    self._pos = pos + 1
                    try:
                        best, hold = scan(self, watch, eos)
                    finally:
                        self._pos = pos
                    return best, hold
                self._chatparse_empty_at = m.end() if empty else None
            return best, hold

        def observed(scan):
            def observe_scan(self, watch, eos):
                best, hold = scan(self, watch, eos)
                if deviations.observing and best is not None and not eos and deviations.observe(self, best):
                    deviations.premature = True
                return best, hold

            return observe_scan

        if "implicit-empty" in self.enabled:
            RP.ResponseParser._close_current = close_current
        if "close-groups" in self.enabled:
            RP.ResponseParser._scan = scan
        if "empty-close" in self.enabled:
            inner_scan = RP.ResponseParser._scan
            RP.ResponseParser._scan = lambda self, watch, eos: scan_on(self, watch, eos, inner_scan)
            RP.ResponseParser._close_current = with_close_groups(RP.ResponseParser._close_current)
        if "json-strings" in self.enabled:
            CP.CONTENT_PARSERS["json"] = chatparse_json
        if "chunk-dependent" in self.enabled:
            RP.ResponseParser._scan = observed(RP.ResponseParser._scan)
        if "non-finite" in self.enabled:
            CP.CONTENT_PARSERS["float"] = finite_float
            CP.json = FiniteJson
            RP.json = FiniteJson
        try:
            yield
        finally:
            RP.ResponseParser._close_current = original_close
            RP.ResponseParser._scan = original_scan
            CP.CONTENT_PARSERS["json"] = original_json
            CP.CONTENT_PARSERS["float"] = original_float
            CP.json, RP.json = original_cp_json, original_rp_json


def is_empty(v):
    return v is None or (isinstance(v, (list, dict, str)) and not v)


def stream_agrees(stream, whole):
    """Whether a stream's recorded result is the one-shot run's (merged events, output, or
    error phase)."""
    if "error" in whole:
        return stream.get("expected_error", {}).get("phase") == whole["error"]["phase"]
    if "expected_error" in stream:
        return False
    streamed = merged(stream["initial"] + [e for f in stream["feeds"] for e in f] + stream["final"])
    return streamed == all_events(whole) and stream["output"] == whole["output"]


def one_shot_stream(size, whole):
    """A stream entry holding the one-shot run's result."""
    if "error" in whole:
        return {"chunk_size": size, "expected_error": whole["error"]}
    return {
        "chunk_size": size,
        "initial": [],
        "feeds": [all_events(whole)],
        "final": [],
        "output": whole["output"],
    }


def literal_runs(template):
    """The literal pieces of a template's delimiters: the strings of `open`/`close` and the
    runs of literal characters of the patterns (probes that may complete a delimiter cut off
    at the end of a text)."""
    runs = set()
    fields = template.get("fields") if isinstance(template, dict) else None
    for spec in fields.values() if isinstance(fields, dict) else []:
        if not isinstance(spec, dict):
            continue
        for key in ("open", "close"):
            value = spec.get(key)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item:
                    runs.add(item)
        for key in ("open_pattern", "close_pattern"):
            pattern = spec.get(key)
            if not isinstance(pattern, str):
                continue
            run, i = [], 0
            while i < len(pattern):
                c = pattern[i]
                if c == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
                    run.append(pattern[i + 1])
                    i += 2
                    continue
                if c == "\\" or c in "()[]{}|?*+.^$":
                    if run:
                        runs.add("".join(run))
                    run = []
                    if pattern.startswith("(?P<", i):
                        i = pattern.find(">", i) + 1 or len(pattern)
                    elif pattern.startswith("(?:", i):
                        i += 3
                    else:
                        i += 2 if c == "\\" else 1
                    continue
                run.append(c)
                i += 1
            if run:
                runs.add("".join(run))
    return runs


def outcome(record):
    """A recording's merged events and output (or error phase)."""
    if "error" in record:
        return ("error", record["error"]["phase"])
    return (all_events(record), record["output"])


def premature(case, dev):
    """Whether, feeding the prefix and then the text at once, the reference decides a
    delimiter match that more text could change (see `Deviations.observe`)."""
    dev.observing = True
    dev.premature = False
    try:
        run(case["template"], case.get("prefix"), [case.get("text", "")], case.get("tools"), dev.check)
    finally:
        dev.observing = False
    return dev.premature


def prefix_cut(case, check):
    """The prefix after its last anchor (as the reference cuts it), or `None`."""
    try:
        if check is not None:
            check(case["template"])
        spec = RT.load_response_template(copy.deepcopy(case["template"]))
    except Exception:  # noqa: BLE001
        return None
    prefix = case.get("prefix")
    return spec.truncate_past_last_anchor(prefix) if prefix else None


def chunk_dependent_parse(case, patched, whole, dev):
    """Row "chunk-dependent" for a `parse` recording. chatparse gives one result whatever the
    chunking; where the reference's depends on it, the recording is made comparable:

    - a stream whose result differs from the one-shot run gets the one-shot result;
    - where the prefix's end is such a boundary (the prefix and the text differ from the
      prefix's text and the text fed at once), the result of feeding them at once stands, and
      the split of events between the prefix, the feed and `finalize` is not compared;
    - where something decided at the end of the text could change with more text, the split
      of events between the feed and `finalize` is not compared.
    """
    cut = prefix_cut(case, dev.check)
    if cut and "error" not in whole:
        joined = dict(case, prefix="", text=cut + case.get("text", ""))
        at_once = run(joined["template"], "", [joined["text"]], case.get("tools"), dev.check)
        if outcome(at_once) != outcome(whole):
            dev.triggered.add("chunk-dependent")
            whole = at_once
            patched.pop("events", None)
            patched.pop("expected_error", None)
            if "error" in whole:
                patched.pop("expected", None)
                patched["expected_error"] = whole["error"]
            else:
                patched["expected"] = whole["output"]
    if "events" in patched and premature(case, dev):
        dev.triggered.add("chunk-dependent")
        patched.pop("events")
    streams = []
    for stream in patched["streams"]:
        if stream_agrees(stream, whole):
            streams.append(stream)
        else:
            dev.triggered.add("chunk-dependent")
            streams.append(one_shot_stream(stream["chunk_size"], whole))
    patched["streams"] = streams
    return patched


def record_patched(case, enabled):
    """The case recorded under the reference with the `enabled` deviation rows applied, and
    the rows that triggered."""
    dev = Deviations(enabled)
    patched_case = dict(case, template=dev.template(case["template"]))
    if "ops" in case:
        with dev.patched():
            dev.observing = "chunk-dependent" in enabled
            patched = record_ops(patched_case, dev.check, "after-error" in enabled)
            dev.observing = False
            raw = record_ops(patched_case, dev.check) if "after-error" in enabled else patched
            if "after-error" in enabled and without_messages(raw) != without_messages(patched):
                dev.triggered.add("after-error")
            text = ops_text(case["ops"])
            whole = run(patched_case["template"], case.get("prefix"), [text], case.get("tools"), dev.check)
            # Row "chunk-dependent": the calls' result differs from feeding their text at
            # once, or depends on where a feed ends; chatparse gives the one-shot result
            # (checked as the `parse` case of that text).
            dependent = "chunk-dependent" in enabled and "results" in patched
            dependent = dependent and (not ops_agree(patched, whole) or dev.premature)
            if dependent:
                dev.triggered.add("chunk-dependent")
                text_case = dict(patched_case, text=text, chunk_sizes=[])
                one_shot, whole = record_case(text_case, dev.check)
                one_shot = chunk_dependent_parse(text_case, one_shot, whole, dev)
                patched = dict(kind="parse", text=text, **one_shot)
        return patched, dev.triggered
    with dev.patched():
        patched, whole = record_case(patched_case, dev.check)
        if "chunk-dependent" in enabled:
            patched = chunk_dependent_parse(patched_case, patched, whole, dev)
    return patched, dev.triggered


def without_messages(record):
    """A recording with the error messages left out (the runner compares error phases)."""
    if isinstance(record, dict):
        return {k: without_messages(v) for k, v in record.items() if k != "message"}
    if isinstance(record, list):
        return [without_messages(v) for v in record]
    return record


def record_with_deviations(case):
    raw = record_ops(case) if "ops" in case else record_case(case)[0]
    every = set(ROWS) | {"chunk-dependent", "after-error"}
    patched, triggered = record_patched(case, every)
    if without_messages(patched) != without_messages(raw):
        # The rows that make a difference: leaving one out changes the recording.
        rows = sorted(
            row
            for row in triggered
            if without_messages(record_patched(case, every - {row})[0]) != without_messages(patched)
        )
        raw["deviation"] = dict(rows=rows or sorted(triggered), **patched)
    return raw


def main():
    global TRANSFORMERS, CP, RP, RT
    TRANSFORMERS, CP, RP, RT = reference()
    if sys.argv[1:] == ["--check"]:
        print(f"transformers {TRANSFORMERS.__version__}")
        return
    import logging

    logging.getLogger("transformers").setLevel(logging.ERROR)
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        recorded = record_with_deviations(case)
        result = {
            "id": case["id"],
            "kind": "ops" if "ops" in case else "parse",
            "source": case.get("source", "generated") + f"; recorded with transformers {TRANSFORMERS.__version__}",
            "template": case["template"],
            "prefix": case.get("prefix"),
        }
        if "ops" in case:
            result["ops"] = case["ops"]
        else:
            result["text"] = case.get("text", "")
        if case.get("tools") is not None:
            result["tools"] = case["tools"]
        result.update(recorded)
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
