//! How a stated example writes calls: the example's own text with holes for the function name
//! and the arguments, and the text around and between calls. [`Syntax::write`] writes any
//! calls the way the example does (the analysis reads the format from such writes, and the
//! check parses them back).

use serde_json::Value;

/// A call to write.
#[derive(Debug, Clone, PartialEq)]
pub struct CallSpec {
    /// The function name.
    pub name: String,
    /// The arguments in order.
    pub args: Vec<(String, Value)>,
}

impl CallSpec {
    /// A call of `name` with `args`.
    pub fn new(name: &str, args: &[(&str, Value)]) -> CallSpec {
        CallSpec {
            name: name.to_owned(),
            args: args
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        }
    }

    /// The arguments as a JSON object.
    pub fn args_object(&self) -> Value {
        Value::Object(self.args.iter().cloned().collect())
    }
}

/// How the function name is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameForm {
    /// As a JSON string (double quotes).
    Json,
    /// As a Python string (single quotes).
    Python,
    /// As is.
    Raw,
}

/// How the arguments are written.
#[derive(Debug, Clone, PartialEq)]
pub enum Args {
    /// One JSON object (a Python dict when `python`) with the example's spacing.
    Json {
        /// Between a key and its value (`": "`).
        colon: String,
        /// Between two members (`", "`).
        comma: String,
        /// Python literals (single quotes, `True`, `None`).
        python: bool,
    },
    /// Python keyword arguments, `key=literal`.
    Keywords {
        /// The quote of string literals.
        quote: char,
        /// Between two arguments.
        comma: String,
    },
    /// One element per argument, `head KEY mid VALUE tail`; strings as is, other values as
    /// JSON text.
    Elements {
        /// Before the argument name.
        head: String,
        /// Between the name and the value.
        mid: String,
        /// After the value.
        tail: String,
        /// Between two elements.
        separator: String,
    },
}

/// The syntax of a stated example (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Syntax {
    /// Before the calls (section opener, list bracket).
    pub open: String,
    /// After the calls.
    pub close: String,
    /// Between calls.
    pub separator: String,
    /// Whether the separator was stated by an example with two calls (else a default).
    pub separator_stated: bool,
    /// A call: before its first hole.
    pub head: String,
    /// Between the holes.
    pub mid: String,
    /// After the second hole.
    pub tail: String,
    /// The arguments come before the name.
    pub args_first: bool,
    /// How the name is written.
    pub name: NameForm,
    /// How the arguments are written.
    pub args: Args,
}

impl Syntax {
    /// `calls` written the way the example writes them.
    pub fn write(&self, calls: &[CallSpec]) -> String {
        let written: Vec<String> = calls.iter().map(|c| self.call(c)).collect();
        format!(
            "{}{}{}",
            self.open,
            written.join(&self.separator),
            self.close
        )
    }

    /// The same syntax with `label` written first, on a line of its own (models write a
    /// space there as often, which a line break between signs matches): before the calls, or
    /// before each call where nothing opens the calls.
    pub fn after_label(&self, label: &str) -> Syntax {
        let mut syntax = self.clone();
        let first = if syntax.open.is_empty() {
            &mut syntax.head
        } else {
            &mut syntax.open
        };
        *first = format!("{label}\n{first}");
        syntax
    }

    fn call(&self, call: &CallSpec) -> String {
        let name = match self.name {
            NameForm::Json => Value::String(call.name.clone()).to_string(),
            NameForm::Python => python_string(&call.name, '\''),
            NameForm::Raw => call.name.clone(),
        };
        let args = self.arguments(call);
        let (first, second) = if self.args_first {
            (args, name)
        } else {
            (name, args)
        };
        format!("{}{first}{}{second}{}", self.head, self.mid, self.tail)
    }

    fn arguments(&self, call: &CallSpec) -> String {
        match &self.args {
            Args::Json {
                colon,
                comma,
                python,
            } => {
                let members: Vec<String> = call
                    .args
                    .iter()
                    .map(|(k, v)| {
                        let key = if *python {
                            python_string(k, '\'')
                        } else {
                            Value::String(k.clone()).to_string()
                        };
                        let value = if *python {
                            python_literal(v, '\'')
                        } else {
                            v.to_string()
                        };
                        format!("{key}{colon}{value}")
                    })
                    .collect();
                format!("{{{}}}", members.join(comma))
            }
            Args::Keywords { quote, comma } => call
                .args
                .iter()
                .map(|(k, v)| format!("{k}={}", python_literal(v, *quote)))
                .collect::<Vec<_>>()
                .join(comma),
            Args::Elements {
                head,
                mid,
                tail,
                separator,
            } => call
                .args
                .iter()
                .map(|(k, v)| {
                    let value = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    format!("{head}{k}{mid}{value}{tail}")
                })
                .collect::<Vec<_>>()
                .join(separator),
        }
    }
}

/// A Python string literal in `quote`.
fn python_string(text: &str, quote: char) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A Python literal of `value`, strings in `quote`.
pub fn python_literal(value: &Value, quote: char) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => python_string(s, quote),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(|v| python_literal(v, quote)).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let members: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", python_string(k, quote), python_literal(v, quote)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_like_the_example() {
        let syntax = Syntax {
            open: "<|calls|>[".into(),
            close: "]<|/calls|>".into(),
            separator: ", ".into(),
            separator_stated: false,
            head: String::new(),
            mid: "(".into(),
            tail: ")".into(),
            args_first: false,
            name: NameForm::Raw,
            args: Args::Keywords {
                quote: '\'',
                comma: ", ".into(),
            },
        };
        let calls = [
            CallSpec::new(
                "f",
                &[("a", json!("it's")), ("b", json!({"k": [true, null]}))],
            ),
            CallSpec::new("g", &[]),
        ];
        assert_eq!(
            syntax.write(&calls),
            r"<|calls|>[f(a='it\'s', b={'k': [True, None]}), g()]<|/calls|>"
        );
    }
}
