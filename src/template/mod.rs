//! (template: module under construction)
