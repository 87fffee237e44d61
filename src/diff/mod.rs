//! Differential comparison helpers of the template analyzer: plain string machinery, no chat
//! knowledge.
//!
//! The analyzer renders a chat template twice with one controlled change and compares the two
//! renders. This module owns that comparison:
//!
//! - [`segments`]: splits text into markers (`<|im_end|>`, `</tool_call>`, `[TOOL_CALLS]`) and
//!   the text between them. Segments borrow from the input.
//! - [`diff_split`]: cuts two strings `a`, `b` into a common `prefix`, the differing `left` (from
//!   `a`) and `right` (from `b`), and a common `suffix`, never cutting through a marker.
//!   [`check_split`] states and checks that contract.
//! - [`until_common_prefix`] / [`after_common_suffix`]: locate the common start (end) of two
//!   variants inside a third string and return what precedes (follows) it.
//! - [`common_prefix_len`] / [`common_suffix_len`]: char-safe common affix lengths in bytes.
//!
//! Inputs are `&str`; every output is a slice of an input, every cut is on a UTF-8 char
//! boundary, and no function panics on any input.
//!
//! ```
//! use chatparse::diff::diff_split;
//! let without = "<|im_start|>user\nHi<|im_end|>\n";
//! let with = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
//! let split = diff_split(without, with);
//! assert_eq!(split.prefix, without);
//! assert_eq!(split.right, "<|im_start|>assistant\n"); // the generation prompt
//! assert_eq!((split.left, split.suffix), ("", ""));
//! ```

mod affix;
mod segment;
mod split;
#[cfg(test)]
mod tests;

pub use affix::{after_common_suffix, common_prefix_len, common_suffix_len, until_common_prefix};
pub use segment::{segments, splits_marker, Segment, SegmentKind, Segments};
pub use split::{check_split, diff_split, DiffSplit};
