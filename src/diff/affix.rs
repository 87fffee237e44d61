//! Common prefix / suffix lengths and the helpers that locate them in a third string.

/// Byte length of the longest common prefix of `a` and `b`, counted in whole chars.
pub fn common_prefix_len(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|&((_, ca), cb)| ca != cb)
        .map_or_else(|| a.len().min(b.len()), |((at, _), _)| at)
}

/// Byte length of the longest common suffix of `a` and `b`, counted in whole chars.
pub fn common_suffix_len(a: &str, b: &str) -> usize {
    a.chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(ca, cb)| ca == cb)
        .map(|(ca, _)| ca.len_utf8())
        .sum()
}

/// The part of `full` before the first occurrence of the common prefix of `left` and `right`.
///
/// Returns `""` when `left` and `right` share no prefix or `full` does not contain it.
/// Used to find what separates two blocks: `left` and `right` are two variants of the block
/// that follows, `full` the text that contains it.
///
/// ```
/// use chatparse::diff::until_common_prefix;
/// let full = "<function name=foo><arg name=bar>";
/// assert_eq!(until_common_prefix(full, "<arg name=bar>", "<arg name=baz>"), "<function name=foo>");
/// ```
pub fn until_common_prefix<'a>(full: &'a str, left: &str, right: &str) -> &'a str {
    let common = &left[..common_prefix_len(left, right)];
    if common.is_empty() {
        return "";
    }
    full.find(common).map_or("", |at| &full[..at])
}

/// The part of `full` after the last occurrence of the common suffix of `left` and `right`.
///
/// Returns `""` when `left` and `right` share no suffix or `full` does not contain it.
///
/// ```
/// use chatparse::diff::after_common_suffix;
/// let full = "<outer><inner>value</inner></outer>";
/// assert_eq!(after_common_suffix(full, "<inner>value</inner>", "<inner>x</inner>"), "</outer>");
/// ```
pub fn after_common_suffix<'a>(full: &'a str, left: &str, right: &str) -> &'a str {
    let common = &left[left.len() - common_suffix_len(left, right)..];
    if common.is_empty() {
        return "";
    }
    full.rfind(common)
        .map_or("", |at| &full[at + common.len()..])
}
