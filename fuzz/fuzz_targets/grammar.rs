//! Fuzz target `grammar`; the body (input encoding, checked properties) is `common/grammar.rs`,
//! shared with the regression replay.
//!
//! `scripts/fuzz.sh run grammar 60`, or from `fuzz/`:
//! `cargo +nightly fuzz run grammar ../corpus/grammar -- -timeout=10`.

#![no_main]

#[path = "common/grammar.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
