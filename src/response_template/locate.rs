//! Finding where a key of a JSON document is written: the line and column of the key at a
//! path of object keys (for load errors of templates read from JSON text).
//!
//! The text is already known to be valid JSON (serde_json read it). The scan keeps the keys
//! of the open objects on an explicit stack (no recursion), so any depth is fine.

/// The 1-based line and column (in characters) of the key at `path` (object keys, outermost
/// first), or of the document start for an empty path. `None` when the path is not found.
pub(crate) fn locate(text: &str, path: &[String]) -> Option<(usize, usize)> {
    if path.is_empty() {
        return Some((1, 1));
    }
    let bytes = text.as_bytes();
    // Per open container: `Some(key)` for objects (the latest key read), `None` for arrays.
    let mut stack: Vec<Option<String>> = Vec::new();
    // Whether the next string in the innermost object is a key.
    let mut expect_key = false;
    // How many levels of the stack still follow `path` (the first `on_path` keys match).
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'{' => {
                stack.push(Some(String::new()));
                expect_key = true;
                i += 1;
            }
            b'[' => {
                stack.push(None);
                expect_key = false;
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                expect_key = false;
                i += 1;
            }
            b',' => {
                expect_key = matches!(stack.last(), Some(Some(_)));
                i += 1;
            }
            b':' => {
                expect_key = false;
                i += 1;
            }
            b'"' => {
                let end = string_end(bytes, i);
                if expect_key {
                    let raw = text.get(i..end).unwrap_or_default();
                    let key: String = serde_json::from_str(raw).unwrap_or_default();
                    let depth = stack.len();
                    let parents_match = depth <= path.len()
                        && stack
                            .iter()
                            .take(depth - 1)
                            .zip(path)
                            .all(|(open, want)| open.as_deref() == Some(want.as_str()));
                    if parents_match && path.get(depth - 1) == Some(&key) && depth == path.len() {
                        return Some(line_column(text, i));
                    }
                    if let Some(Some(slot)) = stack.last_mut() {
                        *slot = key;
                    }
                    expect_key = false;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    None
}

/// The index after the string literal starting at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// 1-based line and column (in characters) of byte `at`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at).unwrap_or_default();
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .unwrap_or_default()
        .chars()
        .count()
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|k| (*k).to_owned()).collect()
    }

    #[test]
    fn finds_nested_keys() {
        let text = "{\n  \"fields\": {\n    \"a\": {\"open\": \"<a>\"},\n    \"b\": {\"opn\": [1, {\"x\": 2}]}\n  }\n}";
        assert_eq!(locate(text, &path(&["fields", "b", "opn"])), Some((4, 11)));
        assert_eq!(locate(text, &path(&["fields", "a"])), Some((3, 5)));
        assert_eq!(locate(text, &path(&["fields", "a", "opn"])), None);
        // A key of the same name elsewhere is not the one asked for.
        assert_eq!(locate(text, &path(&["x"])), None);
        assert_eq!(locate(text, &[]), Some((1, 1)));
    }
}
