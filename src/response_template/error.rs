//! The error type of the response-template engine.

use std::fmt;

/// The phase in which an [`Error`] was raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The template itself is invalid (schema, patterns, transforms).
    Load,
    /// Creating a parser failed (for example while processing the prefix).
    Init,
    /// Feeding text failed (a region's value could not be computed, or the parser is finished).
    Feed,
    /// Finalizing failed (a required field is missing, or a value could not be computed).
    Finalize,
}

impl ErrorKind {
    /// The phase name as used by the conformance vectors (`load`, `init`, `feed`, `finalize`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Load => "load",
            ErrorKind::Init => "init",
            ErrorKind::Feed => "feed",
            ErrorKind::Finalize => "finalize",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error from loading a template or parsing a response.
///
/// Carries the phase ([`ErrorKind`]), the template field involved (if any), for load errors
/// the path of the offending key in the template (`fields.tool_calls.content_args.strip`) and,
/// when the template was read from JSON text, that key's line and column; for errors caused
/// by text, the byte offset in the stream (prefix after the anchor cut, then the generated
/// text) where the offending region closed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.render())]
pub struct Error {
    kind: ErrorKind,
    field: Option<String>,
    offset: Option<usize>,
    path: Vec<String>,
    location: Option<(usize, usize)>,
    message: String,
}

impl Error {
    /// Creates an error of the given kind with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            field: None,
            offset: None,
            path: Vec::new(),
            location: None,
            message: message.into(),
        }
    }

    pub(crate) fn load(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Load, message)
    }

    pub(crate) fn with_field(mut self, field: &str) -> Error {
        if self.field.is_none() {
            self.field = Some(field.to_owned());
        }
        self
    }

    pub(crate) fn with_offset(mut self, offset: usize) -> Error {
        if self.offset.is_none() {
            self.offset = Some(offset);
        }
        self
    }

    /// Sets the template path of the offending key (outermost first), unless one is set.
    pub(crate) fn with_path<S: AsRef<str>>(mut self, path: &[S]) -> Error {
        if self.path.is_empty() {
            self.path = path.iter().map(|s| s.as_ref().to_owned()).collect();
        }
        self
    }

    /// Puts `outer` keys in front of the path (the template sits inside a larger document).
    pub(crate) fn under_path(mut self, outer: &[&str]) -> Error {
        let mut path: Vec<String> = outer.iter().map(|s| (*s).to_owned()).collect();
        path.append(&mut self.path);
        self.path = path;
        self
    }

    pub(crate) fn with_location(mut self, location: Option<(usize, usize)>) -> Error {
        if self.location.is_none() {
            self.location = location;
        }
        self
    }

    pub(crate) fn with_kind(mut self, kind: ErrorKind) -> Error {
        self.kind = kind;
        self
    }

    /// The phase in which the error was raised.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The template field the error concerns, if any.
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// The byte offset in the stream where the error arose, for errors caused by text.
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// For load errors, the path of the offending key in the template, outermost first (e.g.
    /// `["fields", "tool_calls", "content_args", "strip"]`); empty when the error concerns the
    /// template as a whole.
    pub fn path(&self) -> &[String] {
        &self.path
    }

    /// For load errors of a template read from JSON text, the line and column (1-based, in
    /// characters) of the offending key.
    pub fn location(&self) -> Option<(usize, usize)> {
        self.location
    }

    /// The bare message, without kind, field, path, location or offset.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn render(&self) -> String {
        let mut out = format!("{} error", self.kind);
        if let Some(field) = &self.field {
            out.push_str(&format!(" in field '{field}'"));
        }
        if !self.path.is_empty() {
            out.push_str(&format!(" at {}", dotted(&self.path)));
        }
        if let Some((line, column)) = self.location {
            out.push_str(&format!(" (line {line}, column {column})"));
        }
        if let Some(offset) = self.offset {
            out.push_str(&format!(" at byte {offset}"));
        }
        out.push_str(": ");
        out.push_str(&self.message);
        out
    }
}

/// A path as `a.b.c`, with keys that are not plain words quoted (`fields."a.b".open`).
fn dotted(path: &[String]) -> String {
    let parts: Vec<String> = path
        .iter()
        .map(|key| {
            let plain = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
            if plain {
                key.clone()
            } else {
                serde_json::Value::String(key.clone()).to_string()
            }
        })
        .collect();
    parts.join(".")
}

/// A `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
