//! Format families the generic analysis misses, written as data.
//!
//! A family is a declarative [`TurnFormat`] patch selected by what the rendered template shows
//! (a marker present in a probe render), never by the template's name.

use crate::template::ChatTemplate;

use super::format::TurnFormat;

/// Adjusts `format` with what the rendered template shows. Currently a no-op hook.
pub fn refine(format: &mut TurnFormat, template: &ChatTemplate, generation_prompt: &str) {
    let _ = (format, template, generation_prompt);
}
