//! Fuzzes the diff helpers with arbitrary string pairs; the body (input encoding, checked
//! properties) is `common/diff.rs`, shared with the regression replay.
//!
//! `cargo +nightly fuzz run diff ../corpus/diff` (from `fuzz/`), or `scripts/fuzz.sh run diff`.

#![no_main]

#[path = "common/diff.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
