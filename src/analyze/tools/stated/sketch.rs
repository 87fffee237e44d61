//! A lenient reader for the JSON a template writes in prose: standard JSON, Python literals
//! (`'text'`, `True`, `None`), and the placeholders written where a value goes (`<tool name>`,
//! `$ARGS`, `...`, `{<parameters>}`, a bare word), with byte spans for every value so an
//! example can be rewritten around them. Doubled braces (`{{ ... }}`, an escaping artifact of
//! a template that wrote its example inside a Jinja string) read as one object.

/// Nesting bound: deeper text is not an example.
const MAX_DEPTH: usize = 24;

/// A value read from prose, with its byte span in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Where the value starts.
    pub start: usize,
    /// Just after the value.
    pub end: usize,
    /// What it is.
    pub kind: Kind,
}

/// The kinds of [`Node`].
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// An object: its members; `doubled` when written `{{ ... }}`; `open` when its content is
    /// a placeholder (`{<parameters>}`, `{...}`).
    Object {
        /// The members in order.
        members: Vec<Member>,
        /// Written with doubled braces.
        doubled: bool,
        /// Its content is a placeholder.
        open: bool,
    },
    /// An array.
    Array(Vec<Node>),
    /// A string (decoded); `python` when single-quoted.
    Str {
        /// The decoded text.
        text: String,
        /// Single-quoted.
        python: bool,
    },
    /// A number, `true`/`false`/`null` or their Python spellings.
    Scalar,
    /// Free text standing for a value.
    Placeholder,
}

/// One member of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// The key (decoded).
    pub key: String,
    /// The value.
    pub value: Node,
}

impl Node {
    /// The string value, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object { members, .. } => Some(members),
            _ => None,
        }
    }

    /// Whether the value, or one inside it, is a placeholder or written with doubled braces
    /// (the text is not a literal call).
    pub fn has_placeholder(&self) -> bool {
        match &self.kind {
            Kind::Placeholder => true,
            Kind::Object {
                members,
                doubled,
                open,
            } => *doubled || *open || members.iter().any(|m| m.value.has_placeholder()),
            Kind::Array(items) => items.iter().any(Node::has_placeholder),
            Kind::Str { .. } | Kind::Scalar => false,
        }
    }
}

/// Reads the object or array that starts at byte `at` of `text`.
pub fn read(text: &str, at: usize) -> Option<Node> {
    let mut r = Reader { text, pos: at };
    match text[at..].chars().next()? {
        '{' | '[' => r.value(0),
        _ => None,
    }
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
}

impl Reader<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    fn value(&mut self, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        let start = self.pos;
        let kind = match self.peek()? {
            '{' => self.object(depth)?,
            '[' if self.bracketed_prose() => Kind::Placeholder,
            '[' => self.array(depth)?,
            q @ ('"' | '\'') => Kind::Str {
                text: self.string(q)?,
                python: q == '\'',
            },
            _ => self.scalar_or_placeholder()?,
        };
        Some(Node {
            start,
            end: self.pos,
            kind,
        })
    }

    fn object(&mut self, depth: usize) -> Option<Kind> {
        self.eat("{");
        let doubled = self.eat("{");
        let close = if doubled { "}}" } else { "}" };
        let mut members = Vec::new();
        loop {
            self.ws();
            if self.eat(close) {
                return Some(Kind::Object {
                    members,
                    doubled,
                    open: false,
                });
            }
            if self.eat("...") || self.eat("…") {
                self.ws();
                self.eat(",");
                continue;
            }
            match self.peek()? {
                q @ ('"' | '\'') => {
                    let key = self.string(q)?;
                    self.ws();
                    if !self.eat(":") {
                        return None;
                    }
                    let value = self.value(depth + 1)?;
                    members.push(Member { key, value });
                    self.ws();
                    if !self.eat(",") && !self.rest().starts_with(close) {
                        return None;
                    }
                }
                _ if members.is_empty() && !doubled => {
                    // `{<parameters>}`: placeholder content up to the matching brace.
                    self.skip_balanced('{', '}')?;
                    return Some(Kind::Object {
                        members,
                        doubled,
                        open: true,
                    });
                }
                _ => return None,
            }
        }
    }

    /// `[function name]`: words in brackets on one line (at least two, no JSON punctuation)
    /// stand for a value; consumed when so.
    fn bracketed_prose(&mut self) -> bool {
        let Some(len) = self.rest().find(']') else {
            return false;
        };
        let inner = &self.rest()[1..len];
        let prose = inner.split_whitespace().count() >= 2
            && inner
                .chars()
                .all(|c| c.is_alphanumeric() || c == ' ' || c == '_' || c == '-');
        if prose {
            self.pos += len + 1;
        }
        prose
    }

    fn array(&mut self, depth: usize) -> Option<Kind> {
        self.eat("[");
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.eat("]") {
                return Some(Kind::Array(items));
            }
            if self.eat("...") || self.eat("…") {
                self.ws();
                self.eat(",");
                continue;
            }
            items.push(self.value(depth + 1)?);
            self.ws();
            if !self.eat(",") && self.peek() != Some(']') {
                return None;
            }
        }
    }

    /// A quoted string; JSON escapes (and `\'`) decoded.
    fn string(&mut self, quote: char) -> Option<String> {
        self.pos += quote.len_utf8();
        let mut out = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                c if c == quote => {
                    self.pos += i + c.len_utf8();
                    return Some(out);
                }
                '\\' => {
                    let (_, e) = chars.next()?;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'u' => {
                            let hex: String =
                                (0..4).filter_map(|_| chars.next()).map(|p| p.1).collect();
                            out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                        }
                        other => out.push(other),
                    }
                }
                '\n' => return None,
                c => out.push(c),
            }
        }
        None
    }

    /// A number, a literal word, or a placeholder: `<...>`, or a run up to `,`, `}` or `]`
    /// on the same line.
    fn scalar_or_placeholder(&mut self) -> Option<Kind> {
        if self.peek() == Some('<') {
            let len = self.rest().find('>')? + 1;
            if self.rest()[..len].contains('\n') {
                return None;
            }
            self.pos += len;
            return Some(Kind::Placeholder);
        }
        let rest = self.rest();
        let len = rest
            .find([',', '}', ']', '\n', '{', '['])
            .unwrap_or(rest.len());
        let mut word = rest[..len].trim_end();
        if word.is_empty() {
            return None;
        }
        if let Some(line) = prose_line(rest, word) {
            word = line;
        }
        let scalar = matches!(word, "true" | "false" | "null" | "True" | "False" | "None")
            || word.parse::<f64>().is_ok();
        self.pos += word.len();
        Some(if scalar {
            Kind::Scalar
        } else {
            Kind::Placeholder
        })
    }

    /// Skips to just after the brace closing the one already consumed.
    fn skip_balanced(&mut self, open: char, close: char) -> Option<()> {
        let mut depth = 1usize;
        for (i, c) in self.rest().char_indices() {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    self.pos += i + 1;
                    return Some(());
                }
            } else if c == '\n' && depth > MAX_DEPTH {
                return None;
            }
        }
        None
    }
}

/// The whole line `rest` starts with (a trailing comma left out), where the placeholder
/// `word` read up to the first punctuation is prose that goes on past it: a comma that no
/// member or item follows, or braces inside the sentence (`a dict of parameters, or {} if it
/// takes none`). `None` where the punctuation ends the placeholder.
fn prose_line<'r>(rest: &'r str, word: &str) -> Option<&'r str> {
    if !word.contains(char::is_whitespace) {
        return None;
    }
    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let after = line[word.len()..].trim_start();
    let goes_on = match after.strip_prefix(',') {
        Some(next) => {
            let next = next.trim_start();
            !next.is_empty() && !next.starts_with(['"', '\'', '{', '[', '<', '}', ']', '.', '…'])
        }
        None => after.starts_with(['{', '[']),
    };
    if !goes_on {
        return None;
    }
    let line = line.trim_end();
    let line = line.strip_suffix(',').unwrap_or(line).trim_end();
    // The line must not close the container it is in (`…value}` on one line).
    (!line.ends_with(['}', ']'])).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_placeholders_may_hold_commas_and_braces() {
        let text = "[\n  {\n    \"tool_name\": title of the tool in the specification,\n    \"parameters\": a dict of parameters, or {} if it takes none\n  }\n]";
        let node = read(text, 0).unwrap();
        assert_eq!(node.end, text.len());
        let Kind::Array(items) = &node.kind else {
            panic!("array expected")
        };
        let m = items[0].members().unwrap();
        assert_eq!(m[1].key, "parameters");
        assert_eq!(
            &text[m[1].value.start..m[1].value.end],
            "a dict of parameters, or {} if it takes none"
        );
        // On one line, the comma before the next member ends the placeholder.
        let text = r#"{"name": function name, "parameters": dictionary of argument names}"#;
        let node = read(text, 0).unwrap();
        assert_eq!(node.end, text.len());
        assert_eq!(node.members().unwrap().len(), 2);
    }

    #[test]
    fn reads_json_with_placeholders() {
        let text = r#"x {"tool": "<tool name>", "input": {<parameters>}} y"#;
        let node = read(text, 2).unwrap();
        assert_eq!(&text[node.end..], " y");
        let m = node.members().unwrap();
        assert_eq!(m[0].key, "tool");
        assert_eq!(m[0].value.as_str(), Some("<tool name>"));
        assert!(matches!(m[1].value.kind, Kind::Object { open: true, .. }));
        assert!(node.has_placeholder());
    }

    #[test]
    fn reads_doubled_braces_and_python() {
        let text = r#"[{{"name": "f", "arguments": "a1"}}, {'x': True, 'y': [1, ...]}]"#;
        let node = read(text, 0).unwrap();
        assert_eq!(node.end, text.len());
        let Kind::Array(items) = &node.kind else {
            panic!("array expected")
        };
        assert!(matches!(items[0].kind, Kind::Object { doubled: true, .. }));
        assert!(matches!(&items[1].kind, Kind::Object { members, .. } if members[0].key == "x"));
    }

    #[test]
    fn rejects_prose_and_bounds_depth() {
        assert!(read("{ this is prose, not JSON", 0).is_none());
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(read(&deep, 0).is_none());
        assert!(read(r#"{"a": "unterminated"#, 0).is_none());
    }
}
