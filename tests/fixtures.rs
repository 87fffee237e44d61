//! The fixture harness: every case of every model folder under `fixtures/` is a test named
//! `fixtures::<model>/<case>.txt`; every folder's analysis snapshot is a test named
//! `analysis::<model>/model.json`; `known_failures::known_failures.txt` checks the list.
//!
//! `CHATPARSE_BLESS=1 cargo test --test fixtures` rewrites expectations (printing each file);
//! a normal run never writes. See `fixtures/README.md`.

use std::path::Path;

use chatparse::fixtures::check::{check_known_list, Verdict};
use chatparse::fixtures::{check_analysis, check_case, Bless};

/// A failure printed as is (datatest-stable prints errors with `Debug`).
struct Failure(String);

impl std::fmt::Debug for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

fn report(path: &Path, verdict: Verdict) -> datatest_stable::Result<()> {
    match verdict {
        Verdict::Passed => {}
        Verdict::KnownFailure(reason) => {
            eprintln!("{}: known failure ({reason})", path.display())
        }
        Verdict::Skipped(why) => eprintln!("{}: skipped: {why}", path.display()),
        Verdict::Blessed => eprintln!("{}: blessed", path.display()),
    }
    Ok(())
}

fn fixtures(path: &Path) -> datatest_stable::Result<()> {
    report(path, check_case(path, Bless::from_env()).map_err(Failure)?)
}

fn analysis(path: &Path) -> datatest_stable::Result<()> {
    let dir = path.parent().ok_or("model.json must be in a folder")?;
    report(
        path,
        check_analysis(dir, Bless::from_env()).map_err(Failure)?,
    )
}

fn known_failures(path: &Path) -> datatest_stable::Result<()> {
    let corpus = path.parent().ok_or("the list must be in the corpus")?;
    Ok(check_known_list(corpus).map_err(Failure)?)
}

datatest_stable::harness! {
    { test = fixtures, root = "fixtures", pattern = r"^[^/]+/[^/]+\.txt$" },
    { test = analysis, root = "fixtures", pattern = r"^[^/]+/model\.json$" },
    { test = known_failures, root = "fixtures", pattern = r"^known_failures\.txt$" },
}
