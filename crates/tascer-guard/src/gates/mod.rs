//! Validation gates: checks that run before a tool call (pre-gates, which
//! may block it) and after it (post-gates, which may mark it failed).
//!
//! - [`Gate`] is the trait a gate implements; [`GateRegistry`] holds the
//!   built-in gates by name plus user gates (types or closures).
//! - [`ValidationConfig`] says which gates run for which tool, read from the
//!   settings file's `validation` value.
//! - [`GateRunner`] runs the gates of one phase with a per-gate timeout and
//!   returns one [`GateResult`] per gate; [`GateVerdict`] sums them up.
//! - [`SecretScanner`] (the gitleaks rules) backs `no_secrets_leaked` and
//!   [`redact`], which keeps secrets out of stored evidence.
//!
//! See `docs/gates.md` for every gate and the configuration shape.

mod builtin;
mod config;
mod context;
mod error;
mod gate;
mod registry;
mod result;
mod runner;

pub use builtin::{
    AlwaysBlockOptions, BuiltinOptions, CommandAllowedOptions, DiffSizeOptions,
    FileProtectedOptions, SecretFinding, SecretScanner, TestsPassOptions, redact, redact_with,
};
pub use config::{EvidenceKind, PROOF_CHECK, ToolValidation, ValidationConfig};
pub use context::{GateContext, Phase};
pub use error::GateError;
pub use gate::{FnGate, Gate};
pub use registry::GateRegistry;
pub use result::{GateResult, GateVerdict};
pub use runner::GateRunner;
