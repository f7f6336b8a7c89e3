//! Errors of the permissions module.

use thiserror::Error;

/// A malformed permission rule.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid permission rule `{rule}`: {reason}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong with it.
    pub reason: String,
}

impl RuleError {
    pub(crate) fn new(rule: &str, reason: impl Into<String>) -> Self {
        RuleError {
            rule: rule.to_string(),
            reason: reason.into(),
        }
    }
}

/// Errors raised by the permission engine and its configuration.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PermissionError {
    /// A mode name that is not one of Tascer's.
    #[error(
        "unknown permission mode `{0}` (expected default, acceptEdits, plan, bypassPermissions, dontAsk or auto)"
    )]
    UnknownMode(String),
    /// `bypassPermissions` was requested but settings disable it.
    #[error(
        "Cannot set permission mode to bypassPermissions because it is disabled by settings or configuration"
    )]
    BypassDisabled,
    /// A rule failed to parse.
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// A command rule's example does not behave as declared.
    #[error("command rule `{rule}`: example `{example}` {problem}")]
    Example {
        /// The rule's pattern.
        rule: String,
        /// The failing example command.
        example: String,
        /// What went wrong (`should match but does not`, …).
        problem: String,
    },
    /// A policy configuration could not be read.
    #[error("policy config {origin}: {message}")]
    Config {
        /// File name or `inline`.
        origin: String,
        /// What went wrong.
        message: String,
    },
}

impl From<tascer_core::UnknownPermissionMode> for PermissionError {
    fn from(err: tascer_core::UnknownPermissionMode) -> Self {
        PermissionError::UnknownMode(err.0)
    }
}
