//! The compiled, immutable grammar: an arena of combinator nodes.

use super::chars::CharClass;
use crate::json::{Flavour, Target};
use memchr::memmem::Finder;

/// A handle to a parser (combinator node) in a [`GrammarBuilder`](super::GrammarBuilder)'s
/// arena. Cheap to copy; only meaningful with the builder that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Parser(pub(crate) u32);

impl Parser {
    pub(crate) fn idx(self) -> usize {
        self.0 as usize
    }
}

/// Identifies an AST tag in a [`Grammar`]; resolve it with [`Grammar::tag_name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TagId(pub(crate) u32);

/// One combinator in the arena. Children are referred to by index and always created before
/// their parent, so the arena is acyclic; recursion goes through [`Node::Ref`].
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// Never matches (placeholder for an invalid argument or handle).
    Fail,
    Eps,
    Start,
    End,
    Literal(Box<[u8]>),
    Any,
    Seq(Box<[Parser]>),
    Choice(Box<[Parser]>),
    Repeat {
        p: Parser,
        min: u32,
        max: Option<u32>,
    },
    Peek(Parser),
    Negate(Parser),
    Chars {
        class: Box<CharClass>,
        min: u32,
        max: Option<u32>,
    },
    Space,
    Until(Box<Finder<'static>>),
    UntilOneOf {
        delimiters: Box<[Box<[u8]>]>,
        /// Sorted, deduplicated first bytes of the delimiters.
        firsts: Box<[u8]>,
    },
    Rest,
    /// Unresolved reference (builder only).
    RefName(Box<str>),
    /// Reference to rule index.
    Ref(u32),
    Schema {
        p: Parser,
        name: Box<str>,
        schema: Box<serde_json::Value>,
    },
    Atomic(Parser),
    Tag {
        tag: TagId,
        p: Parser,
    },
    Json(Target),
    /// A quoted object key: JSON-encoded bytes and the Python `'` form.
    JsonKey {
        key: Box<str>,
        json: Box<[u8]>,
        python: Box<[u8]>,
    },
}

/// A named rule.
#[derive(Clone, Debug)]
pub(crate) struct Rule {
    pub(crate) name: Box<str>,
    pub(crate) body: Parser,
    pub(crate) trigger: bool,
}

/// A compiled grammar: immutable, `Send + Sync`, shareable between threads and sessions.
///
/// Parse with [`Grammar::parse`] / [`Grammar::parse_partial`] (one shot, borrowed input) or
/// a [`Session`](super::Session) from [`Grammar::session`] (incremental).
#[derive(Clone, Debug)]
pub struct Grammar {
    pub(crate) nodes: Vec<Node>,
    pub(crate) rules: Vec<Rule>,
    pub(crate) tags: Vec<Box<str>>,
    pub(crate) root: Parser,
    pub(crate) name: Option<Box<str>>,
    pub(crate) flavour: Flavour,
    pub(crate) max_depth: usize,
    pub(crate) json_max_depth: usize,
    /// Per node: it cannot fail (it matches, possibly empty, wherever it starts).
    pub(crate) infallible: Vec<bool>,
}

/// Which nodes cannot fail (see [`Grammar::infallible`]): a least fixpoint over the rules, so
/// recursion counts as fallible unless proven otherwise (conservative).
pub(crate) fn infallible_nodes(nodes: &[Node], rules: &[Rule]) -> Vec<bool> {
    let mut known = vec![false; nodes.len()];
    loop {
        let mut changed = false;
        for (i, node) in nodes.iter().enumerate() {
            let ok = |p: &Parser| known.get(p.idx()).copied().unwrap_or(false);
            let now = match node {
                Node::Eps | Node::Space | Node::Until(_) | Node::UntilOneOf { .. } | Node::Rest => {
                    true
                }
                Node::Chars { min, .. } => *min == 0,
                Node::Seq(ps) => ps.iter().all(ok),
                Node::Choice(ps) => ps.iter().any(ok),
                Node::Repeat { p, min, .. } => *min == 0 || ok(p),
                Node::Peek(p) | Node::Atomic(p) | Node::Tag { p, .. } => ok(p),
                Node::Ref(r) => rules.get(*r as usize).is_some_and(|rule| ok(&rule.body)),
                _ => false,
            };
            if now && !known[i] {
                known[i] = true;
                changed = true;
            }
        }
        if !changed {
            return known;
        }
    }
}

impl Grammar {
    /// Whether the node cannot fail.
    pub(crate) fn is_infallible(&self, p: Parser) -> bool {
        self.infallible.get(p.idx()).copied().unwrap_or(false)
    }

    pub(crate) fn node(&self, p: Parser) -> &Node {
        // Handles are validated at build time; a foreign handle degrades to a failing node.
        self.nodes.get(p.idx()).unwrap_or(&Node::Fail)
    }

    /// The grammar's name, if set with [`GrammarBuilder::name`](super::GrammarBuilder::name).
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The JSON flavour used by the JSON parsers.
    pub fn flavour(&self) -> Flavour {
        self.flavour
    }

    /// The name of a tag.
    pub fn tag_name(&self, tag: TagId) -> &str {
        self.tags.get(tag.0 as usize).map_or("", |t| t)
    }

    /// The id of a tag name, if any node uses it.
    pub fn tag_id(&self, name: &str) -> Option<TagId> {
        self.tags
            .iter()
            .position(|t| &**t == name)
            .map(|i| TagId(i as u32))
    }

    /// All rule names, in definition order.
    pub fn rule_names(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|r| &*r.name)
    }

    /// The names of the rules flagged as triggers (entry points for lazy grammars).
    pub fn trigger_rules(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().filter(|r| r.trigger).map(|r| &*r.name)
    }

    /// The `(name, json_schema)` of every `schema` wrapper, in arena order.
    pub fn schemas(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.nodes.iter().filter_map(|n| match n {
            Node::Schema { name, schema, .. } => Some((&**name, &**schema)),
            _ => None,
        })
    }

    /// The maximum combinator nesting depth of a parse.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Grammar>();
};
