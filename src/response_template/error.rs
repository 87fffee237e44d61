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
/// Carries the phase ([`ErrorKind`]), the template field involved (if any) and, for errors
/// caused by text, the byte offset in the stream (prefix after the anchor cut, then the
/// generated text) where the offending region closed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.render())]
pub struct Error {
    kind: ErrorKind,
    field: Option<String>,
    offset: Option<usize>,
    message: String,
}

impl Error {
    /// Creates an error of the given kind with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            field: None,
            offset: None,
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

    /// The bare message, without kind, field or offset.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn render(&self) -> String {
        let mut out = format!("{} error", self.kind);
        if let Some(field) = &self.field {
            out.push_str(&format!(" in field '{field}'"));
        }
        if let Some(offset) = self.offset {
            out.push_str(&format!(" at byte {offset}"));
        }
        out.push_str(": ");
        out.push_str(&self.message);
        out
    }
}

/// A `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
