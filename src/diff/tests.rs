//! Unit and property tests of the diff helpers.

use super::*;
use proptest::prelude::*;

fn split_parts<'a>(a: &'a str, b: &'a str) -> (&'a str, &'a str, &'a str, &'a str) {
    let split = diff_split(a, b);
    (split.prefix, split.left, split.right, split.suffix)
}

fn kinds(input: &str) -> Vec<(SegmentKind, &str)> {
    segments(input).map(|s| (s.kind, s.text)).collect()
}

#[test]
fn segments_markers_and_text() {
    use SegmentKind::{Marker, Text};
    assert_eq!(kinds(""), []);
    assert_eq!(kinds("a<b>c"), [(Text, "a"), (Marker, "<b>"), (Text, "c")]);
    assert_eq!(kinds("<a<b>"), [(Marker, "<a<b>")]);
    assert_eq!(kinds("[a>]"), [(Marker, "[a>]")]);
    assert_eq!(kinds("x<open"), [(Text, "x"), (Text, "<open")]);
    assert_eq!(
        kinds("日<é>本"),
        [(Text, "日"), (Marker, "<é>"), (Text, "本")]
    );
}

#[test]
fn splits_marker_is_strictly_inside() {
    assert!(!splits_marker("a<b>c", 1));
    assert!(splits_marker("a<b>c", 2));
    assert!(splits_marker("a<b>c", 3));
    assert!(!splits_marker("a<b>c", 4));
    assert!(!splits_marker("a<b", 2));
}

#[test]
fn split_plain_text() {
    assert_eq!(
        split_parts("helloXworld", "helloYworld"),
        ("hello", "X", "Y", "world")
    );
    assert_eq!(split_parts("same", "same"), ("same", "", "", ""));
    assert_eq!(split_parts("", "x"), ("", "", "x", ""));
    assert_eq!(split_parts("x", ""), ("", "x", "", ""));
}

#[test]
fn split_never_enters_a_differing_marker() {
    assert_eq!(split_parts("x<a1>y", "x<a2>y"), ("x", "<a1>", "<a2>", "y"));
    assert_eq!(
        split_parts("<p>one</p>", "<p>two</p>"),
        ("<p>", "one", "two", "</p>")
    );
}

#[test]
fn split_keeps_code_points_whole() {
    // 'é' (C3 A9) and 'è' (C3 A8) share their first byte.
    assert_eq!(split_parts("caé", "caè"), ("ca", "é", "è", ""));
    assert_eq!(split_parts("é!", "è!"), ("", "é", "è", "!"));
}

#[test]
fn affix_helpers() {
    assert_eq!(common_prefix_len("日本語", "日本人"), "日本".len());
    assert_eq!(common_suffix_len("語だ", "人だ"), "だ".len());
    assert_eq!(until_common_prefix("pre<x>a", "<x>a", "<x>b"), "pre");
    assert_eq!(until_common_prefix("pre", "a", "b"), "");
    assert_eq!(after_common_suffix("a</x>post", "1</x>", "2</x>"), "post");
    assert_eq!(after_common_suffix("nothing", "1</x>", "2</x>"), "");
}

/// Oracle for [`segments`]: a char-by-char state machine over the marker rules.
fn model_segments(input: &str) -> Vec<(SegmentKind, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut closer = None;
    for c in input.chars() {
        match closer {
            None if c == '<' || c == '[' => {
                if !current.is_empty() {
                    out.push((SegmentKind::Text, std::mem::take(&mut current)));
                }
                closer = Some(if c == '<' { '>' } else { ']' });
                current.push(c);
            }
            Some(end) if c == end => {
                current.push(c);
                out.push((SegmentKind::Marker, std::mem::take(&mut current)));
                closer = None;
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push((SegmentKind::Text, current));
    }
    out
}

/// Pieces that make template-like strings: markers, broken markers, unicode and whitespace.
fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "<",
        ">",
        "[",
        "]",
        "</x>",
        "<x>",
        "<|im_end|>",
        "[INST]",
        "é",
        "日本",
        " ",
        "\n",
        "a",
        "b",
        "ab",
        "{\"k\": 1}",
        "<think>",
    ])
}

fn template_like() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..12).prop_map(|pieces| pieces.concat())
}

proptest! {
    #[test]
    fn split_contract_holds(a in template_like(), b in template_like()) {
        let split = diff_split(&a, &b);
        prop_assert_eq!(check_split(&a, &b, &split), Ok(()));
    }

    #[test]
    fn split_of_related_strings(
        stem in template_like(),
        x in template_like(),
        y in template_like(),
        tail in template_like(),
    ) {
        let (a, b) = (format!("{stem}{x}{tail}"), format!("{stem}{y}{tail}"));
        let split = diff_split(&a, &b);
        prop_assert_eq!(check_split(&a, &b, &split), Ok(()));
    }

    #[test]
    fn segments_join_back(input in template_like()) {
        let mut joined = String::new();
        let mut offset = 0;
        for segment in segments(&input) {
            prop_assert!(!segment.text.is_empty());
            prop_assert_eq!(segment.offset, offset);
            prop_assert!(input.is_char_boundary(segment.offset));
            prop_assert!(input.is_char_boundary(segment.end()));
            if segment.kind == SegmentKind::Marker {
                let closer = if segment.text.starts_with('<') { '>' } else { ']' };
                prop_assert!(segment.text.ends_with(closer));
            }
            offset = segment.end();
            joined.push_str(segment.text);
        }
        prop_assert_eq!(joined, input);
    }

    #[test]
    fn segments_match_the_model(input in template_like()) {
        let actual: Vec<_> = segments(&input).map(|s| (s.kind, s.text.to_owned())).collect();
        prop_assert_eq!(actual, model_segments(&input));
    }

    #[test]
    fn arbitrary_strings_do_not_panic(a in ".{0,40}", b in ".{0,40}") {
        let split = diff_split(&a, &b);
        prop_assert_eq!(check_split(&a, &b, &split), Ok(()));
        let _ = until_common_prefix(&a, &b, &a);
        let _ = after_common_suffix(&b, &a, &b);
    }
}

#[test]
fn check_split_rejects_cuts_inside_markers() {
    let (a, b) = ("<x1>", "<x2>");
    let cut_marker = DiffSplit {
        prefix: "<x",
        left: "1",
        right: "2",
        suffix: ">",
    };
    assert_eq!(
        check_split(a, b, &cut_marker),
        Err("the prefix end (byte 2) splits a marker of a".into())
    );
    let wrong_parts = DiffSplit {
        prefix: "",
        left: "<x1>",
        right: "<x3>",
        suffix: "",
    };
    assert!(check_split(a, b, &wrong_parts).is_err());
    assert_eq!(check_split(a, b, &diff_split(a, b)), Ok(()));
}

#[test]
fn appended_text_may_close_an_opener_of_a() {
    // `a` ends with an unclosed opener, so `a` has no marker there; `b` closes it.
    let (a, b) = ("x<y", "x<y>z");
    assert_eq!(split_parts(a, b), ("x<y", "", ">z", ""));
    assert_eq!(check_split(a, b, &diff_split(a, b)), Ok(()));
}
