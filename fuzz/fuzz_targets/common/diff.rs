//! Body of the `diff` fuzz target: the diff helpers with arbitrary string pairs.
//!
//! Input encoding: the bytes before the first NUL are `a`, the bytes after it are `b` (no NUL:
//! `b` is empty); each half is decoded as UTF-8 with invalid sequences replaced. Seeds live in
//! `corpus/diff/` at the repository root.
//!
//! Checked: no panic; the split rebuilds both inputs and cuts no marker (`check_split`);
//! segmentation joins back to its input on char boundaries; the common-affix helpers return
//! slices of `full`.
//!
//! Shared by `fuzz/fuzz_targets/diff.rs` and the regression replay in
//! `tests/fuzz_regressions.rs` (see `fuzz/README.md`).

use chatparse::diff::{
    after_common_suffix, check_split, diff_split, segments, until_common_prefix,
};

/// Runs one fuzz input; panics on a violated property.
pub fn run(data: &[u8]) {
    let (a, b) = match data.iter().position(|&byte| byte == 0) {
        Some(nul) => (&data[..nul], &data[nul + 1..]),
        None => (data, &[][..]),
    };
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));

    let split = diff_split(&a, &b);
    if let Err(breach) = check_split(&a, &b, &split) {
        panic!("{breach}");
    }

    for text in [&a, &b] {
        let mut joined = String::new();
        for segment in segments(text) {
            assert!(!segment.text.is_empty());
            assert!(text.is_char_boundary(segment.offset) && text.is_char_boundary(segment.end()));
            joined.push_str(segment.text);
        }
        assert_eq!(&joined, text.as_ref());
    }

    let before = until_common_prefix(&a, &b, split.suffix);
    assert!(a.starts_with(before));
    let after = after_common_suffix(&b, &a, split.prefix);
    assert!(b.ends_with(after));
}
