//! The one comparison mechanism of the analysis: render a base scenario and a modified copy,
//! and diff-split the two renders.

use std::cell::Cell;

use crate::diff::{diff_split, DiffSplit};
use crate::template::{ChatTemplate, TemplateError};

use super::scenario::Scenario;

/// Renders scenarios with one template and counts the renders.
#[derive(Debug)]
pub struct Renderer<'t> {
    template: &'t ChatTemplate,
    renders: Cell<u32>,
}

impl<'t> Renderer<'t> {
    /// A renderer for `template`.
    pub fn new(template: &'t ChatTemplate) -> Renderer<'t> {
        Renderer {
            template,
            renders: Cell::new(0),
        }
    }

    /// Renders `scenario`.
    pub fn render(&self, scenario: &Scenario) -> Result<String, TemplateError> {
        self.renders.set(self.renders.get() + 1);
        self.template.render(&scenario.to_input())
    }

    /// How many renders ran so far.
    pub fn renders(&self) -> u32 {
        self.renders.get()
    }
}

/// Two renders of a scenario and its modified copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// The render of the base scenario.
    pub a: String,
    /// The render of the modified scenario.
    pub b: String,
}

impl Comparison {
    /// The diff split of the two renders (prefix, left from `a`, right from `b`, suffix).
    pub fn split(&self) -> DiffSplit<'_> {
        diff_split(&self.a, &self.b)
    }
}

/// Renders `base` and a copy of it changed by `modify`, and returns both renders.
pub fn compare(
    renderer: &Renderer<'_>,
    base: &Scenario,
    modify: impl FnOnce(&mut Scenario),
) -> Result<Comparison, TemplateError> {
    let mut changed = base.clone();
    modify(&mut changed);
    Ok(Comparison {
        a: renderer.render(base)?,
        b: renderer.render(&changed)?,
    })
}
