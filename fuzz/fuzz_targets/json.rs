//! Arbitrary bytes through the JSON / Python-dict scanner, both flavours, partial and full:
//! no panic; agrees with serde_json on complete input (JSON flavour); chunked equals one
//! shot; prefixes of accepted documents are never failures; healing yields valid JSON.
//!
//! The body is `common/json.rs`, shared with the regression replay.

#![no_main]

#[path = "common/json.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
