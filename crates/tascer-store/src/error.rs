//! Store errors.

/// What can go wrong in the session store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened, or a write could not be made
    /// (contention that outlasted every retry, disk full, …).
    #[error(transparent)]
    Db(#[from] crate::db::DbError),
    /// A database opened on its own connection (the lease table) could
    /// not be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The database path.
        path: std::path::PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// The directory for a database could not be created.
    #[error("cannot create {path}: {source}")]
    CreateDir {
        /// The directory.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
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
    /// A session with this id already exists.
    #[error("a session with ID {0} already exists")]
    AlreadyExists(String),
}
