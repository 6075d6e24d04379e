//! The conformance data in `../shared/conformance/`, beside the repository.
//!
//! Where it is absent, a test says so on stderr, where the test harness does not
//! hide it, and passes without running; under `CI` it fails instead, so a CI run never
//! passes a suite it did not run.

use std::io::Write;
use std::path::PathBuf;

/// The path of `name` under `../shared/conformance/`, or `None` (with a visible
/// message) when it is absent and `CI` is not set.
///
/// # Panics
///
/// When it is absent and the `CI` environment variable is set.
pub fn conformance(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/conformance")
        .join(name);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{} is missing and CI is set: the conformance data must be there",
            path.display()
        );
    }
    // Straight to stderr: the harness captures `println!` and `eprintln!`, not this.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {} not found; this conformance test did not run",
        path.display()
    );
    None
}
