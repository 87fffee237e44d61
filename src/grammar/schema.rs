//! JSON values and JSON Schemas as rules of the internal form, in the JSON or the Python-dict
//! flavour.
//!
//! Generic values ([`Json::value`]) read what the PEG engine's JSON scanner reads (strings,
//! numbers, `true`/`false`/`null`, objects, arrays; in the Python flavour also single-quoted
//! strings and `True`/`False`/`None`). Schemas ([`Json::schema`]) cover what tool parameters
//! use:
//!
//! - `type` (one name or a list), `const`, `enum`, `anyOf`/`oneOf` (alternatives, sibling
//!   keywords merged into each), `allOf` (merged), local `$ref` (`#`, `#/$defs/x`, any JSON
//!   pointer; recursion allowed);
//! - objects: `properties` in their declared order, `required` ones mandatory, others
//!   optional; `additionalProperties` (absent means none, as llama.cpp's schema converter does:
//!   see [`normalize`]); arrays: `items`, `prefixItems`, `minItems`/`maxItems`; strings:
//!   `minLength`/`maxLength`.
//! - Not expressed (the rule is wider than the schema): `pattern`, `format`, numeric bounds,
//!   `multipleOf`, `not`, `uniqueItems`, `dependent*`, remote `$ref`s, and the difference between
//!   `oneOf` and `anyOf`.
//!
//! Nesting is bounded ([`MAX_SCHEMA_DEPTH`]): a deeper schema is an error, never a stack
//! overflow.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::analyze::ElementValues;

use super::ir::{CharSet, Expr, RuleId, Rules, SchemaRule};
use super::GrammarError;

/// How deep a schema may nest (subschemas, not counting `$ref` indirections, which go through
/// rules) before it is rejected.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// Builds JSON rules into a [`Rules`], caching the generic ones.
pub(crate) struct Json<'r> {
    pub(crate) rules: &'r mut Rules,
    pub(crate) python: bool,
    /// Literal values (see [`crate::generate::literal`]): strings in these quotes, object keys
    /// bare (or quoted), everything else as in JSON. Set while a literal value's schema is
    /// built.
    pub(crate) quotes: Option<(String, String)>,
    /// Strings in this quote are written as they are (the template's verbatim strings, see
    /// [`crate::analyze::ArgumentMarkers::verbatim_strings`]): no escapes, so the grammar
    /// allows none (a backslash would be read as text) and no inner quote.
    /// With it, the characters that may start what follows a value: an inner quote is
    /// followed (after whitespace) by another character, as the parser reads one.
    pub(crate) verbatim: Option<(char, Vec<char>)>,
    /// No whitespace between tokens but one space after a separator (values whose end the
    /// parser finds by what follows them, where a line break may end the value).
    pub(crate) compact: bool,
    /// Containers may also be written as these elements (see [`super::elements`]): set
    /// while the schema of a tagged container value is built.
    pub(crate) elements: Option<ElementValues>,
    /// The generic rules built so far, per name, flavour (`python`), literal quoting,
    /// verbatim strings and compactness.
    generic: HashMap<(&'static str, bool, bool, bool, bool), RuleId>,
}

fn class(ranges: &[(char, char)]) -> Expr {
    CharSet::new(ranges.iter().copied()).map_or(Expr::Never, Expr::Class)
}

fn chars(s: &str) -> Expr {
    class(&s.chars().map(|c| (c, c)).collect::<Vec<_>>())
}

fn digits(min: u32) -> Expr {
    Expr::repeat(class(&[('0', '9')]), min, None)
}

impl<'r> Json<'r> {
    pub(crate) fn new(rules: &'r mut Rules, python: bool) -> Json<'r> {
        Json {
            rules,
            python,
            quotes: None,
            verbatim: None,
            compact: false,
            elements: None,
            generic: HashMap::new(),
        }
    }

    fn generic_rule(
        &mut self,
        key: &'static str,
        build: impl FnOnce(&mut Self) -> Result<Expr, GrammarError>,
    ) -> Result<Expr, GrammarError> {
        let cache = (
            key,
            self.python,
            self.quotes.is_some(),
            self.verbatim.is_some(),
            self.compact,
        );
        if let Some(id) = self.generic.get(&cache) {
            return Ok(Expr::Ref(*id));
        }
        let name = if self.quotes.is_some() {
            format!("literal-{key}")
        } else if self.verbatim.is_some() {
            format!("verbatim-{key}")
        } else if self.python {
            format!("py-{key}")
        } else {
            format!("json-{key}")
        };
        let name = if self.compact {
            format!("compact-{name}")
        } else {
            name
        };
        let id = self.rules.declare(&name)?;
        self.generic.insert(cache, id);
        let body = build(self)?;
        self.rules.set_body(id, body)?;
        Ok(Expr::Ref(id))
    }

    /// One character of a string's content quoted by `quote`, or an escape.
    fn string_char(&self, quote: char) -> Expr {
        let plain = CharSet::new([('\0', '\u{1F}'), (quote, quote), ('\\', '\\')])
            .and_then(|s| s.complement())
            .map_or(Expr::Never, Expr::Class);
        if let Some((_, follow)) = self.verbatim.as_ref().filter(|(q, _)| *q == quote) {
            // Any character but the quote; a quote followed (after whitespace) by a character
            // that cannot start what follows a value.
            let text = CharSet::new([(quote, quote)])
                .and_then(|s| s.complement())
                .map_or(Expr::Never, Expr::Class);
            let ws = [(' ', ' '), ('\t', '\t'), ('\n', '\n'), ('\r', '\r')];
            let mut stops: Vec<(char, char)> = follow.iter().map(|&c| (c, c)).collect();
            stops.extend(ws);
            stops.push((quote, quote));
            let after = CharSet::new(stops)
                .and_then(|s| s.complement())
                .map_or(Expr::Never, Expr::Class);
            let spaces = Expr::repeat(CharSet::new(ws).map_or(Expr::Never, Expr::Class), 0, None);
            let inner = Expr::seq([Expr::lit(&quote.to_string()), spaces, after]);
            return Expr::alt([text, inner]);
        }
        Expr::alt([plain, self.escape()])
    }

    /// An escape sequence in a string.
    fn escape(&self) -> Expr {
        if self.python {
            // The Python flavour reads any escaped character (and `\xHH`, `\uXXXX`).
            Expr::seq([Expr::lit("\\"), Expr::Class(CharSet::any())])
        } else {
            // `\uXXXX` of a character, or a surrogate pair (a lone surrogate is no
            // character: the parser, as JSON parsers do, rejects it).
            let hex = || class(&[('0', '9'), ('a', 'f'), ('A', 'F')]);
            let d = || chars("dD");
            let character = Expr::alt([
                Expr::seq([
                    class(&[('0', '9'), ('a', 'c'), ('A', 'C'), ('e', 'f'), ('E', 'F')]),
                    Expr::repeat(hex(), 3, Some(3)),
                ]),
                Expr::seq([d(), class(&[('0', '7')]), hex(), hex()]),
            ]);
            let pair = Expr::seq([
                d(),
                class(&[('8', '9'), ('a', 'b'), ('A', 'B')]),
                hex(),
                hex(),
                Expr::lit("\\u"),
                d(),
                class(&[('c', 'f'), ('C', 'F')]),
                hex(),
                hex(),
            ]);
            Expr::seq([
                Expr::lit("\\"),
                Expr::alt([
                    chars("\"\\/bfnrt"),
                    Expr::seq([Expr::lit("u"), Expr::alt([character, pair])]),
                ]),
            ])
        }
    }

    /// The content of a string in `quote` (without the quotes), `min..=max` characters.
    fn string_body(&self, quote: char, min: u32, max: Option<u32>) -> Expr {
        Expr::repeat(self.string_char(quote), min, max)
    }

    fn quoted(&self, quote: char, min: u32, max: Option<u32>) -> Expr {
        let q = quote.to_string();
        if self.verbatim.as_ref().is_some_and(|(v, _)| *v == quote) {
            // A verbatim string may end in its quote (`'say 'hi''`).
            return Expr::seq([
                Expr::lit(&q),
                self.string_body(quote, min, max),
                Expr::repeat(Expr::lit(&q), 0, Some(1)),
                Expr::lit(&q),
            ]);
        }
        Expr::seq([
            Expr::lit(&q),
            self.string_body(quote, min, max),
            Expr::lit(&q),
        ])
    }

    /// Any string (with quotes).
    pub(crate) fn string(&mut self) -> Result<Expr, GrammarError> {
        self.generic_rule("string", |j| Ok(j.string_bounded(0, None)))
    }

    fn string_bounded(&self, min: u32, max: Option<u32>) -> Expr {
        if let Some((open, close)) = &self.quotes {
            // Any text up to the closing quote (length bounds not expressed).
            return Expr::seq([
                Expr::lit(open),
                Expr::excluding([close.as_str()]),
                Expr::lit(close),
            ]);
        }
        if self.python {
            Expr::alt([self.quoted('"', min, max), self.quoted('\'', min, max)])
        } else {
            self.quoted('"', min, max)
        }
    }

    /// The content of a string up to its closing quote (the PEG `json_string_content`).
    pub(crate) fn string_content(&self) -> Expr {
        if self.python {
            Expr::alt([
                self.string_body('"', 0, None),
                self.string_body('\'', 0, None),
            ])
        } else {
            self.string_body('"', 0, None)
        }
    }

    /// A number.
    pub(crate) fn number(&mut self) -> Result<Expr, GrammarError> {
        self.generic_rule("number", |_| {
            Ok(Expr::seq([
                integer_expr(),
                Expr::optional(Expr::seq([Expr::lit("."), digits(1)])),
                Expr::optional(Expr::seq([
                    chars("eE"),
                    Expr::optional(chars("+-")),
                    digits(1),
                ])),
            ]))
        })
    }

    /// `true` / `false` (and `True` / `False` in the Python flavour).
    pub(crate) fn boolean(&self) -> Expr {
        if self.python {
            Expr::alt(["true", "false", "True", "False"].map(Expr::lit))
        } else {
            Expr::alt(["true", "false"].map(Expr::lit))
        }
    }

    /// `null` (and `None` in the Python flavour).
    pub(crate) fn null(&self) -> Expr {
        if self.python {
            Expr::alt(["null", "None"].map(Expr::lit))
        } else {
            Expr::lit("null")
        }
    }

    /// Whitespace between tokens: none in the compact flavour (see [`Json::compact`]).
    fn ws(&self) -> Expr {
        if self.compact {
            Expr::Empty
        } else {
            Expr::space()
        }
    }

    /// `,` with whitespace around it; compact: at most one space after it, as `json.dumps`
    /// and Python's `repr` write.
    fn comma(&self) -> Expr {
        self.separator(",")
    }

    /// `:` as [`comma`](Self::comma) writes `,`.
    fn colon(&self) -> Expr {
        self.separator(":")
    }

    fn separator(&self, mark: &str) -> Expr {
        if self.compact {
            Expr::seq([Expr::lit(mark), Expr::optional(Expr::lit(" "))])
        } else {
            Expr::seq([Expr::space(), Expr::lit(mark), Expr::space()])
        }
    }

    /// `open ws (item (, item)*)? ws close`.
    fn list(&self, open: &str, item: Expr, close: &str) -> Expr {
        Expr::seq([
            Expr::lit(open),
            self.ws(),
            Expr::optional(Expr::seq([
                item.clone(),
                Expr::repeat(Expr::seq([self.comma(), item]), 0, None),
            ])),
            self.ws(),
            Expr::lit(close),
        ])
    }

    /// Any value.
    pub(crate) fn value(&mut self) -> Result<Expr, GrammarError> {
        let cache = (
            "value",
            self.python,
            self.quotes.is_some(),
            self.verbatim.is_some(),
            self.compact,
        );
        if let Some(id) = self.generic.get(&cache) {
            return Ok(Expr::Ref(*id));
        }
        let name = if self.quotes.is_some() {
            "literal-value"
        } else if self.python {
            "py-value"
        } else {
            "json-value"
        };
        let name = if self.compact {
            format!("compact-{name}")
        } else {
            name.to_owned()
        };
        let id = self.rules.declare(&name)?;
        self.generic.insert(cache, id);
        let object = self.object()?;
        let array = self.array()?;
        let body = Expr::alt([
            object,
            array,
            self.string()?,
            self.number()?,
            self.boolean(),
            self.null(),
        ]);
        self.rules.set_body(id, body)?;
        Ok(Expr::Ref(id))
    }

    /// Any object.
    pub(crate) fn object(&mut self) -> Result<Expr, GrammarError> {
        self.generic_rule("object", |j| {
            let value = j.value()?;
            let key = j.any_key()?;
            let member = Expr::seq([key, j.colon(), value]);
            Ok(j.list("{", member, "}"))
        })
    }

    /// Any array.
    pub(crate) fn array(&mut self) -> Result<Expr, GrammarError> {
        self.generic_rule("array", |j| {
            let value = j.value()?;
            Ok(j.list("[", value, "]"))
        })
    }

    /// Any object key: a string (and, for literal values, bare words with one space between
    /// them, as templates write a key that holds spaces: `{Model Name:…}`).
    fn any_key(&mut self) -> Result<Expr, GrammarError> {
        let string = self.string()?;
        Ok(if self.quotes.is_some() {
            let word = || Expr::repeat(bare_key_class(), 1, None);
            let words = Expr::seq([
                word(),
                Expr::repeat(Expr::seq([Expr::lit(" "), word()]), 0, None),
            ]);
            Expr::alt([string, words])
        } else {
            string
        })
    }

    /// A string whose whole text (quotes included) is none of `excluded`: the key of an
    /// object member that the members before it did not take. Excluded texts holding a
    /// backslash or a control character are ignored (the rule is then wider).
    pub(crate) fn string_except(&mut self, excluded: &[String]) -> Result<Expr, GrammarError> {
        let quotes: Vec<char> = if self.python {
            vec!['"', '\'']
        } else {
            vec!['"']
        };
        let mut alternatives = Vec::new();
        for quote in quotes {
            // Contents (without quotes) of the excluded strings in this quote.
            let mut contents: Vec<Vec<char>> = excluded
                .iter()
                .filter_map(|e| {
                    let cs: Vec<char> = e.chars().collect();
                    let (first, last) = (*cs.first()?, *cs.last()?);
                    let inner = cs.get(1..cs.len().checked_sub(1)?)?;
                    (cs.len() >= 2
                        && first == quote
                        && last == quote
                        && !inner.iter().any(|&c| c == quote || c == '\\' || c < ' '))
                    .then(|| inner.to_vec())
                })
                .collect();
            contents.sort();
            contents.dedup();
            if contents.is_empty() {
                alternatives.push(self.quoted(quote, 0, None));
                continue;
            }
            // A trie over the contents: state = a prefix of one of them. From a prefix, the
            // closing quote is allowed unless the prefix is excluded; a character continuing
            // some excluded content goes to the longer prefix; any other goes to the free rest.
            let rest_id = self.rules.declare("key-rest")?;
            let rest_body = Expr::seq([
                self.string_body(quote, 0, None),
                Expr::lit(&quote.to_string()),
            ]);
            self.rules.set_body(rest_id, rest_body)?;
            let mut prefixes: Vec<Vec<char>> = vec![Vec::new()];
            for c in &contents {
                for n in 1..c.len() {
                    prefixes.push(c[..n].to_vec());
                }
            }
            prefixes.sort();
            prefixes.dedup();
            let ids: Vec<RuleId> = prefixes
                .iter()
                .map(|_| self.rules.declare("key-prefix"))
                .collect::<Result<_, _>>()?;
            for (i, prefix) in prefixes.iter().enumerate() {
                let mut alts = Vec::new();
                if !contents.contains(prefix) {
                    alts.push(Expr::lit(&quote.to_string()));
                }
                let mut nexts: Vec<char> = Vec::new();
                for c in &contents {
                    if c.len() > prefix.len() && c.starts_with(prefix) {
                        let next = c[prefix.len()];
                        if nexts.contains(&next) {
                            continue;
                        }
                        nexts.push(next);
                        let mut longer = prefix.clone();
                        longer.push(next);
                        let lit = Expr::lit(&next.to_string());
                        match prefixes.iter().position(|p| *p == longer) {
                            Some(j) => alts.push(Expr::seq([lit, Expr::Ref(ids[j])])),
                            // The whole excluded content: only a longer string may follow.
                            None => alts.push(Expr::seq([
                                lit,
                                self.string_char(quote),
                                Expr::Ref(rest_id),
                            ])),
                        }
                    }
                }
                // Any other character (or an escape) leaves every excluded content behind.
                let mut banned: Vec<(char, char)> =
                    vec![(quote, quote), ('\\', '\\'), ('\0', '\u{1F}')];
                banned.extend(nexts.iter().map(|&c| (c, c)));
                if let Some(other) = CharSet::new(banned).and_then(|s| s.complement()) {
                    alts.push(Expr::seq([Expr::Class(other), Expr::Ref(rest_id)]));
                }
                alts.push(Expr::seq([self.escape(), Expr::Ref(rest_id)]));
                self.rules.set_body(ids[i], Expr::alt(alts))?;
            }
            alternatives.push(Expr::seq([
                Expr::lit(&quote.to_string()),
                Expr::Ref(ids[0]),
            ]));
        }
        Ok(Expr::alt(alternatives))
    }

    /// The rule of `schema` (named after `name`), marked as the schema's rule.
    pub(crate) fn schema(&mut self, name: &str, schema: &Value) -> Result<RuleId, GrammarError> {
        let normalized = normalize(schema, 0)?;
        let id = self.rules.declare(name)?;
        let first_internal = self.rules.rules().len();
        let mut ctx = SchemaCtx {
            root: &normalized,
            refs: HashMap::new(),
        };
        let mut body = self.schema_expr(&mut ctx, &normalized, 0)?;
        if let Some(e) = self.elements.clone() {
            let elements = self.elements_expr(&normalized, &e)?;
            if elements != Expr::Never {
                body = Expr::alt([body, elements]);
            }
        }
        self.rules.set_body(id, body)?;
        for i in first_internal..self.rules.rules().len() {
            self.rules.rule_mut(RuleId(i)).schema_internal = true;
        }
        self.rules.rule_mut(id).schema = Some(SchemaRule {
            schema: normalized,
            python: self.python,
            quotes: self.quotes.clone(),
            verbatim: self.verbatim.as_ref().map(|(quote, _)| *quote),
            compact: self.compact,
            elements: self.elements.clone(),
        });
        Ok(id)
    }

    fn schema_expr(
        &mut self,
        ctx: &mut SchemaCtx<'_>,
        schema: &Value,
        depth: usize,
    ) -> Result<Expr, GrammarError> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(GrammarError::Schema(format!(
                "schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
            )));
        }
        let obj = match schema {
            Value::Bool(true) => return self.value(),
            Value::Bool(false) => return Ok(Expr::Never),
            Value::Object(obj) => obj,
            _ => return self.value(),
        };
        if let Some(Value::String(pointer)) = obj.get("$ref") {
            return self.reference(ctx, pointer, depth);
        }
        if let Some(value) = obj.get("const") {
            return Ok(self.literal_value(value));
        }
        if let Some(Value::Array(values)) = obj.get("enum") {
            return Ok(Expr::alt(values.iter().map(|v| self.literal_value(v))));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alts)) = obj.get(key) {
                let mut base = obj.clone();
                base.remove(key);
                let mut out = Vec::new();
                for alt in alts {
                    let merged = merge(&base, alt);
                    out.push(self.schema_expr(ctx, &merged, depth + 1)?);
                }
                return Ok(Expr::alt(out));
            }
        }
        if let Some(Value::Array(all)) = obj.get("allOf") {
            let mut base = obj.clone();
            base.remove("allOf");
            let mut merged = Value::Object(base);
            for part in all {
                merged = merge_all(&merged, part);
            }
            return self.schema_expr(ctx, &merged, depth + 1);
        }
        let types: Vec<&str> = match obj.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => {
                if obj.contains_key("properties") || obj.contains_key("additionalProperties") {
                    vec!["object"]
                } else if obj.contains_key("items") || obj.contains_key("prefixItems") {
                    vec!["array"]
                } else {
                    return self.value();
                }
            }
        };
        let mut out = Vec::new();
        for t in types {
            out.push(match t {
                "string" => {
                    let min = bound(obj, "minLength").unwrap_or(0);
                    let max = bound(obj, "maxLength");
                    if min == 0 && max.is_none() {
                        self.string()?
                    } else {
                        self.string_bounded(min, max.map(|m| m.max(min)))
                    }
                }
                "number" => self.number()?,
                "integer" => self.generic_rule("integer", |_| Ok(integer_expr()))?,
                "boolean" => self.boolean(),
                "null" => self.null(),
                "object" => self.object_schema(ctx, obj, depth)?,
                "array" => self.array_schema(ctx, obj, depth)?,
                _ => self.value()?,
            });
        }
        Ok(Expr::alt(out))
    }

    fn reference(
        &mut self,
        ctx: &mut SchemaCtx<'_>,
        pointer: &str,
        depth: usize,
    ) -> Result<Expr, GrammarError> {
        if let Some(id) = ctx.refs.get(pointer) {
            return Ok(Expr::Ref(*id));
        }
        let target = pointer
            .strip_prefix('#')
            .and_then(|p| {
                if p.is_empty() {
                    Some(ctx.root)
                } else {
                    ctx.root.pointer(p)
                }
            })
            .ok_or_else(|| GrammarError::Schema(format!("unresolved $ref `{pointer}`")))?;
        let target = target.clone();
        let id = self.rules.declare(&format!(
            "ref-{}",
            pointer.rsplit('/').next().unwrap_or("root")
        ))?;
        ctx.refs.insert(pointer.to_owned(), id);
        let body = self.schema_expr(ctx, &target, depth + 1)?;
        self.rules.set_body(id, body)?;
        Ok(Expr::Ref(id))
    }

    fn object_schema(
        &mut self,
        ctx: &mut SchemaCtx<'_>,
        obj: &Map<String, Value>,
        depth: usize,
    ) -> Result<Expr, GrammarError> {
        let required = required_names(obj);
        let mut items: Vec<(Expr, bool)> = Vec::new();
        let empty = Map::new();
        let props = obj
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        for (name, sub) in props {
            let value = self.schema_expr(ctx, sub, depth + 1)?;
            let is_required = required.contains(&name.as_str());
            if value == Expr::Never {
                if is_required {
                    return Ok(Expr::Never);
                }
                continue;
            }
            items.push((
                Expr::seq([self.key(name), self.colon(), value]),
                is_required,
            ));
        }
        // Required keys without a declared schema take any value.
        for name in &required {
            if !props.contains_key(*name) {
                let value = self.value()?;
                items.push((Expr::seq([self.key(name), self.colon(), value]), true));
            }
        }
        // Other keys: none when `additionalProperties` is false (the normalised default).
        let extra = match obj.get("additionalProperties") {
            Some(Value::Bool(false)) | None => None,
            Some(Value::Bool(true)) => Some(self.value()?),
            Some(sub) => Some(self.schema_expr(ctx, sub, depth + 1)?),
        };
        if let Some(extra) = extra.filter(|e| *e != Expr::Never) {
            let member = Expr::seq([self.any_key()?, self.colon(), extra]);
            items.push((
                Expr::seq([
                    member.clone(),
                    Expr::repeat(Expr::seq([self.comma(), member]), 0, None),
                ]),
                false,
            ));
        }
        // Declared order, optional items skippable: `first(i)` (nothing written yet) and
        // `then(i)` (something written: a comma first), built from the end.
        let mut then_next = Expr::Empty;
        let mut first_next = Expr::Empty;
        for (item, is_required) in items.into_iter().rev() {
            let then_id = self.rules.declare("members")?;
            self.rules.set_body(then_id, then_next.clone())?;
            let then_ref = Expr::Ref(then_id);
            let then_here = if is_required {
                Expr::seq([self.comma(), item.clone(), then_ref.clone()])
            } else {
                Expr::alt([
                    Expr::seq([self.comma(), item.clone(), then_ref.clone()]),
                    then_ref.clone(),
                ])
            };
            let first_here = if is_required {
                Expr::seq([item, then_ref])
            } else {
                Expr::alt([Expr::seq([item, then_ref]), first_next])
            };
            then_next = then_here;
            first_next = first_here;
        }
        Ok(Expr::seq([
            Expr::lit("{"),
            self.ws(),
            first_next,
            self.ws(),
            Expr::lit("}"),
        ]))
    }

    fn array_schema(
        &mut self,
        ctx: &mut SchemaCtx<'_>,
        obj: &Map<String, Value>,
        depth: usize,
    ) -> Result<Expr, GrammarError> {
        let min = bound(obj, "minItems").unwrap_or(0);
        let max = bound(obj, "maxItems");
        let mut prefix = Vec::new();
        if let Some(Value::Array(items)) = obj.get("prefixItems") {
            for item in items {
                prefix.push(self.schema_expr(ctx, item, depth + 1)?);
            }
        }
        let item = match obj.get("items") {
            Some(Value::Bool(false)) => Expr::Never,
            Some(schema) if schema.is_object() || schema.is_boolean() => {
                self.schema_expr(ctx, schema, depth + 1)?
            }
            _ => self.value()?,
        };
        // The items in order: prefix items (each optional past `min`), then the rest.
        let n_prefix = prefix.len() as u32;
        let mut seq_items: Vec<Expr> = Vec::new();
        for (i, p) in prefix.into_iter().enumerate() {
            let sep = if i == 0 { Expr::Empty } else { self.comma() };
            seq_items.push(Expr::seq([sep, p]));
        }
        let rest_min = min.saturating_sub(n_prefix);
        let rest_max = max.map(|m| m.saturating_sub(n_prefix));
        let body = if seq_items.is_empty() {
            if rest_max == Some(0) || item == Expr::Never {
                if rest_min > 0 {
                    Expr::Never
                } else {
                    Expr::Empty
                }
            } else {
                let more = Expr::repeat(
                    Expr::seq([self.comma(), item.clone()]),
                    rest_min.saturating_sub(1),
                    rest_max.map(|m| m.saturating_sub(1)),
                );
                let some = Expr::seq([item, more]);
                if rest_min == 0 {
                    Expr::optional(some)
                } else {
                    some
                }
            }
        } else {
            // Prefix items: the first `min` mandatory, the later ones optional in order.
            let mut tail = if rest_max == Some(0) || item == Expr::Never {
                Expr::Empty
            } else {
                Expr::repeat(Expr::seq([self.comma(), item]), rest_min, rest_max)
            };
            for (i, p) in seq_items.into_iter().enumerate().rev() {
                tail = if (i as u32) < min {
                    Expr::seq([p, tail])
                } else {
                    Expr::optional(Expr::seq([p, tail]))
                };
            }
            tail
        };
        Ok(Expr::seq([
            Expr::lit("["),
            self.ws(),
            body,
            self.ws(),
            Expr::lit("]"),
        ]))
    }

    /// An object key: `"name"` (and `'name'` in the Python flavour).
    pub(crate) fn key(&self, name: &str) -> Expr {
        let json = Value::String(name.to_owned()).to_string();
        if let Some((open, close)) = &self.quotes {
            // Bare when the name is a bare word (the parser reads it as the key), else quoted.
            let quoted = Expr::lit(&format!("{open}{name}{close}"));
            let bare = !name.is_empty() && name.chars().all(bare_key_class_contains);
            return if bare {
                Expr::alt([Expr::lit(name), quoted])
            } else {
                quoted
            };
        }
        if self.python {
            Expr::alt([Expr::lit(&json), Expr::lit(&python_string(name))])
        } else {
            Expr::lit(&json)
        }
    }

    /// A value written exactly (a `const` or `enum` member): its JSON text, and in the Python
    /// flavour also its Python literal.
    pub(crate) fn literal_value(&self, value: &Value) -> Expr {
        if let Some((open, close)) = &self.quotes {
            return match literal_text(value, open, close) {
                Some(text) => Expr::lit(&text),
                None => Expr::Never,
            };
        }
        let json = Expr::lit(&value.to_string());
        if self.python {
            Expr::alt([json, Expr::lit(&python_literal(value))])
        } else {
            json
        }
    }
}

/// The characters of a bare object key of a literal value.
fn bare_key_class() -> Expr {
    class(&[
        ('A', 'Z'),
        ('a', 'z'),
        ('0', '9'),
        ('_', '_'),
        ('.', '.'),
        ('$', '$'),
        ('-', '-'),
    ])
}

fn bare_key_class_contains(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-')
}

/// `value` as a literal value with string quotes `open`/`close` (keys bare where they can
/// be); `None` when a string holds the closing quote.
pub fn literal_text(value: &Value, open: &str, close: &str) -> Option<String> {
    Some(match value {
        Value::String(s) => {
            if !close.is_empty() && s.contains(close) {
                return None;
            }
            format!("{open}{s}{close}")
        }
        Value::Array(items) => {
            let items: Option<Vec<String>> =
                items.iter().map(|v| literal_text(v, open, close)).collect();
            format!("[{}]", items?.join(","))
        }
        Value::Object(members) => {
            let mut out = Vec::new();
            for (k, v) in members {
                let key = if !k.is_empty() && k.chars().all(bare_key_class_contains) {
                    k.clone()
                } else {
                    literal_text(&Value::String(k.clone()), open, close)?
                };
                out.push(format!("{key}:{}", literal_text(v, open, close)?));
            }
            format!("{{{}}}", out.join(","))
        }
        other => other.to_string(),
    })
}

/// The names an object schema's `required` lists.
pub(super) fn required_names(obj: &Map<String, Value>) -> Vec<&str> {
    obj.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `-?(0|[1-9][0-9]*)`.
pub(super) fn integer_expr() -> Expr {
    Expr::seq([
        Expr::optional(Expr::lit("-")),
        Expr::alt([Expr::lit("0"), Expr::seq([class(&[('1', '9')]), digits(0)])]),
    ])
}

struct SchemaCtx<'s> {
    root: &'s Value,
    refs: HashMap<String, RuleId>,
}

fn bound(obj: &Map<String, Value>, key: &str) -> Option<u32> {
    obj.get(key)
        .and_then(Value::as_u64)
        .map(|n| n.min(u64::from(u32::MAX)) as u32)
}

/// `alt`'s keywords over `base`'s (a shallow merge; a boolean `alt` stays itself).
fn merge(base: &Map<String, Value>, alt: &Value) -> Value {
    match alt {
        Value::Object(a) => {
            let mut out = base.clone();
            for (k, v) in a {
                out.insert(k.clone(), v.clone());
            }
            Value::Object(out)
        }
        other if base.is_empty() => other.clone(),
        other => other.clone(),
    }
}

/// Two schemas that must both hold, merged: properties and required lists joined, other
/// keywords from `b` over `a`'s.
fn merge_all(a: &Value, b: &Value) -> Value {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return b.clone();
    };
    let mut out = a.clone();
    for (k, v) in b {
        match (k.as_str(), out.get_mut(k), v) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (pk, pv) in theirs {
                    mine.insert(pk.clone(), pv.clone());
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for r in theirs {
                    if !mine.contains(r) {
                        mine.push(r.clone());
                    }
                }
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// Checks that `parameters` (a tool's parameter schema) can constrain a call: an object
/// schema (or none), nested at most [`MAX_SCHEMA_DEPTH`] levels. Every tool is checked, also
/// when its format never reads the schema (tagged arguments read only `properties`): a grammar
/// never stands for a tool whose schema it could not follow.
pub fn check_parameters(tool: &str, parameters: &Value) -> Result<(), GrammarError> {
    let type_ok = match parameters {
        Value::Null => true,
        Value::Object(obj) => match obj.get("type") {
            None => true,
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
            Some(_) => false,
        },
        _ => false,
    };
    if !type_ok {
        return Err(GrammarError::Schema(format!(
            "the parameters of tool `{tool}` are not an object schema"
        )));
    }
    normalize(parameters, 0).map(|_| ())
}

/// The schema with `additionalProperties: false` on every object schema that declares
/// `properties` but not `additionalProperties` (llama.cpp's reading: the grammar allows only
/// the declared keys), so the GBNF expansion and llguidance's `%json` agree. A missing or
/// `null` schema is an object without properties. Errors when nested deeper than
/// [`MAX_SCHEMA_DEPTH`].
pub fn normalize(schema: &Value, depth: usize) -> Result<Value, GrammarError> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(GrammarError::Schema(format!(
            "schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
        )));
    }
    match schema {
        Value::Null if depth == 0 => Ok(serde_json::json!({"type": "object", "properties": {}})),
        Value::Object(obj) => {
            let mut out = Map::new();
            for (k, v) in obj {
                let v = match k.as_str() {
                    "properties" | "$defs" | "definitions" | "patternProperties" => match v {
                        Value::Object(m) => {
                            let mut mm = Map::new();
                            for (pk, pv) in m {
                                mm.insert(pk.clone(), normalize(pv, depth + 1)?);
                            }
                            Value::Object(mm)
                        }
                        other => other.clone(),
                    },
                    "items" | "additionalProperties" | "not" | "contains" => {
                        normalize(v, depth + 1)?
                    }
                    "anyOf" | "oneOf" | "allOf" | "prefixItems" => match v {
                        Value::Array(a) => Value::Array(
                            a.iter()
                                .map(|x| normalize(x, depth + 1))
                                .collect::<Result<_, _>>()?,
                        ),
                        other => other.clone(),
                    },
                    _ => v.clone(),
                };
                out.insert(k.clone(), v);
            }
            let is_object = out.contains_key("properties")
                || matches!(out.get("type"), Some(Value::String(t)) if t == "object");
            if is_object && !out.contains_key("additionalProperties") {
                out.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            if matches!(out.get("type"), Some(Value::String(t)) if t == "object")
                && !out.contains_key("properties")
                && out.get("additionalProperties") == Some(&Value::Bool(false))
                && depth == 0
            {
                out.insert("properties".to_owned(), Value::Object(Map::new()));
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

/// A string as Python's `repr` writes it (single quotes).
pub fn python_string(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A JSON value as a Python literal (`True`, `None`, single-quoted strings).
pub fn python_literal(value: &Value) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => python_string(s),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(python_literal)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", python_string(k), python_literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
