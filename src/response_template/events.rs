//! Streaming events.

use std::sync::Arc;

use serde_json::{json, Value};

/// One streaming event, as emitted by [`ResponseParser`](super::ResponseParser).
///
/// Serializes (via [`Event::to_json`]) to the dict shape of the reference:
/// `{"type": "region_open", "field": ...}`, `{"type": "region_chunk", "field", "text",
/// "dirty"}`, `{"type": "region_close", "field", "value"}`.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A region of `field` started.
    RegionOpen {
        /// The field name (shared with the template: cloning it is cheap).
        field: Arc<str>,
    },
    /// Raw text of the open region. `dirty` is true unless the content type is
    /// text/int/float/bool (the raw text then needs parsing to become the value).
    RegionChunk {
        /// The field name (shared with the template: cloning it is cheap).
        field: Arc<str>,
        /// The raw text (never splits a UTF-8 code point).
        text: String,
        /// Whether the text is raw, un-parsed body.
        dirty: bool,
    },
    /// A region of `field` finished; `value` is its parsed (and transformed) value.
    RegionClose {
        /// The field name (shared with the template: cloning it is cheap).
        field: Arc<str>,
        /// The value of this region (one match, before `repeats`/`join` accumulation).
        value: Value,
    },
}

impl Event {
    /// The field this event concerns.
    pub fn field(&self) -> &str {
        match self {
            Event::RegionOpen { field }
            | Event::RegionChunk { field, .. }
            | Event::RegionClose { field, .. } => field,
        }
    }

    /// The event as a JSON object in the reference's shape.
    pub fn to_json(&self) -> Value {
        match self {
            Event::RegionOpen { field } => json!({"type": "region_open", "field": &**field}),
            Event::RegionChunk { field, text, dirty } => {
                json!({"type": "region_chunk", "field": &**field, "text": text, "dirty": dirty})
            }
            Event::RegionClose { field, value } => {
                json!({"type": "region_close", "field": &**field, "value": value})
            }
        }
    }
}

/// Merges consecutive `region_chunk` events of the same field (and dirtiness) into one.
///
/// Chunk granularity depends on how the text was fed; merged event lists are comparable.
pub fn merge_chunks(events: &[Event]) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::with_capacity(events.len());
    for event in events {
        if let Event::RegionChunk { field, text, dirty } = event {
            if let Some(Event::RegionChunk {
                field: f,
                text: t,
                dirty: d,
            }) = out.last_mut()
            {
                if f == field && d == dirty {
                    t.push_str(text);
                    continue;
                }
            }
        }
        out.push(event.clone());
    }
    out
}
