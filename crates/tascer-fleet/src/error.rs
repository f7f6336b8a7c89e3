//! Errors of the queue and the workers.

use tascer_contracts::ContractError;

/// What went wrong with the queue or a worker.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// The queue URL cannot be used.
    #[error(
        "the queue URL is not usable ({0}); expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
    )]
    BadUrl(String),
    /// The database refused or failed a request (the server is named,
    /// never the password).
    #[error("contract queue at {server}: {message}")]
    Db {
        /// `postgres://user@host:port/db`.
        server: String,
        /// What failed.
        message: String,
    },
    /// Contracts in the directory to enqueue are not valid; nothing was
    /// enqueued.
    #[error(
        "{} malformed contract(s), nothing was enqueued (fix them and enqueue again):\n{}",
        .0.len(),
        .0.iter().map(|e| format!("  {e}")).collect::<Vec<_>>().join("\n")
    )]
    Malformed(Vec<String>),
    /// A contract, git or worktree error.
    #[error(transparent)]
    Contract(#[from] ContractError),
    /// Anything else, with what to do.
    #[error("{0}")]
    Other(String),
}

/// The crate's result type.
pub type Result<T, E = FleetError> = std::result::Result<T, E>;
