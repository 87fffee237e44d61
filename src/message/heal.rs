//! Healing a prefix of JSON text into parsable JSON, for displaying partial tool-call arguments.
//!
//! [`heal`] scans the text once (O(n), no recursion, nesting bounded by [`MAX_DEPTH`]) and returns
//! a [`Healing`]: keep `text[..keep]` and append `closers`. It
//! - closes an open string value (dropping a cut escape such as `\`, `\u12` or an unpaired
//!   high-surrogate escape),
//! - drops a dangling member: a partial key, a key without value, a value-less colon, a trailing
//!   comma, a lone `-`,
//! - cuts a number back to its longest valid prefix (`1.` → `1`, `2e-` → `2`),
//! - completes a cut literal (`tr` → `true`),
//! - closes open arrays and objects.
//!
//! Input that is not a prefix of valid JSON, nests deeper than [`MAX_DEPTH`], or holds no value
//! yet (empty or whitespace) gives `None`. It never panics.

/// Deepest array/object nesting [`heal`] accepts.
pub const MAX_DEPTH: usize = 128;

/// How to turn a JSON prefix into parsable JSON: `text[..keep]` followed by `closers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Healing {
    /// How many bytes of the text to keep (always a char boundary).
    pub keep: usize,
    /// What to append: the rest of a cut literal, a closing quote, `]` and `}`.
    pub closers: String,
}

impl Healing {
    /// The healed text of `text` (the same text [`heal`] was given).
    pub fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(self.keep + self.closers.len());
        out.push_str(text.get(..self.keep).unwrap_or(text));
        out.push_str(&self.closers);
        out
    }

    /// Whether healing only appends (nothing of the text is dropped).
    pub fn only_appends(&self, text: &str) -> bool {
        self.keep == text.len()
    }
}

/// Heals `text` (see the module docs); `None` when it cannot be healed.
pub fn heal(text: &str) -> Option<Healing> {
    let bytes = text.as_bytes();
    let mut scanner = Scanner::default();
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        // Inside a string (no escape under way): jump to the next quote or backslash with
        // `memchr2`; the bytes skipped only need checking for control characters, and the
        // string stays keepable up to the jump target (an ASCII byte or the end, both char
        // boundaries).
        if let Lexeme::Str {
            escape: Escape::None,
            high_surrogate: None,
            ref mut safe,
            ..
        } = scanner.lexeme
        {
            let rest = bytes.get(i..).unwrap_or_default();
            let j = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
            if j > 0 {
                let skipped = rest.get(..j).unwrap_or_default();
                if skipped.iter().fold(false, |ctl, &b| ctl | (b < 0x20)) {
                    return None;
                }
                *safe = i + j;
                i += j;
                continue;
            }
        }
        scanner.step(text, i, byte)?;
        i += 1;
    }
    scanner.finish(text.len())
}

/// [`heal`] applied: the healed text, or `None`.
pub fn heal_str(text: &str) -> Option<String> {
    heal(text).map(|h| h.apply(text))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

struct Frame {
    container: Container,
    /// Offset just after the opening bracket or the last complete member/element.
    safe: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A value (top level start, after `:` or after `,` in an array).
    Value,
    /// A value or `]` (just after `[`).
    ValueOrClose,
    /// A key or `}` (just after `{`).
    KeyOrClose,
    /// A key (after `,` in an object).
    Key,
    /// `:` after a key.
    Colon,
    /// `,` or the container's closer, after a value.
    CommaOrClose,
    /// Only whitespace: the top-level value is complete.
    End,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    Backslash,
    /// `\u` followed by `digits` hex digits with value `code` so far.
    Unicode {
        digits: u8,
        code: u32,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigits,
}

#[derive(Clone, Copy)]
enum Lexeme {
    None,
    Str {
        key: bool,
        /// End of the string content that can be kept.
        safe: usize,
        escape: Escape,
        /// Offset of an escaped high surrogate still waiting for its low half.
        high_surrogate: Option<usize>,
    },
    Number {
        state: Num,
        /// End of the longest valid number so far, if any.
        safe: Option<usize>,
    },
    Literal {
        word: &'static str,
        matched: usize,
    },
}

struct Scanner {
    stack: Vec<Frame>,
    expect: Expect,
    lexeme: Lexeme,
}

impl Default for Scanner {
    fn default() -> Self {
        Scanner {
            stack: Vec::new(),
            expect: Expect::Value,
            lexeme: Lexeme::None,
        }
    }
}

impl Scanner {
    fn step(&mut self, text: &str, i: usize, byte: u8) -> Option<()> {
        match self.lexeme {
            Lexeme::None => self.structural(i, byte),
            Lexeme::Str { .. } => self.string(text, i, byte),
            Lexeme::Number { state, safe } => match next_number_state(state, byte) {
                Some(next) => {
                    let safe = if number_complete(next) {
                        Some(i + 1)
                    } else {
                        safe
                    };
                    self.lexeme = Lexeme::Number { state: next, safe };
                    Some(())
                }
                None if number_complete(state) => {
                    self.lexeme = Lexeme::None;
                    self.complete_value(i);
                    self.structural(i, byte)
                }
                None => None,
            },
            Lexeme::Literal { word, matched } => {
                if word.as_bytes().get(matched) != Some(&byte) {
                    return None;
                }
                if matched + 1 == word.len() {
                    self.lexeme = Lexeme::None;
                    self.complete_value(i + 1);
                } else {
                    self.lexeme = Lexeme::Literal {
                        word,
                        matched: matched + 1,
                    };
                }
                Some(())
            }
        }
    }

    fn structural(&mut self, i: usize, byte: u8) -> Option<()> {
        if matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
            return Some(());
        }
        match (self.expect, byte) {
            (Expect::Value | Expect::ValueOrClose, _) if byte != b']' => self.value_start(i, byte),
            (Expect::ValueOrClose, b']') => self.close(Container::Array, i),
            (Expect::KeyOrClose, b'}') => self.close(Container::Object, i),
            (Expect::KeyOrClose | Expect::Key, b'"') => {
                self.lexeme = Lexeme::Str {
                    key: true,
                    safe: i + 1,
                    escape: Escape::None,
                    high_surrogate: None,
                };
                Some(())
            }
            (Expect::Colon, b':') => {
                self.expect = Expect::Value;
                Some(())
            }
            (Expect::CommaOrClose, b',') => {
                self.expect = match self.stack.last()?.container {
                    Container::Object => Expect::Key,
                    Container::Array => Expect::Value,
                };
                Some(())
            }
            (Expect::CommaOrClose, b']') => self.close(Container::Array, i),
            (Expect::CommaOrClose, b'}') => self.close(Container::Object, i),
            _ => None,
        }
    }

    fn value_start(&mut self, i: usize, byte: u8) -> Option<()> {
        match byte {
            b'{' | b'[' => {
                if self.stack.len() >= MAX_DEPTH {
                    return None;
                }
                let (container, expect) = if byte == b'{' {
                    (Container::Object, Expect::KeyOrClose)
                } else {
                    (Container::Array, Expect::ValueOrClose)
                };
                self.stack.push(Frame {
                    container,
                    safe: i + 1,
                });
                self.expect = expect;
            }
            b'"' => {
                self.lexeme = Lexeme::Str {
                    key: false,
                    safe: i + 1,
                    escape: Escape::None,
                    high_surrogate: None,
                }
            }
            b'-' => {
                self.lexeme = Lexeme::Number {
                    state: Num::Minus,
                    safe: None,
                }
            }
            b'0' => {
                self.lexeme = Lexeme::Number {
                    state: Num::Zero,
                    safe: Some(i + 1),
                }
            }
            b'1'..=b'9' => {
                self.lexeme = Lexeme::Number {
                    state: Num::Int,
                    safe: Some(i + 1),
                }
            }
            b't' => {
                self.lexeme = Lexeme::Literal {
                    word: "true",
                    matched: 1,
                }
            }
            b'f' => {
                self.lexeme = Lexeme::Literal {
                    word: "false",
                    matched: 1,
                }
            }
            b'n' => {
                self.lexeme = Lexeme::Literal {
                    word: "null",
                    matched: 1,
                }
            }
            _ => return None,
        }
        Some(())
    }

    fn close(&mut self, container: Container, i: usize) -> Option<()> {
        let frame = self.stack.pop()?;
        if frame.container != container {
            return None;
        }
        self.complete_value(i + 1);
        Some(())
    }

    /// A value (or key) ended at offset `end`.
    fn complete_value(&mut self, end: usize) {
        match self.stack.last_mut() {
            Some(frame) => {
                frame.safe = end;
                self.expect = Expect::CommaOrClose;
            }
            None => self.expect = Expect::End,
        }
    }

    fn string(&mut self, text: &str, i: usize, byte: u8) -> Option<()> {
        let Lexeme::Str {
            key,
            mut safe,
            mut escape,
            mut high_surrogate,
        } = self.lexeme
        else {
            return None;
        };
        match escape {
            Escape::None => {
                if high_surrogate.is_some() && byte != b'\\' {
                    return None;
                }
                match byte {
                    b'"' => {
                        self.lexeme = Lexeme::None;
                        if key {
                            self.expect = Expect::Colon;
                        } else {
                            self.complete_value(i + 1);
                        }
                        return Some(());
                    }
                    b'\\' => escape = Escape::Backslash,
                    0x00..=0x1f => return None,
                    _ if text.is_char_boundary(i + 1) => safe = i + 1,
                    _ => {}
                }
            }
            Escape::Backslash => match byte {
                b'u' => escape = Escape::Unicode { digits: 0, code: 0 },
                _ if high_surrogate.is_some() => return None,
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                    escape = Escape::None;
                    safe = i + 1;
                }
                _ => return None,
            },
            Escape::Unicode { digits, code } => {
                let code = code * 16 + char::from(byte).to_digit(16)?;
                if digits < 3 {
                    escape = Escape::Unicode {
                        digits: digits + 1,
                        code,
                    };
                } else {
                    escape = Escape::None;
                    let start = i - 5;
                    match (code, high_surrogate) {
                        (0xD800..=0xDBFF, None) => high_surrogate = Some(start),
                        (0xDC00..=0xDFFF, Some(_)) => {
                            high_surrogate = None;
                            safe = i + 1;
                        }
                        (0xD800..=0xDFFF, _) | (_, Some(_)) => return None,
                        _ => safe = i + 1,
                    }
                }
            }
        }
        self.lexeme = Lexeme::Str {
            key,
            safe,
            escape,
            high_surrogate,
        };
        Some(())
    }

    fn finish(self, len: usize) -> Option<Healing> {
        let closers = |prefix: &str| {
            let mut out = prefix.to_owned();
            out.extend(self.stack.iter().rev().map(|f| match f.container {
                Container::Object => '}',
                Container::Array => ']',
            }));
            out
        };
        // Drop the dangling member/element of the innermost container.
        let drop_dangling = || {
            let frame = self.stack.last()?;
            Some(Healing {
                keep: frame.safe,
                closers: closers(""),
            })
        };
        match self.lexeme {
            Lexeme::Str {
                key: false, safe, ..
            } => Some(Healing {
                keep: safe,
                closers: closers("\""),
            }),
            Lexeme::Str { key: true, .. } => drop_dangling(),
            Lexeme::Number {
                safe: Some(safe), ..
            } => Some(Healing {
                keep: safe,
                closers: closers(""),
            }),
            Lexeme::Number { safe: None, .. } => drop_dangling(),
            Lexeme::Literal { word, matched } => Some(Healing {
                keep: len,
                closers: closers(&word[matched..]),
            }),
            Lexeme::None => match self.expect {
                Expect::Value | Expect::Key | Expect::Colon => drop_dangling(),
                Expect::ValueOrClose | Expect::KeyOrClose | Expect::CommaOrClose | Expect::End => {
                    Some(Healing {
                        keep: len,
                        closers: closers(""),
                    })
                }
            },
        }
    }
}

fn next_number_state(state: Num, byte: u8) -> Option<Num> {
    let digit = byte.is_ascii_digit();
    Some(match (state, byte) {
        (Num::Minus, b'0') => Num::Zero,
        (Num::Minus, _) if digit => Num::Int,
        (Num::Int, _) if digit => Num::Int,
        (Num::Zero | Num::Int, b'.') => Num::Dot,
        (Num::Dot | Num::Frac, _) if digit => Num::Frac,
        (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Num::Exp,
        (Num::Exp, b'+' | b'-') => Num::ExpSign,
        (Num::Exp | Num::ExpSign | Num::ExpDigits, _) if digit => Num::ExpDigits,
        _ => return None,
    })
}

fn number_complete(state: Num) -> bool {
    matches!(state, Num::Zero | Num::Int | Num::Frac | Num::ExpDigits)
}
