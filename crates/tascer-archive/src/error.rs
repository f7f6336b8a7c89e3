//! Errors of archive operations.

use std::path::PathBuf;

use thiserror::Error;

/// Why an archive operation failed (not why an archive fails verification:
/// that is a [`VerifyProblem`](crate::VerifyProblem) in the report).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ArchiveError {
    /// A `--to` / archive URL that names no supported target.
    #[error("bad archive location {url:?}: {detail} (use s3://BUCKET/PREFIX or a directory path)")]
    BadUrl {
        /// What was given.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// A local file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done ("cannot read", …).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The object store refused or failed an operation.
    #[error("object store: {0}")]
    Store(#[from] object_store::Error),
    /// The ledger could not be read or verified.
    #[error("ledger: {0}")]
    Ledger(#[from] tascer_ledger::LedgerError),
    /// The session's ledger is broken: Tascer does not archive it as if it
    /// were intact.
    #[error("refusing to archive session {session}: its ledger does not verify: {detail}")]
    BrokenLedger {
        /// Session id.
        session: String,
        /// The first break.
        detail: String,
    },
    /// The working directory is larger than the configured limit.
    #[error(
        "the working directory {dir} holds more than {limit} bytes of files to archive; \
         raise the limit (archive.maxTotalBytes / --max-total-bytes) or add exclusions"
    )]
    TooLarge {
        /// The directory.
        dir: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
    /// No archive (no manifest) at the location.
    #[error("no archive at {0}: it has no manifest.json (an interrupted upload leaves none)")]
    NoManifest(String),
    /// A manifest that cannot be read at all.
    #[error("manifest {url}: {detail}")]
    BadManifest {
        /// Where it is.
        url: String,
        /// What is wrong.
        detail: String,
    },
    /// The Tascer home has no signing key: archives must be signed.
    #[error("no signing key at {path}: run `tascer keys generate` first (archives are signed)")]
    NoKey {
        /// Where the key was looked for.
        path: PathBuf,
    },
    /// The archive was uploaded but does not verify from the destination.
    #[error("the archive at {url} does not verify after upload: {detail}")]
    NotVerified {
        /// The archive's URL.
        url: String,
        /// What is wrong.
        detail: String,
    },
    /// JSON (de)serialization failed.
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Walking the working directory failed.
    #[error("cannot walk the working directory: {0}")]
    Walk(#[from] ignore::Error),
}

/// Shorthand result type.
pub type Result<T, E = ArchiveError> = std::result::Result<T, E>;

/// A closure turning an I/O error into [`ArchiveError::Io`].
pub(crate) fn io_err(
    action: &'static str,
    path: impl Into<PathBuf>,
) -> impl FnOnce(std::io::Error) -> ArchiveError {
    let path = path.into();
    move |source| ArchiveError::Io {
        action,
        path,
        source,
    }
}
