//! (peg: module under construction)
