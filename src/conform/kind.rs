//! Telling the kinds of vectors apart by their fields, and picking each kind's runner.

use super::analysis::AnalysisRunner;
use super::chat::ChatRunner;
use super::common_affix::CommonAffixRunner;
use super::diff_split::DiffSplitRunner;
use super::response_template::ResponseTemplateRunner;
use super::runner::CaseRunner;
use super::segments::SegmentsRunner;
use serde_json::Value;

/// The kinds of conformance vectors (see `shared/cases/README.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CaseKind {
    /// `{a, b, prefix, left, right, suffix}`: the diff split.
    DiffSplit,
    /// `{input, segments}`: marker segmentation.
    Segments,
    /// `{fn, full, left, right, result}`: `until_common_prefix` / `after_common_suffix`.
    CommonAffix,
    /// `{template, request, output, expected}`: parsing model output for a chat template.
    Chat,
    /// `{kind, template, ...}`: Hugging Face response templates, and `{kind: unit_*, input,
    /// expected}`: their schema-driven coercion units.
    ResponseTemplate,
    /// `{template, production_handler, analysis}`: llama.cpp's template analysis.
    Analysis,
}

impl CaseKind {
    /// A short human name.
    pub fn name(self) -> &'static str {
        match self {
            CaseKind::DiffSplit => "diff-split",
            CaseKind::Segments => "segments",
            CaseKind::CommonAffix => "common-affix",
            CaseKind::Chat => "chat",
            CaseKind::ResponseTemplate => "response-template",
            CaseKind::Analysis => "analysis",
        }
    }

    /// Recognises the kind of `case` by the fields it has.
    pub fn detect(case: &Value) -> Option<CaseKind> {
        let has_all = |fields: &[&str]| fields.iter().all(|field| case.get(field).is_some());
        if has_all(&["a", "b", "prefix", "left", "right", "suffix"]) {
            Some(CaseKind::DiffSplit)
        } else if has_all(&["input", "segments"]) {
            Some(CaseKind::Segments)
        } else if has_all(&["fn", "full", "left", "right", "result"]) {
            Some(CaseKind::CommonAffix)
        } else if has_all(&["template", "request", "output", "expected"]) {
            Some(CaseKind::Chat)
        } else if has_all(&["template", "production_handler", "analysis"]) {
            Some(CaseKind::Analysis)
        } else if has_all(&["kind", "template"]) || has_all(&["kind", "input", "expected"]) {
            Some(CaseKind::ResponseTemplate)
        } else {
            None
        }
    }

    /// The runner for this kind.
    pub fn runner(self) -> &'static dyn CaseRunner {
        match self {
            CaseKind::DiffSplit => &DiffSplitRunner,
            CaseKind::Segments => &SegmentsRunner,
            CaseKind::CommonAffix => &CommonAffixRunner,
            CaseKind::Chat => &ChatRunner,
            CaseKind::ResponseTemplate => &ResponseTemplateRunner,
            CaseKind::Analysis => &AnalysisRunner,
        }
    }
}
