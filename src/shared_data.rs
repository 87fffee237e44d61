//! Locating the read-only `shared/` directory that sits beside a checkout (`../shared`): the
//! reference specs, real chat templates, conformance vectors and benchmark inputs.
//!
//! Tests and the CLI read that data in place; nothing from it is copied into the repository.
//! `CHATPARSE_SHARED` overrides the location.

use std::path::{Path, PathBuf};

/// The environment variable that overrides where `shared/` is looked for.
pub const SHARED_ENV: &str = "CHATPARSE_SHARED";

/// Returns the `shared/` directory if it exists: `$CHATPARSE_SHARED`, else `../shared` next to
/// the crate root, else `../shared` next to the current directory.
pub fn shared_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(SHARED_ENV) {
        let dir = PathBuf::from(dir);
        return dir.is_dir().then_some(dir);
    }
    let beside_crate = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if beside_crate.is_dir() {
        return Some(beside_crate);
    }
    let beside_cwd = PathBuf::from("../shared");
    beside_cwd.is_dir().then_some(beside_cwd)
}

/// Returns `shared/<relative>` if `shared/` exists and the path inside it does too.
pub fn shared_path(relative: &str) -> Option<PathBuf> {
    let path = shared_dir()?.join(relative);
    path.exists().then_some(path)
}

/// For tests: returns `shared/<relative>`, or prints a notice that the test is skipped and
/// returns `None` when the data is absent.
pub fn shared_path_or_skip(relative: &str, test: &str) -> Option<PathBuf> {
    let found = shared_path(relative);
    if found.is_none() {
        eprintln!(
            "NOTICE: skipping {test}: shared/{relative} not found (set {SHARED_ENV} or place \
             shared/ beside the checkout)"
        );
    }
    found
}
