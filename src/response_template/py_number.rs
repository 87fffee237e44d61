//! Python's text-to-number and text-to-bool conversions, as the reference applies them:
//! `int()`, `float()` and its `bool` content type.
//!
//! `int()` and `float()` strip whitespace (`str.isspace`), accept a sign, Unicode decimal
//! digits (`٣` is 3) and single underscores between digits (`1_000`); `float()` also reads
//! `inf`/`nan` words, which are rejected here (JSON cannot carry them; a deliberate deviation).
//! Integers must fit in an `i64`.

use std::sync::OnceLock;

use regex_automata::meta;

use super::util::py_strip;

/// The Unicode decimal digits (`\p{Nd}`, what Python's `int()` reads as digits).
fn decimal_digit_class() -> Option<&'static meta::Regex> {
    static DIGIT: OnceLock<Option<meta::Regex>> = OnceLock::new();
    DIGIT
        .get_or_init(|| meta::Regex::new(r"^\p{Nd}$").ok())
        .as_ref()
}

/// Whether `c` is a Unicode decimal digit.
fn is_decimal(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    let mut buf = [0u8; 4];
    decimal_digit_class().is_some_and(|re| re.is_match(c.encode_utf8(&mut buf) as &str))
}

/// The value of a Unicode decimal digit. Decimal digits come in runs of ten consecutive code
/// points from zero to nine (Unicode guarantees it), so the value is the distance from the
/// start of the run, modulo ten (several runs can follow each other).
fn decimal_value(c: char) -> Option<u32> {
    if c.is_ascii_digit() {
        return c.to_digit(10);
    }
    if !is_decimal(c) {
        return None;
    }
    let mut run = 0u32;
    let mut code = u32::from(c);
    while run < 64 {
        let Some(prev) = code.checked_sub(1).and_then(char::from_u32) else {
            break;
        };
        if !is_decimal(prev) {
            break;
        }
        run += 1;
        code -= 1;
    }
    Some(run % 10)
}

/// The stripped text with Unicode digits made ASCII and underscores removed, or `None` when
/// an underscore is not between two digits.
fn ascii_number(s: &str) -> Option<String> {
    let chars: Vec<char> = py_strip(s).chars().collect();
    let mut out = String::with_capacity(chars.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            let before = i.checked_sub(1).and_then(|j| chars.get(j));
            let after = chars.get(i + 1);
            if !(before.is_some_and(|c| is_decimal(*c)) && after.is_some_and(|c| is_decimal(*c))) {
                return None;
            }
            continue;
        }
        match decimal_value(c) {
            Some(d) if !c.is_ascii() => out.push(char::from_digit(d, 10)?),
            _ => out.push(c),
        }
    }
    Some(out)
}

/// Python `int(s)` (base 10), when the value fits in an `i64`.
pub(crate) fn py_int(s: &str) -> Option<i64> {
    let text = ascii_number(s)?;
    let digits = text.strip_prefix(['-', '+']).unwrap_or(&text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.strip_prefix('+').unwrap_or(&text).parse().ok()
}

/// Python `float(s)`, when the value is finite.
pub(crate) fn py_float(s: &str) -> Option<f64> {
    let text = ascii_number(s)?;
    let body = text.trim_start_matches(['+', '-']);
    // Rust reads the same decimal forms as Python; the words (inf, nan) are not finite.
    if body.len() + 1 < text.len() || body.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    value.is_finite().then_some(value)
}

/// The reference's `bool` content type: `true` when the (stripped) text lowercased is `true`
/// or `1`, else `false`.
pub(crate) fn py_bool(s: &str) -> bool {
    let lower = s.to_lowercase();
    lower == "true" || lower == "1"
}

#[cfg(test)]
#[path = "py_number_tests.rs"]
mod tests;
