//! Errors of the gates module.

use thiserror::Error;

/// What can go wrong while configuring or building gates.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum GateError {
    /// The configuration names a gate the registry does not know.
    #[error("unknown gate `{name}` (configured for {location})")]
    UnknownGate {
        /// The unknown gate name.
        name: String,
        /// Where it was configured, e.g. `defaults.pre_gates`.
        location: String,
    },
    /// The `validation` settings value does not have the documented shape.
    #[error("invalid validation settings: {0}")]
    InvalidConfig(#[from] serde_json::Error),
    /// A glob in the gate options does not compile.
    #[error("invalid glob `{glob}`: {source}")]
    InvalidGlob {
        /// The glob as written.
        glob: String,
        /// Why it failed.
        source: globset::Error,
    },
    /// The embedded secret rules could not be loaded.
    #[error("secret rules: {0}")]
    SecretRules(String),
}
