//! Store errors.

/// An error of a [`BatchBuilder`](crate::BatchBuilder), handed back by
/// [`StoreError::Build`] as it was.
pub type BuildError = Box<dyn std::error::Error + Send + Sync>;

/// What can go wrong in the session store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened, or a write could not be made
    /// (contention that outlasted every retry, disk full, …).
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
    /// A query failed.
    #[error("session store query failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A stored message is not valid JSON for its type.
    #[error("stored message {seq} of session {session_id} is corrupt: {source}")]
    Corrupt {
        /// Session id.
        session_id: String,
        /// Message sequence number.
        seq: i64,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// A message could not be serialized.
    #[error("cannot serialize message: {0}")]
    Serialize(#[from] serde_json::Error),
    /// No session has this id.
    #[error("No conversation found with session ID: {0}")]
    NotFound(String),
    /// The session has no message with this uuid (a `resume_session_at`
    /// point); the text is Claude Code's.
    #[error("No message found with message.uuid of: {0}")]
    NoSuchMessage(String),
    /// A session with this id already exists.
    #[error("a session with ID {0} already exists")]
    AlreadyExists(String),
    /// The ledger's batch builder failed (the error is the ledger's own).
    #[error("cannot build ledger entries: {0}")]
    Build(BuildError),
    /// The store setting (`TASCER_STORE`, or `store` in the home's
    /// settings) is not one Tascer can use.
    #[error("{0}")]
    Config(String),
    /// A PostgreSQL operation failed: the server stayed unreachable (or
    /// kept failing the transaction) through every retry, or refused it.
    #[error(
        "PostgreSQL store {location}: cannot {what} after {attempts} attempt(s) over \
         {waited_ms} ms: {detail}{advice}",
        advice = if *transient {
            "; check that the server is up and reachable (TASCER_STORE_RETRY_MS sets how long \
             Tascer keeps retrying)"
        } else {
            ""
        }
    )]
    Postgres {
        /// The server and database (`postgres://user@host:port/db`, never
        /// the password).
        location: String,
        /// What was being done ("append a message", …).
        what: &'static str,
        /// Attempts made.
        attempts: u32,
        /// Time spent trying, milliseconds.
        waited_ms: u64,
        /// The last error, as the server or the driver said it.
        detail: String,
        /// True when the last error was one that is retried (the server
        /// unreachable, a dropped connection, …).
        transient: bool,
    },
    /// The PostgreSQL store's schema cannot be used by this build.
    #[error("PostgreSQL store {location}: {detail}")]
    Schema {
        /// The server and database.
        location: String,
        /// What is wrong and what to do.
        detail: String,
    },
}
