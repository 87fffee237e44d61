//! JSON text to [`serde_json::Value`] with exactly sized containers.
//!
//! [`from_str`] gives the same value, key order and errors as `serde_json::from_str::<Value>`
//! (the same [`serde_json::Deserializer`] reads the text, so numbers, escapes, duplicate keys
//! — the last value wins, at the first key's position — and the recursion limit of 128 are
//! serde_json's), but allocates and hashes less: serde_json grows each object's map one insert
//! at a time (an index table of 4 then 8 buckets, rehashing, and its entries vector with it)
//! and each array's vector likewise. Here the members of every object and array are first
//! collected on a scratch stack shared by the whole document (and kept per thread between
//! documents), then moved into a map or vector allocated once at its final size; an object
//! whose keys follow a recently seen shape ([`json_shape`](super::json_shape)) is a clone of
//! that shape's map with the values put in place, so its keys are neither hashed nor
//! allocated twice.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::de::StrRead;
use serde_json::{Error, Map, Number, Value};

use super::json_shape::{continues, Shapes};

/// Scratch stacks that keep at most this many slots between documents (a larger document's
/// stacks are shrunk back), so a thread holds on to a few KB at most.
const KEPT_SLOTS: usize = 64;

/// The members of the objects and arrays being read (each open container's members sit on
/// top of those of the containers around it), and the object shapes seen.
struct Scratch {
    /// Object members.
    entries: Vec<(String, Value)>,
    /// Array items, and the values of an object while its keys follow a known shape.
    items: Vec<Value>,
    /// Recently seen object shapes.
    shapes: Shapes,
}

thread_local! {
    /// The scratch stacks and shapes kept between documents.
    static SCRATCH: RefCell<Scratch> = const { RefCell::new(Scratch::new()) };
}

impl Scratch {
    /// Empty stacks, no shapes known.
    const fn new() -> Scratch {
        Scratch {
            entries: Vec::new(),
            items: Vec::new(),
            shapes: Shapes::new(),
        }
    }

    /// Reads one value, then empties the stacks (keeping their room, up to a point).
    fn read(&mut self, de: &mut serde_json::Deserializer<StrRead<'_>>) -> Result<Value, Error> {
        let value = ValueSeed(self).deserialize(de);
        self.entries.clear();
        self.items.clear();
        self.entries.shrink_to(KEPT_SLOTS);
        self.items.shrink_to(KEPT_SLOTS);
        value
    }
}

/// Parses a JSON document like `serde_json::from_str::<Value>`.
pub(crate) fn from_str(text: &str) -> Result<Value, Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    // This thread's scratch, or fresh stacks while it is in use (or torn down).
    let value = match SCRATCH.try_with(|kept| match kept.try_borrow_mut() {
        Ok(mut scratch) => Some(scratch.read(&mut de)),
        Err(_) => None,
    }) {
        Ok(Some(value)) => value,
        _ => Scratch::new().read(&mut de),
    };
    let value = value?;
    de.end()?;
    Ok(value)
}

/// Reads one value, collecting container members on the scratch stacks.
struct ValueSeed<'s>(&'s mut Scratch);

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

/// serde_json's own `Value` visitor, but for the containers.
impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        self.deserialize(de)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let start = self.0.items.len();
        while let Some(item) = seq.next_element_seed(ValueSeed(&mut *self.0))? {
            self.0.items.push(item);
        }
        let start = start.min(self.0.items.len());
        Ok(Value::Array(self.0.items.drain(start..).collect()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let scratch = self.0;
        let start = scratch.items.len();
        // While the keys follow a known shape, only the values are kept (on the item stack).
        let mut shape = None;
        let mut matched = 0;
        let mut next = map.next_key_seed(KeySeed)?;
        while let Some(key) = &next {
            if !shape.as_deref().is_some_and(|s| continues(s, matched, key)) {
                match scratch.shapes.find(shape.as_deref(), matched, Some(key)) {
                    Some(s) => shape = Some(s),
                    None => break,
                }
            }
            matched += 1;
            let value = map.next_value_seed(ValueSeed(&mut *scratch))?;
            scratch.items.push(value);
            next = map.next_key_seed(KeySeed)?;
        }
        let start = start.min(scratch.items.len());
        if next.is_none() && matched > 0 {
            let exact = shape
                .as_ref()
                .filter(|s| s.len() == matched)
                .cloned()
                .or_else(|| scratch.shapes.find(shape.as_deref(), matched, None));
            if let Some(skeleton) = exact {
                let mut out = Map::clone(&skeleton);
                for (slot, value) in out.values_mut().zip(scratch.items.drain(start..)) {
                    *slot = value;
                }
                return Ok(Value::Object(out));
            }
        }
        // Key by key: the keys followed so far are the shape's.
        let first = scratch.entries.len();
        if let Some(s) = &shape {
            for (key, value) in s.keys().zip(scratch.items.drain(start..)) {
                scratch.entries.push((key.clone(), value));
            }
        }
        while let Some(key) = next {
            let value = map.next_value_seed(ValueSeed(&mut *scratch))?;
            scratch.entries.push((key.into_owned(), value));
            next = map.next_key_seed(KeySeed)?;
        }
        let first = first.min(scratch.entries.len());
        let members = scratch.entries.drain(first..);
        let mut out = Map::with_capacity(members.len());
        for (key, value) in members {
            out.insert(key, value);
        }
        scratch.shapes.offer(&out);
        Ok(Value::Object(out))
    }
}

/// Reads an object key, borrowing it from the text when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Cow<'de, str>, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

#[cfg(test)]
#[path = "json_value_tests.rs"]
mod tests;
