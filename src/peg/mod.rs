//! The PEG parser engine: an arena grammar built with a builder, partial and incremental
//! parsing, and a tagged AST.
//!
//! # Pipeline
//!
//! [`GrammarBuilder`] creates combinators ([`Parser`] handles into an arena) and
//! [`build`](GrammarBuilder::build)s an immutable [`Grammar`] (`Send + Sync`; rule references
//! resolved, unknown rules rejected). Parsing state lives outside the grammar: a one-shot
//! [`Grammar::parse`] / [`Grammar::parse_partial`] over borrowed text, or a [`Session`] fed
//! piece by piece. Results are a [`Status`] (success / need-more / failure), a
//! [`ParseError`] on failure, and an [`Ast`] of `tag` nodes.
//!
//! # Combinators
//!
//! | Builder method | Matches | At the end of input in partial mode |
//! |---|---|---|
//! | `eps()` / `start()` | nothing / offset 0 | — |
//! | `end()` | end of input | need-more |
//! | `literal(s)` | `s` | need-more if a prefix of `s` |
//! | `any()` | one character | need-more |
//! | `seq([..])` / `choice([..])` | all in order / first that matches | propagates |
//! | `zero_or_more`, `one_or_more`, `optional`, `repeat(p, min, max)` | greedy repetition | propagates |
//! | `peek(p)` / `negate(p)` | lookahead, consumes nothing (no AST nodes; nodes under an undecided lookahead are hidden from partial ASTs) | propagates |
//! | `chars("[a-z_]", min, max)` / `space()` | character class / whitespace runs | need-more |
//! | `until(d)` / `until_one_of([..])` | up to a delimiter (or the end, in full mode) | need-more (span stops before a delimiter prefix) |
//! | `rest()` | everything | need-more |
//! | `rule(name, p)` / `trigger_rule` / `reference(name)` | named, memoized, recursive | propagates |
//! | `schema(p, name, schema)` / `atomic(p)` / `tag(t, p)` | like `p` (metadata / hides partial nodes / AST node) | propagates |
//! | `json()`, `json_object()`, `json_array()`, `json_string()`, `json_number()`, `json_bool()`, `json_null()`, `json_string_content()` | JSON (or Python-dict) values | need-more inside the value |
//! | `json_member(key, p)` | `"key"` ws `:` ws `p` | propagates |
//!
//! # Outcomes and partial input
//!
//! In **full mode** the end of input is final. In **partial mode** (one-shot partial, or a
//! session before [`Session::finish`]) any matcher whose result could depend on bytes not
//! yet seen — a literal cut short, `until` without its delimiter, an open JSON value, `end`,
//! `rest`, `space`/`chars`/a repetition that reached the end — reports need-more, and
//! need-more **aborts the whole parse at once** (no alternative is tried, no lookahead is
//! decided). Consequently every decision made before the frontier only looked at bytes
//! that will not change: *a prefix of an input that parses never fails in partial mode*,
//! and the partial parse of a prefix is exactly the one-shot parse cut at the frontier.
//!
//! # Incremental design
//!
//! 1. The interpreter is an explicit-stack machine (no Rust recursion): frames record
//!    the child index of a sequence/choice, the iterations and last position of a
//!    repetition, the start and AST mark of tags, rules and lookaheads.
//! 2. On need-more the stack is kept and the leaf that ran out saves a resumable state:
//!    `until` the next search offset (old end − (delimiter length − 1)), `chars`/`space`
//!    their count and position, JSON its [`crate::json::Scanner`].
//! 3. [`Session::feed`] appends to the text and resumes that leaf; since nothing before the
//!    frontier can change (see above), the result equals a re-parse from scratch. Each byte
//!    is scanned O(1) times (an `until` re-examines at most delimiter length − 1 bytes per
//!    feed), so a feed costs O(chunk + longest delimiter) and feeding n bytes costs O(n)
//!    plus the grammar's own backtracking, as one shot would (checked by a work-counter
//!    test, [`Session::work`]: 1 MB in 4-byte chunks stays under 8 units per byte).
//!    [`Session::last_change`] tells a reader whether a feed only moved the suspended leaf
//!    ([`Change::Frontier`]: same nodes, open ones now end at the new frontier), so it can skip
//!    rebuilding the [`Ast`]. Leaves resumed on a few new bytes first check with one `memchr`
//!    whether a delimiter can start there at all; `until_one_of` over a suffix family
//!    (`"\n</parameter>"`, `"</parameter>"`) searches the shared core with `memmem` instead of
//!    stopping at every first byte.
//! 4. Named rules are packrat-memoized by `(rule, offset)` (failures, and successes with at
//!    most 64 AST nodes), so backtracking through rules is not exponential. Memo entries
//!    never need invalidation: a result that looked at the end of the input was need-more.
//! 5. AST nodes are appended in post-order to one `Vec` and truncated on backtracking; the
//!    [`Ast`] view converts them to pre-order and adds open tags as partial nodes. A reader
//!    that follows the parse asks for a window ([`Session::ast_from`]): the leading whole
//!    subtrees that no frame on the stack can still remove or wrap (found from the frames and
//!    the grammar's nodes that cannot fail) are left out, ids unchanged, so reading the tree
//!    after each feed costs O(unsettled nodes), not O(all nodes).
//!
//! # Limits and hostile input
//!
//! - Combinator nesting is limited ([`GrammarBuilder::max_depth`], default
//!   [`DEFAULT_PARSE_DEPTH`]); exceeding it (deep recursive rules, left recursion) is a
//!   [`ParseErrorKind::DepthLimit`] failure. JSON nesting is limited separately
//!   ([`GrammarBuilder::json_max_depth`]); `[` × 1 MB simply does not match.
//! - A repetition whose body succeeds without consuming input stops (the iteration counts).
//! - Memory is linear in the input (text, AST, memo entries per rule and offset).
//! - No panics on any input.
//!
//! # Text and UTF-8
//!
//! Parsing works on UTF-8 text. [`Session::feed`] takes bytes and validates them
//! incrementally: invalid sequences are replaced by U+FFFD and recorded
//! ([`Session::utf8_errors`], with raw byte offsets); an incomplete trailing code point is
//! held back until the next feed (or replaced at [`Session::finish`]). AST spans are byte
//! offsets into [`Session::text`], the decoded text (equal to the raw input when valid).
//!
//! # Example
//!
//! ```
//! use chatparse::peg::{GrammarBuilder, Status};
//!
//! let b = GrammarBuilder::new().name("native");
//! let call = b.trigger_rule(
//!     "tool-call",
//!     b.seq([
//!         b.literal("<tool_call>"),
//!         b.space(),
//!         b.tag("tool", b.seq([
//!             b.literal("{"),
//!             b.json_member("name", b.tag("tool_name", b.json_string())),
//!             b.literal(", "),
//!             b.json_member("arguments", b.tag("tool_args", b.json())),
//!             b.literal("}"),
//!         ])),
//!         b.space(),
//!         b.literal("</tool_call>"),
//!     ]),
//! );
//! let root = b.seq([b.tag("content", b.until("<tool_call>")), b.optional(call), b.end()]);
//! let grammar = b.build(root).unwrap();
//!
//! let text = r#"Sure.<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>"#;
//! let parse = grammar.parse(text);
//! assert!(parse.is_success());
//! let args = parse.ast.find_first("tool_args").unwrap();
//! assert_eq!(parse.ast.text(args, text), r#"{"x": 1}"#);
//!
//! // Streaming: the same grammar, fed in pieces.
//! let mut session = grammar.session();
//! assert_eq!(session.feed(br#"Sure.<tool_call>{"name": "f", "argu"#), Status::NeedMore);
//! assert!(session.ast().find_first("tool").is_some_and(|id| session.ast().is_partial(id)));
//! ```

#![deny(missing_docs)]

mod ast;
mod builder;
mod chars;
mod dump;
mod error;
mod grammar;
mod machine;
mod session;

#[doc(hidden)]
pub mod testing;

#[cfg(test)]
mod tests;

pub use ast::{Ast, AstId, AstNode, Siblings};
pub use builder::{GrammarBuilder, DEFAULT_PARSE_DEPTH};
pub use chars::CharClass;
pub use error::{BuildError, ParseError, ParseErrorKind};
/// The arena node kinds, for the constrained-decoding grammar generator ([`crate::grammar`]).
pub(crate) use grammar::Node;
pub use grammar::{Grammar, Parser, TagId};
pub use machine::Status;
pub use session::{Change, InvalidUtf8, Parse, Session};
