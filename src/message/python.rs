//! Normalising Python-dict argument text (`{'key': 'value', 'ok': True}`) to JSON, incrementally.
//!
//! Some templates (the Seed family) make models write tool arguments as Python literals.
//! [`PythonToJson`] converts them chunk by chunk:
//! - single-quoted strings become double-quoted (`"` inside is escaped, `\'` unescaped);
//! - the bare words `True`, `False`, `None` become `true`, `false`, `null`;
//! - tuples become arrays, and a comma before a closer (`(1,)`) goes;
//! - zeros padding an integer (`07`) go;
//! - double-quoted strings and everything else pass through unchanged.
//!
//! Output is **monotone**: text is written only once it can no longer change (a bare word is held
//! back until the character after it, a backslash in a single-quoted string until the escaped
//! character, a comma until what follows it, a leading `0` until the next character), so the output for a prefix is a prefix of the
//! output for the whole text.
//! [`PythonToJson::finish`] flushes what was held back. Other Python escapes (`\x41`) pass
//! through unchanged and may not be valid JSON.

/// An incremental Python-literal to JSON converter (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct PythonToJson {
    state: State,
    /// A bare word being read (held back).
    word: String,
    /// A comma and the whitespace after it, held back until what follows shows whether it is
    /// one before a closer (dropped: `(1,)`, `[1, 2,]`).
    comma: String,
    /// A `0` that starts a number, held back until what follows shows whether it pads an
    /// integer (dropped: `07`).
    zero: bool,
    /// Whether the last character written outside strings was a digit or a `.` (a `0` after
    /// one is no padding).
    after_digit: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Outside,
    Single {
        backslash: bool,
    },
    Double {
        backslash: bool,
    },
}

impl PythonToJson {
    /// A converter at the start of the text.
    pub fn new() -> Self {
        Self::default()
    }

    /// Converts `input`, appending to `out` what is settled.
    pub fn push(&mut self, input: &str, out: &mut String) {
        for c in input.chars() {
            self.push_char(c, out);
        }
    }

    /// Flushes what was held back (a final bare word, a dangling backslash).
    pub fn finish(&mut self, out: &mut String) {
        if std::mem::take(&mut self.zero) {
            out.push('0');
        }
        self.flush_word(out);
        out.push_str(&self.comma);
        self.comma.clear();
        if let State::Single { backslash: true } = self.state {
            out.push('\\');
            self.state = State::Single { backslash: false };
        }
    }

    fn push_char(&mut self, c: char, out: &mut String) {
        match self.state {
            State::Outside => {
                if std::mem::take(&mut self.zero) && !c.is_ascii_digit() {
                    out.push('0');
                    self.after_digit = true;
                }
                let after_digit =
                    std::mem::replace(&mut self.after_digit, c.is_ascii_digit() || c == '.');
                if c == '0' && !after_digit && self.word.is_empty() {
                    // Maybe a zero padding an integer: held until the next character (a
                    // comma before it is no comma before a closer).
                    out.push_str(&self.comma);
                    self.comma.clear();
                    self.zero = true;
                    self.after_digit = false;
                    return;
                }
                // (A held comma comes right after a flushed word: the word is empty.)
                if !self.comma.is_empty() {
                    if matches!(c, ' ' | '\t' | '\n' | '\r') {
                        self.comma.push(c);
                        return;
                    }
                    if !matches!(c, ')' | ']' | '}') {
                        out.push_str(&self.comma);
                    }
                    self.comma.clear();
                }
                if c.is_ascii_alphanumeric() || c == '_' {
                    if !self.word.is_empty() || c.is_ascii_alphabetic() || c == '_' {
                        self.word.push(c);
                        return;
                    }
                } else {
                    self.flush_word(out);
                }
                match c {
                    ',' => self.comma.push(','),
                    '(' => out.push('['),
                    ')' => out.push(']'),
                    '\'' => {
                        out.push('"');
                        self.state = State::Single { backslash: false };
                    }
                    '"' => {
                        out.push('"');
                        self.state = State::Double { backslash: false };
                    }
                    _ => out.push(c),
                }
            }
            State::Single { backslash: true } => {
                match c {
                    '\'' => out.push('\''),
                    '"' => out.push_str("\\\""),
                    _ => {
                        out.push('\\');
                        out.push(c);
                    }
                }
                self.state = State::Single { backslash: false };
            }
            State::Single { backslash: false } => match c {
                '\\' => self.state = State::Single { backslash: true },
                '\'' => {
                    out.push('"');
                    self.state = State::Outside;
                }
                '"' => out.push_str("\\\""),
                _ => out.push(c),
            },
            State::Double { backslash } => {
                out.push(c);
                self.state = match (backslash, c) {
                    (false, '\\') => State::Double { backslash: true },
                    (false, '"') => State::Outside,
                    _ => State::Double { backslash: false },
                };
            }
        }
    }

    fn flush_word(&mut self, out: &mut String) {
        match self.word.as_str() {
            "" => return,
            "True" => out.push_str("true"),
            "False" => out.push_str("false"),
            "None" => out.push_str("null"),
            other => out.push_str(other),
        }
        self.word.clear();
    }
}

/// Converts a whole Python-literal text to JSON text (see the module docs).
pub fn python_to_json(text: &str) -> String {
    let mut converter = PythonToJson::new();
    let mut out = String::with_capacity(text.len());
    converter.push(text, &mut out);
    converter.finish(&mut out);
    out
}
