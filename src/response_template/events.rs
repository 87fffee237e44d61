//! Streaming events.

use std::sync::Arc;

use serde_json::{json, Value};

/// One streaming event, as emitted by [`ResponseParser`](super::ResponseParser).
///
/// Serializes (via [`Event::to_json`]) to the dict shape of the reference:
/// `{"type": "region_open", "field": ...}`, `{"type": "region_chunk", "field", "text",
/// "dirty"}`, `{"type": "region_close", "field", "value"}`.
///
/// `T` is the type of a chunk's text: an owned [`ChunkText`] for the events
/// [`feed`](super::ResponseParser::feed) returns, a borrowed `&str` for those
/// [`feed_with`](super::ResponseParser::feed_with) hands to its closure (no copy;
/// [`into_owned`](Event::into_owned) keeps one).
#[derive(Debug, Clone, PartialEq)]
pub enum Event<'t, T = ChunkText> {
    /// A region of `field` started.
    RegionOpen {
        /// The field name (borrowed from the template).
        field: &'t str,
    },
    /// Raw text of the open region. `dirty` is true unless the content type is
    /// text/int/float/bool (the raw text then needs parsing to become the value).
    RegionChunk {
        /// The field name (borrowed from the template).
        field: &'t str,
        /// The raw text (never splits a UTF-8 code point).
        text: T,
        /// Whether the text is raw, un-parsed body.
        dirty: bool,
    },
    /// A region of `field` finished; `value` is its parsed (and transformed) value.
    RegionClose {
        /// The field name (borrowed from the template).
        field: &'t str,
        /// The value of this region (one match, before `repeats`/`join` accumulation), shared
        /// with the parser: the message takes it over at
        /// [`finalize`](super::ResponseParser::finalize) without a copy once the event is
        /// dropped (it is copied only if the caller still holds the event then).
        value: Arc<Value>,
    },
}

impl<'t, T: AsRef<str>> Event<'t, T> {
    /// The field this event concerns.
    pub fn field(&self) -> &'t str {
        match self {
            Event::RegionOpen { field }
            | Event::RegionChunk { field, .. }
            | Event::RegionClose { field, .. } => field,
        }
    }

    /// The event as a JSON object in the reference's shape.
    pub fn to_json(&self) -> Value {
        match self {
            Event::RegionOpen { field } => json!({"type": "region_open", "field": field}),
            Event::RegionChunk { field, text, dirty } => {
                json!({"type": "region_chunk", "field": field, "text": text.as_ref(), "dirty": dirty})
            }
            Event::RegionClose { field, value } => {
                json!({"type": "region_close", "field": field, "value": &**value})
            }
        }
    }
}

impl<'t> Event<'t, &str> {
    /// The event with its text copied (as [`feed`](super::ResponseParser::feed) returns it).
    pub fn into_owned(self) -> Event<'t> {
        match self {
            Event::RegionOpen { field } => Event::RegionOpen { field },
            Event::RegionChunk { field, text, dirty } => Event::RegionChunk {
                field,
                text: text.into(),
                dirty,
            },
            Event::RegionClose { field, value } => Event::RegionClose { field, value },
        }
    }
}

impl<'t> Event<'t> {
    /// The event with its text borrowed (as [`feed_with`](super::ResponseParser::feed_with)
    /// hands it out).
    pub fn borrowed(&self) -> Event<'t, &str> {
        match self {
            Event::RegionOpen { field } => Event::RegionOpen { field },
            Event::RegionChunk { field, text, dirty } => Event::RegionChunk {
                field,
                text: text.as_str(),
                dirty: *dirty,
            },
            Event::RegionClose { field, value } => Event::RegionClose {
                field,
                value: Arc::clone(value),
            },
        }
    }
}

/// The text of a `region_chunk` event: a string stored inline when short (as streamed chunks
/// usually are), so emitting it does not allocate.
#[derive(Clone)]
pub struct ChunkText(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(String),
}

const INLINE: usize = 30;

/// `src` zero-padded to `INLINE` bytes (`None` if longer). Copies with two fixed-size,
/// possibly overlapping moves instead of a variable-length `memcpy` call: streaming creates
/// one chunk per feed, and most are a few bytes long.
#[inline]
fn inline_bytes(src: &[u8]) -> Option<[u8; INLINE]> {
    let mut out = [0u8; INLINE];
    let n = src.len();
    match n {
        0 => {}
        1..=3 => {
            // First, middle and last byte cover every length up to 3.
            for i in [0, n / 2, n - 1] {
                *out.get_mut(i)? = *src.get(i)?;
            }
        }
        4..=8 => copy_ends::<4>(src, &mut out)?,
        9..=16 => copy_ends::<8>(src, &mut out)?,
        17..=INLINE => copy_ends::<16>(src, &mut out)?,
        _ => return None,
    }
    Some(out)
}

/// Copies `src` (`K <= src.len() <= 2K`) into the front of `out` as its first and last `K`
/// bytes.
#[inline]
fn copy_ends<const K: usize>(src: &[u8], out: &mut [u8; INLINE]) -> Option<()> {
    let n = src.len();
    let head: [u8; K] = src.get(..K)?.try_into().ok()?;
    let tail: [u8; K] = src.get(n.checked_sub(K)?..)?.try_into().ok()?;
    out.get_mut(..K)?.copy_from_slice(&head);
    out.get_mut(n - K..n)?.copy_from_slice(&tail);
    Some(())
}

impl ChunkText {
    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, bytes } => bytes
                .get(..usize::from(*len))
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or(""),
            Repr::Heap(s) => s,
        }
    }

    /// Appends text.
    pub fn push_str(&mut self, more: &str) {
        if let Repr::Heap(s) = &mut self.0 {
            s.push_str(more);
            return;
        }
        let mut joined = String::with_capacity(self.as_str().len() + more.len());
        joined.push_str(self.as_str());
        joined.push_str(more);
        *self = ChunkText::from(joined);
    }
}

impl From<&str> for ChunkText {
    #[inline]
    fn from(s: &str) -> ChunkText {
        // A 4-byte feed (the common streaming size) takes one fixed-size copy.
        if let Ok(four) = <[u8; 4]>::try_from(s.as_bytes()) {
            let mut bytes = [0u8; INLINE];
            if let Some(head) = bytes.get_mut(..4) {
                head.copy_from_slice(&four);
            }
            return ChunkText(Repr::Inline { len: 4, bytes });
        }
        match (inline_bytes(s.as_bytes()), u8::try_from(s.len())) {
            (Some(bytes), Ok(len)) => ChunkText(Repr::Inline { len, bytes }),
            _ => ChunkText(Repr::Heap(s.to_owned())),
        }
    }
}

impl From<String> for ChunkText {
    fn from(s: String) -> ChunkText {
        if s.len() <= INLINE {
            ChunkText::from(s.as_str())
        } else {
            ChunkText(Repr::Heap(s))
        }
    }
}

impl AsRef<str> for ChunkText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::ops::Deref for ChunkText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Debug for ChunkText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for ChunkText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for ChunkText {
    fn eq(&self, other: &ChunkText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ChunkText {}

impl PartialEq<str> for ChunkText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

/// Merges consecutive `region_chunk` events of the same field (and dirtiness) into one.
///
/// Chunk granularity depends on how the text was fed; merged event lists are comparable.
pub fn merge_chunks<'t>(events: &[Event<'t>]) -> Vec<Event<'t>> {
    let mut out: Vec<Event<'t>> = Vec::with_capacity(events.len());
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
