//! What went wrong talking to PostgreSQL, and whether trying again can
//! help.

use deadpool_postgres::PoolError;
use tokio_postgres::error::SqlState;

use crate::error::StoreError;

/// One failed attempt of an operation.
#[derive(Debug)]
pub(crate) enum Failure {
    /// No connection could be had from the pool.
    Pool(PoolError),
    /// A statement failed.
    Pg(tokio_postgres::Error),
    /// The operation itself refused (not found, already exists, the
    /// ledger's builder failed): returned as it is, never retried.
    Store(StoreError),
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Self {
        Failure::Pg(e)
    }
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Failure::Store(e)
    }
}

impl Failure {
    /// True when the same operation may succeed if tried again: the
    /// server was unreachable or restarting, the connection dropped, or
    /// the transaction lost a serialization conflict or a deadlock.
    pub fn is_transient(&self) -> bool {
        match self {
            Failure::Pool(e) => is_transient_pool(e),
            Failure::Pg(e) => is_transient(e),
            Failure::Store(_) => false,
        }
    }

    /// The error as a sentence.
    pub fn detail(&self) -> String {
        match self {
            Failure::Pool(PoolError::Backend(e)) | Failure::Pg(e) => describe(e),
            Failure::Pool(PoolError::Timeout(_)) => {
                "timed out waiting for a connection to the server".to_string()
            }
            Failure::Pool(other) => other.to_string(),
            Failure::Store(e) => e.to_string(),
        }
    }
}

/// SQLSTATEs worth another attempt.
const TRANSIENT: &[SqlState] = &[
    SqlState::T_R_SERIALIZATION_FAILURE,
    SqlState::T_R_DEADLOCK_DETECTED,
    SqlState::ADMIN_SHUTDOWN,
    SqlState::CRASH_SHUTDOWN,
    SqlState::CANNOT_CONNECT_NOW,
    SqlState::CONNECTION_EXCEPTION,
    SqlState::CONNECTION_DOES_NOT_EXIST,
    SqlState::CONNECTION_FAILURE,
    SqlState::SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION,
    SqlState::TOO_MANY_CONNECTIONS,
];

/// True for errors that mean "the server or the connection is not there
/// right now" or "the transaction lost a race" (see [`TRANSIENT`]): worth
/// trying again.
pub fn is_transient(e: &tokio_postgres::Error) -> bool {
    if let Some(code) = e.code() {
        return TRANSIENT.contains(code);
    }
    // No SQLSTATE: the driver's own errors. A closed connection, an I/O
    // error (refused, reset) or a connect timeout is transient; a bad
    // parameter or an authentication setup error is not.
    e.is_closed()
        || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
        || e.to_string() == "timeout waiting for server"
}

/// True when a connection could not be had from the pool for a reason
/// that may pass: it timed out waiting, or opening one failed transiently
/// (see [`is_transient`]).
pub fn is_transient_pool(e: &PoolError) -> bool {
    match e {
        PoolError::Timeout(_) => true,
        PoolError::Backend(e) => is_transient(e),
        _ => false,
    }
}

/// The error as a sentence: the server's message and SQLSTATE for a
/// database error, the driver's message and cause otherwise.
pub fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut text = format!(
            "{}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        );
        if let Some(detail) = db.detail() {
            text.push_str(&format!("; {detail}"));
        }
        return text;
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}
