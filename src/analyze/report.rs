//! Human-readable report.
