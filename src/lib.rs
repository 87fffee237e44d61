//! chatparse turns raw LLM output into structured chat messages.
//!
//! The crate is organised by concept:
//!
//! - [`peg`]: the PEG parser engine (arena grammar, builder, partial and incremental parsing,
//!   tagged AST).
//! - [`json`]: JSON and Python-dict scanning used by the PEG engine's JSON parsers.
//! - [`diff`]: the differential comparison helpers of the template analyzer (marker
//!   segmentation, diff split, common prefix/suffix helpers).
//! - [`analyze`]: the differential template analyzer (reasoning, content and tool-call
//!   formats derived from renders of the chat template).
//! - [`template`]: Hugging Face-compatible chat template rendering (minijinja).
//! - [`response_template`]: Hugging Face-style declarative response templates.
//! - [`grammar`]: constrained-decoding grammars (GBNF, llguidance Lark) with lazy triggers,
//!   from the same PEG grammar as the parser.
//! - [`message`]: the message layer: the request model, the parsed message and its conformance
//!   comparison, the builder a mapper drives, JSON healing, and streaming deltas.
//! - [`conform`]: the conformance runner over recorded vectors.
//! - [`fixtures`]: model fixture folders (template, manifest, raw outputs and expected
//!   messages): loader, case runner with the known-failures ratchet and bless mode, round trip.
//! - [`engine`]: any parser under test behind one trait: the built-in engines, and a subprocess
//!   speaking the JSON-lines engine protocol; the harness's checks applied to any engine.
//! - [`report`]: the comparison report of a corpus run against engines (table, JSON, HTML).
//! - [`cli`]: the `chatparse` command line.
//! - [`shared_data`]: locating the read-only `../shared` data (templates, vectors, bench inputs).

pub mod analyze;
pub mod cli;
pub mod conform;
pub mod diff;
pub mod engine;
pub mod fixtures;
pub mod generate;
pub mod grammar;
pub mod json;
pub mod message;
pub mod peg;
pub mod report;
pub mod response_template;
pub mod shared_data;
pub mod template;
