//! Fuzzes chat template compiling, rendering and capability probing with arbitrary template
//! text; the body (input encoding, checked properties) is `common/render_template.rs`, shared
//! with the regression replay.
//!
//! `scripts/fuzz.sh run render_template 60`, or from `fuzz/`:
//! `cargo +nightly fuzz run render_template ../corpus/render_template -- -dict=dict/render_template.dict -timeout=10`.

#![no_main]

#[path = "common/render_template.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
