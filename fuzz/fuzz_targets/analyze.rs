//! Fuzz target `analyze`; the body (input encoding, checked properties) is `common/analyze.rs`,
//! shared with the regression replay.
//!
//! `scripts/fuzz.sh run analyze 60`, or from `fuzz/`:
//! `cargo +nightly fuzz run analyze ../corpus/analyze -- -dict=dict/analyze.dict -timeout=10`.

#![no_main]

#[path = "common/analyze.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
