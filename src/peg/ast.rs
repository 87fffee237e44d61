//! The tagged AST: nodes in one `Vec` (pre-order), linked by index, spans into the text.

use super::grammar::{Grammar, TagId};
use super::machine::RawNode;
use std::ops::Range;

/// Index of a node in an [`Ast`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AstId(u32);

impl AstId {
    /// The node's position in pre-order.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One tagged node: a tag, a byte span of the parsed text, and whether it is partial
/// (its parser had not finished when the input ran out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AstNode {
    tag: TagId,
    start: usize,
    end: usize,
    partial: bool,
    parent: Option<AstId>,
    first_child: Option<AstId>,
    next_sibling: Option<AstId>,
}

impl AstNode {
    /// The tag id (see [`Ast::tag`] for the name).
    pub fn tag_id(&self) -> TagId {
        self.tag
    }
    /// Byte span in the parsed text.
    pub fn span(&self) -> Range<usize> {
        self.start..self.end
    }
    /// Whether the node is still open (need-more).
    pub fn is_partial(&self) -> bool {
        self.partial
    }
    /// The parent node.
    pub fn parent(&self) -> Option<AstId> {
        self.parent
    }
}

/// A tagged AST. Nodes are stored in pre-order (document order); text is obtained by slicing
/// the parsed input with [`Ast::text`], so nodes hold no strings.
///
/// Only `tag` combinators create nodes. A partial parse shows the nodes completed so far plus
/// every open tag as a partial node ending at the parse frontier.
///
/// An AST may be a *window* ([`Session::ast_from`](super::Session::ast_from)): the first
/// [`base`](Self::base) nodes in pre-order (whole finished top-level subtrees) are left out,
/// and ids keep their place in the full tree, so a reader that follows a growing parse need
/// not rebuild what it has read.
#[derive(Clone, Debug)]
pub struct Ast<'g> {
    grammar: &'g Grammar,
    nodes: Vec<AstNode>,
    /// Pre-order index of the first node held.
    base: u32,
}

impl<'g> Ast<'g> {
    pub(crate) fn from_raw(grammar: &'g Grammar, raw: &[RawNode], complete: usize) -> Self {
        Self::from_raw_at(grammar, raw, complete, 0)
    }

    /// The window of the tree whose first `base` pre-order nodes are whole subtrees left out:
    /// `raw` holds the post-order nodes after them (`first` relative to the window).
    pub(crate) fn from_raw_at(
        grammar: &'g Grammar,
        raw: &[RawNode],
        complete: usize,
        base: usize,
    ) -> Self {
        let mut nodes: Vec<AstNode> = Vec::with_capacity(raw.len());
        // Direct children (or roots) of the post-order range `lo..hi`, in document order.
        let children = |lo: usize, hi: usize| {
            let mut out = Vec::new();
            let mut j = hi;
            while j > lo {
                let c = j - 1;
                out.push(c);
                j = raw.get(c).map_or(lo, |n| (n.first as usize).clamp(lo, c));
            }
            out
        };
        let mut last_child: Vec<Option<u32>> = Vec::with_capacity(raw.len());
        let mut last_root: Option<u32> = None;
        // Stack of (raw index, parent out index); children pushed last-first.
        let mut stack: Vec<(usize, Option<u32>)> = children(0, raw.len())
            .into_iter()
            .map(|c| (c, None))
            .collect();
        while let Some((ri, parent)) = stack.pop() {
            let Some(r) = raw.get(ri) else { continue };
            let id = nodes.len() as u32;
            nodes.push(AstNode {
                tag: r.tag,
                start: r.start,
                end: r.end,
                partial: ri >= complete,
                parent: parent.map(AstId),
                first_child: None,
                next_sibling: None,
            });
            last_child.push(None);
            let prev = match parent {
                Some(p) => last_child.get_mut(p as usize).and_then(|l| l.replace(id)),
                None => last_root.replace(id),
            };
            match prev {
                Some(prev) => {
                    if let Some(n) = nodes.get_mut(prev as usize) {
                        n.next_sibling = Some(AstId(id));
                    }
                }
                None => {
                    if let Some(n) = parent.and_then(|p| nodes.get_mut(p as usize)) {
                        n.first_child = Some(AstId(id));
                    }
                }
            }
            let lo = (r.first as usize).min(ri);
            stack.extend(children(lo, ri).into_iter().map(|c| (c, Some(id))));
        }
        let base = base as u32;
        if base > 0 {
            let shift = |id: &mut Option<AstId>| {
                if let Some(id) = id {
                    id.0 += base;
                }
            };
            for n in &mut nodes {
                shift(&mut n.parent);
                shift(&mut n.first_child);
                shift(&mut n.next_sibling);
            }
        }
        Ast {
            grammar,
            nodes,
            base,
        }
    }

    /// Number of nodes (in a window: held ones).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Pre-order index of the first node held (0 unless the AST is a window).
    pub fn base(&self) -> usize {
        self.base as usize
    }

    /// One past the last pre-order index: the number of nodes of the full tree.
    pub fn end(&self) -> usize {
        self.base() + self.nodes.len()
    }

    /// The node at this pre-order index (`None` past the end, or before the window).
    pub fn get(&self, index: usize) -> Option<&AstNode> {
        self.nodes.get(index.checked_sub(self.base())?)
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// All nodes in pre-order (in a window: from [`base`](Self::base) on, so the node with
    /// id `i` is at `i - base`; see [`get`](Self::get)).
    pub fn nodes(&self) -> &[AstNode] {
        &self.nodes
    }

    /// All node ids in pre-order.
    pub fn ids(&self) -> impl Iterator<Item = AstId> {
        (self.base..self.end() as u32).map(AstId)
    }

    /// The node with this id.
    pub fn node(&self, id: AstId) -> Option<&AstNode> {
        self.get(id.index())
    }

    /// The node's tag name (`""` for a foreign id).
    pub fn tag(&self, id: AstId) -> &'g str {
        self.node(id).map_or("", |n| self.grammar.tag_name(n.tag))
    }

    /// The node's byte span (empty for a foreign id).
    pub fn span(&self, id: AstId) -> Range<usize> {
        self.node(id).map_or(0..0, AstNode::span)
    }

    /// Whether the node is partial.
    pub fn is_partial(&self, id: AstId) -> bool {
        self.node(id).is_some_and(AstNode::is_partial)
    }

    /// The node's text in `input` (the text that was parsed; `""` if out of range).
    pub fn text<'i>(&self, id: AstId, input: &'i str) -> &'i str {
        input.get(self.span(id)).unwrap_or("")
    }

    /// The top-level nodes, in document order.
    pub fn roots(&self) -> Siblings<'_, 'g> {
        Siblings {
            ast: self,
            next: (!self.nodes.is_empty()).then_some(AstId(self.base)),
        }
    }

    /// The direct children of `id`, in document order.
    pub fn children(&self, id: AstId) -> Siblings<'_, 'g> {
        Siblings {
            ast: self,
            next: self.node(id).and_then(|n| n.first_child),
        }
    }

    /// All nodes tagged `tag`, in document order.
    pub fn find<'a>(&'a self, tag: &'a str) -> impl Iterator<Item = AstId> + 'a {
        let id = self.grammar.tag_id(tag);
        self.ids()
            .filter(move |&i| id.is_some() && self.node(i).map(|n| n.tag) == id)
    }

    /// The first node tagged `tag`.
    pub fn find_first(&self, tag: &str) -> Option<AstId> {
        self.find(tag).next()
    }

    /// All nodes tagged `tag` inside the subtree of `id` (excluding `id`), in document order.
    pub fn find_in<'a>(&'a self, id: AstId, tag: &'a str) -> impl Iterator<Item = AstId> + 'a {
        let end = self.subtree_end(id);
        let tid = self.grammar.tag_id(tag);
        (id.0 + 1..end as u32)
            .map(AstId)
            .filter(move |&i| tid.is_some() && self.node(i).map(|n| n.tag) == tid)
    }

    /// One past the last pre-order index of `id`'s subtree.
    fn subtree_end(&self, id: AstId) -> usize {
        let mut cur = Some(id);
        while let Some(c) = cur {
            match self.node(c) {
                Some(n) if n.next_sibling.is_some() => {
                    return n.next_sibling.map_or(0, AstId::index)
                }
                Some(n) => cur = n.parent,
                None => break,
            }
        }
        self.end()
    }

    /// Calls `f(id, depth)` for every node in pre-order (depth 0 for roots).
    pub fn visit(&self, mut f: impl FnMut(AstId, usize)) {
        let mut depths: Vec<usize> = Vec::with_capacity(self.nodes.len());
        for (i, n) in self.nodes.iter().enumerate() {
            let d = n
                .parent
                .and_then(|p| depths.get(p.index().checked_sub(self.base())?))
                .map_or(0, |d| d + 1);
            depths.push(d);
            f(AstId(self.base + i as u32), d);
        }
    }

    /// A readable indented rendering: `tag 0..5 "text"` per line, `~` marking partial nodes.
    pub fn dump(&self, input: &str) -> String {
        let mut out = String::new();
        self.visit(|id, depth| {
            let span = self.span(id);
            out.push_str(&format!(
                "{:indent$}{}{} {}..{} {:?}\n",
                "",
                self.tag(id),
                if self.is_partial(id) { "~" } else { "" },
                span.start,
                span.end,
                self.text(id, input),
                indent = depth * 2
            ));
        });
        out
    }
}

impl PartialEq for Ast<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.nodes == other.nodes
    }
}

/// Iterator over siblings (see [`Ast::children`], [`Ast::roots`]).
#[derive(Clone, Debug)]
pub struct Siblings<'a, 'g> {
    ast: &'a Ast<'g>,
    next: Option<AstId>,
}

impl Iterator for Siblings<'_, '_> {
    type Item = AstId;
    fn next(&mut self) -> Option<AstId> {
        let id = self.next?;
        self.next = self.ast.node(id).and_then(|n| n.next_sibling);
        Some(id)
    }
}
