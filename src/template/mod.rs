//! Hugging Face-compatible chat template rendering, and capability probing.
//!
//! This module owns everything minijinja: nothing outside `template/` sees a minijinja type.
//!
//! **Input:** a Jinja chat template (the `chat_template` of a model's tokenizer config) and a
//! [`RenderInput`]: OpenAI-style messages, optional tools, `add_generation_prompt`, extra
//! variables (`enable_thinking`, `bos_token`, ...) and a [`Clock`] for `strftime_now`.
//! **Output:** the prompt text, byte for byte what transformers' `apply_chat_template(...,
//! tokenize=False)` renders with Python Jinja2, or a [`TemplateError`] that names the template
//! and the line.
//!
//! How it matches transformers (see each submodule for details):
//! - `environment`: `trim_blocks` + `lstrip_blocks`, loop controls, no auto-escape, Python-style
//!   printing of `None`/`True`/lists/dicts (by `{{ }}`, `~` and `| string`);
//! - `filters`: transformers' `tojson` (Python `json.dumps`, no HTML escaping, `indent`,
//!   `separators`, `sort_keys`, `ensure_ascii`), `from_json`, Jinja2's `indent`, `int`,
//!   `float`, `length`, `replace`, `string`;
//! - `tests_jinja`: Jinja2's `iterable` and `sequence` tests;
//! - `globals`: `raise_exception`, `strftime_now`, `namespace` (with mutable lists, see
//!   `value`), and extra Python string methods on top of minijinja-contrib's `pycompat`;
//! - `preprocess`: `{% generation %}` blocks are rewritten to `{% if true %}` before compiling,
//!   and `{% set ns.attr = value %}` to a checked `{% do __chatparse_setattr(...) %}`;
//! - `render`: transformers' context (`tools`/`documents` are `none` when absent) and its
//!   reasoning-field aliasing (`reasoning_content`/`thinking`/`reasoning`).
//!
//! **Known differences from transformers** (measured with `scripts/jinja2_oracle.py`: of 1087
//! renders, from the shared templates and 58 single-behaviour snippets, 970 are byte-identical,
//! 78 fail on both sides, and the other 39 fall in these groups):
//! - deliberate: `list.append`/`pop` on namespace lists mutate (transformers' immutable sandbox
//!   raises `SecurityError`), and the `from_json` filter exists (transformers has none);
//! - lenient: minijinja iterates `none` as an empty list and `map`/`select` give lists, so
//!   templates that make Python raise (`'NoneType' object is not iterable`, `generator is not
//!   JSON serializable`) render here;
//! - `Markup` arithmetic: Jinja2 HTML-escapes a string added to a `|safe` string
//!   (`"x"|safe + s`); minijinja's `+` does not;
//! - Python's `'%s' % x` string formatting is not supported (a render error; no shared
//!   template uses it; `'{}'.format(x)` works);
//! - `strftime_now` formats in UTC (transformers uses the local time zone).
//! - assigning a namespace attribute in a `{% set ns.attr %}...{% endset %}` block or a tuple
//!   target (`{% set ns.a, b = ... %}`) is a render error (no shared template does; see Limits).
//!
//! **Limits:** templates are untrusted code. Each render has a fuel budget (instructions) and a
//! recursion limit ([`Limits`]); exceeding one is an error of kind [`TemplateErrorKind::Limit`],
//! never a hang. Memory is guarded too (`guard`): every value a render builds is measured
//! against [`Limits::max_value_bytes`] and everything it writes (output and captured blocks)
//! against [`Limits::max_output_bytes`], so a template doubling a string in a loop fails with a
//! `Limit` error instead of exhausting memory; a literal-only repetition that minijinja would
//! fold at compile time (`['x'] * 100000000`) is refused before compiling. Neither a mutable list nor a namespace can be made to
//! contain itself or to hold values nested more than 64 levels deep (a render error): minijinja
//! compares, prints and drops values recursively, so `{% set a.me = a %}...{{ a == b }}` or a
//! loop nesting a list once per iteration would overflow the stack. `{% set ns.attr = value %}`
//! is rewritten (by `preprocess`) into a checked call; other assignment forms to namespace
//! attributes (`{% set ns.attr %}` blocks, tuple targets) are render errors. A panic inside
//! minijinja during a render (3.0.5 panics on a negative-step slice of an empty string,
//! `''[::-1]`) becomes a render error.
//!
//! **Cost:** compiling happens once in [`ChatTemplate::new`]; a render converts the input to
//! template values and runs the compiled program (microseconds for typical templates, see
//! `benches/template.rs`).
//!
//! [`Capabilities::probe`] renders a template with probe conversations to find out what it
//! supports (system role, tools, tool calls, ...), without looking at its name or text.
//!
//! # Example
//!
//! ```
//! use chatparse::template::{ChatTemplate, RenderInput};
//! use serde_json::json;
//!
//! let source = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}\
//!               {% if add_generation_prompt %}<|assistant|>{% endif %}";
//! let template = ChatTemplate::new("demo", source)?;
//! let input = RenderInput::new(vec![json!({"role": "user", "content": "Hi"})])
//!     .with_generation_prompt(true);
//! assert_eq!(template.render(&input)?, "<|user|>Hi\n<|assistant|>");
//! # Ok::<(), chatparse::template::TemplateError>(())
//! ```

mod capabilities;
mod environment;
mod error;
mod filters;
mod globals;
mod guard;
mod preprocess;
mod python;
mod render;
mod strftime;
mod tests_jinja;
mod value;

pub use capabilities::{ArgumentsForm, Capabilities};
pub use environment::Limits;
pub use error::{TemplateError, TemplateErrorKind};
pub use render::{ChatTemplate, Clock, Continuation, RenderInput};
