//! The one comparison mechanism of the analysis: render a base scenario and a modified copy,
//! and diff-split the two renders.

use std::cell::{Cell, RefCell};

use crate::diff::{diff_split, DiffSplit};
use crate::template::{ChatTemplate, TemplateError};

use super::scenario::Scenario;

/// Renders scenarios with one template, remembers the renders (comparisons share their base
/// scenarios) and counts them.
#[derive(Debug)]
pub struct Renderer<'t> {
    template: &'t ChatTemplate,
    renders: Cell<u32>,
    memo: RefCell<Vec<(Scenario, Result<String, TemplateError>)>>,
}

impl<'t> Renderer<'t> {
    /// A renderer for `template`.
    pub fn new(template: &'t ChatTemplate) -> Renderer<'t> {
        Renderer {
            template,
            renders: Cell::new(0),
            memo: RefCell::new(Vec::new()),
        }
    }

    /// Renders `scenario` (once: a repeated scenario returns the remembered result). When the
    /// template raises on it, an equivalent input stands in (see
    /// [`ChatTemplate::render_or_equivalent`]).
    pub fn render(&self, scenario: &Scenario) -> Result<String, TemplateError> {
        if let Some((_, found)) = self.memo.borrow().iter().find(|(s, _)| s == scenario) {
            return found.clone();
        }
        self.renders.set(self.renders.get() + 1);
        let result = self.template.render_or_equivalent(&scenario.to_input());
        self.memo
            .borrow_mut()
            .push((scenario.clone(), result.clone()));
        result
    }

    /// How many distinct renders ran so far.
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

/// Renders `base` and a copy of it changed by `modify`, and returns both renders (diff-split
/// them with [`Comparison::split`]).
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
