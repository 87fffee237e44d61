//! Where the probe values sit in the text of one tool call.

use super::json_scan::JsonSpan;
use super::ToolFormat;

/// A byte span `start..end`.
pub type Span = (usize, usize);

/// The positions of the probe values of one call (first probe set, two arguments) in the
/// call text.
#[derive(Debug, Clone, PartialEq)]
pub struct CallLayout {
    /// The format (T1).
    pub format: ToolFormat,
    /// The function name.
    pub name: Span,
    /// The call id, if it renders.
    pub id: Option<Span>,
    /// JSON native: the JSON value holding the call (an array when calls are wrapped in one).
    /// Tag with JSON: the arguments object.
    pub json: Option<JsonSpan>,
    /// Tagged: each argument's name and value spans, in order.
    pub args: Vec<(Span, Span)>,
    /// Where the call's own text starts (the name, or an id before it).
    pub start: usize,
    /// Where the call's own text ends (after the arguments, or an id after them).
    pub end: usize,
}

impl CallLayout {
    /// Where the arguments end: after the JSON object, or after the last value.
    pub fn args_end(&self) -> usize {
        match (&self.json, self.args.last()) {
            (Some(j), _) => j.end,
            (_, Some((_, value))) => value.1,
            _ => self.name.1,
        }
    }
}
