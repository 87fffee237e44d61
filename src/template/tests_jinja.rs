//! Jinja tests (`x is ...`) that follow Jinja2 where minijinja's built-ins differ.
//!
//! Jinja2 decides these by Python protocols: `iterable` is "`iter(x)` works" (strings, lists,
//! mappings; not `none` or numbers), `sequence` is "has `len()` and `__getitem__`" (strings,
//! lists and mappings). Jinja2's default `Undefined` supports both protocols, so an undefined
//! value is iterable and a sequence.

use minijinja::value::ValueKind;
use minijinja::Value;

/// Jinja2's `iterable` test.
pub(crate) fn is_iterable(value: &Value) -> bool {
    matches!(
        value.kind(),
        ValueKind::Undefined
            | ValueKind::String
            | ValueKind::Seq
            | ValueKind::Map
            | ValueKind::Iterable
            | ValueKind::Bytes
    )
}

/// Jinja2's `sequence` test.
pub(crate) fn is_sequence(value: &Value) -> bool {
    matches!(
        value.kind(),
        ValueKind::Undefined
            | ValueKind::String
            | ValueKind::Seq
            | ValueKind::Map
            | ValueKind::Bytes
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follow_jinja2() {
        assert!(!is_iterable(&Value::from(())));
        assert!(!is_iterable(&Value::from(1)));
        assert!(is_iterable(&Value::from("ab")));
        assert!(is_sequence(&Value::from("ab")));
        assert!(is_sequence(&Value::from(vec![1])));
        assert!(!is_sequence(&Value::from(())));
    }
}
