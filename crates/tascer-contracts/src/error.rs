//! Errors of the contract executor.

use std::path::PathBuf;

/// What went wrong with a contract or the executor.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContractError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A contract file is not a valid contract; it was left untouched.
    #[error("{}:{line}: {message}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong and what to do.
        message: String,
    },
    /// A contract could not be written back or moved; the file on disk is
    /// either the old or the new version, never a mix.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file changed on disk between reading and writing it back.
    #[error("{} changed while its contract ran; the result was not written (rerun to retry)", path.display())]
    Changed {
        /// The file.
        path: PathBuf,
    },
    /// The lease table could not be used.
    #[error("contract lease store: {0}")]
    Lease(#[from] tascer_store::StoreError),
    /// A git command failed (worktrees, commits, merges).
    #[error("git {command}: {message}")]
    Git {
        /// The git arguments.
        command: String,
        /// Its error output.
        message: String,
    },
    /// The contractors' own provider variables (see
    /// [`CONTRACTOR_PREFIX`](crate::CONTRACTOR_PREFIX)) do not describe a
    /// usable provider.
    #[error("contractor provider (TASCER_CONTRACTOR_* variables)")]
    ContractorProvider(#[source] tascer::ModelError),
    /// No provider, or more than one, fits a role (see
    /// [`choose_provider`](crate::choose_provider)), or the one named
    /// cannot be built.
    #[error("the {role}'s provider: {message}")]
    RoleProvider {
        /// `manager` or `contractor`.
        role: &'static str,
        /// What is wrong and what to do.
        message: String,
    },
    /// Anything else, with what to do.
    #[error("{0}")]
    Other(String),
}
