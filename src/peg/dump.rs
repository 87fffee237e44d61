//! A readable dump of a grammar, and the descriptions used in error expectations.

use super::grammar::{Grammar, Node, Parser};
use std::fmt::{self, Write};

const MAX_DUMP_DEPTH: usize = 64;

fn quoted(bytes: &[u8]) -> String {
    format!("\"{}\"", String::from_utf8_lossy(bytes).escape_debug())
}

fn bound(min: u32, max: Option<u32>) -> String {
    match max {
        Some(max) => format!("{min}, {max}"),
        None => format!("{min}, *"),
    }
}

fn expr(g: &Grammar, p: Parser, depth: usize, out: &mut String) {
    if depth > MAX_DUMP_DEPTH {
        out.push('…');
        return;
    }
    let list = |name: &str, ps: &[Parser], out: &mut String| {
        out.push_str(name);
        out.push('(');
        for (i, &c) in ps.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            expr(g, c, depth + 1, out);
        }
        out.push(')');
    };
    let wrap = |name: &str, extra: &str, c: Parser, out: &mut String| {
        out.push_str(name);
        out.push('(');
        out.push_str(extra);
        expr(g, c, depth + 1, out);
        out.push(')');
    };
    match g.node(p) {
        Node::Fail => out.push_str("fail"),
        Node::Eps => out.push_str("eps"),
        Node::Start => out.push_str("start"),
        Node::End => out.push_str("end"),
        Node::Literal(l) => out.push_str(&quoted(l)),
        Node::Any => out.push_str("any"),
        Node::Seq(ps) => list("seq", ps, out),
        Node::Choice(ps) => list("choice", ps, out),
        &Node::Repeat { p, min, max } => match (min, max) {
            (0, None) => wrap("zero_or_more", "", p, out),
            (1, None) => wrap("one_or_more", "", p, out),
            (0, Some(1)) => wrap("optional", "", p, out),
            _ => {
                out.push_str("repeat(");
                expr(g, p, depth + 1, out);
                let _ = write!(out, ", {})", bound(min, max));
            }
        },
        Node::Peek(c) => wrap("peek", "", *c, out),
        Node::Negate(c) => wrap("negate", "", *c, out),
        Node::Chars { class, min, max } => {
            let _ = write!(out, "chars({class}, {})", bound(*min, *max));
        }
        Node::Space => out.push_str("space"),
        Node::Until(f) => {
            let _ = write!(out, "until({})", quoted(f.needle()));
        }
        Node::UntilOneOf { delimiters, .. } => {
            let ds: Vec<String> = delimiters.iter().map(|d| quoted(d)).collect();
            let _ = write!(out, "until_one_of({})", ds.join(", "));
        }
        Node::Rest => out.push_str("rest"),
        Node::RefName(n) => {
            let _ = write!(out, "ref {n}");
        }
        Node::Ref(r) => {
            let name = g.rules.get(*r as usize).map_or("?", |r| &r.name);
            let _ = write!(out, "ref {name}");
        }
        Node::Schema { p, name, .. } => wrap("schema", &format!("{name}, "), *p, out),
        Node::Atomic(c) => wrap("atomic", "", *c, out),
        Node::Tag { tag, p } => wrap("tag", &format!("{}, ", g.tag_name(*tag)), *p, out),
        Node::Json(t) => out.push_str(match t {
            crate::json::Target::Value => "json",
            crate::json::Target::Object => "json_object",
            crate::json::Target::Array => "json_array",
            crate::json::Target::String => "json_string",
            crate::json::Target::Number => "json_number",
            crate::json::Target::Bool => "json_bool",
            crate::json::Target::Null => "json_null",
            crate::json::Target::StringContent => "json_string_content",
        }),
        Node::JsonKey { key, .. } => {
            let _ = write!(out, "json_key({})", quoted(key.as_bytes()));
        }
    }
}

/// Renders one parser as an expression (as in [`Grammar::dump`]).
pub(crate) fn render(g: &Grammar, p: Parser) -> String {
    let mut out = String::new();
    expr(g, p, 0, &mut out);
    out
}

/// What a failing leaf expected, for error messages.
pub(crate) fn expectation(g: &Grammar, p: Parser, json: Option<&'static str>) -> String {
    match g.node(p) {
        Node::Literal(l) => format!("`{}`", String::from_utf8_lossy(l).escape_debug()),
        Node::JsonKey { json, .. } => format!("`{}`", String::from_utf8_lossy(json)),
        Node::End => "end of input".to_owned(),
        Node::Start => "start of input".to_owned(),
        Node::Any => "any character".to_owned(),
        Node::Chars { class, .. } => format!("a character in {class}"),
        Node::Json(t) => json.unwrap_or(t.describe()).to_owned(),
        Node::Negate(c) => format!("not {}", render(g, *c)),
        _ => render(g, p),
    }
}

impl Grammar {
    /// A readable listing: a header, the root expression, then one line per rule. Literals
    /// are quoted and escaped; references print as `ref name`.
    ///
    /// ```
    /// use chatparse::peg::GrammarBuilder;
    /// let b = GrammarBuilder::new().name("demo");
    /// let call = b.trigger_rule("call", b.seq([b.literal("<call>\n"), b.json()]));
    /// let root = b.seq([b.tag("content", b.until("<call>")), b.optional(call), b.end()]);
    /// assert_eq!(
    ///     b.build(root).unwrap().dump(),
    ///     "grammar demo (flavour json)\n\
    ///      root = seq(tag(content, until(\"<call>\")), optional(ref call), end)\n\
    ///      rule call [trigger] = seq(\"<call>\\n\", json)\n"
    /// );
    /// ```
    pub fn dump(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "grammar {} (flavour {})",
            self.name.as_deref().unwrap_or("<unnamed>"),
            match self.flavour {
                crate::json::Flavour::Json => "json",
                crate::json::Flavour::Python => "python",
            }
        );
        let _ = writeln!(out, "root = {}", render(self, self.root));
        for r in &self.rules {
            let _ = writeln!(
                out,
                "rule {}{} = {}",
                r.name,
                if r.trigger { " [trigger]" } else { "" },
                render(self, r.body)
            );
        }
        out
    }
}

impl fmt::Display for Grammar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.dump())
    }
}
