//! XML-ish calls written in prose: an element naming the function in an attribute
//! (`<call name="f">`), after `=` (`<call=f>`) or as the first word of its text
//! (`<call>f`), holding one element per argument named the same way, whose text is the value,
//! or a key element followed by a value element (`<key>k</key><value>v</value>`); `...` may
//! stand for more arguments.

/// One argument element.
#[derive(Debug, Clone, PartialEq)]
pub struct XmlParam {
    /// The whole element.
    pub span: (usize, usize),
    /// The argument name.
    pub key: (usize, usize),
    /// The value text.
    pub value: (usize, usize),
}

/// One call element.
#[derive(Debug, Clone, PartialEq)]
pub struct XmlCall {
    /// The whole element.
    pub span: (usize, usize),
    /// The function name.
    pub name: (usize, usize),
    /// The argument elements.
    pub params: Vec<XmlParam>,
    /// A `...` stands for more arguments.
    pub elided: bool,
}

/// An opening tag: its tag name, the named value's span, and where the tag ends.
struct OpenTag<'a> {
    tag: &'a str,
    value: (usize, usize),
    end: usize,
}

/// Reads the opening tag at `at`: `<tag attr="value" ...>` or `<tag=value>`.
fn open_tag(text: &str, at: usize) -> Option<OpenTag<'_>> {
    let rest = text.get(at..)?.strip_prefix('<')?;
    if !rest.chars().next()?.is_alphabetic() {
        return None;
    }
    let tag_len = rest.find(|c: char| c.is_whitespace() || matches!(c, '>' | '=' | '/'))?;
    let tag = &rest[..tag_len];
    let after = at + 1 + tag_len;
    let close = after + text[after..].find('>')?;
    let inside = &text[after..close];
    if inside.contains('\n') || inside.contains('<') {
        return None;
    }
    let value = if let Some(v) = inside.strip_prefix('=') {
        let v = v.trim_matches(['"', '\'']);
        let start = after + inside.find(v)?;
        (start, start + v.len())
    } else {
        // The first quoted attribute value.
        let q = inside.find(['"', '\''])?;
        let quote = inside[q..].chars().next()?;
        if !inside[..q].trim_end().ends_with('=') {
            return None;
        }
        let len = inside[q + 1..].find(quote)?;
        (after + q + 1, after + q + 1 + len)
    };
    (value.1 > value.0).then_some(OpenTag {
        tag,
        value,
        end: close + 1,
    })
}

/// A bare tag `<tag>` at `at`: its name and where it ends.
fn bare_tag(text: &str, at: usize) -> Option<(&str, usize)> {
    let rest = text.get(at..)?.strip_prefix('<')?;
    let len = rest.find('>')?;
    let tag = &rest[..len];
    let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | ':');
    (tag.chars().next()?.is_alphabetic() && tag.chars().all(word))
        .then_some((tag, at + 1 + len + 1))
}

/// An opening tag with no attribute followed by a name on its line (`<call>f` then a line
/// break or a tag): the name is the value.
fn named_by_text(text: &str, at: usize) -> Option<OpenTag<'_>> {
    let (tag, end) = bare_tag(text, at)?;
    let line = &text[end..];
    let len = line.find(['\n', '<']).unwrap_or(line.len());
    let name = line[..len].trim_end();
    let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '$');
    (!name.is_empty() && name.chars().all(word)).then_some(OpenTag {
        tag,
        value: (end, end + name.len()),
        end: end + name.len(),
    })
}

/// A key element followed by a value element at `pos` (`<key>k</key>` whitespace
/// `<value>v</value>`, two different tags).
fn key_value_pair(text: &str, pos: usize) -> Option<XmlParam> {
    let (key_tag, key_start) = bare_tag(text, pos)?;
    let key_close = format!("</{key_tag}>");
    let key_end = key_start + text[key_start..].find(&key_close)?;
    let after_key = key_end + key_close.len();
    let gap = text[after_key..].len() - text[after_key..].trim_start().len();
    let (value_tag, value_start) = bare_tag(text, after_key + gap)?;
    if value_tag == key_tag || text[key_start..key_end].contains('<') {
        return None;
    }
    let value_close = format!("</{value_tag}>");
    let value_end = value_start + text[value_start..].find(&value_close)?;
    Some(XmlParam {
        span: (pos, value_end + value_close.len()),
        key: (key_start, key_end),
        value: (value_start, value_end),
    })
}

/// Reads the call element whose opening tag starts at byte `at` of `text`.
pub fn read(text: &str, at: usize) -> Option<XmlCall> {
    let open = open_tag(text, at).or_else(|| named_by_text(text, at))?;
    let closing = format!("</{}>", open.tag);
    let mut pos = open.end;
    let mut params = Vec::new();
    let mut elided = false;
    loop {
        let rest = &text[pos..];
        let skipped = rest.len() - rest.trim_start().len();
        pos += skipped;
        let rest = &text[pos..];
        if rest.starts_with(&closing) {
            pos += closing.len();
            break;
        }
        if let Some(dots) = ["...", "…"].iter().find(|d| rest.starts_with(**d)) {
            elided = true;
            pos += dots.len();
            continue;
        }
        let param = match open_tag(text, pos) {
            Some(param) => {
                let param_close = format!("</{}>", param.tag);
                let value_end = param.end + text[param.end..].find(&param_close)?;
                XmlParam {
                    span: (pos, value_end + param_close.len()),
                    key: param.value,
                    value: (param.end, value_end),
                }
            }
            None => key_value_pair(text, pos)?,
        };
        pos = param.span.1;
        params.push(param);
    }
    (!params.is_empty()).then_some(XmlCall {
        span: (at, pos),
        name: open.value,
        params,
        elided,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_call_elements() {
        let text = "<invoke name=\"$FN\">\n<arg name=\"$P\">$V</arg>\n...\n</invoke>\n</calls>";
        let call = read(text, 0).unwrap();
        assert_eq!(&text[call.name.0..call.name.1], "$FN");
        assert!(call.elided);
        let p = &call.params[0];
        assert_eq!(&text[p.key.0..p.key.1], "$P");
        assert_eq!(&text[p.value.0..p.value.1], "$V");
        assert_eq!(&text[call.span.1..], "\n</calls>");
        let text = "<function=f><parameter=city>\nParis\n</parameter></function>";
        let call = read(text, 0).unwrap();
        assert_eq!(&text[call.name.0..call.name.1], "f");
        assert_eq!(call.span.1, text.len());
    }

    #[test]
    fn reads_named_by_text_with_key_value_pairs() {
        let text = "<call>fn_name\n<k>param_name</k>\n<v>param_value</v>\n</call>\nmore";
        let call = read(text, 0).unwrap();
        assert_eq!(&text[call.name.0..call.name.1], "fn_name");
        let p = &call.params[0];
        assert_eq!(&text[p.key.0..p.key.1], "param_name");
        assert_eq!(&text[p.value.0..p.value.1], "param_value");
        assert_eq!(&text[call.span.1..], "\nmore");
    }

    #[test]
    fn rejects_other_markup() {
        assert!(read("<|im_start|>user", 0).is_none());
        assert!(read("<tools>[...]</tools>", 0).is_none());
        assert!(read("<a href=\"x\">text</a>", 0).is_none());
    }
}
