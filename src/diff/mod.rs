//! (diff: module under construction)
