//! Container values written as elements, the template's own way
//! ([`ElementValues`]: `<city>Paris</city>` per object member, `<item>a</item>` per array
//! item, nested the same way), as rules of the internal form and as sample text.
//!
//! The rules follow the parameter's schema as the generator's element reader
//! ([`crate::generate::elements`]) reads it back: members in declared order (required ones
//! present, others optional), items with the item name, strings as text holding neither the
//! element opener nor a closer's start, numbers, booleans and `null` as JSON writes them.
//! What elements cannot write (other keys, a string the markers would cut) is left to the JSON
//! alternative the value keeps beside them. Nesting is bounded ([`MAX_ELEMENT_DEPTH`]): a
//! deeper (or recursive) schema has no element form past it.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::analyze::slots::{self, Slot};
use crate::analyze::ElementValues;
use crate::message::request::declared_types;

use super::ir::{Expr, RuleId};
use super::schema::{integer_expr, required_names, Json};
use super::GrammarError;

/// How deep element values may nest in the grammar.
pub const MAX_ELEMENT_DEPTH: usize = 16;

/// The fixed texts of one element syntax, trimmed as the reader matches them.
struct Syntax<'e> {
    open: &'e str,
    name_value: &'e str,
    close: &'e str,
    close_start: &'e str,
    item: &'e str,
    /// The rule of each `$ref` pointer's element value, once built.
    refs: RefCell<HashMap<String, RuleId>>,
}

impl<'e> Syntax<'e> {
    /// The syntax of `e`; `None` where the reader finds a name other than by a marker after
    /// it (elements are then not written).
    fn of(e: &'e ElementValues) -> Option<Syntax<'e>> {
        let (open, name_value, close) = (e.open.trim(), e.name_value.trim(), e.close.trim());
        let close_start = slots::head(close);
        (!open.is_empty() && !name_value.is_empty() && !close_start.is_empty()).then(|| Syntax {
            open,
            name_value,
            close,
            close_start,
            item: e.item.as_str(),
            refs: RefCell::new(HashMap::new()),
        })
    }

    /// The closer of an element named `name`.
    fn close_of(&self, name: &str) -> String {
        self.close.replace(Slot::Key.char(), name)
    }

    /// Whether `text` can be an element's text as written: it holds neither the opener nor a
    /// closer's start, and has no whitespace at its ends (the reader would keep it as text,
    /// but a number or literal would then not read back).
    fn writes_text(&self, text: &str) -> bool {
        !text.contains(self.open) && !text.contains(self.close_start) && text.trim() == text
    }
}

/// The schema `schema` resolves to at the top: a local `$ref` followed (a bounded number of
/// times), `allOf` left as is.
fn resolve<'s>(root: &'s Value, mut schema: &'s Value) -> &'s Value {
    for _ in 0..MAX_ELEMENT_DEPTH {
        let Some(pointer) = schema.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let target = pointer.strip_prefix('#').and_then(|p| {
            if p.is_empty() {
                Some(root)
            } else {
                root.pointer(p)
            }
        });
        match target {
            Some(t) => schema = t,
            None => break,
        }
    }
    schema
}

/// Whether a value of `schema` is a container and never a string (the reader keeps text as a
/// string where the schema allows one): the values written as elements.
pub(crate) fn container_only(schema: &Value) -> bool {
    let types = declared_types(resolve(schema, schema));
    types.iter().any(|t| t == "object" || t == "array") && !types.iter().any(|t| t == "string")
}

/// Whether `depth` is within [`MAX_ELEMENT_DEPTH`].
fn within(depth: usize) -> bool {
    depth <= MAX_ELEMENT_DEPTH
}

/// The `anyOf` (or `oneOf`) alternatives of a schema.
fn alternatives(obj: &Map<String, Value>) -> Option<&Vec<Value>> {
    ["anyOf", "oneOf"]
        .into_iter()
        .find_map(|key| obj.get(key).and_then(Value::as_array))
}

/// The declared types of an (object) schema, inferred from its keywords when `type` is absent.
fn types_of(obj: &Map<String, Value>) -> Vec<&str> {
    match obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if obj.contains_key("properties") => vec!["object"],
        _ if obj.contains_key("items") => vec!["array"],
        _ => Vec::new(),
    }
}

impl Json<'_> {
    /// The element form of a container value of `schema` (a normalised root schema), or
    /// [`Expr::Never`] where it has none.
    pub(crate) fn elements_expr(
        &mut self,
        schema: &Value,
        e: &ElementValues,
    ) -> Result<Expr, GrammarError> {
        let Some(syntax) = Syntax::of(e) else {
            return Ok(Expr::Never);
        };
        let list = self.element_list(&syntax, schema, schema, 0)?;
        // An empty container is no element form (the reader reads blank text by the schema).
        Ok(match list {
            Expr::Never | Expr::Empty => Expr::Never,
            list => list,
        })
    }

    /// The alternative of `build` over each of `alts`.
    fn each(
        &mut self,
        alts: &[Value],
        mut build: impl FnMut(&mut Self, &Value) -> Result<Expr, GrammarError>,
    ) -> Result<Expr, GrammarError> {
        let mut out = Vec::new();
        for alt in alts {
            out.push(build(self, alt)?);
        }
        Ok(Expr::alt(out))
    }

    /// The members or items of a container of `schema`, as elements in a row.
    fn element_list(
        &mut self,
        syntax: &Syntax<'_>,
        root: &Value,
        schema: &Value,
        depth: usize,
    ) -> Result<Expr, GrammarError> {
        let Some(obj) = within(depth)
            .then(|| resolve(root, schema).as_object())
            .flatten()
        else {
            return Ok(Expr::Never);
        };
        if let Some(alts) = alternatives(obj) {
            return self.each(alts, |j, alt| j.element_list(syntax, root, alt, depth + 1));
        }
        let types = types_of(obj);
        let mut out = Vec::new();
        if types.contains(&"object") {
            out.push(self.element_members(syntax, root, obj, depth)?);
        }
        if types.contains(&"array") {
            let item = match obj.get("items") {
                Some(items @ Value::Object(_)) => {
                    self.element_value(syntax, root, items, depth + 1)?
                }
                Some(Value::Bool(false)) => Expr::Never,
                _ => self.element_text(syntax),
            };
            let element = self.element(syntax, syntax.item, item);
            let min = obj.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let max = obj.get("maxItems").and_then(Value::as_u64);
            let clamp = |n: u64| n.min(u64::from(u32::MAX)) as u32;
            out.push(Expr::repeat(
                Expr::seq([Expr::space(), element]),
                clamp(min),
                max.map(clamp),
            ));
        }
        Ok(Expr::alt(out))
    }

    /// The declared members of an object schema, in order: required ones present, others
    /// optional (other keys are left to the JSON form).
    fn element_members(
        &mut self,
        syntax: &Syntax<'_>,
        root: &Value,
        obj: &Map<String, Value>,
        depth: usize,
    ) -> Result<Expr, GrammarError> {
        let required = required_names(obj);
        let empty = Map::new();
        let props = obj
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if required.iter().any(|r| !props.contains_key(*r)) {
            return Ok(Expr::Never);
        }
        let mut members = Vec::new();
        for (name, sub) in props {
            if name.contains(syntax.name_value) || name.contains(char::is_whitespace) {
                if required.contains(&name.as_str()) {
                    return Ok(Expr::Never);
                }
                continue;
            }
            let value = self.element_value(syntax, root, sub, depth + 1)?;
            let member = Expr::seq([Expr::space(), self.element(syntax, name, value)]);
            members.push(if required.contains(&name.as_str()) {
                member
            } else {
                Expr::optional(member)
            });
        }
        Ok(Expr::seq(members))
    }

    /// One element: opener, name, the text between name and value, the value, its closer.
    fn element(&self, syntax: &Syntax<'_>, name: &str, value: Expr) -> Expr {
        Expr::seq([
            Expr::lit(syntax.open),
            Expr::lit(name),
            Expr::lit(syntax.name_value),
            value,
            Expr::space(),
            Expr::lit(&syntax.close_of(name)),
        ])
    }

    /// Text a string value may be: none of the opener or a closer's start.
    fn element_text(&self, syntax: &Syntax<'_>) -> Expr {
        Expr::excluding([syntax.open, syntax.close_start])
    }

    /// The value inside an element: nested elements for a container, else its scalar text.
    fn element_value(
        &mut self,
        syntax: &Syntax<'_>,
        root: &Value,
        schema: &Value,
        depth: usize,
    ) -> Result<Expr, GrammarError> {
        if !within(depth) {
            return Ok(Expr::Never);
        }
        // A referenced schema is one rule, whatever refers to it (recursion stays a
        // reference, never an expansion).
        if let Some(pointer) = schema.get("$ref").and_then(Value::as_str) {
            if let Some(id) = syntax.refs.borrow().get(pointer) {
                return Ok(Expr::Ref(*id));
            }
            let id = self.rules.declare("element-ref")?;
            syntax.refs.borrow_mut().insert(pointer.to_owned(), id);
            let target = resolve(root, schema);
            let body = if target.get("$ref").is_some() {
                Expr::Never
            } else {
                self.element_value(syntax, root, target, depth + 1)?
            };
            self.rules.set_body(id, body)?;
            return Ok(Expr::Ref(id));
        }
        let Value::Object(obj) = schema else {
            // `true` or no schema: text.
            return Ok(self.element_text(syntax));
        };
        if let Some(value) = obj.get("const") {
            return Ok(scalar_literal(syntax, value));
        }
        if let Some(Value::Array(values)) = obj.get("enum") {
            return Ok(Expr::alt(values.iter().map(|v| scalar_literal(syntax, v))));
        }
        if let Some(alts) = alternatives(obj) {
            return self.each(alts, |j, alt| j.element_value(syntax, root, alt, depth + 1));
        }
        let types = types_of(obj);
        if types.is_empty() {
            return Ok(self.element_text(syntax));
        }
        let mut out = Vec::new();
        for t in types {
            out.push(match t {
                // The reader reads a string's text as it is.
                "string" => self.element_text(syntax),
                "number" => self.number()?,
                "integer" => integer_expr(),
                "boolean" => Expr::alt([Expr::lit("true"), Expr::lit("false")]),
                "null" => Expr::lit("null"),
                "object" | "array" => {
                    let inner = self.element_list(syntax, root, schema, depth + 1)?;
                    Expr::seq([inner, Expr::space()])
                }
                _ => self.element_text(syntax),
            });
        }
        Ok(Expr::alt(out))
    }
}

/// A `const`/`enum` value as element text: a string as it is (none where the markers would
/// cut it), anything else as JSON.
fn scalar_literal(syntax: &Syntax<'_>, value: &Value) -> Expr {
    match value {
        Value::String(s) if syntax.writes_text(s) && !s.is_empty() => Expr::lit(s),
        Value::String(_) | Value::Object(_) | Value::Array(_) => Expr::Never,
        other => Expr::lit(&other.to_string()),
    }
}

/// `value` written as elements for a container of `schema` (the sampler's writer): members in
/// the schema's declared order; `None` where the rules of [`Json::elements_expr`] would not
/// write it so (a key outside the declared ones, a string the markers would cut, an empty
/// container or string, a nested value past the depth bound).
pub fn elements_text(value: &Value, schema: &Value, e: &ElementValues) -> Option<String> {
    let syntax = Syntax::of(e)?;
    let mut out = String::new();
    write_list(&syntax, schema, schema, value, 0, &mut out)?;
    (!out.is_empty()).then_some(out)
}

fn write_list(
    syntax: &Syntax<'_>,
    root: &Value,
    schema: &Value,
    value: &Value,
    depth: usize,
    out: &mut String,
) -> Option<()> {
    let obj = within(depth).then(|| resolve(root, schema).as_object())??;
    if alternatives(obj).is_some() {
        return None;
    }
    let types = types_of(obj);
    match value {
        Value::Object(members) if types.contains(&"object") => {
            let props = obj.get("properties").and_then(Value::as_object)?;
            if members.keys().any(|k| !props.contains_key(k)) {
                return None;
            }
            for (name, sub) in props {
                if let Some(v) = members.get(name) {
                    write_element(syntax, root, sub, name, v, depth, out)?;
                }
            }
            Some(())
        }
        Value::Array(items) if types.contains(&"array") => {
            let item_schema = obj.get("items").cloned().unwrap_or(Value::Bool(true));
            for v in items {
                write_element(syntax, root, &item_schema, syntax.item, v, depth, out)?;
            }
            Some(())
        }
        _ => None,
    }
}

fn write_element(
    syntax: &Syntax<'_>,
    root: &Value,
    schema: &Value,
    name: &str,
    value: &Value,
    depth: usize,
    out: &mut String,
) -> Option<()> {
    out.push('\n');
    out.push_str(syntax.open);
    out.push_str(name);
    out.push_str(syntax.name_value);
    match value {
        Value::String(s) if !s.is_empty() && syntax.writes_text(s) => out.push_str(s),
        Value::String(_) => return None,
        Value::Object(m) if m.is_empty() => return None,
        Value::Array(a) if a.is_empty() => return None,
        Value::Object(_) | Value::Array(_) => {
            write_list(syntax, root, schema, value, depth + 1, out)?;
            out.push('\n');
        }
        other => out.push_str(&other.to_string()),
    }
    out.push_str(&syntax.close_of(name));
    Some(())
}
