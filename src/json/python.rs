//! Normalising Python-dict text (`repr()` of dicts, lists, strings, numbers, booleans and
//! `None`) to JSON.

use super::scanner::{is_ws, validate, Flavour, Scan};

/// Why a Python-dict text could not be normalised.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid Python literal at byte {offset}: expected {expected}")]
pub struct PythonError {
    /// Byte offset of the offending byte.
    pub offset: usize,
    /// What was expected there.
    pub expected: &'static str,
}

/// Rewrites a complete Python literal into JSON: `'...'` strings become `"..."` (with `"`
/// escaped, `\'` unescaped and `\xHH` turned into `\u00HH`), `True`/`False`/`None` become
/// `true`/`false`/`null`, tuples become arrays, a comma before a closer goes and zeros padding
/// an integer go (`07` is `7`). Everything else is copied byte for byte. JSON input passes
/// through unchanged.
///
/// ```
/// use chatparse::json::python_to_json;
/// assert_eq!(
///     python_to_json(r#"{'a': 'it\'s "x"', 'b': [True, None]}"#).unwrap(),
///     r#"{"a": "it's \"x\"", "b": [true, null]}"#
/// );
/// ```
pub fn python_to_json(text: &str) -> Result<String, PythonError> {
    match validate(text.as_bytes(), Flavour::Python, false) {
        Scan::Complete(_) => {}
        Scan::Fail { offset, expected } => return Err(PythonError { offset, expected }),
        Scan::NeedMore => {
            return Err(PythonError {
                offset: text.len(),
                expected: "complete value",
            })
        }
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        match c {
            '\'' | '"' => {
                let quote = c;
                out.push('"');
                while let Some((_, c)) = chars.next() {
                    match c {
                        _ if c == quote => break,
                        '"' => out.push_str("\\\""),
                        '\\' => match chars.next().map(|(_, e)| e) {
                            Some('\'') => out.push('\''),
                            Some('x') => {
                                out.push_str("\\u00");
                                for _ in 0..2 {
                                    if let Some((_, h)) = chars.next() {
                                        out.push(h);
                                    }
                                }
                            }
                            Some(e) => {
                                out.push('\\');
                                out.push(e);
                            }
                            None => {}
                        },
                        _ => out.push(c),
                    }
                }
                out.push('"');
            }
            'T' | 'F' | 'N' => {
                let (word, skip) = match c {
                    'T' => ("true", 3),
                    'F' => ("false", 4),
                    _ => ("null", 3),
                };
                out.push_str(word);
                for _ in 0..skip {
                    chars.next();
                }
            }
            // A zero padding an integer (`07`, `-007`) has no place in JSON.
            '0' if !out.ends_with(|p: char| p.is_ascii_digit() || p == '.')
                && chars.peek().is_some_and(|(_, n)| n.is_ascii_digit()) => {}
            '(' => out.push('['),
            ')' | ']' | '}' => {
                // A comma before the closer (`(1,)`, `[1, 2,]`) has no place in JSON.
                let kept = out
                    .trim_end_matches(|c: char| u8::try_from(c).is_ok_and(is_ws))
                    .len();
                if out[..kept].ends_with(',') {
                    out.truncate(kept - 1);
                }
                out.push(if c == ')' { ']' } else { c });
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}
