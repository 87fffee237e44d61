//! (json: module under construction)
