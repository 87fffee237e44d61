//! Marker-aware string helpers: common affixes that never cut through a `<...>`/`[...]` marker,
//! and the rules that split the gap between two probe values into the suffix of the first
//! element and the prefix of the second.

use crate::diff::{common_prefix_len, common_suffix_len, segments, SegmentKind};

/// Which affix a cut ends ([`Side::Prefix`]) or starts ([`Side::Suffix`]), or a cut between
/// whole marker sequences ([`Side::Both`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Prefix,
    Suffix,
    Both,
}

/// The cut points of `text` an aligned affix may end (prefix) or start (suffix) at: every char
/// boundary except those inside a marker, and inside a word sandwiched between two markers
/// (`tools` in `<|open|>tools<|sep|>`: the markers and the word form one marker sequence). A
/// varying word takes its markers along on the side where the texts vary: a prefix does not
/// end between such a word and the marker before it (`<|open|>` | `tools`), a suffix does not
/// start between it and the marker after it (`tools` | `<|sep|>`). A word that holds a probe
/// value is the rendered value, not part of a marker.
fn cut_points(text: &str, side: Side) -> Vec<bool> {
    let mut ok: Vec<bool> = (0..=text.len())
        .map(|at| text.is_char_boundary(at))
        .collect();
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let segs: Vec<crate::diff::Segment<'_>> = segments(text).collect();
    for (i, seg) in segs.iter().enumerate() {
        match seg.kind {
            // Marker insides are filled below (a segment spanning a line break is no marker).
            SegmentKind::Marker => {}
            SegmentKind::Text => {
                let sandwiched = i > 0
                    && segs
                        .get(i + 1)
                        .is_some_and(|n| n.kind == SegmentKind::Marker)
                    && segs[i - 1].kind == SegmentKind::Marker;
                let is_probe = probes().iter().any(|p| seg.text.contains(p));
                if sandwiched && seg.text.chars().all(word) && !is_probe {
                    let (from, to) = match side {
                        Side::Prefix => (seg.offset, seg.end() - 1),
                        Side::Suffix => (seg.offset + 1, seg.end()),
                        Side::Both => (seg.offset, seg.end()),
                    };
                    ok[from..=to].fill(false);
                }
            }
        }
    }
    for (from, to) in bracket_markers(text) {
        ok[from + 1..to].fill(false);
    }
    for (from, to) in segment_markers(text) {
        ok[from + 1..to].fill(false);
    }
    ok
}

/// Where the marker `seg` of `text` ends, with its closing character repeated right after
/// it (`[[done]]`, which the segmenter reads as `[[done]` and `]`).
fn end_with_repeated_closer(text: &str, seg: &crate::diff::Segment<'_>) -> usize {
    let mut end = seg.end();
    if let Some(last) = seg.text.chars().next_back() {
        while text[end..].starts_with(last) {
            end += last.len_utf8();
        }
    }
    end
}

/// The longest marker in a bracket pair other than `<>` and `[]` (those are the segmenter's).
const BRACKET_MARKER_MAX: usize = 64;

/// Markers in the non-ASCII bracket pairs of [`OPENING_BRACKETS`] (`【end】`, `⟦x⟧`, `«y»`):
/// the byte ranges from an opener to its closer, with no whitespace between and at most
/// [`BRACKET_MARKER_MAX`] bytes long.
fn bracket_markers(text: &str) -> Vec<(usize, usize)> {
    let mut out = doubled_brace_markers(text);
    let mut from = 0;
    while let Some((at, open)) = text[from..]
        .char_indices()
        .map(|(i, c)| (from + i, c))
        .find(|(_, c)| !c.is_ascii() && OPENING_BRACKETS.contains(*c))
    {
        from = at + open.len_utf8();
        let Some(close) = closing_of(open) else {
            continue;
        };
        let rest = &text[from..];
        let end = rest
            .char_indices()
            .take_while(|&(i, c)| i < BRACKET_MARKER_MAX && !c.is_whitespace())
            .find(|&(_, c)| c == close);
        if let Some((i, c)) = end {
            let to = from + i + c.len_utf8();
            // A probe value (or the slot standing for one) inside is rendered data (an
            // element named by the argument), not a fixed marker.
            let inner = &text[at..to];
            let slot = inner
                .chars()
                .any(|c| ('\u{e000}'..='\u{f8ff}').contains(&c));
            if !slot && !probes().iter().any(|p| inner.contains(p)) {
                out.push((at, to));
                from = to;
            }
        }
    }
    out.sort_unstable();
    out
}

/// Markers in doubled braces (`{{talk}}`, `{{/tool}}`): a name of word characters, `/`, `:`,
/// `#` and `.` between `{{` and `}}` (JSON never writes `{{` before a word).
fn doubled_brace_markers(text: &str) -> Vec<(usize, usize)> {
    let name = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | ':' | '#' | '.');
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("{{") {
        let at = from + i;
        let inner_from = at + 2;
        let inner_len = text[inner_from..]
            .char_indices()
            .find(|&(_, c)| !name(c))
            .map_or(text.len() - inner_from, |(k, _)| k);
        let close = inner_from + inner_len;
        if inner_len > 0 && inner_len < BRACKET_MARKER_MAX && text[close..].starts_with("}}") {
            out.push((at, close + 2));
            from = close + 2;
        } else {
            from = at + 1;
        }
    }
    out
}

/// Whether `open` and `close` are a non-ASCII bracket pair of [`OPENING_BRACKETS`].
pub fn is_bracket_pair(open: char, close: char) -> bool {
    !open.is_ascii() && closing_of(open) == Some(close)
}

/// Every marker of `text` as byte ranges, in order: the segmenter's `<...>` / `[...]` (with
/// a closing character repeated right after it, `[[x]]`) and those in the other bracket pairs
/// ([`bracket_markers`]).
pub fn marker_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = segment_markers(text);
    let covered =
        |at: usize, spans: &[(usize, usize)]| spans.iter().any(|&(f, t)| f <= at && at < t);
    let others: Vec<(usize, usize)> = bracket_markers(text)
        .into_iter()
        .filter(|&(from, _)| !covered(from, &spans))
        .collect();
    spans.extend(others);
    spans.sort_unstable();
    spans
}

/// The segmenter's markers of `text` as byte ranges (see [`marker_spans`]), found line by
/// line: a marker runs from `<` to the next `>` (or `[` to the next `]`) on the same line. A
/// marker never spans a line break: a `[…]` or `<…>` run holding one (`[<call>\n]`, the `[`
/// ending one token and the `]` starting the next) is no marker, and the markers inside it
/// are found instead; so are those after an opener never closed. Linear in `text`.
fn segment_markers(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut line_start = 0;
    while line_start <= bytes.len() {
        let line_end =
            memchr::memchr(b'\n', &bytes[line_start..]).map_or(bytes.len(), |i| line_start + i);
        // The next `>` and `]` at or after each position of the line.
        let mut next = vec![(usize::MAX, usize::MAX); line_end - line_start + 1];
        for i in (line_start..line_end).rev() {
            let (gt, rb) = next[i - line_start + 1];
            next[i - line_start] = match bytes[i] {
                b'>' => (i, rb),
                b']' => (gt, i),
                _ => (gt, rb),
            };
        }
        let mut i = line_start;
        while i < line_end {
            let close = match bytes[i] {
                b'<' => next[i - line_start + 1].0,
                b'[' => next[i - line_start + 1].1,
                _ => usize::MAX,
            };
            if close == usize::MAX {
                i += 1;
                continue;
            }
            let seg = crate::diff::Segment {
                kind: SegmentKind::Marker,
                text: &text[i..=close],
                offset: i,
            };
            spans.push((i, end_with_repeated_closer(text, &seg)));
            i = close + 1;
        }
        line_start = line_end + 1;
    }
    spans
}

/// `text` cut after each whole marker that has more text after it (`<|start|>`, `assistant`
/// for `<|start|>assistant`): where a tokenizer that marks word starts writes a space.
pub fn split_after_markers(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut at = 0;
    for (_, end) in marker_spans(text) {
        if end > at && end < text.len() {
            pieces.push(&text[at..end]);
            at = end;
        }
    }
    pieces.push(&text[at..]);
    pieces
}

/// The closing bracket paired with `open` in [`OPENING_BRACKETS`] / [`CLOSING_BRACKETS`].
fn closing_of(open: char) -> Option<char> {
    let index = OPENING_BRACKETS.chars().position(|c| c == open)?;
    CLOSING_BRACKETS.chars().nth(index)
}

/// Every probe value the analysis renders (a word holding one is never part of a marker).
/// Every probe value the scenarios render (tool-call, content and reasoning probes of both
/// sets, the user messages, the tool result).
pub(super) fn probes() -> &'static [&'static str] {
    use super::scenario::{ProbeSet, TOOL_RESULT, USER, USER_AGAIN};
    static ALL: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<&'static str> = ProbeSet::PRIMARY.all().to_vec();
        all.extend(ProbeSet::CHECK.all());
        all.extend([USER, USER_AGAIN, TOOL_RESULT]);
        all
    })
}

/// Where `header` starts in `turn` after a mode switch: text on one line, holding no marker,
/// before it. `None` when the turn does not hold the header so.
pub fn switch_before(turn: &str, header: &str) -> Option<usize> {
    let at = turn.find(header)?;
    let lead = &turn[..at];
    (!lead.trim().contains('\n') && marker_spans(lead).is_empty()).then_some(at)
}

/// Where `with` goes on after the text `without` holds from `common` on, when `with` inserts
/// text at `common` (a prompt that writes a default system turn before the conversation):
/// the end of that text in `with`. `None` when `with` does not hold it after `common`.
pub fn after_insertion(without: &str, with: &str, common: usize) -> Option<usize> {
    let rest = without.get(common..)?;
    let at = with.get(common..)?.find(rest)?;
    Some(common + at + rest.len())
}

/// Length of the common prefix of `a` and `b`, shortened so it ends on a cut point (not inside
/// a marker, not between a marker and a word glued to it) in both.
pub fn aligned_prefix_len(a: &str, b: &str) -> usize {
    let n = common_prefix_len(a, b);
    let (ca, cb) = (cut_points(a, Side::Prefix), cut_points(b, Side::Prefix));
    (0..=n).rev().find(|&k| ca[k] && cb[k]).unwrap_or(0)
}

/// Length of the common prefix of `a` and `b` that ends between whole markers: on a cut point
/// (see [`aligned_prefix_len`]) and not right after an opening bracket, so that markers the
/// segmenter does not know (full-width `【…】`, `⟨…⟩`) are not cut after their opener either
/// (`【end】【answer】` and `【end】【stop】` share `【end】`, not `【end】【`).
pub fn marker_prefix_len(a: &str, b: &str) -> usize {
    let mut k = aligned_prefix_len(a, b);
    while let Some(c) = a[..k].chars().next_back() {
        // A word both go on with differently is not cut either.
        let inside_word = c.is_alphanumeric() && k < a.len() && k < b.len();
        if !(OPENING_BRACKETS.contains(c) || inside_word) {
            break;
        }
        k -= c.len_utf8();
    }
    k
}

/// Characters that open a bracketed marker.
const OPENING_BRACKETS: &str = "<[({【〔〖〘〚「『〈《⟨⟪«‹⁅（［｛｢⟦⦃⦅⦇⟬⟮〈❨❪❬❮❰❲❴﹙﹛﹝";

/// Characters that close a bracketed marker (the counterparts of [`OPENING_BRACKETS`]).
const CLOSING_BRACKETS: &str = ">])}】〕〗〙〛」』〉》⟩⟫»›⁆）］｝｣⟧⦄⦆⦈⟭⟯〉❩❫❭❯❱❳❵﹚﹜﹞";

/// The marker sequences of a run of markers (`<|end|>\n</s>`, `【end】【stop】`), without the
/// whitespace between them: split at whitespace and where a closing bracket meets an opening
/// one, for any of the bracket pairs in [`OPENING_BRACKETS`] (the segmenter knows only `<>`
/// and `[]`). Each piece is a slice of `text`.
pub fn marker_pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut prev: Option<char> = None;
    for (at, c) in text.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push(&text[s..at]);
            }
        } else {
            let glued =
                prev.is_some_and(|p| CLOSING_BRACKETS.contains(p)) && OPENING_BRACKETS.contains(c);
            match start {
                Some(s) if glued => {
                    out.push(&text[s..at]);
                    start = Some(at);
                }
                Some(_) => {}
                None => start = Some(at),
            }
        }
        prev = Some(c);
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

/// Whether `piece` (see [`marker_pieces`]) starts with an opening bracket.
pub fn opens_bracket(piece: &str) -> bool {
    piece
        .chars()
        .next()
        .is_some_and(|c| OPENING_BRACKETS.contains(c))
}

/// Whether `piece` (see [`marker_pieces`]) ends with a closing bracket.
pub fn closes_bracket(piece: &str) -> bool {
    piece
        .chars()
        .next_back()
        .is_some_and(|c| CLOSING_BRACKETS.contains(c))
}

/// Length of the common suffix of `a` and `b`, shortened so it starts on a cut point in both.
pub fn aligned_suffix_len(a: &str, b: &str) -> usize {
    let n = common_suffix_len(a, b);
    let (ca, cb) = (cut_points(a, Side::Suffix), cut_points(b, Side::Suffix));
    (0..=n)
        .rev()
        .find(|&k| ca[a.len() - k] && cb[b.len() - k])
        .unwrap_or(0)
}

/// The marker sequences of `text`: its pieces between cut points that fall neither inside a
/// marker nor next to a word sandwiched between markers (`<|close|>think<|sep|>`,
/// `<|open|>response<|sep|>`, `\n`, `<tool_call>`), in order; joined they give `text`.
pub fn units(text: &str) -> Vec<&str> {
    let cuts = cut_points(text, Side::Both);
    let mut out = Vec::new();
    let mut start = 0;
    // Cuts only between segments: text between markers stays whole.
    for seg in segments(text) {
        let at = seg.end();
        if at < text.len() && cuts[at] {
            out.push(&text[start..at]);
            start = at;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Whether `open` and `close` (whitespace around them ignored) open and close the same block:
/// `<x>`/`</x>`, `[X]`/`[/X]`, or marker sequences that name it with the same words
/// (`<|open|>response<|sep|>`/`<|close|>response<|sep|>`).
pub fn pairs(open: &str, close: &str) -> bool {
    let (open, close) = (open.trim(), close.trim());
    if open.is_empty() || open == close {
        return false;
    }
    // `<x>` → `</x>`, `[X]` → `[/X]`, and the same with any other bracket characters
    // (`⁅x⁆` → `⁅/x⁆`).
    let closing = |m: &str| -> Option<String> {
        let (first, last) = (m.chars().next()?, m.chars().last()?);
        let inner = m.get(first.len_utf8()..m.len() - last.len_utf8())?;
        let bracket = |c: char| !c.is_alphanumeric() && !c.is_whitespace() && c != '/';
        let plain = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | ':' | '|');
        (bracket(first) && bracket(last) && !inner.is_empty() && inner.chars().all(plain))
            .then(|| format!("{first}/{inner}{last}"))
    };
    if closing(open).as_deref() == Some(close) {
        return true;
    }
    // A marker token with a bracket run around a name: the slash after the opening run
    // (`<|x|>` → `<|/x|>`, `{{x}}` → `{{/x}}`).
    let token_closing = |m: &str| -> Option<String> {
        let bracket = |c: char| !c.is_alphanumeric() && !c.is_whitespace() && c != '/';
        let lead = m.len() - m.trim_start_matches(bracket).len();
        let trail = m.len() - m.trim_end_matches(bracket).len();
        let inner = m.get(lead..m.len().checked_sub(trail)?)?;
        let plain = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | ':');
        (lead > 0 && trail > 0 && !inner.is_empty() && inner.chars().all(plain))
            .then(|| format!("{}/{}", &m[..lead], &m[lead..]))
    };
    if token_closing(open).as_deref() == Some(close) {
        return true;
    }
    let words = |t: &str| -> Option<String> {
        let segs: Vec<_> = segments(t).collect();
        let markers = segs
            .iter()
            .filter(|s| s.kind == SegmentKind::Marker)
            .count();
        let text: String = segs
            .iter()
            .filter(|s| s.kind == SegmentKind::Text)
            .map(|s| s.text)
            .collect();
        (markers >= 2 && !text.trim().is_empty()).then_some(text)
    };
    matches!((words(open), words(close)), (Some(a), Some(b)) if a == b)
}

/// The trailing unclosed `<...`/`[...` of `text` (a marker the next probe value sits inside,
/// like `<function=` or `<invoke name="`), if any.
pub fn trailing_open_marker(text: &str) -> Option<&str> {
    let mut open = text.rfind(['<', '['])?;
    let bracket = text.as_bytes()[open];
    let closer = if bracket == b'<' { '>' } else { ']' };
    // A doubled opener (`[[act:`, `<<call:`) opens one marker.
    while open > 0 && text.as_bytes()[open - 1] == bracket {
        open -= 1;
    }
    let rest = &text[open..];
    (!rest.contains(closer) && !rest.contains('\n')).then_some(rest)
}

/// The trailing complete marker of `text` (`<arg_value>`, `[CALL_ID]`, `[[call]]`), if `text`
/// ends with one.
pub fn trailing_marker(text: &str) -> Option<&str> {
    marker_spans(text)
        .into_iter()
        .find(|&(_, to)| to == text.len())
        .map(|(from, to)| &text[from..to])
}

/// The last marker of `text` (see [`marker_spans`]), whatever text follows it (an opener
/// followed by words the prompt writes in the block: `<think>` of `<think>Plan:`).
pub fn last_marker(text: &str) -> Option<&str> {
    let &(from, to) = marker_spans(text).last()?;
    Some(&text[from..to])
}

/// The part of a gap that belongs to the element that follows it: an unclosed marker the
/// element sits in, else a complete marker the gap ends with, else the trailing text after the
/// last whitespace or marker (`functions.`).
pub fn element_prefix(gap: &str) -> &str {
    if let Some(open) = trailing_open_marker(gap) {
        return open;
    }
    if let Some(marker) = trailing_marker(gap) {
        return marker;
    }
    let last_marker_end = marker_spans(gap).last().map_or(0, |&(_, to)| to);
    let tail = &gap[last_marker_end..];
    match tail.rfind(char::is_whitespace) {
        Some(ws) => {
            let len = tail[ws..].chars().next().map_or(1, char::len_utf8);
            &tail[ws + len..]
        }
        None => tail,
    }
}

/// Splits `text` after its first marker and the whitespace that follows it: `("</think>\n",
/// "<response>")` for `"</think>\n<response>"`. Text without a marker is all first.
pub fn split_after_first_marker(text: &str) -> (&str, &str) {
    let Some(&(_, mut end)) = marker_spans(text).first() else {
        return (text, "");
    };
    end += text[end..].len() - text[end..].trim_start().len();
    text.split_at(end)
}

/// What `render` writes after the last `probe` of `base` and all that `base` writes after it
/// (`base` is a conversation, `render` the same one with a turn added): the added turn, even
/// when the conversation before it changed (a template that writes the system text into the
/// last user turn only while that turn ends the conversation).
pub fn after_last_turn_end<'r>(base: &str, render: &'r str, probe: &str) -> Option<&'r str> {
    let ended = &base[base.rfind(probe)?..];
    Some(&render[render.rfind(ended)? + ended.len()..])
}

/// Whether `text` contains any of `probes`.
pub fn contains_probe(text: &str, probes: &[&str]) -> bool {
    probes.iter().any(|p| text.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubled_bracket_markers_end_after_their_doubled_closer() {
        assert_eq!(trailing_marker("\n[[call]]"), Some("[[call]]"));
        assert_eq!(element_prefix("[[reason]]x[[/reason]][[call]]"), "[[call]]");
        assert_eq!(trailing_marker("text]"), None);
    }

    #[test]
    fn splits_after_markers_with_text_after_them() {
        assert_eq!(
            split_after_markers("<|start|>assistant"),
            ["<|start|>", "assistant"]
        );
        assert_eq!(
            split_after_markers("<|end|><|start|>assistant"),
            ["<|end|>", "<|start|>", "assistant"]
        );
        assert_eq!(split_after_markers("[END]"), ["[END]"]);
        assert_eq!(split_after_markers("assistant"), ["assistant"]);
    }

    #[test]
    fn a_bracket_run_across_a_line_break_is_no_marker() {
        let t = "]<]ns[>[<calls>\n]<]ns[>[<call>";
        let spans: Vec<&str> = marker_spans(t).iter().map(|&(a, b)| &t[a..b]).collect();
        assert_eq!(spans, ["<]ns[>", "<calls>", "<]ns[>", "<call>"]);
        // Hostile input: many openers across lines, no stack growth.
        let hostile = "<\n".repeat(100_000) + ">";
        assert!(marker_spans(&hostile).is_empty());
    }

    #[test]
    fn aligned_affixes_do_not_cut_markers() {
        assert_eq!(aligned_prefix_len("ab<tool_call>", "ab<think>"), 2);
        assert_eq!(aligned_suffix_len("x</think>", "y</think>"), 8);
        assert_eq!(aligned_suffix_len("<a_end>", "<b_end>"), 0);
    }

    #[test]
    fn aligned_affixes_keep_words_glued_to_markers() {
        // `response` and `tools` are part of their marker sequences: the common end is the
        // turn's own closing sequence, not `<|sep|>...`.
        let a = "<|close|>response<|sep|><|close|>message<|sep|>";
        let b = "<|close|>tools<|sep|><|close|>message<|sep|>";
        assert_eq!(
            &a[a.len() - aligned_suffix_len(a, b)..],
            "<|close|>message<|sep|>"
        );
        assert_eq!(
            aligned_prefix_len("<|open|>think<|sep|>x", "<|open|>thought<|sep|>"),
            0
        );
        // A role word after an opener goes with it; the next marker may differ.
        let a = "<|start|>assistant<|channel|>final";
        assert_eq!(
            aligned_prefix_len(a, "<|start|>assistant"),
            "<|start|>assistant".len()
        );
        // A word outside a marker sequence is text.
        assert_eq!(aligned_prefix_len("ab<x>", "ab<y>"), 2);
        // A probe value glued to a marker is the value: the cut before it stands.
        let a = "<|a|>AnswerC5a1<|e|>";
        let b = "<|a|><think>";
        assert_eq!(aligned_prefix_len(a, b), "<|a|>".len());
        // Whitespace: not one word.
        assert_eq!(
            aligned_prefix_len("<|s|>x y<|e|>", "<|s|>x z<|e|>"),
            "<|s|>x ".len()
        );
    }

    #[test]
    fn marker_pieces_split_runs_of_any_brackets() {
        assert_eq!(marker_pieces("<|end|>\n</s>"), ["<|end|>", "</s>"]);
        assert_eq!(
            marker_pieces("\n【结束】\n【轮次结束】"),
            ["【结束】", "【轮次结束】"]
        );
        assert_eq!(marker_pieces("⟨/msg⟩⟨/turn⟩"), ["⟨/msg⟩", "⟨/turn⟩"]);
        assert_eq!(marker_pieces("<a>b<c>"), ["<a>b<c>"]);
        assert!(opens_bracket("【x】") && closes_bracket("【x】"));
        assert!(!closes_bracket("end"));
    }

    #[test]
    fn units_and_pairs() {
        assert_eq!(
            units("<|close|>think<|sep|><|open|>response<|sep|>"),
            ["<|close|>think<|sep|>", "<|open|>response<|sep|>"]
        );
        assert_eq!(
            units("</think>\n\n<answer>"),
            ["</think>", "\n\n", "<answer>"]
        );
        assert_eq!(units("plain text"), ["plain text"]);
        assert!(pairs("<|open|>response<|sep|>", "<|close|>response<|sep|>"));
        assert!(pairs("<answer>", "</answer>\n"));
        assert!(pairs("[THINK]", "[/THINK]"));
        assert!(pairs("⁅reasoning⁆", "⁅/reasoning⁆"));
        assert!(pairs("<|reason|>", "<|/reason|>"));
        assert!(pairs("{{think}}", "{{/think}}"));
        assert!(!pairs("<|reason|>", "<|/answer|>"));
        assert!(!pairs("<|open|>think<|sep|>", "<|close|>response<|sep|>"));
        assert!(!pairs("<answer>", "<answer>"));
        assert!(!pairs("<|im_start|>", "<|im_end|>"));
    }

    #[test]
    fn element_prefix_rules() {
        assert_eq!(element_prefix(">\n<parameter="), "<parameter=");
        assert_eq!(element_prefix("</arg_key>\n<arg_value>"), "<arg_value>");
        assert_eq!(
            element_prefix("<|tool_call_begin|>functions."),
            "functions."
        );
        assert_eq!(element_prefix("[TOOL_CALLS]"), "[TOOL_CALLS]");
        assert_eq!(element_prefix(">\n"), "");
        assert_eq!(element_prefix("', "), "");
    }

    #[test]
    fn first_marker_split() {
        assert_eq!(
            split_after_first_marker("</think>\n<response>"),
            ("</think>\n", "<response>")
        );
        assert_eq!(split_after_first_marker("\n\n"), ("\n\n", ""));
    }
}
