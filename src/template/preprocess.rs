//! Source pre-pass for transformers' `{% generation %}` extension tag.
//!
//! transformers registers an `AssistantTracker` Jinja extension whose
//! `{% generation %}...{% endgeneration %}` block renders its body unchanged (it only records
//! where the body landed, for assistant-token masks). minijinja has no custom tags, so before
//! compiling we rewrite each tag in place into a tag with the same rendering and whitespace
//! behaviour: `generation` becomes `if true` and `endgeneration` becomes `endif`.
//!
//! Only the keyword inside the tag changes; the delimiters, their `-`/`+` whitespace-control
//! markers and the spacing are kept byte for byte, so `trim_blocks`, `lstrip_blocks` and manual
//! trimming apply exactly as they would to the original tag, and line numbers are unchanged. An
//! `if` opens no scope in Jinja, so the body sees and assigns the same variables. Tags inside
//! `{% raw %}` blocks and comments are left alone.

use std::borrow::Cow;

/// Rewrites `{% generation %}`/`{% endgeneration %}` tags; returns the source unchanged (borrowed)
/// when it has none.
pub(crate) fn rewrite_generation_tags(source: &str) -> Cow<'_, str> {
    if !source.contains("generation") {
        return Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len() + 16);
    let mut rest = source;
    let mut changed = false;
    while let Some(open) = find_open(rest) {
        let (before, from_open) = rest.split_at(open);
        out.push_str(before);
        if from_open.starts_with("{#") {
            let end = from_open.find("#}").map_or(from_open.len(), |i| i + 2);
            out.push_str(&from_open[..end]);
            rest = &from_open[end..];
            continue;
        }
        // A `{%` block tag.
        let Some(close) = from_open.find("%}") else {
            out.push_str(from_open);
            rest = "";
            break;
        };
        let tag = &from_open[..close + 2];
        match keyword(tag) {
            Some(("raw", _)) => {
                let end = find_endraw(from_open).unwrap_or(from_open.len());
                out.push_str(&from_open[..end]);
                rest = &from_open[end..];
                continue;
            }
            Some(("generation", at)) => {
                out.push_str(&tag[..at]);
                out.push_str("if true");
                out.push_str(&tag[at + "generation".len()..]);
                changed = true;
            }
            Some(("endgeneration", at)) => {
                out.push_str(&tag[..at]);
                out.push_str("endif");
                out.push_str(&tag[at + "endgeneration".len()..]);
                changed = true;
            }
            _ => out.push_str(tag),
        }
        rest = &from_open[close + 2..];
    }
    if !changed {
        return Cow::Borrowed(source);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Offset of the next `{%` or `{#`.
fn find_open(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'{', &bytes[from..]) {
        let at = from + i;
        if matches!(bytes.get(at + 1), Some(b'%' | b'#')) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The tag's statement keyword (when the tag holds only that word) and its offset in the tag.
fn keyword(tag: &str) -> Option<(&str, usize)> {
    let inner_start = 2 + usize::from(matches!(tag.as_bytes().get(2), Some(b'-' | b'+')));
    let inner_end = tag.len() - 2;
    let inner_end =
        if inner_end > inner_start && matches!(tag.as_bytes()[inner_end - 1], b'-' | b'+') {
            inner_end - 1
        } else {
            inner_end
        };
    let inner = tag.get(inner_start..inner_end)?;
    let word = inner.trim();
    let at = inner_start + (inner.len() - inner.trim_start().len());
    match word {
        "generation" | "endgeneration" | "raw" => Some((word, at)),
        _ => None,
    }
}

/// The end offset of the `{% endraw %}` tag closing a raw block that starts `s`.
fn find_endraw(s: &str) -> Option<usize> {
    let mut from = 2;
    while let Some(i) = s[from..].find("{%") {
        let open = from + i;
        let close = open + s[open..].find("%}")? + 2;
        let inner = s[open + 2..close - 2].trim_matches(|c: char| c == '-' || c == '+');
        if inner.trim() == "endraw" {
            return Some(close);
        }
        from = close;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::rewrite_generation_tags as rw;

    #[test]
    fn untouched_without_tags() {
        let src = "{% if x %}generation{% endif %}";
        assert!(matches!(rw(src), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn rewrites_keeping_whitespace_control() {
        assert_eq!(
            rw("a{%- generation -%}b{% endgeneration %}c"),
            "a{%- if true -%}b{% endif %}c"
        );
        assert_eq!(
            rw("{%+generation%}x{%-endgeneration+%}"),
            "{%+if true%}x{%-endif+%}"
        );
    }

    #[test]
    fn leaves_raw_and_comments() {
        let src = "{# {% generation %} #}{% raw %}{% generation %}{% endraw %}";
        assert_eq!(rw(src), src);
    }
}
