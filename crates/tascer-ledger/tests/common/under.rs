//! The stores under test: a fresh SQLite file or PostgreSQL database
//! ([`Under`]), and [`both!`], which runs one test body against each.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use tascer_core::{Message, UserContent, UserMessage};
use tascer_ledger::{Ledger, SigningKey, VerifyReport};
use tascer_store::{
    Backend, BackendKind, NewSession, PgBackend, PgOptions, SessionStore, SqliteBackend,
};
use tascer_testkit::postgres::PgServer;

/// A fresh store of one kind, and the means to reach around it.
pub struct Under {
    /// SQLite or PostgreSQL.
    pub kind: BackendKind,
    /// A home for evidence files (and the SQLite file).
    pub home: tempfile::TempDir,
    /// SQLite: the file. PostgreSQL: the database URL.
    pub target: String,
    /// PostgreSQL: the server and database name, for raw SQL.
    pub pg: Option<(&'static PgServer, String)>,
}

impl Under {
    /// A fresh SQLite file in a temporary home.
    pub fn sqlite() -> Under {
        let home = tempfile::tempdir().unwrap();
        let target = home.path().join("tascer.db").display().to_string();
        Under {
            kind: BackendKind::Sqlite,
            home,
            target,
            pg: None,
        }
    }

    /// A fresh database of the shared PostgreSQL server for `test`;
    /// `None` when PostgreSQL is not installed.
    pub fn postgres(test: &str) -> Option<Under> {
        let server = PgServer::shared(test)?;
        let url = server.fresh_database(test).unwrap();
        let db = url.rsplit('/').next().unwrap().to_string();
        Some(Under {
            kind: BackendKind::Postgres,
            home: tempfile::tempdir().unwrap(),
            target: url,
            pg: Some((server, db)),
        })
    }

    /// A new backend on the store: its own connection(s), as another
    /// process would have.
    pub fn open(&self) -> Arc<dyn Backend> {
        match self.kind {
            BackendKind::Sqlite => Arc::new(SqliteBackend::open(&self.target).unwrap()),
            BackendKind::Postgres => Arc::new(PgBackend::open_with(&self.target, quick()).unwrap()),
        }
    }

    /// A ledger over a new backend, signed with `key` when given.
    pub fn ledger(&self, key: Option<SigningKey>) -> Ledger {
        Ledger::with_backend(self.open(), self.home.path().join("evidence"), key)
    }

    /// A session store over a new backend.
    pub fn sessions(&self) -> SessionStore {
        SessionStore::with_backend(self.open())
    }

    /// Runs raw SQL as the owner, around the store (PostgreSQL: with the
    /// append-only triggers off for this transaction, as a DBA could).
    pub fn tamper(&self, sql: &str) {
        match &self.pg {
            None => rusqlite::Connection::open(&self.target)
                .unwrap()
                .execute_batch(sql)
                .unwrap(),
            Some((server, db)) => {
                server
                    .psql(
                        db,
                        &format!(
                            "BEGIN; SET LOCAL session_replication_role = replica; {sql}; COMMIT;"
                        ),
                    )
                    .unwrap();
            }
        }
    }
}

/// Short retries, so a test of a failure does not wait 20 s.
pub fn quick() -> PgOptions {
    PgOptions {
        retry_for: Duration::from_secs(5),
        pool_size: 4,
        connect_timeout: Duration::from_secs(2),
    }
}

/// Runs a body against both backends: `NAME::sqlite` and `NAME::postgres`
/// (the latter prints `SKIPPED` when PostgreSQL is not installed).
#[macro_export]
macro_rules! both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn sqlite() {
                super::$name($crate::common::under::Under::sqlite());
            }
            #[test]
            fn postgres() {
                if let Some(under) = $crate::common::under::Under::postgres(stringify!($name)) {
                    super::$name(under);
                }
            }
        }
    )*};
}

/// The session the tests record.
pub const S: &str = "session-1";

/// The PostgreSQL store for `test`; `None` (the test is skipped) when
/// PostgreSQL is not installed.
pub fn pg(test: &str) -> Option<Under> {
    Under::postgres(test)
}

/// A user message with `text`.
pub fn user(text: &str, session: &str) -> Message {
    Message::User(UserMessage::new(UserContent::Text(text.into()), session))
}

/// A new session row in `cwd`, model `m`.
pub fn new_session<'a>(id: &'a str, cwd: &'a str) -> NewSession<'a> {
    NewSession {
        id,
        cwd,
        model: "m",
        forked_from: None,
    }
}

/// Verifies the session [`S`].
pub fn verify(ledger: &Ledger) -> VerifyReport {
    ledger.verify(S, None).unwrap()
}
