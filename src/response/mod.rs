//! (response: module under construction)
