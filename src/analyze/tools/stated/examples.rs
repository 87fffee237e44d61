//! Finding example calls in a tools preamble by their shape, and the [`Syntax`] each one
//! writes calls in:
//!
//! - **JSON**: an object naming a tool (a declared tool's name or a placeholder) under one key
//!   and holding arguments (an object, or a placeholder) under another, possibly nested once
//!   (`{"type": ..., "function": {...}}`), alone or as the items of a list. Which key is which
//!   comes from the values, never from the key names.
//! - **Call list**: a Python list of calls, `[name(arg=value, ...)]`.
//! - **Call elements**: `<call name="f"><arg name="a">value</arg></call>` (or `<call=f>`).
//!
//! The marker written right around the example (see [`marker_before`]) opens and closes it.

use serde_json::Value;

use crate::analyze::tools::json_scan::json_at;

use super::pycall::{self, value_is_placeholder};
use super::sketch::{self, Kind, Member, Node};
use super::syntax::{Args, CallSpec, NameForm, Syntax};
use super::words::{
    closer_after, is_marked_placeholder, is_placeholder, marker_before, names_a_name,
    names_arguments,
};
use super::xml::{self, XmlCall};

/// The shape of an example.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A JSON call object (or a list of them).
    Json,
    /// A Python call list.
    CallList,
    /// XML-ish call elements.
    Elements,
}

impl Shape {
    /// A short name (reports).
    pub fn name(self) -> &'static str {
        match self {
            Shape::Json => "json",
            Shape::CallList => "call_list",
            Shape::Elements => "call_elements",
        }
    }
}

/// An example call (or calls) found in a preamble.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// Its shape.
    pub shape: Shape,
    /// Its span in the preamble, markers included.
    pub span: (usize, usize),
    /// How it writes calls.
    pub syntax: Syntax,
    /// The names it calls, as written.
    pub names: Vec<String>,
    /// Its own calls, when it is written with literal values (no placeholders).
    pub literal: Option<Vec<CallSpec>>,
}

impl Example {
    /// How many calls it states.
    pub fn calls(&self) -> usize {
        self.names.len()
    }
}

/// Whether `name` can name a tool in an example: a declared tool, or a placeholder.
fn names_tool(name: &str, declared: &[&str]) -> bool {
    declared.contains(&name) || is_placeholder(name)
}

/// Every example in `text`, in order; `declared` are the tools the render declares.
pub fn find(text: &str, declared: &[&str]) -> Vec<Example> {
    let mut found: Vec<Example> = Vec::new();
    found.extend(json_examples(text, declared));
    found.extend(list_examples(text, declared));
    found.extend(element_examples(text, declared));
    found.sort_by_key(|e| (e.span.0, std::cmp::Reverse(e.span.1)));
    merge_repeated(text, found)
}

/// Per-call examples written back to back (only whitespace between) are one example of
/// several calls: the whitespace is their stated separator.
fn merge_repeated(text: &str, examples: Vec<Example>) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    for e in examples {
        if let Some(last) = out.last_mut() {
            let per_call = last.syntax.open.is_empty() && last.syntax.close.is_empty();
            let same = Syntax {
                separator: last.syntax.separator.clone(),
                separator_stated: last.syntax.separator_stated,
                ..e.syntax.clone()
            } == last.syntax;
            let gap = text.get(last.span.1..e.span.0).unwrap_or("x");
            if per_call && same && e.shape == last.shape && gap.trim().is_empty() {
                last.syntax.separator = gap.to_owned();
                last.syntax.separator_stated = true;
                last.span.1 = e.span.1;
                last.names.extend(e.names);
                last.literal = match (last.literal.take(), e.literal) {
                    (Some(mut a), Some(b)) => {
                        a.extend(b);
                        Some(a)
                    }
                    _ => None,
                };
                continue;
            }
        }
        out.push(e);
    }
    out
}

// ---- JSON ----

/// `text` after a list's last item when it is an ellipsis item (`, ...]`): the separator
/// before the ellipsis and the text after it.
fn ellipsis_item(text: &str) -> Option<(&str, &str)> {
    let sep_len = text.len() - text.trim_start_matches([',', ' ', '\n', '\t']).len();
    let (sep, rest) = text.split_at(sep_len);
    if !sep.contains(',') {
        return None;
    }
    let rest = rest
        .strip_prefix("...")
        .or_else(|| rest.strip_prefix('…'))?;
    Some((sep, rest.trim_start()))
}

fn json_examples(text: &str, declared: &[&str]) -> Vec<Example> {
    let mut out = Vec::new();
    let mut next = 0;
    for (at, c) in text.char_indices() {
        if at < next || !matches!(c, '{' | '[') {
            continue;
        }
        let Some(node) = sketch::read(text, at) else {
            continue;
        };
        next = node.end;
        out.extend(json_example_within(text, &node, declared, 0));
    }
    out
}

/// The example `node` is, or else the first one among its values (a few levels down).
fn json_example_within(
    text: &str,
    node: &Node,
    declared: &[&str],
    depth: usize,
) -> Option<Example> {
    if let Some(example) = json_example(text, node, declared) {
        return Some(example);
    }
    if depth >= 4 {
        return None;
    }
    let children: Vec<&Node> = match &node.kind {
        Kind::Array(items) => items.iter().collect(),
        Kind::Object { members, .. } => members.iter().map(|m| &m.value).collect(),
        _ => Vec::new(),
    };
    children
        .into_iter()
        .filter(|c| matches!(c.kind, Kind::Array(_) | Kind::Object { .. }))
        .find_map(|c| json_example_within(text, c, declared, depth + 1))
}

/// A call object: the object written per call, its name value and its arguments value.
struct CallObject<'n> {
    object: &'n Node,
    name: &'n Node,
    args: &'n Node,
}

/// The text of a name value (a string, or a bare placeholder).
fn value_text<'t>(text: &'t str, node: &'t Node) -> Option<&'t str> {
    match &node.kind {
        Kind::Str { text, .. } => Some(text),
        Kind::Placeholder => Some(&text[node.start..node.end]),
        _ => None,
    }
}

/// Whether a value is a JSON schema (a tool definition's parameters, not arguments).
fn is_schema(node: &Node) -> bool {
    node.members().is_some_and(|m| {
        m.iter()
            .any(|m| m.key == "properties" || m.key == "type" && m.value.as_str() == Some("object"))
    })
}

/// The name and arguments members of `members`, scored (higher is surer).
fn name_and_args<'n>(
    text: &str,
    members: &'n [Member],
    declared: &[&str],
) -> Option<(usize, &'n Node, &'n Node)> {
    if members.len() < 2 || members.iter().any(|m| m.key == "description") {
        return None;
    }
    let keys: Vec<&str> = members.iter().map(|m| m.key.as_str()).collect();
    let mut best: Option<(usize, &Node, &Node)> = None;
    for (i, n) in members.iter().enumerate() {
        let Some(name) = value_text(text, &n.value) else {
            continue;
        };
        // A value that is another member's key names that member, not a tool.
        if !names_tool(name, declared) || keys.contains(&name) {
            continue;
        }
        let name_score = if declared.contains(&name) {
            4
        } else if names_a_name(name) {
            2
        } else {
            1
        } + usize::from(n.key.contains("name"));
        for (j, a) in members.iter().enumerate() {
            if i == j {
                continue;
            }
            let args_score = match &a.value.kind {
                Kind::Object { .. } if !is_schema(&a.value) => 2,
                Kind::Placeholder => 1,
                Kind::Str { text: s, .. } if is_placeholder(s) && names_arguments(s) => 1,
                Kind::Str { text: s, .. } if s.trim_start().starts_with('{') => 1,
                _ => continue,
            };
            let score = name_score + args_score;
            if best.as_ref().is_none_or(|b| score > b.0) {
                best = Some((score, &n.value, &a.value));
            }
        }
    }
    best
}

/// The call in `object`: its own members, or those of an object it nests.
fn call_in<'n>(text: &str, object: &'n Node, declared: &[&str]) -> Option<CallObject<'n>> {
    let members = object.members()?;
    let direct = name_and_args(text, members, declared);
    let nested = members
        .iter()
        .filter_map(|m| name_and_args(text, m.value.members()?, declared))
        .max_by_key(|b| b.0);
    let (_, name, args) = match (direct, nested) {
        (Some(d), Some(n)) => {
            if n.0 >= d.0 {
                n
            } else {
                d
            }
        }
        (d, n) => d.or(n)?,
    };
    Some(CallObject { object, name, args })
}

fn json_example(text: &str, node: &Node, declared: &[&str]) -> Option<Example> {
    let (objects, list): (Vec<&Node>, bool) = match &node.kind {
        Kind::Object { .. } => (vec![node], false),
        Kind::Array(items) => (items.iter().collect(), true),
        _ => return None,
    };
    let calls: Vec<CallObject<'_>> = objects
        .iter()
        .filter_map(|o| call_in(text, o, declared))
        .collect();
    if calls.is_empty() || calls.len() != objects.len() {
        return None;
    }
    let first = &calls[0];
    let (o, n, a) = (first.object, first.name, first.args);
    let doubled = matches!(o.kind, Kind::Object { doubled: true, .. });
    let (from, to) = if doubled {
        (o.start + 2, o.end - 2)
    } else {
        (o.start, o.end)
    };
    let brace = |b: &str| if doubled { b.to_owned() } else { String::new() };
    let args_first = a.start < n.start;
    let (x, y) = if args_first { (a, n) } else { (n, a) };
    let object_text = &text[o.start..o.end];
    let python = matches!(n.kind, Kind::Str { python: true, .. });
    let args = Args::Json {
        colon: if object_text.contains("\": ") || object_text.contains("': ") {
            ": ".into()
        } else {
            ":".into()
        },
        comma: if object_text.contains(", \"") || object_text.contains(", '") {
            ", ".into()
        } else {
            ",".into()
        },
        python,
    };
    let name = if python {
        NameForm::Python
    } else {
        NameForm::Json
    };
    let (before_at, before) = marker_before(text, node.start);
    let (after_at, after) = closer_after(text, before_at, before, node.end);
    let mut syntax = Syntax {
        open: String::new(),
        close: String::new(),
        separator: "\n".into(),
        separator_stated: false,
        head: brace("{") + &text[from..x.start],
        mid: text[x.end..y.start].to_owned(),
        tail: text[y.end..to].to_owned() + &brace("}"),
        args_first,
        name,
        args,
    };
    if list {
        let last = calls.last()?.object;
        syntax.open = format!("{before}{}", &text[node.start..o.start]);
        let mut close = &text[last.end..node.end];
        syntax.separator = match &calls[..] {
            [c1, c2, ..] => text[c1.object.end..c2.object.start].to_owned(),
            _ => ", ".into(),
        };
        syntax.separator_stated = calls.len() > 1;
        // `{...}, ...]`: the ellipsis stands for more calls, written with the separator
        // before it.
        if let Some((sep, rest)) = ellipsis_item(close) {
            if !syntax.separator_stated {
                syntax.separator = sep.to_owned();
                syntax.separator_stated = true;
            }
            close = rest;
        }
        syntax.close = format!("{close}{after}");
    } else {
        syntax.head = format!("{before}{}", syntax.head);
        syntax.tail = format!("{}{after}", syntax.tail);
    }
    let names = calls
        .iter()
        .filter_map(|c| value_text(text, c.name).map(str::to_owned))
        .collect();
    let literal = if node.has_placeholder() {
        None
    } else {
        calls
            .iter()
            .map(|c| literal_json_call(text, c))
            .collect::<Option<Vec<_>>>()
    };
    Some(Example {
        shape: Shape::Json,
        span: (before_at, after_at),
        syntax,
        names,
        literal,
    })
}

/// The call a literal JSON call object states.
fn literal_json_call(text: &str, call: &CallObject<'_>) -> Option<CallSpec> {
    let name = call.name.as_str()?;
    if is_marked_placeholder(name) {
        return None;
    }
    let args = match json_at(text, call.args.start)?.value {
        Value::String(s) => serde_json::from_str(&s).ok()?,
        v => v,
    };
    let Value::Object(map) = args else {
        return None;
    };
    Some(CallSpec {
        name: name.to_owned(),
        args: map.into_iter().collect(),
    })
}

// ---- Python call lists ----

fn list_examples(text: &str, declared: &[&str]) -> Vec<Example> {
    text.char_indices()
        .filter(|(_, c)| *c == '[')
        .filter_map(|(at, _)| list_example(text, at, declared))
        .collect()
}

fn list_example(text: &str, at: usize, declared: &[&str]) -> Option<Example> {
    let list = pycall::read(text, at)?;
    let slice = |s: (usize, usize)| &text[s.0..s.1];
    if !list
        .calls
        .iter()
        .all(|c| names_tool(slice(c.name), declared))
    {
        return None;
    }
    let first = &list.calls[0];
    let last = list.calls.last()?;
    let (before_at, before) = marker_before(text, list.span.0);
    let (after_at, after) = closer_after(text, before_at, before, list.span.1);
    let values: Vec<&str> = list
        .calls
        .iter()
        .flat_map(|c| c.args.iter().map(|a| slice(a.1)))
        .collect();
    let quote = values
        .iter()
        .find_map(|v| v.chars().next().filter(|c| matches!(c, '\'' | '"')))
        .unwrap_or('\'');
    let comma = match &first.args[..] {
        [a1, a2, ..] => text[a1.1 .1..a2.0 .0].to_owned(),
        _ => ", ".into(),
    };
    let open_paren = first.name.1 + text[first.name.1..].find('(')? + 1;
    let syntax = Syntax {
        open: format!("{before}{}", &text[list.span.0..first.span.0]),
        close: format!("{}{after}", &text[last.span.1..list.span.1]),
        separator: match &list.calls[..] {
            [c1, c2, ..] => text[c1.span.1..c2.span.0].to_owned(),
            _ => ", ".into(),
        },
        separator_stated: list.calls.len() > 1,
        head: String::new(),
        mid: text[first.name.1..open_paren].to_owned(),
        tail: ")".into(),
        args_first: false,
        name: NameForm::Raw,
        args: Args::Keywords { quote, comma },
    };
    let placeholders = list.calls.iter().any(|c| {
        c.elided
            || is_marked_placeholder(slice(c.name))
            || c.args.iter().any(|a| value_is_placeholder(slice(a.1)))
    });
    let literal = (!placeholders).then(|| {
        list.calls
            .iter()
            .map(|c| CallSpec {
                name: slice(c.name).to_owned(),
                args: c
                    .args
                    .iter()
                    .map(|(k, v)| {
                        let json = crate::generate::literal::literal_to_json(slice(*v), "'", "'");
                        let value = serde_json::from_str(&json).unwrap_or(Value::Null);
                        (slice(*k).to_owned(), value)
                    })
                    .collect(),
            })
            .collect()
    });
    Some(Example {
        shape: Shape::CallList,
        span: (before_at, after_at),
        syntax,
        names: list
            .calls
            .iter()
            .map(|c| slice(c.name).to_owned())
            .collect(),
        literal,
    })
}

// ---- call elements ----

fn element_examples(text: &str, declared: &[&str]) -> Vec<Example> {
    let mut out = Vec::new();
    let mut next = 0;
    for (at, c) in text.char_indices() {
        if at < next || c != '<' {
            continue;
        }
        let Some(first) = xml::read(text, at) else {
            continue;
        };
        if !names_tool(&text[first.name.0..first.name.1], declared) {
            continue;
        }
        // Calls written back to back are one example of several calls.
        let mut group = vec![first];
        loop {
            let end = group.last().map_or(at, |c| c.span.1);
            let gap = text[end..].len() - text[end..].trim_start().len();
            match xml::read(text, end + gap) {
                Some(c) if names_tool(&text[c.name.0..c.name.1], declared) => group.push(c),
                _ => break,
            }
        }
        next = group.last().map_or(at, |c| c.span.1);
        out.extend(element_example(text, &group));
    }
    out
}

fn element_example(text: &str, group: &[XmlCall]) -> Option<Example> {
    let slice = |s: (usize, usize)| &text[s.0..s.1];
    let first = group.first()?;
    let p = first.params.first()?;
    let last_param = first.params.last()?;
    let after_params = if first.elided {
        let rest = &text[last_param.span.1..first.span.1];
        let dots = rest
            .find("...")
            .map(|i| i + 3)
            .or_else(|| rest.find('…').map(|i| i + 3));
        last_param.span.1 + dots.unwrap_or(0)
    } else {
        last_param.span.1
    };
    let separator = match &first.params[..] {
        [a, b, ..] => text[a.span.1..b.span.0].to_owned(),
        _ => {
            let rest = &text[p.span.1..];
            rest[..rest.len() - rest.trim_start().len()].to_owned()
        }
    };
    let (before_at, before) = marker_before(text, first.span.0);
    let (after_at, after) = closer_after(text, before_at, before, group.last()?.span.1);
    let syntax = Syntax {
        open: before.to_owned(),
        close: after.to_owned(),
        separator: match group {
            [a, b, ..] => text[a.span.1..b.span.0].to_owned(),
            _ => "\n".into(),
        },
        separator_stated: group.len() > 1,
        head: text[first.span.0..first.name.0].to_owned(),
        mid: text[first.name.1..p.span.0].to_owned(),
        tail: text[after_params..first.span.1].to_owned(),
        args_first: false,
        name: NameForm::Raw,
        args: Args::Elements {
            head: text[p.span.0..p.key.0].to_owned(),
            mid: text[p.key.1..p.value.0].to_owned(),
            tail: text[p.value.1..p.span.1].to_owned(),
            separator,
        },
    };
    let placeholders = group.iter().any(|c| {
        c.elided
            || is_marked_placeholder(slice(c.name))
            || c.params.iter().any(|p| {
                is_marked_placeholder(slice(p.key)) || is_marked_placeholder(slice(p.value))
            })
    });
    let literal = (!placeholders).then(|| {
        group
            .iter()
            .map(|c| CallSpec {
                name: slice(c.name).to_owned(),
                args: c
                    .params
                    .iter()
                    .map(|p| (slice(p.key).to_owned(), Value::from(slice(p.value))))
                    .collect(),
            })
            .collect()
    });
    Some(Example {
        shape: Shape::Elements,
        span: (before_at, after_at),
        syntax,
        names: group.iter().map(|c| slice(c.name).to_owned()).collect(),
        literal,
    })
}
