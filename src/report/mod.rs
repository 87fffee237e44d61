//! The comparison report of a corpus run against engines ([`Comparison`]): a text table for
//! the terminal ([`table`]), JSON ([`json`]) and a self-contained HTML page with the failing
//! cases' diffs ([`html`]).
//!
//! The table has one row per model folder and, per engine, the cases passed one shot, passed
//! streamed, and the cases with a retraction, an engine error or a timeout; `-` where the
//! engine has no parser for any of the folder's cases.

pub mod html;
pub mod json;
pub mod table;

pub use crate::engine::corpus::Comparison;
