//! Why a replay could not run.

/// Why `tascer replay` could not replay a session (a divergence is not an
/// error: it is in the report).
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// No session with this id is in the store or the ledger.
    #[error("no session {id} is recorded in {home}")]
    UnknownSession {
        /// The id asked for.
        id: String,
        /// The Tascer home looked in.
        home: String,
    },
    /// The session has no model answer in the store: nothing to replay.
    #[error(
        "session {0} has no recorded model answer (no assistant message in the store), so there is nothing to replay"
    )]
    NoModelRecord(String),
    /// The starting tree cannot be rebuilt (or the given one used).
    #[error("{0}")]
    Tree(String),
    /// Options that cannot work together.
    #[error("{0}")]
    Invalid(String),
    /// The home's ledger could not be opened.
    #[error(transparent)]
    Audit(#[from] tascer_ledger::AuditError),
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] tascer_ledger::LedgerError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] tascer_store::StoreError),
    /// The replayed session could not start or run.
    #[error(transparent)]
    Session(#[from] crate::error::Error),
    /// The live model of `--fork` could not be set up.
    #[error(transparent)]
    Model(#[from] tascer_model::ModelError),
}
