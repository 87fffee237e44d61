//! The diff split: common prefix, the differing middles, common suffix.

use super::affix::{common_prefix_len, common_suffix_len};
use super::segment::{segments, splits_marker, Segment, SegmentKind};
use std::ops::Range;

/// Two strings `a` and `b` cut into `prefix + left + suffix == a` and
/// `prefix + right + suffix == b`. All four parts borrow from the inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffSplit<'a> {
    /// The common beginning of `a` and `b`.
    pub prefix: &'a str,
    /// What only `a` has between prefix and suffix.
    pub left: &'a str,
    /// What only `b` has between prefix and suffix.
    pub right: &'a str,
    /// The common end of `a` and `b`.
    pub suffix: &'a str,
}

impl<'a> DiffSplit<'a> {
    /// Cuts `a` and `b` given the byte lengths of the common prefix and suffix.
    fn from_lengths(a: &'a str, b: &'a str, prefix_len: usize, suffix_len: usize) -> Self {
        DiffSplit {
            prefix: &a[..prefix_len],
            left: &a[prefix_len..a.len() - suffix_len],
            right: &b[prefix_len..b.len() - suffix_len],
            suffix: &a[a.len() - suffix_len..],
        }
    }
}

/// Splits `a` and `b` into common prefix, differing middles and common suffix, keeping markers
/// (`<...>`, `[...]`, see [`segments`]) whole.
///
/// The algorithm:
/// 1. If `a` is a prefix of `b` (including `a == b`), the prefix is all of `a`, the suffix is
///    empty and `right` is the rest of `b`: an appended part is reported as appended.
/// 2. Otherwise both strings are segmented and equal whole segments are peeled from both ends at
///    the same pace (one from the front, one from the back per round) while each side keeps at
///    least two unpeeled segments. A side left with one segment then gives it to the suffix if
///    it equals the other side's last segment, else to the prefix if it equals the first.
///    The common pace decides where an insertion that could align in several places (a repeated
///    block such as a second tool call) goes: each end keeps what it peeled before they met.
/// 3. Finally characters are shared inside text segments only: the common end of the last
///    remaining text segments joins the suffix, then the common start of the first remaining
///    text segments (within what the suffix left over) joins the prefix.
///
/// The suffix never overlaps the prefix, both cuts fall on UTF-8 char boundaries, and a cut never
/// falls inside a marker of `a` or `b` (with one exception: when `a` is a prefix of `b` and ends
/// with an unclosed opener that `b` closes; see [`check_split`]).
///
/// These rules give llama.cpp's `calculate_diff_split` results on all its recorded vectors except
/// two, where llama.cpp counts one segment in both prefix and suffix; there this split keeps the
/// contract instead.
///
/// ```
/// use chatparse::diff::diff_split;
/// let parts = |s: chatparse::diff::DiffSplit<'static>| (s.prefix, s.left, s.right, s.suffix);
/// // Characters are shared inside text...
/// assert_eq!(parts(diff_split("<a>x=1</a>", "<a>x=2</a>")), ("<a>x=", "1", "2", "</a>"));
/// // ...but a differing marker stays whole.
/// assert_eq!(parts(diff_split("<a><b1>", "<a><b2>")), ("<a>", "<b1>", "<b2>", ""));
/// ```
pub fn diff_split<'a>(a: &'a str, b: &'a str) -> DiffSplit<'a> {
    if b.starts_with(a) {
        return DiffSplit::from_lengths(a, b, a.len(), 0);
    }
    let seg_a: Vec<Segment<'a>> = segments(a).collect();
    let seg_b: Vec<Segment<'a>> = segments(b).collect();
    let mut peel = Peel {
        a: 0..seg_a.len(),
        b: 0..seg_b.len(),
        prefix_len: 0,
        suffix_len: 0,
    };
    peel.whole_segments(&seg_a, &seg_b);
    peel.text_chars(a, b, &seg_a, &seg_b);
    DiffSplit::from_lengths(a, b, peel.prefix_len, peel.suffix_len)
}

/// The unpeeled segment ranges of both sides and the byte lengths peeled so far.
struct Peel {
    a: Range<usize>,
    b: Range<usize>,
    prefix_len: usize,
    suffix_len: usize,
}

impl Peel {
    /// Step 2 of [`diff_split`]: moves equal whole segments into prefix and suffix.
    fn whole_segments(&mut self, seg_a: &[Segment<'_>], seg_b: &[Segment<'_>]) {
        while self.a.len() >= 2 && self.b.len() >= 2 {
            let front = self.front_equal(seg_a, seg_b);
            if front {
                self.take_front(seg_a);
            }
            let back = self.back_equal(seg_a, seg_b);
            if back {
                self.take_back(seg_a);
            }
            if !front && !back {
                break;
            }
        }
        match (self.a.len(), self.b.len()) {
            (1, 2..) | (2.., 1) => {
                if self.back_equal(seg_a, seg_b) {
                    self.take_back(seg_a);
                } else if self.front_equal(seg_a, seg_b) {
                    self.take_front(seg_a);
                }
            }
            _ => {}
        }
    }

    /// Step 3 of [`diff_split`]: shares characters inside the remaining text segments.
    fn text_chars(&mut self, a: &str, b: &str, seg_a: &[Segment<'_>], seg_b: &[Segment<'_>]) {
        if self.a.is_empty() || self.b.is_empty() {
            return;
        }
        let (last_a, last_b) = (seg_a[self.a.end - 1], seg_b[self.b.end - 1]);
        if last_a.kind == SegmentKind::Text && last_b.kind == SegmentKind::Text {
            self.suffix_len += common_suffix_len(last_a.text, last_b.text);
        }
        let (first_a, first_b) = (seg_a[self.a.start], seg_b[self.b.start]);
        if first_a.kind == SegmentKind::Text && first_b.kind == SegmentKind::Text {
            let end_a = first_a.end().min(a.len() - self.suffix_len);
            let end_b = first_b.end().min(b.len() - self.suffix_len);
            self.prefix_len += common_prefix_len(
                &a[first_a.offset..end_a.max(first_a.offset)],
                &b[first_b.offset..end_b.max(first_b.offset)],
            );
        }
    }

    fn front_equal(&self, seg_a: &[Segment<'_>], seg_b: &[Segment<'_>]) -> bool {
        !self.a.is_empty()
            && !self.b.is_empty()
            && seg_a[self.a.start].same_as(&seg_b[self.b.start])
    }

    fn back_equal(&self, seg_a: &[Segment<'_>], seg_b: &[Segment<'_>]) -> bool {
        !self.a.is_empty()
            && !self.b.is_empty()
            && seg_a[self.a.end - 1].same_as(&seg_b[self.b.end - 1])
    }

    fn take_front(&mut self, seg_a: &[Segment<'_>]) {
        self.prefix_len += seg_a[self.a.start].text.len();
        self.a.start += 1;
        self.b.start += 1;
    }

    fn take_back(&mut self, seg_a: &[Segment<'_>]) {
        self.suffix_len += seg_a[self.a.end - 1].text.len();
        self.a.end -= 1;
        self.b.end -= 1;
    }
}

/// Checks the contract of a split of `a` and `b`, returning a description of the first breach:
///
/// - `prefix + left + suffix == a` and `prefix + right + suffix == b`;
/// - neither cut (end of prefix, start of suffix) falls strictly inside a marker of `a`, nor of
///   `b`, except the end of a prefix that is all of `a` when `a` ends with an unclosed opener
///   (`a`'s own segmentation has no marker there; `b` may close it).
///
/// Used by the conformance runner for vectors where the reference breaks the contract, by the
/// property tests and by the fuzz target.
pub fn check_split(a: &str, b: &str, split: &DiffSplit<'_>) -> Result<(), String> {
    let rebuilt_a = [split.prefix, split.left, split.suffix].concat();
    if rebuilt_a != a {
        return Err(format!(
            "prefix + left + suffix = {rebuilt_a:?}, not a = {a:?}"
        ));
    }
    let rebuilt_b = [split.prefix, split.right, split.suffix].concat();
    if rebuilt_b != b {
        return Err(format!(
            "prefix + right + suffix = {rebuilt_b:?}, not b = {b:?}"
        ));
    }
    let prefix_end = split.prefix.len();
    let a_ends_open = prefix_end == a.len()
        && segments(a)
            .last()
            .is_some_and(|last| last.kind == SegmentKind::Text && closer_pending(last.text));
    let cuts = [
        ("a", a, prefix_end, "prefix end"),
        ("a", a, a.len() - split.suffix.len(), "suffix start"),
        ("b", b, prefix_end, "prefix end"),
        ("b", b, b.len() - split.suffix.len(), "suffix start"),
    ];
    for (name, text, offset, cut) in cuts {
        let excused = name == "b" && cut == "prefix end" && a_ends_open;
        if !excused && splits_marker(text, offset) {
            return Err(format!(
                "the {cut} (byte {offset}) splits a marker of {name}"
            ));
        }
    }
    Ok(())
}

/// Whether a text segment is an unclosed marker (it starts with an opener).
fn closer_pending(text: &str) -> bool {
    text.starts_with(['<', '['])
}
