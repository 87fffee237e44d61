//! Arbitrary grammar + input: no panic, and the engine invariants hold — (1) a prefix of an
//! input that parses never fails in partial mode, (2) feeding in chunks equals one shot.
//!
//! The body is `common/peg.rs`, shared with the regression replay.

#![no_main]

#[path = "common/peg.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
