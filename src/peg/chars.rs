//! Character classes for [`GrammarBuilder::chars`](super::GrammarBuilder::chars):
//! `[a-zA-Z0-9_-]`, `[^\n]`, with ranges, negation and escapes.

use super::error::BuildError;
use std::fmt;

/// A parsed character class: a set of inclusive `char` ranges, optionally negated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CharClass {
    ranges: Vec<(char, char)>,
    negated: bool,
    /// Membership of the 128 ASCII characters (after negation).
    ascii: [u64; 2],
    source: String,
}

impl CharClass {
    /// Parses a class such as `[a-z_]`, `[^"\\]` or `a-z` (brackets optional). Escapes: `\n`,
    /// `\r`, `\t`, `\\`, `\]`, `\[`, `\-`, `\^`.
    pub fn parse(source: &str) -> Result<CharClass, BuildError> {
        let err = |msg: &str| BuildError::char_class(source, msg);
        let mut body = source;
        if let Some(inner) = body.strip_prefix('[') {
            body = inner
                .strip_suffix(']')
                .ok_or_else(|| err("missing closing `]`"))?;
        }
        let negated = body.starts_with('^');
        if negated {
            body = &body[1..];
        }
        let mut items = Vec::new();
        let mut chars = body.chars();
        while let Some(c) = chars.next() {
            let c = if c == '\\' {
                match chars.next() {
                    Some('n') => '\n',
                    Some('r') => '\r',
                    Some('t') => '\t',
                    Some(e) => e,
                    None => return Err(err("dangling `\\`")),
                }
            } else {
                c
            };
            items.push((c, c == '-'));
        }
        let mut ranges = Vec::new();
        let mut i = 0;
        while let Some(&(lo, _)) = items.get(i) {
            match (items.get(i + 1), items.get(i + 2)) {
                (Some(&('-', true)), Some(&(hi, _))) => {
                    if hi < lo {
                        return Err(err("range out of order"));
                    }
                    ranges.push((lo, hi));
                    i += 3;
                }
                _ => {
                    ranges.push((lo, lo));
                    i += 1;
                }
            }
        }
        let mut class = CharClass {
            ranges,
            negated,
            ascii: [0; 2],
            source: source.to_owned(),
        };
        for b in 0u8..128 {
            if class.matches_slow(char::from(b)) {
                class.ascii[usize::from(b >> 6)] |= 1 << (b & 63);
            }
        }
        Ok(class)
    }

    fn matches_slow(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != self.negated
    }

    /// Whether `c` is in the class.
    #[inline]
    pub fn matches(&self, c: char) -> bool {
        if c.is_ascii() {
            let b = c as u32;
            self.ascii[(b >> 6) as usize] & (1 << (b & 63)) != 0
        } else {
            self.matches_slow(c)
        }
    }

    /// The listed ranges (before negation) and whether the class is negated.
    pub fn ranges(&self) -> (&[(char, char)], bool) {
        (&self.ranges, self.negated)
    }

    /// The class as written.
    pub fn source(&self) -> &str {
        &self.source
    }
}

impl fmt::Display for CharClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}
