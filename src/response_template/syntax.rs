//! The response-template language (documentation only).
//!
//! A template is a JSON object:
//!
//! ```json
//! {
//!   "version": 1,
//!   "defaults": {"role": "assistant"},
//!   "start_anchor": "<|im_start|>assistant\n",
//!   "fields": {
//!     "thinking":   {"open": "<think>", "close": "</think>"},
//!     "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": true,
//!                    "content": "json",
//!                    "transform": {"type": "function", "function": "{content}"}},
//!     "content":    {"close": "<|im_end|>"}
//!   }
//! }
//! ```
//!
//! # Top level
//!
//! | key | meaning |
//! | --- | --- |
//! | `version` | optional; only `1` is accepted |
//! | `defaults` | a dict copied into every message; its keys survive even when empty |
//! | `start_anchor` / `start_anchor_pattern` | exactly one: a literal (or list of literals) / a regex marking where the assistant message starts in a prompt prefix |
//! | `fields` | an ordered dict of field name → field spec |
//!
//! The prefix (the prompt) is cut after the *last* anchor match; what follows is parsed as if
//! the model had generated it, and its events are the parser's initial events. The anchor is
//! never looked for in generated text.
//!
//! # Fields
//!
//! | key | meaning |
//! | --- | --- |
//! | `open` / `open_pattern` | literal (or non-empty list of non-empty literals; the longest alternative wins) / Python regex that starts a region |
//! | `close` / `close_pattern` | same, ends the region; absent: the region runs to the end |
//! | `repeats` | each region appends to a list |
//! | `join` | with `repeats`: string values are concatenated with this separator |
//! | `optional` | `false`: finalizing fails if the field never matched |
//! | `content` | `text` (default), `int`, `float`, `bool`, `json`, `xml-inline`, `kv-lines` |
//! | `content_args` | arguments of the content type (see the content table in the module docs) |
//! | `transform` | a JSON shape whose whole-string `"{path}"` placeholders take values from `content` and the patterns' named groups |
//! | `transform_each` | the content is a list; the transform applies to each element, whose keys join the scope |
//!
//! A field with neither `open` nor `open_pattern` is the *implicit* field (at most one): it
//! collects text outside every other region. Named groups require a `transform`.
//!
//! Any other key (at the top, in a field, in `content_args` for the field's content type, in a
//! `value_parser`) is a load error, as is a flag that is not `true`/`false`.
//!
//! A placeholder is a whole string `{a}` or `{a.b.c}` (Unicode word characters): `a` is
//! `content` or a named group that took part in the open's or the close's match, each further
//! name a key of a dict (a list cannot be indexed). With `transform_each`, each list item must
//! be a dict, and its keys (with the groups) are the scope.
//!
//! # Regexes
//!
//! Python syntax, `DOTALL` on, `MULTILINE` off: `.` matches newlines, `^` is the start of the
//! stream, `$` the end (or before a final newline), `\w`/`\d`/`\s` are Unicode.
//!
//! # Content types
//!
//! - `text`: stripped unless `strip: false`.
//! - `int`, `float`: Python's `int()`/`float()` (whitespace, sign, underscores between digits,
//!   Unicode digits).
//! - `bool`: `true` when the (stripped) text lowercased is `true` or `1`, else `false`.
//! - `json`: `string_delims` (pairs of `[open, close]` that wrap strings) are turned into JSON
//!   strings, then `unquoted_keys` quotes a bare key right after `{` or `,` and right before
//!   `:` (both outside string literals), then strict JSON (JSON whitespace only); on failure
//!   `allow_non_json` yields the text (stripped unless `strip: false`).
//! - `xml-inline`: every `tag_pattern` match gives `key` → `value` (through `value_parser`, a
//!   `{"name", "args"}` content type, if given); `merge_duplicates` collects repeated keys.
//! - `kv-lines`: lines split on `line_sep` (default `\n`), each split at the first `kv_sep`
//!   (default `:`); lines without it are skipped; `strip` and `value_parser` as above.
//!
//! # Tool coercion
//!
//! With `tools`, string arguments of tool-call-shaped values are converted to the types of
//! their JSON schema (`integer` — also a whole number written as a float, `3.0` —, `number` —
//! an integer unless written with a `.` —, `boolean`, `null`, `object`, `array`); values that
//! do not convert are kept. When several tools share a name, the last one counts.
