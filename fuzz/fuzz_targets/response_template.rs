//! Fuzzes response templates: an arbitrary template (structured, or raw JSON) + prefix + text +
//! chunking. Checks that nothing panics and that streaming the text in pieces gives the same
//! message (or the same error phase) and the same merged events as feeding it at once.
//!
//! Input formats:
//! - starts with `{`: `template JSON` NUL `prefix` NUL `text` NUL `cut bytes` (the seeds in
//!   `corpus/response_template/` use this one);
//! - otherwise: a structured template built with `arbitrary`.
//!
//! The body is `common/response_template.rs`, shared with the regression replay.

#![no_main]

#[path = "common/response_template.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
