//! Source pre-passes: transformers' `{% generation %}` extension tag, and checked namespace
//! attribute assignments ([`rewrite_namespace_sets`]).
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

/// Rewrites each `{% set a.b = expr %}` (a dotted target: namespace attribute assignment) into
/// `{% do __chatparse_setattr(a, "b", (expr)) %}`, which refuses cycles and very deep values (see
/// [`super::value::Namespace`]). Delimiters and their whitespace-control markers are kept, and
/// no newline is added, so whitespace handling and line numbers are unchanged. Tags in
/// comments and `{% raw %}` blocks are left alone. A form this does not recognise stays as is
/// and fails at render time (our namespaces accept no plain `set` assignment).
pub(crate) fn rewrite_namespace_sets(source: &str) -> Cow<'_, str> {
    if !source.contains("set") {
        return Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len() + 64);
    let mut rest = source;
    let mut changed = false;
    while let Some(open) = find_delimiter(rest) {
        let (before, from_open) = rest.split_at(open);
        out.push_str(before);
        let end = match &from_open[..2] {
            "{#" => from_open.find("#}").map(|i| i + 2),
            "{{" => find_close(from_open, "}}"),
            _ => find_close(from_open, "%}"),
        };
        let Some(end) = end else {
            out.push_str(from_open);
            rest = "";
            break;
        };
        let tag = &from_open[..end];
        if from_open.starts_with("{%") {
            if let Some(("raw", _)) = keyword(tag) {
                let end = find_endraw(from_open).unwrap_or(from_open.len());
                out.push_str(&from_open[..end]);
                rest = &from_open[end..];
                continue;
            }
            if let Some(rewritten) = rewrite_set_tag(tag) {
                out.push_str(&rewritten);
                changed = true;
                rest = &from_open[end..];
                continue;
            }
        }
        out.push_str(tag);
        rest = &from_open[end..];
    }
    if !changed {
        return Cow::Borrowed(source);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Offset of the next `{{`, `{%` or `{#`.
fn find_delimiter(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'{', &bytes[from..]) {
        let at = from + i;
        if matches!(bytes.get(at + 1), Some(b'{' | b'%' | b'#')) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The end offset of the tag opening `s` (just past `close`), skipping string literals and, for
/// `}}`, braces nested inside the expression.
fn find_close(s: &str, close: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 2;
    let mut depth = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' if close == "}}" => depth += 1,
            b'}' if close == "}}" && depth > 0 => depth -= 1,
            _ if bytes[i..].starts_with(close.as_bytes()) => return Some(i + close.len()),
            _ => {}
        }
        i += 1;
    }
    None
}

/// `{% set a.b.c = expr %}` as `{% do __chatparse_setattr(a.b, "c", (expr)) %}`; `None` for
/// any other tag.
fn rewrite_set_tag(tag: &str) -> Option<String> {
    let bytes = tag.as_bytes();
    let inner_start = 2 + usize::from(matches!(bytes.get(2), Some(b'-' | b'+')));
    let mut inner_end = tag.len() - 2;
    if inner_end > inner_start && matches!(bytes[inner_end - 1], b'-' | b'+') {
        inner_end -= 1;
    }
    let inner = tag.get(inner_start..inner_end)?;
    let rest = inner.trim_start().strip_prefix("set")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut rest = rest.trim_start();
    let mut parts = Vec::new();
    loop {
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let ident = &rest[..len];
        if ident.is_empty() || ident.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        parts.push(ident);
        rest = rest[len..].trim_start();
        match rest.strip_prefix('.') {
            Some(after) => rest = after.trim_start(),
            None => break,
        }
    }
    let expr = rest.strip_prefix('=')?;
    if parts.len() < 2 || expr.starts_with('=') || expr.trim().is_empty() {
        return None;
    }
    let (attr, base) = parts.split_last()?;
    Some(format!(
        "{} do {}({}, \"{attr}\", ({expr})) {}",
        &tag[..inner_start],
        super::value::SETATTR_FN,
        base.join("."),
        &tag[inner_end..],
    ))
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
        // Search after the `{%`: in `{%}` the `%` must not count twice.
        let close = open + 2 + s[open + 2..].find("%}")? + 2;
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
    use super::rewrite_namespace_sets as ns;

    #[test]
    fn rewrites_namespace_sets() {
        assert_eq!(
            ns("{%- set ns.a = x + 1 -%}"),
            "{%- do __chatparse_setattr(ns, \"a\", ( x + 1 )) -%}"
        );
        assert_eq!(
            ns("{% set a . b.c= '%}', 2%}"),
            "{% do __chatparse_setattr(a.b, \"c\", ( '%}', 2)) %}"
        );
        for same in [
            "{% set x = 1 %}{% set ns.x %}b{% endset %}{% set ns.a == 1 %}",
            "{{ '{% set ns.a = 1 %}' }}{# {% set ns.a = 1 %} #}",
            "{% raw %}{% set ns.a = 1 %}{% endraw %}{% settle ns.a = 1 %}",
        ] {
            assert!(matches!(ns(same), std::borrow::Cow::Borrowed(_)), "{same}");
        }
    }

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
    fn unclosed_raw_with_overlapping_delimiters() {
        // Found by fuzzing: `{%}` inside a raw block made `find_endraw` slice backwards.
        for src in [
            "{%raw%}set{%}",
            "{%raw%}generation{%}",
            "{% raw %}{%}{%-%}{% endraw %}",
        ] {
            assert_eq!(ns(src), src);
            assert_eq!(rw(src), src);
        }
    }

    #[test]
    fn leaves_raw_and_comments() {
        let src = "{# {% generation %} #}{% raw %}{% generation %}{% endraw %}";
        assert_eq!(rw(src), src);
    }
}
