//! Build errors (grammar construction) and parse errors (furthest failure with expectations).

use std::fmt;

/// An error while building a grammar. The kind is private; use the accessors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}")]
pub struct BuildError {
    kind: BuildErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum BuildErrorKind {
    #[error("reference to unknown rule `{0}`")]
    UnknownRule(String),
    #[error("rule `{0}` is defined twice")]
    DuplicateRule(String),
    #[error("invalid character class `{class}`: {msg}")]
    CharClass { class: String, msg: String },
    #[error("empty delimiter in until")]
    EmptyDelimiter,
    #[error("repeat with min {min} greater than max {max}")]
    RepeatBounds { min: u32, max: u32 },
}

impl BuildError {
    pub(crate) fn unknown_rule(name: &str) -> Self {
        BuildError {
            kind: BuildErrorKind::UnknownRule(name.to_owned()),
        }
    }
    pub(crate) fn duplicate_rule(name: &str) -> Self {
        BuildError {
            kind: BuildErrorKind::DuplicateRule(name.to_owned()),
        }
    }
    pub(crate) fn char_class(class: &str, msg: &str) -> Self {
        BuildError {
            kind: BuildErrorKind::CharClass {
                class: class.to_owned(),
                msg: msg.to_owned(),
            },
        }
    }
    pub(crate) fn empty_delimiter() -> Self {
        BuildError {
            kind: BuildErrorKind::EmptyDelimiter,
        }
    }
    pub(crate) fn repeat_bounds(min: u32, max: u32) -> Self {
        BuildError {
            kind: BuildErrorKind::RepeatBounds { min, max },
        }
    }

    /// The rule name involved (unknown or duplicate rule), if any.
    pub fn rule(&self) -> Option<&str> {
        match &self.kind {
            BuildErrorKind::UnknownRule(r) | BuildErrorKind::DuplicateRule(r) => Some(r),
            _ => None,
        }
    }
}

/// What kind of parse failure occurred.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The input does not match the grammar.
    NoMatch,
    /// The combinator nesting exceeded the grammar's depth limit (deep recursion, hostile
    /// input). Not backtracked: the whole parse fails.
    DepthLimit,
}

/// A parse failure: the furthest byte offset any matcher reached, its line and column, and
/// what was expected there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    pub(crate) kind: ParseErrorKind,
    pub(crate) offset: usize,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) expected: Vec<String>,
    pub(crate) rule: Option<String>,
    pub(crate) grammar: Option<String>,
}

impl ParseError {
    /// The kind of failure.
    pub fn kind(&self) -> ParseErrorKind {
        self.kind
    }
    /// Byte offset (in the decoded text) of the furthest failure.
    pub fn offset(&self) -> usize {
        self.offset
    }
    /// 1-based line of [`offset`](Self::offset).
    pub fn line(&self) -> usize {
        self.line
    }
    /// 1-based column, in characters, of [`offset`](Self::offset).
    pub fn column(&self) -> usize {
        self.column
    }
    /// What was expected at the offset (deduplicated, in first-seen order), e.g.
    /// `` `</think>` `` or `JSON value`.
    pub fn expected(&self) -> &[String] {
        &self.expected
    }
    /// The innermost named rule active at the furthest failure.
    pub fn rule(&self) -> Option<&str> {
        self.rule.as_deref()
    }
    /// The grammar's name, if it has one.
    pub fn grammar(&self) -> Option<&str> {
        self.grammar.as_deref()
    }

    /// The message followed by the offending line of `text` (the parsed text) and a caret
    /// under the column.
    ///
    /// ```
    /// use chatparse::peg::GrammarBuilder;
    /// let b = GrammarBuilder::new();
    /// let root = b.seq([b.literal("a\n"), b.literal("bc")]);
    /// let g = b.build(root).unwrap();
    /// let e = g.parse("a\nbx").error.unwrap();
    /// assert_eq!(
    ///     e.render("a\nbx"),
    ///     "parse error at line 2, column 2 (byte 3): expected `bc`\n  |\n2 | bx\n  |  ^\n"
    /// );
    /// ```
    pub fn render(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let at = self.offset.min(bytes.len());
        let start =
            memchr::memrchr(b'\n', bytes.get(..at).unwrap_or_default()).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', bytes.get(at..).unwrap_or_default())
            .map_or(bytes.len(), |i| at + i);
        let line = String::from_utf8_lossy(bytes.get(start..end).unwrap_or_default());
        let number = self.line.to_string();
        let pad = " ".repeat(number.len());
        format!(
            "{self}\n{pad} |\n{number} | {line}\n{pad} | {}^\n",
            " ".repeat(self.column.saturating_sub(1))
        )
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ParseErrorKind::NoMatch => f.write_str("parse error")?,
            ParseErrorKind::DepthLimit => f.write_str("nesting depth limit exceeded")?,
        }
        write!(
            f,
            " at line {}, column {} (byte {})",
            self.line, self.column, self.offset
        )?;
        if let Some(rule) = &self.rule {
            write!(f, " in rule `{rule}`")?;
        }
        if let Some(g) = &self.grammar {
            write!(f, " of grammar `{g}`")?;
        }
        if !self.expected.is_empty() {
            write!(f, ": expected {}", self.expected.join(" or "))?;
        }
        Ok(())
    }
}

/// 1-based line and character column of byte `offset` in `text`.
pub(crate) fn line_column(text: &[u8], offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    let column = before
        .get(line_start..)
        .unwrap_or(&[])
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count()
        + 1;
    (line, column)
}
