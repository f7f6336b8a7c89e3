//! The queue's database: the shared store's PostgreSQL pool
//! ([`PgPool`], no TLS), the queue's schema applied at connect under an
//! advisory lock by the store's migrator, and retries of the failures the
//! store counts as transient. How an error and the server are named is the
//! store's too (`tascer_store::postgres`), so the queue and the store
//! behave alike (and may share a database: their tables and migration
//! records are apart).

use std::future::Future;
use std::time::Duration;

use deadpool_postgres::PoolError;
use tascer_store::postgres::migrate::{MigrateError, migrate_schema};
use tascer_store::postgres::{
    Migration, PgPool, PoolOptions, Schema, describe_error, is_transient, is_transient_pool,
};
use tokio_postgres::Config;

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

impl From<PoolError> for Failure {
    fn from(e: PoolError) -> Self {
        let transient = is_transient_pool(&e);
        let message = match e {
            PoolError::Backend(e) => format!("cannot connect: {}", describe_error(&e)),
            timeout @ PoolError::Timeout(_) => format!("cannot connect: {timeout}"),
            other => other.to_string(),
        };
        Failure { transient, message }
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

/// Connects to the queue's database at `url` (`postgres://…`) with a pool
/// of up to `max_connections`, and applies the queue's schema (under an
/// advisory lock, so workers starting together do it once).
pub(crate) async fn connect(url: &str, max_connections: usize) -> Result<PgPool> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(FleetError::BadUrl(
            "it does not start with postgres://".into(),
        ));
    }
    let cfg: Config = url
        .parse()
        .map_err(|e: tokio_postgres::Error| FleetError::BadUrl(e.to_string()))?;
    let options = PoolOptions {
        max_size: max_connections.max(1),
        create_timeout: Duration::from_secs(10),
        wait_timeout: Duration::from_secs(30),
    };
    let pool = PgPool::new(cfg, options).map_err(|e| FleetError::Other(e.to_string()))?;
    retry(&pool, "apply the queue schema", || migrate(&pool)).await?;
    Ok(pool)
}

/// Runs `op` until it succeeds, fails permanently, or has failed
/// transiently [`TRIES`] times (backing off from 100 ms to 2 s).
pub(crate) async fn retry<T, F, Fut>(pool: &PgPool, what: &str, mut op: F) -> Result<T>
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
                    server: pool.location().to_string(),
                    message: format!("cannot {what}: {}{after}", f.message),
                });
            }
        }
    }
}

/// Applies the migrations this build knows and the database lacks.
async fn migrate(pool: &PgPool) -> Result<(), Failure> {
    let mut client = pool.get().await?;
    match migrate_schema(&mut client, &QUEUE_SCHEMA).await {
        Ok(_) => Ok(()),
        Err(MigrateError::Pg(e)) => Err(e.into()),
        Err(MigrateError::Schema(detail)) => Err(Failure::permanent(detail)),
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
        let shown = tascer_store::postgres::describe_config(&cfg);
        assert_eq!(shown, "postgres://bob@db.example:6543/fleet");
        assert!(!shown.contains("s3cret"));
    }
}
