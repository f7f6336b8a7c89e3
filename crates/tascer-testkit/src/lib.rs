//! Test fixtures for Tascer.
//!
//! - The scripted mock model server: everything of `tascer-mock`
//!   ([`MockServer`], [`Scenario`], [`Turn`], [`Fault`], [`Route`], …) is
//!   re-exported here, so tests name one crate.
//! - [`postgres`]: a PostgreSQL server for the shared-store and queue tests.
//! - [`s3`]: an S3-compatible server (moto) for the archive tests.
//! - [`skip`]: what a test does when an outside dependency is missing
//!   (skips, or fails when [`REQUIRE_DEPS_ENV`] is set, as in CI).

pub mod postgres;
pub mod s3;
mod skip;

pub use skip::{REQUIRE_DEPS_ENV, skip};
pub use tascer_mock::*;
