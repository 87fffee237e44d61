//! The internal form both flavours are printed from: named rules over a small expression
//! language (literals, one-character classes, sequences, alternations, bounded repetition,
//! rule references, text that contains none of some delimiters).
//!
//! Rules carry what the printers and the tests need beyond the language: a JSON schema when the
//! rule is a schema's value (the Lark printer writes llguidance's `%json` there), and a
//! [`Role`] naming what a rule reads (a call to a tool, its arguments, one tagged argument),
//! which the sampler uses to know which calls a generated text holds.

use serde_json::Value;

use super::GrammarError;

/// Most rules one grammar may have.
pub const MAX_RULES: usize = 50_000;
/// Most expression nodes one grammar may have (all rules together).
pub const MAX_NODES: usize = 2_000_000;

/// A rule's index in its [`Rules`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(pub(crate) usize);

impl RuleId {
    /// The index.
    pub fn index(self) -> usize {
        self.0
    }
}

/// A set of characters: sorted, disjoint, non-adjacent inclusive ranges (never empty).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CharSet {
    ranges: Vec<(char, char)>,
}

impl CharSet {
    /// The set of `ranges` (normalised), `None` when it is empty.
    pub fn new(ranges: impl IntoIterator<Item = (char, char)>) -> Option<CharSet> {
        let mut rs: Vec<(char, char)> = ranges.into_iter().filter(|(a, b)| a <= b).collect();
        rs.sort_unstable();
        let mut out: Vec<(char, char)> = Vec::with_capacity(rs.len());
        for (lo, hi) in rs {
            if let Some(last) = out.last_mut() {
                if next_char(last.1).is_some_and(|n| lo <= n) || lo <= last.1 {
                    if hi > last.1 {
                        last.1 = hi;
                    }
                    continue;
                }
            }
            out.push((lo, hi));
        }
        (!out.is_empty()).then_some(CharSet { ranges: out })
    }

    /// Every character.
    pub fn any() -> CharSet {
        CharSet {
            ranges: vec![('\0', char::MAX)],
        }
    }

    /// One character.
    pub fn single(c: char) -> CharSet {
        CharSet {
            ranges: vec![(c, c)],
        }
    }

    /// The characters not in `self` (`None` when `self` holds every character).
    pub fn complement(&self) -> Option<CharSet> {
        let mut out = Vec::new();
        let mut from = Some('\0');
        for &(lo, hi) in &self.ranges {
            if let Some(f) = from {
                if f < lo {
                    if let Some(p) = prev_char(lo) {
                        out.push((f, p));
                    }
                }
            }
            from = next_char(hi);
        }
        if let Some(f) = from {
            out.push((f, char::MAX));
        }
        CharSet::new(out)
    }

    /// The ranges.
    pub fn ranges(&self) -> &[(char, char)] {
        &self.ranges
    }

    /// Whether `c` is in the set.
    pub fn contains(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
    }

    /// Whether the set holds every character.
    pub fn is_any(&self) -> bool {
        self.ranges == [('\0', char::MAX)]
    }

    /// How many characters the set holds.
    pub fn len(&self) -> u64 {
        self.ranges
            .iter()
            .map(|&(lo, hi)| u64::from(hi) - u64::from(lo) + 1)
            .sum()
    }

    /// Never true (an empty set is not a `CharSet`); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The `n`-th character of the set (wrapping), skipping surrogate code points.
    pub fn nth(&self, n: u64) -> char {
        let total = self.len().max(1);
        let mut n = n % total;
        for &(lo, hi) in &self.ranges {
            let size = u64::from(hi) - u64::from(lo) + 1;
            if n < size {
                let code = u32::from(lo) + n as u32;
                return char::from_u32(code).unwrap_or(lo);
            }
            n -= size;
        }
        self.ranges[0].0
    }
}

/// The character after `c` (skipping the surrogate gap), if any.
pub(crate) fn next_char(c: char) -> Option<char> {
    match c {
        '\u{D7FF}' => Some('\u{E000}'),
        char::MAX => None,
        c => char::from_u32(u32::from(c) + 1),
    }
}

/// The character before `c` (skipping the surrogate gap), if any.
pub(crate) fn prev_char(c: char) -> Option<char> {
    match c {
        '\u{E000}' => Some('\u{D7FF}'),
        '\0' => None,
        c => char::from_u32(u32::from(c) - 1),
    }
}

/// An expression of the internal form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// The empty string.
    Empty,
    /// Matches nothing (removed by [`Rules::finish`]; never printed).
    Never,
    /// A non-empty literal text.
    Literal(String),
    /// One character of the set.
    Class(CharSet),
    /// All in order.
    Seq(Vec<Expr>),
    /// Any one of them (unordered: a context-free alternation).
    Alt(Vec<Expr>),
    /// Between `min` and `max` (`None`: unbounded) repetitions.
    Repeat {
        /// The repeated expression.
        expr: Box<Expr>,
        /// Fewest repetitions.
        min: u32,
        /// Most repetitions (`None`: unbounded).
        max: Option<u32>,
    },
    /// The rule's language.
    Ref(RuleId),
    /// Any text (possibly empty) in which none of the delimiters occurs.
    Excluding(Vec<String>),
}

impl Expr {
    /// A literal (the empty string for `""`).
    pub fn lit(text: &str) -> Expr {
        if text.is_empty() {
            Expr::Empty
        } else {
            Expr::Literal(text.to_owned())
        }
    }

    /// A sequence, flattened; `Never` when any part is.
    pub fn seq(items: impl IntoIterator<Item = Expr>) -> Expr {
        let mut out: Vec<Expr> = Vec::new();
        for item in items {
            match item {
                Expr::Never => return Expr::Never,
                Expr::Empty => {}
                Expr::Seq(inner) => {
                    for i in inner {
                        out = Expr::seq_push(out, i);
                    }
                }
                other => out = Expr::seq_push(out, other),
            }
        }
        match out.len() {
            0 => Expr::Empty,
            1 => out.pop().unwrap_or(Expr::Empty),
            _ => Expr::Seq(out),
        }
    }

    /// Appends to a sequence: adjacent literals merge, `x* x*` is `x*`.
    fn seq_push(mut out: Vec<Expr>, item: Expr) -> Vec<Expr> {
        match (out.last_mut(), item) {
            (Some(Expr::Literal(prev)), Expr::Literal(text)) => prev.push_str(&text),
            (
                Some(last),
                item @ Expr::Repeat {
                    min: 0, max: None, ..
                },
            ) if *last == item => {}
            (_, item) => out.push(item),
        }
        out
    }

    /// An alternation, flattened and deduplicated; `Never` when every part is.
    pub fn alt(items: impl IntoIterator<Item = Expr>) -> Expr {
        let mut out: Vec<Expr> = Vec::new();
        for item in items {
            match item {
                Expr::Never => {}
                Expr::Alt(inner) => {
                    for i in inner {
                        if !out.contains(&i) {
                            out.push(i);
                        }
                    }
                }
                other => {
                    if !out.contains(&other) {
                        out.push(other);
                    }
                }
            }
        }
        match out.len() {
            0 => Expr::Never,
            1 => out.pop().unwrap_or(Expr::Never),
            _ => Expr::Alt(out),
        }
    }

    /// `expr{min,max}`, simplified.
    pub fn repeat(expr: Expr, min: u32, max: Option<u32>) -> Expr {
        // (x*)? = (x*)* = (x*)+ = x*.
        if let Expr::Repeat {
            min: 0, max: None, ..
        } = &expr
        {
            if min <= 1 && max != Some(0) {
                return expr;
            }
        }
        match (&expr, min, max) {
            (_, _, Some(0)) | (Expr::Empty, _, _) => Expr::Empty,
            (Expr::Never, 0, _) => Expr::Empty,
            (Expr::Never, _, _) => Expr::Never,
            (_, 1, Some(1)) => expr,
            _ => Expr::Repeat {
                expr: Box::new(expr),
                min,
                max,
            },
        }
    }

    /// `expr?`.
    pub fn optional(expr: Expr) -> Expr {
        Expr::repeat(expr, 0, Some(1))
    }

    /// Zero or more whitespace characters (space, tab, CR, LF), as the PEG `space()` reads.
    pub fn space() -> Expr {
        Expr::repeat(Expr::Class(whitespace()), 0, None)
    }

    /// Text excluding `delimiters` (blank ones dropped; with none left, any text).
    pub fn excluding<S: AsRef<str>>(delimiters: impl IntoIterator<Item = S>) -> Expr {
        let mut ds: Vec<String> = Vec::new();
        for d in delimiters {
            let d = d.as_ref();
            if !d.is_empty() && !ds.iter().any(|x| x == d) {
                ds.push(d.to_owned());
            }
        }
        if ds.is_empty() {
            return Expr::repeat(Expr::Class(CharSet::any()), 0, None);
        }
        // A delimiter that contains another is never reached first: keep the shorter.
        let keep: Vec<String> = ds
            .iter()
            .filter(|d| !ds.iter().any(|o| o != *d && d.contains(o.as_str())))
            .cloned()
            .collect();
        Expr::Excluding(keep)
    }

    /// How many nodes the expression has.
    pub fn size(&self) -> usize {
        match self {
            Expr::Seq(items) | Expr::Alt(items) => 1 + items.iter().map(Expr::size).sum::<usize>(),
            Expr::Repeat { expr, .. } => 1 + expr.size(),
            _ => 1,
        }
    }

    /// Calls `f` on every rule referenced by the expression.
    pub fn for_each_ref(&self, f: &mut impl FnMut(RuleId)) {
        match self {
            Expr::Ref(r) => f(*r),
            Expr::Seq(items) | Expr::Alt(items) => items.iter().for_each(|i| i.for_each_ref(f)),
            Expr::Repeat { expr, .. } => expr.for_each_ref(f),
            _ => {}
        }
    }

    fn map_refs(&mut self, f: &impl Fn(RuleId) -> Option<Expr>) {
        match self {
            Expr::Ref(r) => {
                if let Some(e) = f(*r) {
                    *self = e;
                }
            }
            Expr::Seq(items) | Expr::Alt(items) => items.iter_mut().for_each(|i| i.map_refs(f)),
            Expr::Repeat { expr, .. } => expr.map_refs(f),
            _ => {}
        }
    }

    /// The expression rebuilt through the simplifying constructors (after references were
    /// replaced).
    fn simplified(self) -> Expr {
        match self {
            Expr::Seq(items) => Expr::seq(items.into_iter().map(Expr::simplified)),
            Expr::Alt(items) => Expr::alt(items.into_iter().map(Expr::simplified)),
            Expr::Repeat { expr, min, max } => Expr::repeat(expr.simplified(), min, max),
            other => other,
        }
    }
}

/// Space, tab, CR, LF.
pub fn whitespace() -> CharSet {
    CharSet::new([(' ', ' '), ('\t', '\t'), ('\n', '\n'), ('\r', '\r')])
        .unwrap_or_else(CharSet::any)
}

/// What a rule reads, for the sampler and the tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// One call to the tool.
    Call {
        /// The tool's name.
        tool: String,
    },
    /// The call's whole arguments (a JSON object in the grammar's JSON flavour).
    Arguments {
        /// The tool's name.
        tool: String,
    },
    /// One tagged argument's value.
    Argument {
        /// The tool's name.
        tool: String,
        /// The parameter's name.
        name: String,
        /// How the value is written.
        value: ValueKind,
    },
}

/// How a tagged argument's value is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueKind {
    /// Raw text: the value is that string.
    Raw,
    /// Raw text written with a wrapper or escapes: the value is the decoded string.
    Encoded(crate::message::ValueText),
    /// JSON (or a Python literal in the Python flavour) of the parameter's schema.
    Json,
    /// A literal value with custom string quotes (read like the parser's literal values).
    Literal {
        /// The opening quote.
        open: String,
        /// The closing quote.
        close: String,
    },
}

/// The JSON schema a rule's language is (its body is the schema's expansion).
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaRule {
    /// The schema (normalised: objects without `additionalProperties` forbid other keys).
    pub schema: Value,
    /// Python-dict literals (single-quoted strings, `True`/`False`/`None`) instead of JSON.
    pub python: bool,
    /// Literal values with these string quotes and bare keys instead of JSON.
    pub quotes: Option<(String, String)>,
    /// A string in this quote is written verbatim (no escapes; see
    /// [`crate::analyze::ArgumentMarkers::verbatim_strings`]).
    pub verbatim: Option<char>,
    /// No whitespace between tokens but one optional space after `,` and `:`.
    pub compact: bool,
    /// Containers may also be written as these elements (see [`super::elements`]).
    pub elements: Option<crate::analyze::ElementValues>,
}

/// One named rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The name: `[a-z0-9-]+`, unique in the grammar (valid in GBNF and Lark).
    pub name: String,
    /// The language.
    pub body: Expr,
    /// Set when the rule is a JSON schema's value.
    pub schema: Option<SchemaRule>,
    /// What the rule reads, when it is a call, its arguments or one argument.
    pub role: Option<Role>,
    /// Part of a schema's expansion (not the schema's own rule): the Lark printer leaves such
    /// rules out when `%json` covers them.
    pub schema_internal: bool,
}

/// A grammar in the internal form: rules and the root.
#[derive(Debug, Clone)]
pub struct Rules {
    pub(crate) rules: Vec<Rule>,
    pub(crate) root: RuleId,
    nodes: usize,
}

impl Default for Rules {
    fn default() -> Self {
        Rules::new()
    }
}

impl Rules {
    /// An empty set with a placeholder `root` rule (index 0) to define with
    /// [`set_body`](Self::set_body).
    pub fn new() -> Rules {
        Rules {
            rules: vec![Rule {
                name: "root".to_owned(),
                body: Expr::Never,
                schema: None,
                role: None,
                schema_internal: false,
            }],
            root: RuleId(0),
            nodes: 0,
        }
    }

    /// The root rule.
    pub fn root(&self) -> RuleId {
        self.root
    }

    /// All rules, the root first.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// One rule.
    pub fn rule(&self, id: RuleId) -> &Rule {
        &self.rules[id.0]
    }

    /// The rule named `name`.
    pub fn find(&self, name: &str) -> Option<RuleId> {
        self.rules.iter().position(|r| r.name == name).map(RuleId)
    }

    /// Declares a rule named after `wanted` (made a valid, unique identifier) with an empty
    /// body to fill with [`set_body`](Self::set_body).
    pub fn declare(&mut self, wanted: &str) -> Result<RuleId, GrammarError> {
        if self.rules.len() >= MAX_RULES {
            return Err(GrammarError::TooLarge(format!(
                "more than {MAX_RULES} rules"
            )));
        }
        let base = identifier(wanted);
        let mut name = base.clone();
        let mut n = 2;
        while self.rules.iter().any(|r| r.name == name) {
            name = format!("{base}-{n}");
            n += 1;
        }
        self.rules.push(Rule {
            name,
            body: Expr::Never,
            schema: None,
            role: None,
            schema_internal: false,
        });
        Ok(RuleId(self.rules.len() - 1))
    }

    /// Sets a rule's body (counted against [`MAX_NODES`]).
    pub fn set_body(&mut self, id: RuleId, body: Expr) -> Result<(), GrammarError> {
        self.nodes += body.size();
        if self.nodes > MAX_NODES {
            return Err(GrammarError::TooLarge(format!(
                "more than {MAX_NODES} grammar nodes"
            )));
        }
        self.rules[id.0].body = body;
        Ok(())
    }

    /// A mutable rule (to set its schema, role or flags).
    pub fn rule_mut(&mut self, id: RuleId) -> &mut Rule {
        &mut self.rules[id.0]
    }

    /// Declares and defines a rule at once.
    pub fn define(&mut self, wanted: &str, body: Expr) -> Result<RuleId, GrammarError> {
        let id = self.declare(wanted)?;
        self.set_body(id, body)?;
        Ok(id)
    }

    /// Finishes the grammar: rules that match nothing are removed from every alternation
    /// (a sequence through one matches nothing either), then only the rules reachable from the
    /// root are kept (renumbered in order of first reference). Errors when the root matches
    /// nothing.
    pub fn finish(mut self) -> Result<Rules, GrammarError> {
        // Least fixpoint of "matches something": a rule is productive when its body is once
        // the unproductive rules are read as Never.
        let n = self.rules.len();
        let mut productive = vec![false; n];
        loop {
            let mut changed = false;
            for i in 0..n {
                if !productive[i] && can_match(&self.rules[i].body, &productive) {
                    productive[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        if !productive[self.root.0] {
            return Err(GrammarError::Empty(
                "the grammar matches nothing (no tool call can be written)".to_owned(),
            ));
        }
        for rule in &mut self.rules {
            let body = std::mem::replace(&mut rule.body, Expr::Empty);
            let mut body = body;
            body.map_refs(&|r| (!productive[r.0]).then_some(Expr::Never));
            rule.body = body.simplified();
        }
        // Reachability from the root, in order of first reference.
        let mut order = vec![self.root];
        let mut seen = vec![false; n];
        seen[self.root.0] = true;
        let mut i = 0;
        while let Some(&id) = order.get(i) {
            i += 1;
            self.rules[id.0].body.for_each_ref(&mut |r| {
                if !seen[r.0] {
                    seen[r.0] = true;
                    order.push(r);
                }
            });
        }
        let mut renumber = vec![usize::MAX; n];
        for (new, old) in order.iter().enumerate() {
            renumber[old.0] = new;
        }
        let mut old_rules: Vec<Option<Rule>> = self.rules.into_iter().map(Some).collect();
        let mut rules = Vec::with_capacity(order.len());
        for old in &order {
            if let Some(mut rule) = old_rules[old.0].take() {
                rule.body
                    .map_refs(&|r| Some(Expr::Ref(RuleId(renumber[r.0]))));
                rules.push(rule);
            }
        }
        Ok(Rules {
            rules,
            root: RuleId(0),
            nodes: self.nodes,
        })
    }

    /// Per rule, whether it matches the empty string (a fixpoint).
    pub fn nullable(&self) -> Vec<bool> {
        let n = self.rules.len();
        let mut out = vec![false; n];
        loop {
            let mut changed = false;
            for i in 0..n {
                if !out[i] && expr_nullable(&self.rules[i].body, &out) {
                    out[i] = true;
                    changed = true;
                }
            }
            if !changed {
                return out;
            }
        }
    }

    /// Whether a rule reaches itself (directly or through others).
    pub fn recursive(&self) -> Vec<bool> {
        let n = self.rules.len();
        let mut out = vec![false; n];
        for (start, flag) in out.iter_mut().enumerate() {
            let mut seen = vec![false; n];
            let mut stack = Vec::new();
            self.rules[start].body.for_each_ref(&mut |r| stack.push(r));
            while let Some(r) = stack.pop() {
                if r.0 == start {
                    *flag = true;
                    break;
                }
                if !seen[r.0] {
                    seen[r.0] = true;
                    self.rules[r.0].body.for_each_ref(&mut |x| stack.push(x));
                }
            }
        }
        out
    }
}

/// Whether `e` matches the empty string, reading rule `r` as nullable iff `nullable[r]`.
pub fn expr_nullable(e: &Expr, nullable: &[bool]) -> bool {
    match e {
        Expr::Empty | Expr::Excluding(_) => true,
        Expr::Never | Expr::Literal(_) | Expr::Class(_) => false,
        Expr::Ref(r) => nullable.get(r.0).copied().unwrap_or(false),
        Expr::Seq(items) => items.iter().all(|i| expr_nullable(i, nullable)),
        Expr::Alt(items) => items.iter().any(|i| expr_nullable(i, nullable)),
        Expr::Repeat { expr, min, .. } => *min == 0 || expr_nullable(expr, nullable),
    }
}

/// Whether `e` can match something, reading rule `r` as matching iff `productive[r]`.
fn can_match(e: &Expr, productive: &[bool]) -> bool {
    match e {
        Expr::Never => false,
        Expr::Ref(r) => productive.get(r.0).copied().unwrap_or(false),
        Expr::Seq(items) => items.iter().all(|i| can_match(i, productive)),
        Expr::Alt(items) => items.iter().any(|i| can_match(i, productive)),
        Expr::Repeat { expr, min, .. } => *min == 0 || can_match(expr, productive),
        _ => true,
    }
}

/// `wanted` as a rule name valid in GBNF (`[a-zA-Z0-9-]`, llama.cpp's identifier characters)
/// and Lark (which also accepts `-`): lower-case ASCII letters and digits kept, everything else
/// one `-`; never empty, never starting with a digit or `-`.
pub fn identifier(wanted: &str) -> String {
    let mut out = String::new();
    for c in wanted.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_owned();
    match out.chars().next() {
        None => "r".to_owned(),
        Some(c) if c.is_ascii_digit() => format!("r-{out}"),
        _ => out,
    }
}
