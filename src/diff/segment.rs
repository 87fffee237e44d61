//! Marker segmentation: splitting text into `<...>` / `[...]` markers and the text between them.

use memchr::{memchr, memchr2};

/// What a [`Segment`] is: a marker such as `<|im_end|>` or `[TOOL_CALLS]`, or plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegmentKind {
    /// Text between markers (including an unclosed marker at the end of the input).
    Text,
    /// A marker: from `<` to the next `>`, or from `[` to the next `]`.
    Marker,
}

impl SegmentKind {
    /// The upper-case name used by the conformance vectors (`TEXT` / `MARKER`).
    pub fn as_str(self) -> &'static str {
        match self {
            SegmentKind::Text => "TEXT",
            SegmentKind::Marker => "MARKER",
        }
    }
}

/// One piece of a segmented input. Borrows from the input; `offset` is its byte position there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment<'a> {
    /// Marker or text.
    pub kind: SegmentKind,
    /// The segment's text, a slice of the input.
    pub text: &'a str,
    /// Byte offset of `text` in the input.
    pub offset: usize,
}

impl Segment<'_> {
    /// Byte offset just past the segment.
    pub fn end(&self) -> usize {
        self.offset + self.text.len()
    }

    /// Two segments are *the same* when kind and text agree (their offsets may differ).
    pub fn same_as(&self, other: &Segment<'_>) -> bool {
        self.kind == other.kind && self.text == other.text
    }
}

/// Iterator over the segments of a string; see [`segments`].
#[derive(Debug, Clone)]
pub struct Segments<'a> {
    input: &'a str,
    offset: usize,
}

impl<'a> Iterator for Segments<'a> {
    type Item = Segment<'a>;

    fn next(&mut self) -> Option<Segment<'a>> {
        let rest = &self.input[self.offset..];
        let bytes = rest.as_bytes();
        let first = *bytes.first()?;
        // The openers and closers are ASCII, so every cut below lands on a char boundary.
        let (kind, len) = match closer_of(first) {
            Some(closer) => match memchr(closer, &bytes[1..]) {
                Some(at) => (SegmentKind::Marker, at + 2),
                // An opener that is never closed: the rest of the input is text.
                None => (SegmentKind::Text, bytes.len()),
            },
            None => (
                SegmentKind::Text,
                memchr2(b'<', b'[', bytes).unwrap_or(bytes.len()),
            ),
        };
        let segment = Segment {
            kind,
            text: &rest[..len],
            offset: self.offset,
        };
        self.offset += len;
        Some(segment)
    }
}

impl std::iter::FusedIterator for Segments<'_> {}

/// The closer that ends a marker opened by `byte`, if `byte` opens one.
fn closer_of(byte: u8) -> Option<u8> {
    match byte {
        b'<' => Some(b'>'),
        b'[' => Some(b']'),
        _ => None,
    }
}

/// Splits `input` into markers and text.
///
/// A marker runs from `<` to the next `>` (or from `[` to the next `]`); markers do not nest,
/// so `<a<b>` is one marker. An opener that is never closed starts a final text segment.
/// Text segments are never empty and concatenating all segments gives `input` back.
///
/// ```
/// use chatparse::diff::{segments, SegmentKind};
/// let parts: Vec<_> = segments("hi<|im_end|>\n[x").map(|s| (s.kind, s.text)).collect();
/// assert_eq!(
///     parts,
///     [
///         (SegmentKind::Text, "hi"),
///         (SegmentKind::Marker, "<|im_end|>"),
///         (SegmentKind::Text, "\n"),
///         (SegmentKind::Text, "[x"),
///     ]
/// );
/// ```
pub fn segments(input: &str) -> Segments<'_> {
    Segments { input, offset: 0 }
}

/// Whether byte `offset` of `text` falls strictly inside a marker, i.e. cutting `text` there
/// would split a marker in two.
pub fn splits_marker(text: &str, offset: usize) -> bool {
    segments(text)
        .take_while(|segment| segment.offset < offset)
        .any(|segment| segment.kind == SegmentKind::Marker && offset < segment.end())
}
