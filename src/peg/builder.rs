//! [`GrammarBuilder`]: creates combinators in an arena and compiles them into a [`Grammar`].

use super::chars::CharClass;
use super::error::BuildError;
use super::grammar::{Grammar, Node, Parser, Rule, TagId};
use crate::json::{Flavour, Target, DEFAULT_MAX_DEPTH};
use memchr::memmem::Finder;
use std::cell::RefCell;
use std::collections::HashMap;

/// Default limit on combinator nesting during a parse (see [`GrammarBuilder::max_depth`]).
pub const DEFAULT_PARSE_DEPTH: usize = 2048;

#[derive(Default)]
struct Arena {
    nodes: Vec<Node>,
    rules: Vec<Rule>,
    rule_index: HashMap<Box<str>, u32>,
    duplicate: Option<Box<str>>,
    tags: Vec<Box<str>>,
    error: Option<BuildError>,
}

/// Builds a [`Grammar`]. Every method takes `&self` so calls nest naturally:
///
/// ```
/// use chatparse::peg::GrammarBuilder;
/// let b = GrammarBuilder::new();
/// let root = b.seq([b.tag("content", b.until("<tool_call>")), b.end()]);
/// let grammar = b.build(root).unwrap();
/// assert!(grammar.parse("hello").is_success());
/// ```
///
/// Errors in arguments (a bad character class, an empty delimiter, `min > max`) are
/// remembered and returned by [`build`](Self::build), as are unknown and duplicate rules.
pub struct GrammarBuilder {
    arena: RefCell<Arena>,
    name: Option<Box<str>>,
    flavour: Flavour,
    max_depth: usize,
    json_max_depth: usize,
}

impl Default for GrammarBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl GrammarBuilder {
    /// An empty builder (JSON flavour, default depth limits).
    pub fn new() -> Self {
        GrammarBuilder {
            arena: RefCell::default(),
            name: None,
            flavour: Flavour::Json,
            max_depth: DEFAULT_PARSE_DEPTH,
            json_max_depth: DEFAULT_MAX_DEPTH,
        }
    }

    /// Names the grammar (shown in dumps and errors).
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Selects the dialect of every JSON parser of the grammar.
    pub fn flavour(mut self, flavour: Flavour) -> Self {
        self.flavour = flavour;
        self
    }

    /// Shorthand for `flavour(Flavour::Python)` when `yes`: single-quoted strings,
    /// `True`/`False`/`None`.
    pub fn python_dict(self, yes: bool) -> Self {
        self.flavour(if yes { Flavour::Python } else { Flavour::Json })
    }

    /// Limits the nesting of active combinators during a parse (default
    /// [`DEFAULT_PARSE_DEPTH`]); deeper parses fail with
    /// [`ParseErrorKind::DepthLimit`](super::ParseErrorKind::DepthLimit).
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth.max(1);
        self
    }

    /// Limits JSON nesting (default [`DEFAULT_MAX_DEPTH`]); deeper JSON does not match.
    pub fn json_max_depth(mut self, depth: usize) -> Self {
        self.json_max_depth = depth;
        self
    }

    fn push(&self, node: Node) -> Parser {
        let mut arena = self.arena.borrow_mut();
        arena.nodes.push(node);
        Parser((arena.nodes.len() - 1) as u32)
    }

    fn fail_with(&self, e: BuildError) -> Parser {
        let mut arena = self.arena.borrow_mut();
        arena.error.get_or_insert(e);
        drop(arena);
        self.push(Node::Fail)
    }

    /// Matches nothing and always succeeds.
    #[doc(alias = "epsilon")]
    pub fn eps(&self) -> Parser {
        self.push(Node::Eps)
    }

    /// Matches at offset 0 only (`^`).
    pub fn start(&self) -> Parser {
        self.push(Node::Start)
    }

    /// Matches at the end of input (`$`). In partial mode the input may continue, so at the
    /// end this is need-more.
    pub fn end(&self) -> Parser {
        self.push(Node::End)
    }

    /// Matches `text` exactly. Input ending inside it is need-more in partial mode.
    #[doc(alias = "lit")]
    pub fn literal(&self, text: &str) -> Parser {
        self.push(Node::Literal(text.as_bytes().into()))
    }

    /// Matches any one character (`.`).
    pub fn any(&self) -> Parser {
        self.push(Node::Any)
    }

    /// Matches all parsers in order.
    #[doc(alias = "sequence")]
    pub fn seq(&self, parsers: impl IntoIterator<Item = Parser>) -> Parser {
        self.push(Node::Seq(parsers.into_iter().collect()))
    }

    /// Ordered choice: the first alternative that matches wins.
    #[doc(alias = "alt")]
    pub fn choice(&self, parsers: impl IntoIterator<Item = Parser>) -> Parser {
        self.push(Node::Choice(parsers.into_iter().collect()))
    }

    /// `p*`.
    pub fn zero_or_more(&self, p: Parser) -> Parser {
        self.repeat(p, 0, None)
    }

    /// `p+`.
    pub fn one_or_more(&self, p: Parser) -> Parser {
        self.repeat(p, 1, None)
    }

    /// `p?`.
    #[doc(alias = "opt")]
    pub fn optional(&self, p: Parser) -> Parser {
        self.repeat(p, 0, Some(1))
    }

    /// Between `min` and `max` (`None`: unbounded) repetitions, greedy. An iteration that
    /// succeeds without consuming input ends the repetition and counts as satisfying `min`
    /// (so the loop always terminates).
    pub fn repeat(&self, p: Parser, min: u32, max: Option<u32>) -> Parser {
        if let Some(max) = max.filter(|&m| m < min) {
            return self.fail_with(BuildError::repeat_bounds(min, max));
        }
        self.push(Node::Repeat { p, min, max })
    }

    /// Positive lookahead (`&p`): succeeds, consuming nothing, if `p` matches.
    #[doc(alias = "lookahead")]
    pub fn peek(&self, p: Parser) -> Parser {
        self.push(Node::Peek(p))
    }

    /// Negative lookahead (`!p`): succeeds, consuming nothing, if `p` fails.
    #[doc(alias = "not")]
    pub fn negate(&self, p: Parser) -> Parser {
        self.push(Node::Negate(p))
    }

    /// Between `min` and `max` (`None`: unbounded) characters of `class` (e.g. `[a-z_-]`,
    /// `[^<]`). A malformed class is reported by [`build`](Self::build).
    pub fn chars(&self, class: &str, min: u32, max: Option<u32>) -> Parser {
        if let Some(max) = max.filter(|&m| m < min) {
            return self.fail_with(BuildError::repeat_bounds(min, max));
        }
        match CharClass::parse(class) {
            Ok(class) => self.push(Node::Chars {
                class: Box::new(class),
                min,
                max,
            }),
            Err(e) => self.fail_with(e),
        }
    }

    /// Zero or more whitespace characters (space, tab, CR, LF).
    pub fn space(&self) -> Parser {
        self.push(Node::Space)
    }

    /// Everything up to (not including) the first `delimiter`, or to the end of input in full
    /// mode. In partial mode without the delimiter yet, this is need-more; its partial span
    /// stops before a trailing prefix of the delimiter.
    pub fn until(&self, delimiter: &str) -> Parser {
        if delimiter.is_empty() {
            return self.fail_with(BuildError::empty_delimiter());
        }
        self.push(Node::Until(Box::new(
            Finder::new(delimiter.as_bytes()).into_owned(),
        )))
    }

    /// Like [`until`](Self::until) with several delimiters: stops at the first position where
    /// any of them starts.
    pub fn until_one_of<S: AsRef<str>>(&self, delimiters: impl IntoIterator<Item = S>) -> Parser {
        let ds: Box<[Box<[u8]>]> = delimiters
            .into_iter()
            .map(|d| d.as_ref().as_bytes().into())
            .collect();
        if ds.is_empty() || ds.iter().any(|d| d.is_empty()) {
            return self.fail_with(BuildError::empty_delimiter());
        }
        let mut firsts: Vec<u8> = ds.iter().filter_map(|d| d.first().copied()).collect();
        firsts.sort_unstable();
        firsts.dedup();
        self.push(Node::UntilOneOf {
            delimiters: ds,
            firsts: firsts.into(),
        })
    }

    /// Everything to the end of input (`.*`); need-more in partial mode.
    pub fn rest(&self) -> Parser {
        self.push(Node::Rest)
    }

    /// Defines rule `name` with body `p` and returns a reference to it.
    pub fn rule(&self, name: &str, p: Parser) -> Parser {
        self.define(name, p, false)
    }

    /// Defines a trigger rule (listed by [`Grammar::trigger_rules`]) and returns a reference.
    pub fn trigger_rule(&self, name: &str, p: Parser) -> Parser {
        self.define(name, p, true)
    }

    fn define(&self, name: &str, body: Parser, trigger: bool) -> Parser {
        {
            let mut arena = self.arena.borrow_mut();
            if arena.rule_index.contains_key(name) {
                arena.duplicate.get_or_insert(name.into());
            } else {
                let idx = arena.rules.len() as u32;
                arena.rule_index.insert(name.into(), idx);
                arena.rules.push(Rule {
                    name: name.into(),
                    body,
                    trigger,
                });
            }
        }
        self.reference(name)
    }

    /// A reference to rule `name`, which may be defined later (recursion); unknown names are
    /// reported by [`build`](Self::build).
    #[doc(alias = "ref")]
    pub fn reference(&self, name: &str) -> Parser {
        self.push(Node::RefName(name.into()))
    }

    /// Attaches a JSON schema to `p` (for grammar generation); parses exactly like `p`.
    pub fn schema(&self, p: Parser, name: &str, json_schema: serde_json::Value) -> Parser {
        self.push(Node::Schema {
            p,
            name: name.into(),
            schema: Box::new(json_schema),
        })
    }

    /// While `p` is incomplete (need-more), no AST node from `p`'s subtree is shown.
    pub fn atomic(&self, p: Parser) -> Parser {
        self.push(Node::Atomic(p))
    }

    /// Produces an AST node tagged `tag` spanning what `p` matched. Tags may be shared.
    pub fn tag(&self, tag: &str, p: Parser) -> Parser {
        let id = {
            let mut arena = self.arena.borrow_mut();
            match arena.tags.iter().position(|t| &**t == tag) {
                Some(i) => i as u32,
                None => {
                    arena.tags.push(tag.into());
                    (arena.tags.len() - 1) as u32
                }
            }
        };
        self.push(Node::Tag { tag: TagId(id), p })
    }

    /// Any JSON value (in the grammar's flavour).
    pub fn json(&self) -> Parser {
        self.push(Node::Json(Target::Value))
    }
    /// A JSON object.
    pub fn json_object(&self) -> Parser {
        self.push(Node::Json(Target::Object))
    }
    /// A JSON array.
    pub fn json_array(&self) -> Parser {
        self.push(Node::Json(Target::Array))
    }
    /// A JSON string, with quotes.
    pub fn json_string(&self) -> Parser {
        self.push(Node::Json(Target::String))
    }
    /// A JSON number.
    pub fn json_number(&self) -> Parser {
        self.push(Node::Json(Target::Number))
    }
    /// `true` or `false`.
    pub fn json_bool(&self) -> Parser {
        self.push(Node::Json(Target::Bool))
    }
    /// `null`.
    pub fn json_null(&self) -> Parser {
        self.push(Node::Json(Target::Null))
    }
    /// The content of a JSON string without quotes: up to the first unescaped `"` (or `'` in
    /// the Python flavour when the preceding byte is `'`), not consuming it.
    pub fn json_string_content(&self) -> Parser {
        self.push(Node::Json(Target::StringContent))
    }

    /// An object member `"key" ws : ws p`. In the Python flavour `'key'` also matches.
    pub fn json_member(&self, key: &str, p: Parser) -> Parser {
        let json = serde_json::to_string(key).unwrap_or_default();
        let python = format!("'{}'", key.replace('\\', "\\\\").replace('\'', "\\'"));
        let k = self.push(Node::JsonKey {
            key: key.into(),
            json: json.into_bytes().into(),
            python: python.into_bytes().into(),
        });
        let (s1, colon, s2) = (self.space(), self.literal(":"), self.space());
        self.seq([k, s1, colon, s2, p])
    }

    /// Compiles the grammar with `root` as its start parser: resolves rule references and
    /// reports the first recorded error.
    pub fn build(self, root: Parser) -> Result<Grammar, BuildError> {
        let mut arena = self.arena.into_inner();
        if let Some(e) = arena.error.take() {
            return Err(e);
        }
        if let Some(name) = arena.duplicate.take() {
            return Err(BuildError::duplicate_rule(&name));
        }
        let n = arena.nodes.len();
        let in_range = |p: &Parser| p.idx() < n;
        for node in &mut arena.nodes {
            if let Node::RefName(name) = node {
                match arena.rule_index.get(&**name) {
                    Some(&i) => *node = Node::Ref(i),
                    None => return Err(BuildError::unknown_rule(name)),
                }
            }
        }
        let handles_ok = in_range(&root)
            && arena.rules.iter().all(|r| in_range(&r.body))
            && arena.nodes.iter().all(|node| match node {
                Node::Seq(ps) | Node::Choice(ps) => ps.iter().all(in_range),
                Node::Repeat { p, .. }
                | Node::Peek(p)
                | Node::Negate(p)
                | Node::Schema { p, .. }
                | Node::Atomic(p)
                | Node::Tag { p, .. } => in_range(p),
                _ => true,
            });
        if !handles_ok {
            return Err(BuildError::unknown_rule("<parser from another builder>"));
        }
        let infallible = super::grammar::infallible_nodes(&arena.nodes, &arena.rules);
        Ok(Grammar {
            infallible,
            nodes: arena.nodes,
            rules: arena.rules,
            tags: arena.tags,
            root,
            name: self.name,
            flavour: self.flavour,
            max_depth: self.max_depth,
            json_max_depth: self.json_max_depth,
        })
    }
}
