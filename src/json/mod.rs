//! JSON and Python-dict scanning: a resumable, depth-bounded validator, healing of partial
//! documents, and Python-to-JSON normalisation.
//!
//! - Input: bytes (an append-only buffer when scanning incrementally). Output: [`Scan`] —
//!   `Complete(end)`, `NeedMore` (partial mode: the input ended inside the value) or
//!   `Fail { offset, expected }`.
//! - [`Scanner`] is a state machine with an explicit container stack (no recursion): it
//!   stops at the end of the buffer and [`Scanner::resume`] continues from the same byte, so
//!   a value fed in chunks is scanned in O(total length). String contents are skipped eight
//!   bytes at a time.
//! - Limits: nesting deeper than [`DEFAULT_MAX_DEPTH`] (configurable) fails instead of
//!   overflowing anything; memory is O(depth).
//! - Partial input: every prefix of a valid document scans as `NeedMore` (or `Complete`),
//!   never `Fail`. Numbers end by lookahead, so a top-level number is only complete in full
//!   mode or once a following byte is seen.
//! - Flavours: [`Flavour::Json`] agrees with `serde_json` on which documents are valid
//!   (except `serde_json`'s own limits: recursion depth 128 and number range);
//!   [`Flavour::Python`] accepts Python `repr()` literals.
//! - [`heal`] closes a partial document into valid JSON; [`python_to_json`] normalises.
//!
//! ```
//! use chatparse::json::{validate, Flavour, Scan};
//! assert_eq!(validate(br#"{"a": [1, true]}"#, Flavour::Json, false), Scan::Complete(16));
//! assert_eq!(validate(br#"{"a": [1, tr"#, Flavour::Json, true), Scan::NeedMore);
//! assert!(matches!(validate(b"{'a': None}", Flavour::Json, false), Scan::Fail { offset: 1, .. }));
//! assert_eq!(validate(b"{'a': None}", Flavour::Python, false), Scan::Complete(11));
//! ```

#![deny(missing_docs)]

mod heal;
mod python;
pub(crate) mod scanner;
pub mod schema;

#[cfg(test)]
mod tests;

pub use heal::{heal, HealError};
pub use python::{python_to_json, PythonError};
pub use scanner::{scan, validate, Flavour, Scan, Scanner, Target, DEFAULT_MAX_DEPTH};
