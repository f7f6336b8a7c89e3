//! The queue's database: a connection pool (deadpool-postgres on
//! tokio-postgres, no TLS), the schema applied at connect under an
//! advisory lock, and retries of transient failures. What counts as
//! transient, how an error and the server are named, and the migrator are
//! the shared store's (`tascer_store::postgres`), so the queue and the
//! store behave alike (and may share a database: their tables and
//! migration records are apart).

use std::future::Future;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tascer_store::postgres::migrate::{MigrateError, migrate_schema};
use tascer_store::postgres::{Migration, Schema, describe_config, describe_error, is_transient};
use tokio_postgres::{Config, NoTls};

use crate::error::{FleetError, Result};

/// The queue's migrations, in order.
const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "contract_queue",
    sql: include_str!("../migrations/0001_contract_queue.sql"),
}];

/// The queue's schema: its own migrations table and advisory lock, apart
/// from the store's.
const QUEUE_SCHEMA: Schema = Schema {
    owner: "the contract queue",
    table: "tascer_queue_migrations",
    lock: 0x7461_7363_6572_7131, // "tascerq1"
    migrations: MIGRATIONS,
};

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
        Failure {
            transient: is_transient(&e),
            message: describe_error(&e),
        }
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
        let server = describe_config(&cfg);
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
        match migrate_schema(&mut client, &QUEUE_SCHEMA).await {
            Ok(_) => Ok(()),
            Err(MigrateError::Pg(e)) => Err(e.into()),
            Err(MigrateError::Schema(detail)) => Err(Failure::permanent(detail)),
        }
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
        let shown = describe_config(&cfg);
        assert_eq!(shown, "postgres://bob@db.example:6543/fleet");
        assert!(!shown.contains("s3cret"));
    }
}
