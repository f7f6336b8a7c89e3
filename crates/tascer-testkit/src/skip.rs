//! Skipping a test whose outside dependency (PostgreSQL, moto, Claude Code,
//! an official SDK) is not installed: on a developer's machine the test
//! prints a `SKIPPED` line and passes; in CI, where the set-up installs
//! everything, a missing dependency is a failure, so a broken install can
//! never pass as a green run.

/// Set (to anything but `0` or empty) by `.ci/run`: a test that would be
/// skipped fails instead.
pub const REQUIRE_DEPS_ENV: &str = "TASCER_TEST_REQUIRE_DEPS";

/// Reports that `test` cannot run because of `why` (which says how to
/// install what is missing): prints `SKIPPED: <test>: <why>`.
///
/// # Panics
///
/// When [`REQUIRE_DEPS_ENV`] is set: the dependency had to be there.
pub fn skip(test: &str, why: &str) {
    let required = std::env::var(REQUIRE_DEPS_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
    assert!(
        !required,
        "{test}: {why} ({REQUIRE_DEPS_ENV} is set: the test set-up must install it)"
    );
    println!("SKIPPED: {test}: {why}");
}
