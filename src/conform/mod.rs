//! (conform: module under construction)
