//! Closing a partial JSON (or Python-dict) text into a valid JSON document.

use super::python::python_to_json;
use super::scanner::{is_ws, Flavour, Scan, Scanner, State, StrKind, Target};

/// Why a text could not be healed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HealError {
    /// The text is not a prefix of any valid document.
    #[error("invalid JSON at byte {offset}: expected {expected}")]
    Invalid {
        /// Byte offset of the offending byte.
        offset: usize,
        /// What was expected there.
        expected: &'static str,
    },
    /// There is no value to keep (empty text, or a lone `-` / `1.` at the top level).
    #[error("no JSON value to heal")]
    Empty,
}

/// Closes a partial document into valid JSON.
///
/// `partial` must be a prefix of a valid document of the given flavour. The result keeps
/// every complete member and element, closes an open string (dropping an unfinished escape),
/// completes a keyword (`tr` becomes `true`), drops an unfinished number that is not yet a
/// number (`-`, `1.`, `2e`), drops a dangling key (with or without `:`) and a trailing comma,
/// and closes open arrays and objects. A complete document is returned unchanged (minus
/// surrounding whitespace). The Python flavour is normalised to JSON.
///
/// ```
/// use chatparse::json::{heal, Flavour};
/// assert_eq!(heal(r#"{"a": [1, 2"#, Flavour::Json).unwrap(), r#"{"a": [1, 2]}"#);
/// assert_eq!(heal(r#"{"a": "hel"#, Flavour::Json).unwrap(), r#"{"a": "hel"}"#);
/// assert_eq!(heal(r#"{"a": 1, "b"#, Flavour::Json).unwrap(), r#"{"a": 1}"#);
/// assert_eq!(heal("{'a': Tr", Flavour::Python).unwrap(), r#"{"a": true}"#);
/// ```
pub fn heal(partial: &str, flavour: Flavour) -> Result<String, HealError> {
    let bytes = partial.as_bytes();
    let start = bytes.iter().position(|&b| !is_ws(b)).unwrap_or(bytes.len());
    let mut scanner = Scanner::new(flavour, Target::Value, start);
    let healed = match scanner.resume(bytes, false) {
        Scan::Complete(end) => partial.get(start..end).unwrap_or("").to_owned(),
        Scan::Fail { offset, expected } => return Err(HealError::Invalid { offset, expected }),
        Scan::NeedMore => close(partial, start, &scanner)?,
    };
    match flavour {
        Flavour::Json => Ok(healed),
        Flavour::Python => python_to_json(&healed).map_err(|_| HealError::Empty),
    }
}

fn close(text: &str, start: usize, s: &Scanner) -> Result<String, HealError> {
    let member_cut = || s.cuts.last().copied().ok_or(HealError::Empty);
    let quote = char::from(s.quote);
    let (cut, suffix): (usize, String) = match s.state {
        State::Value if s.stack.is_empty() => return Err(HealError::Empty),
        State::Value | State::Colon | State::ObjKey => (member_cut()?, String::new()),
        State::Str(StrKind::Key)
        | State::Esc(StrKind::Key)
        | State::Hex {
            kind: StrKind::Key, ..
        }
        | State::SurrogateBackslash(StrKind::Key)
        | State::SurrogateU(StrKind::Key) => (member_cut()?, String::new()),
        State::Str(_) => (text.len(), quote.to_string()),
        State::Esc(_) | State::Hex { .. } | State::SurrogateBackslash(_) | State::SurrogateU(_) => {
            (s.token_start, quote.to_string())
        }
        // A number that could end here is kept; `-`, `1.`, `2e` drop the whole member.
        State::Number(n) if n.can_end() => (text.len(), String::new()),
        State::Number(_) if s.stack.is_empty() => return Err(HealError::Empty),
        State::Number(_) => (member_cut()?, String::new()),
        State::Word { word, idx } => (
            text.len(),
            String::from_utf8_lossy(word.get(usize::from(idx)..).unwrap_or(&[])).into_owned(),
        ),
        State::ArrFirst | State::ObjFirst | State::AfterValue | State::Done(_) => {
            (text.len(), String::new())
        }
    };
    let mut out = String::with_capacity(cut - start.min(cut) + suffix.len() + s.stack.len());
    out.push_str(text.get(start.min(cut)..cut).unwrap_or(""));
    out.push_str(&suffix);
    for c in s.stack.iter().rev() {
        out.push(char::from(c.closer()));
    }
    Ok(out)
}
