//! Marker-aware string helpers: common affixes that never cut through a `<...>`/`[...]` marker,
//! and the rules that split the gap between two probe values into the suffix of the first
//! element and the prefix of the second.

use crate::diff::{common_prefix_len, common_suffix_len, segments, SegmentKind};

/// The start of the marker segment of `text` that contains `offset` strictly inside, if any.
fn marker_around(text: &str, offset: usize) -> Option<(usize, usize)> {
    segments(text)
        .take_while(|s| s.offset < offset)
        .find(|s| s.kind == SegmentKind::Marker && offset < s.end())
        .map(|s| (s.offset, s.end()))
}

/// Length of the common prefix of `a` and `b`, shortened so it ends on a marker boundary in
/// both.
pub fn aligned_prefix_len(a: &str, b: &str) -> usize {
    let mut n = common_prefix_len(a, b);
    loop {
        let cut = [a, b]
            .iter()
            .filter_map(|t| marker_around(t, n).map(|(start, _)| start))
            .min();
        match cut {
            Some(start) if start < n => n = start,
            _ => return n,
        }
    }
}

/// Length of the common suffix of `a` and `b`, shortened so it starts on a marker boundary in
/// both.
pub fn aligned_suffix_len(a: &str, b: &str) -> usize {
    let mut n = common_suffix_len(a, b);
    loop {
        let mut shrink = 0;
        for t in [a, b] {
            let at = t.len() - n;
            if let Some((_, end)) = marker_around(t, at) {
                shrink = shrink.max(end - at);
            }
        }
        if shrink == 0 {
            return n;
        }
        n -= shrink.min(n);
    }
}

/// The trailing unclosed `<...`/`[...` of `text` (a marker the next probe value sits inside,
/// like `<function=` or `<invoke name="`), if any.
pub fn trailing_open_marker(text: &str) -> Option<&str> {
    let open = text.rfind(['<', '['])?;
    let closer = if text.as_bytes()[open] == b'<' {
        '>'
    } else {
        ']'
    };
    let rest = &text[open..];
    (!rest.contains(closer) && !rest.contains('\n')).then_some(rest)
}

/// The trailing complete marker of `text` (`<arg_value>`, `[CALL_ID]`), if `text` ends with
/// one.
pub fn trailing_marker(text: &str) -> Option<&str> {
    segments(text)
        .last()
        .filter(|s| s.kind == SegmentKind::Marker)
        .map(|s| s.text)
}

/// The part of a gap that belongs to the element that follows it: an unclosed marker the
/// element sits in, else a complete marker the gap ends with, else the trailing text after the
/// last whitespace or marker (`functions.`).
pub fn element_prefix(gap: &str) -> &str {
    if let Some(open) = trailing_open_marker(gap) {
        return open;
    }
    if let Some(marker) = trailing_marker(gap) {
        return marker;
    }
    let last_marker_end = segments(gap)
        .filter(|s| s.kind == SegmentKind::Marker)
        .last()
        .map_or(0, |s| s.end());
    let tail = &gap[last_marker_end..];
    match tail.rfind(char::is_whitespace) {
        Some(ws) => {
            let len = tail[ws..].chars().next().map_or(1, char::len_utf8);
            &tail[ws + len..]
        }
        None => tail,
    }
}

/// Splits `text` after its first marker and the whitespace that follows it: `("</think>\n",
/// "<response>")` for `"</think>\n<response>"`. Text without a marker is all first.
pub fn split_after_first_marker(text: &str) -> (&str, &str) {
    let Some(first) = segments(text).find(|s| s.kind == SegmentKind::Marker) else {
        return (text, "");
    };
    let mut end = first.end();
    end += text[end..].len() - text[end..].trim_start().len();
    text.split_at(end)
}

/// Whether `text` contains any of `probes`.
pub fn contains_probe(text: &str, probes: &[&str]) -> bool {
    probes.iter().any(|p| text.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_affixes_do_not_cut_markers() {
        assert_eq!(aligned_prefix_len("ab<tool_call>", "ab<think>"), 2);
        assert_eq!(aligned_suffix_len("x</think>", "y</think>"), 8);
        assert_eq!(aligned_suffix_len("<a_end>", "<b_end>"), 0);
    }

    #[test]
    fn element_prefix_rules() {
        assert_eq!(element_prefix(">\n<parameter="), "<parameter=");
        assert_eq!(element_prefix("</arg_key>\n<arg_value>"), "<arg_value>");
        assert_eq!(
            element_prefix("<|tool_call_begin|>functions."),
            "functions."
        );
        assert_eq!(element_prefix("[TOOL_CALLS]"), "[TOOL_CALLS]");
        assert_eq!(element_prefix(">\n"), "");
        assert_eq!(element_prefix("', "), "");
    }

    #[test]
    fn first_marker_split() {
        assert_eq!(
            split_after_first_marker("</think>\n<response>"),
            ("</think>\n", "<response>")
        );
        assert_eq!(split_after_first_marker("\n\n"), ("\n\n", ""));
    }
}
