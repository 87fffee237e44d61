//! Python call lists written in prose: `[name(arg=value, ...), other(...)]`, values Python
//! literals or placeholders, with the spans of every part.

use super::words::{is_placeholder, names_arguments};

/// Nesting bound of a value's brackets.
const MAX_DEPTH: usize = 24;

/// One call of a list.
#[derive(Debug, Clone, PartialEq)]
pub struct PyCall {
    /// The name's span.
    pub name: (usize, usize),
    /// The arguments: name span and value span.
    pub args: Vec<((usize, usize), (usize, usize))>,
    /// Where the call starts and ends (name to closing parenthesis).
    pub span: (usize, usize),
    /// A `...` stands for more arguments.
    pub elided: bool,
}

/// A call list.
#[derive(Debug, Clone, PartialEq)]
pub struct PyList {
    /// The calls.
    pub calls: Vec<PyCall>,
    /// From `[` to just after `]`.
    pub span: (usize, usize),
}

/// Reads the call list starting with the `[` at byte `at` of `text`.
pub fn read(text: &str, at: usize) -> Option<PyList> {
    let mut r = Reader { text, pos: at };
    if !r.eat("[") {
        return None;
    }
    let mut calls = Vec::new();
    loop {
        r.ws();
        if r.eat("]") {
            break;
        }
        if r.eat("...") || r.eat("…") {
        } else {
            calls.push(r.call()?);
        }
        r.ws();
        if !r.eat(",") && !r.rest().starts_with(']') {
            return None;
        }
    }
    (!calls.is_empty()).then_some(PyList {
        calls,
        span: (at, r.pos),
    })
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
}

impl Reader<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn eat(&mut self, s: &str) -> bool {
        let hit = self.rest().starts_with(s);
        if hit {
            self.pos += s.len();
        }
        hit
    }

    fn ws(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// A name: no whitespace, brackets, quotes, `=` or `,`.
    fn word(&mut self) -> Option<(usize, usize)> {
        let start = self.pos;
        let len = self
            .rest()
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | ',' | '=' | '"' | '\'')
            })
            .unwrap_or(self.rest().len());
        self.pos += len;
        (len > 0).then_some((start, self.pos))
    }

    fn call(&mut self) -> Option<PyCall> {
        let name = self.word()?;
        if !self.eat("(") {
            return None;
        }
        let mut args = Vec::new();
        let mut elided = false;
        loop {
            self.ws();
            if self.eat(")") {
                break;
            }
            if self.eat("...") || self.eat("…") {
                elided = true;
            } else {
                let key = self.word()?;
                self.ws();
                if !self.eat("=") {
                    // One placeholder for all the arguments (`g(params)`).
                    let word = &self.text[key.0..key.1];
                    if is_placeholder(word) && names_arguments(word) && self.rest().starts_with(')')
                    {
                        elided = true;
                        continue;
                    }
                    return None;
                }
                self.ws();
                let value = self.value()?;
                args.push((key, value));
            }
            self.ws();
            if !self.eat(",") && !self.rest().starts_with(')') {
                return None;
            }
        }
        Some(PyCall {
            name,
            args,
            span: (name.0, self.pos),
            elided,
        })
    }

    /// A literal: a quoted string, a bracketed value, or a bare word (number, `True`,
    /// placeholder).
    fn value(&mut self) -> Option<(usize, usize)> {
        let start = self.pos;
        let mut depth = 0usize;
        let mut chars = self.rest().char_indices().peekable();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\'' | '"' => {
                    // Skip the string.
                    let mut closed = false;
                    while let Some((_, d)) = chars.next() {
                        if d == '\\' {
                            chars.next();
                        } else if d == c {
                            closed = true;
                            break;
                        } else if d == '\n' {
                            return None;
                        }
                    }
                    if !closed {
                        return None;
                    }
                }
                '[' | '{' | '(' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return None;
                    }
                }
                ']' | '}' | ')' if depth > 0 => depth -= 1,
                ',' | ')' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                '\n' if depth == 0 => return None,
                _ => {}
            }
        }
        let len = end?;
        let value = self.rest()[..len].trim_end();
        if value.is_empty() {
            return None;
        }
        self.pos += value.len();
        Some((start, self.pos))
    }
}

/// Whether the value text is a placeholder rather than a literal.
pub fn value_is_placeholder(text: &str) -> bool {
    let t = text.trim();
    let literal = t.starts_with(['\'', '"', '[', '{', '('])
        || matches!(t, "True" | "False" | "None")
        || t.parse::<f64>().is_ok();
    let quoted = t.starts_with(['\'', '"']);
    !literal || !quoted && (is_placeholder(t) || t.contains("...") || t.contains('…'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_call_lists() {
        let text = "[function_name(param=value, ...), g(a='x, y', b=[1, (2)])]";
        let list = read(text, 0).unwrap();
        assert_eq!(list.span, (0, text.len()));
        let [f, g] = &list.calls[..] else {
            panic!("two calls expected")
        };
        assert_eq!(&text[f.name.0..f.name.1], "function_name");
        assert!(f.elided);
        let (k, v) = f.args[0];
        assert_eq!((&text[k.0..k.1], &text[v.0..v.1]), ("param", "value"));
        assert!(value_is_placeholder("value"));
        assert_eq!(&text[g.args[0].1 .0..g.args[0].1 .1], "'x, y'");
        assert_eq!(&text[g.args[1].1 .0..g.args[1].1 .1], "[1, (2)]");
        assert!(!value_is_placeholder("'x, y'"));
    }

    #[test]
    fn one_placeholder_may_stand_for_all_arguments() {
        let text = "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]";
        let list = read(text, 0).unwrap();
        assert_eq!(list.calls.len(), 2);
        assert!(!list.calls[0].elided && list.calls[1].elided);
        assert!(list.calls[1].args.is_empty());
        assert!(value_is_placeholder("params_value2..."));
        assert!(read("[f(x)]", 0).is_none());
    }

    #[test]
    fn rejects_prose() {
        assert!(read("[see the docs]", 0).is_none());
        assert!(read("[f(a=1]", 0).is_none());
        assert!(read("[]", 0).is_none());
    }
}
