//! The queue's database: a connection pool (deadpool-postgres on
//! tokio-postgres, no TLS), the schema applied at connect under an
//! advisory lock, and retries of transient failures.

use std::future::Future;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Config, NoTls};

use crate::error::{FleetError, Result};

/// The schema, in order: (version, SQL).
const MIGRATIONS: &[(i32, &str)] = &[(1, include_str!("../migrations/0001_contract_queue.sql"))];

/// Key of the advisory lock taken while the schema is applied.
const SCHEMA_LOCK: i64 = 0x7461_7363_6572_7131;

/// Tries of an operation that keeps failing transiently.
const TRIES: u32 = 8;

/// A pool of connections to the queue's database.
#[derive(Clone)]
pub struct Db {
    pool: Pool,
    server: String,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("server", &self.server).finish()
    }
}

/// Why one try failed, and whether trying again may help.
#[derive(Debug)]
pub(crate) struct Failure {
    transient: bool,
    message: String,
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Self {
        let transient = match e.code() {
            // No SQLSTATE: the connection failed, not the statement.
            None => true,
            Some(code) => {
                [
                    SqlState::T_R_SERIALIZATION_FAILURE,
                    SqlState::T_R_DEADLOCK_DETECTED,
                    SqlState::ADMIN_SHUTDOWN,
                    SqlState::CRASH_SHUTDOWN,
                    SqlState::CANNOT_CONNECT_NOW,
                    SqlState::TOO_MANY_CONNECTIONS,
                ]
                .contains(code)
                    || code.code().starts_with("08")
            }
        };
        let message = match e.as_db_error() {
            Some(db) => format!("{} ({})", db.message(), db.code().code()),
            None => e.to_string(),
        };
        Failure { transient, message }
    }
}

impl From<deadpool_postgres::PoolError> for Failure {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        match e {
            deadpool_postgres::PoolError::Backend(e) => {
                let mut f = Failure::from(e);
                f.message = format!("cannot connect: {}", f.message);
                f
            }
            deadpool_postgres::PoolError::Timeout(_) => Failure {
                transient: true,
                message: format!("cannot connect: {e}"),
            },
            other => Failure {
                transient: false,
                message: other.to_string(),
            },
        }
    }
}

impl Failure {
    /// A failure that trying again will not fix.
    pub(crate) fn permanent(message: impl Into<String>) -> Self {
        Failure {
            transient: false,
            message: message.into(),
        }
    }
}

/// `postgres://user@host:port/db` of a configuration: the server, never
/// the password.
fn display_server(cfg: &Config) -> String {
    let user = cfg.get_user().unwrap_or("");
    let host = match cfg.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_string(),
    };
    let port = cfg.get_ports().first().copied().unwrap_or(5432);
    let db = cfg.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{host}:{port}/{db}")
}

impl Db {
    /// Connects to the database at `url` (`postgres://…`) with a pool of up
    /// to `max_connections`, and applies the queue's schema (under an
    /// advisory lock, so workers starting together do it once).
    pub async fn connect(url: &str, max_connections: usize) -> Result<Db> {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(FleetError::BadUrl(
                "it does not start with postgres://".into(),
            ));
        }
        let cfg: Config = url
            .parse()
            .map_err(|e: tokio_postgres::Error| FleetError::BadUrl(e.to_string()))?;
        let server = display_server(&cfg);
        let manager = Manager::from_config(
            cfg,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(max_connections.max(1))
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(Duration::from_secs(10)))
            .wait_timeout(Some(Duration::from_secs(30)))
            .build()
            .map_err(|e| FleetError::Other(format!("cannot build the connection pool: {e}")))?;
        let db = Db { pool, server };
        db.retry("apply the queue schema", || db.migrate()).await?;
        Ok(db)
    }

    /// `postgres://user@host:port/db` (no password).
    pub fn server(&self) -> &str {
        &self.server
    }

    /// A pooled connection.
    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Client, Failure> {
        Ok(self.pool.get().await?)
    }

    /// Runs `op` until it succeeds, fails permanently, or has failed
    /// transiently [`TRIES`] times (backing off from 100 ms to 2 s).
    pub(crate) async fn retry<T, F, Fut>(&self, what: &str, mut op: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let mut delay = Duration::from_millis(100);
        let mut tries = 0;
        loop {
            tries += 1;
            match op().await {
                Ok(v) => return Ok(v),
                Err(f) if f.transient && tries < TRIES => {
                    tracing::debug!("{what}: {} (try {tries}, retrying)", f.message);
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(2));
                }
                Err(f) => {
                    let after = if f.transient {
                        format!(" (after {tries} tries)")
                    } else {
                        String::new()
                    };
                    return Err(FleetError::Db {
                        server: self.server.clone(),
                        message: format!("cannot {what}: {}{after}", f.message),
                    });
                }
            }
        }
    }

    /// Applies the migrations this build knows and the database lacks.
    async fn migrate(&self) -> Result<(), Failure> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .await?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS tascer_queue_migrations (
                 version INTEGER PRIMARY KEY,
                 applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
        )
        .await?;
        let applied: Vec<i32> = tx
            .query("SELECT version FROM tascer_queue_migrations", &[])
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let known = MIGRATIONS.iter().map(|(v, _)| *v).max().unwrap_or(0);
        if let Some(newer) = applied.iter().copied().filter(|v| *v > known).max() {
            return Err(Failure::permanent(format!(
                "the queue's schema is at version {newer}, newer than this Tascer knows ({known}); \
                 upgrade Tascer on this host"
            )));
        }
        for (version, sql) in MIGRATIONS {
            if applied.contains(version) {
                continue;
            }
            tx.batch_execute(sql).await?;
            tx.execute(
                "INSERT INTO tascer_queue_migrations (version) VALUES ($1)",
                &[version],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_server_is_shown_without_the_password() {
        let cfg: Config = "postgres://bob:s3cret@db.example:6543/fleet"
            .parse()
            .unwrap();
        let shown = display_server(&cfg);
        assert_eq!(shown, "postgres://bob@db.example:6543/fleet");
        assert!(!shown.contains("s3cret"));
    }
}
