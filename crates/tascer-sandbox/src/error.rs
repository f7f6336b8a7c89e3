//! [`SandboxError`]: why the sandbox could not be entered.

use std::path::PathBuf;

/// Why a command could not be started under the sandbox.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The kernel lacks a feature the policy needs and the policy says to
    /// refuse rather than run unconfined.
    #[error("the OS sandbox is unavailable: {0}")]
    Unavailable(String),
    /// Landlock refused the ruleset.
    #[error("cannot apply the Landlock file-system rules: {0}")]
    Landlock(String),
    /// The seccomp filter could not be built or loaded.
    #[error("cannot apply the seccomp system-call filter: {0}")]
    Seccomp(String),
    /// The user or mount namespace could not be set up.
    #[error("cannot set up the sandbox's namespace: {0}")]
    Namespace(String),
    /// The policy is malformed.
    #[error("invalid sandbox policy: {0}")]
    Policy(String),
    /// The command could not be executed.
    #[error("cannot execute {program}: {source}")]
    Exec {
        /// The program.
        program: PathBuf,
        /// What `execve` said.
        source: std::io::Error,
    },
    /// No command was given.
    #[error("no command to run (usage: tascer sandbox [OPTIONS] -- CMD ARGS…)")]
    NoCommand,
}
