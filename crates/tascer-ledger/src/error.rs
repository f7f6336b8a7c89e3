//! Ledger errors.

use std::path::PathBuf;

use crate::jcs::JcsError;

/// What can go wrong in the ledger.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The database could not be opened, or a write could not be made
    /// (contention that outlasted every retry, disk full, …).
    #[error(transparent)]
    Db(#[from] tascer_store::DbError),
    /// The session store could not be read.
    #[error(transparent)]
    Store(#[from] tascer_store::StoreError),
    /// A file or directory could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done ("cannot write", "cannot read", …).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A value has no canonical JSON form (NaN, huge integer, …).
    #[error("cannot canonicalize: {0}")]
    Canonical(#[from] JcsError),
    /// JSON could not be read or written.
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A stored row is not a valid ledger entry.
    #[error("stored ledger entry {seq} of session {session_id} is corrupt: {detail}")]
    Corrupt {
        /// Session id.
        session_id: String,
        /// Entry sequence number.
        seq: i64,
        /// What is wrong.
        detail: String,
    },
    /// A key file exists and overwriting was not asked for.
    #[error("{0} already exists; pass force to overwrite it (the old key is lost)")]
    KeyExists(PathBuf),
    /// A key could not be parsed or encoded.
    #[error("bad key {path}: {detail}")]
    Key {
        /// The key file, or a description of where the key came from.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The operation needs a signing key and the ledger has none.
    #[error(
        "no signing key configured: generate a key pair (keys/tascer-ed25519.key under the Tascer home) and open the ledger with it"
    )]
    NoSigningKey,
    /// The session has no ledger entries.
    #[error("no ledger entries for session {0}")]
    EmptySession(String),
    /// An evidence digest is not of the form `sha256:<64 hex>`.
    #[error("bad evidence digest {0:?}: expected sha256:<64 lowercase hex>")]
    BadDigest(String),
    /// An evidence file is missing.
    #[error("evidence {0} is missing")]
    EvidenceMissing(String),
    /// An evidence file's content does not match its digest.
    #[error("evidence {digest} was changed: its content now hashes to {actual}")]
    EvidenceChanged {
        /// The digest it is stored under.
        digest: String,
        /// The digest of what is there now.
        actual: String,
    },
    /// A DSSE envelope is malformed or does not verify.
    #[error("DSSE envelope rejected: {0}")]
    Dsse(String),
}

/// Shorthand for results of this crate.
pub type Result<T, E = LedgerError> = std::result::Result<T, E>;

pub(crate) fn io_err(
    action: &'static str,
    path: impl Into<PathBuf>,
) -> impl FnOnce(std::io::Error) -> LedgerError {
    let path = path.into();
    move |source| LedgerError::Io {
        action,
        path,
        source,
    }
}

/// What can go wrong opening a Tascer home's ledger to verify, report or
/// export a session ([`audit`](crate::audit)). Each message says what
/// failed; the cause (a [`LedgerError`]) is its
/// [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The home's store setting could not be read.
    #[error(transparent)]
    Store(#[from] tascer_store::StoreError),
    /// The home has no SQLite database: nothing was ever recorded there.
    #[error("no ledger database at {location} (no session has been recorded in this Tascer home)")]
    NoDatabase {
        /// Where the database was looked for.
        location: String,
    },
    /// The store exists but its ledger could not be opened.
    #[error("cannot open the ledger in {location}")]
    Open {
        /// The store (its path, or its URL without the password).
        location: String,
        /// Why.
        source: Box<LedgerError>,
    },
    /// The session has no ledger entries.
    #[error("unknown session {session}: it has no ledger entries")]
    UnknownSession {
        /// The session id asked for.
        session: String,
    },
    /// A session's entries could not be read or checked.
    #[error("session {session}")]
    Session {
        /// The session id.
        session: String,
        /// Why.
        source: Box<LedgerError>,
    },
    /// The sessions of the ledger could not be listed.
    #[error("cannot list the ledger's sessions")]
    ListSessions(#[source] Box<LedgerError>),
    /// A public key given or found in the home could not be loaded.
    #[error("cannot load the public key {}", path.display())]
    PublicKey {
        /// The key file.
        path: PathBuf,
        /// Why.
        source: Box<LedgerError>,
    },
    /// The home's private key could not be loaded.
    #[error("cannot load the key {}", path.display())]
    PrivateKey {
        /// The key file.
        path: PathBuf,
        /// Why.
        source: Box<LedgerError>,
    },
    /// An attestation was asked for but the home has no signing key.
    #[error("no signing key at {}: run `tascer keys generate` first", path.display())]
    NoSigningKey {
        /// Where the private key was looked for.
        path: PathBuf,
    },
    /// A changed file could not be hashed for an attestation.
    #[error("cannot hash {}", path.display())]
    Hash {
        /// The file.
        path: PathBuf,
        /// Why.
        source: Box<LedgerError>,
    },
    /// A report could not be turned into JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}
