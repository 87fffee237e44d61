//! The error type of template compilation and rendering.

use std::fmt;

/// What went wrong while compiling or rendering a chat template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TemplateErrorKind {
    /// The template source does not parse.
    Syntax,
    /// The template called `raise_exception(message)`.
    Raised,
    /// The render ran out of fuel, recursed too deep, built too large a value or wrote too much
    /// output (see [`Limits`](super::Limits)).
    Limit,
    /// Any other failure while rendering (unknown filter or method, bad operand, ...).
    Render,
    /// The render input is not usable (for example a message that is not a JSON object).
    Input,
}

impl fmt::Display for TemplateErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TemplateErrorKind::Syntax => "syntax error",
            TemplateErrorKind::Raised => "template raised an exception",
            TemplateErrorKind::Limit => "resource limit exceeded",
            TemplateErrorKind::Render => "render error",
            TemplateErrorKind::Input => "invalid render input",
        })
    }
}

/// An error from compiling or rendering a chat template. It always names the template and, when
/// known, the 1-based line in the template source where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    kind: TemplateErrorKind,
    template: String,
    line: Option<usize>,
    message: String,
}

impl TemplateError {
    pub(crate) fn new(
        kind: TemplateErrorKind,
        template: impl Into<String>,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> TemplateError {
        TemplateError {
            kind,
            template: template.into(),
            line,
            message: message.into(),
        }
    }

    /// Converts a minijinja error, classifying it and keeping the line information.
    pub(crate) fn from_minijinja(template: &str, err: &minijinja::Error) -> TemplateError {
        use minijinja::ErrorKind as K;
        let detail = err.detail().unwrap_or_default();
        let kind = match err.kind() {
            _ if detail.starts_with(super::globals::RAISED_PREFIX) => TemplateErrorKind::Raised,
            _ if detail.starts_with(super::guard::LIMIT_PREFIX) => TemplateErrorKind::Limit,
            K::SyntaxError | K::BadEscape | K::InvalidDelimiter => TemplateErrorKind::Syntax,
            K::OutOfFuel => TemplateErrorKind::Limit,
            K::InvalidOperation if detail.contains("recursion limit") => TemplateErrorKind::Limit,
            K::WriteFailure => TemplateErrorKind::Limit,
            _ => TemplateErrorKind::Render,
        };
        let message = match kind {
            TemplateErrorKind::Raised => detail
                .strip_prefix(super::globals::RAISED_PREFIX)
                .unwrap_or(detail)
                .to_string(),
            _ if detail.is_empty() => err.kind().to_string(),
            _ => format!("{}: {detail}", err.kind()),
        };
        TemplateError::new(kind, template, err.line(), message)
    }

    /// The kind of failure.
    pub fn kind(&self) -> TemplateErrorKind {
        self.kind
    }

    /// The name the template was created with.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// The 1-based line in the template source, when known.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The message; for [`TemplateErrorKind::Raised`] the exact text passed to
    /// `raise_exception`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in template {}", self.kind, self.template)?;
        if let Some(line) = self.line {
            write!(f, " line {line}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for TemplateError {}
