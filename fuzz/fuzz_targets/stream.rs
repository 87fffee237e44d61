//! Fuzz target `stream`; the body (input encoding, checked properties) is `common/stream.rs`,
//! shared with the regression replay.
//!
//! `scripts/fuzz.sh run stream 60`, or from `fuzz/`:
//! `cargo +nightly fuzz run stream ../corpus/stream -- -dict=dict/stream.dict -timeout=10`.

#![no_main]

#[path = "common/stream.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
