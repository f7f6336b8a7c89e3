//! [`PgPool`]: a pool of connections to a PostgreSQL database, on the
//! caller's tokio runtime. The store's [`PgBackend`](super::PgBackend)
//! keeps one on its own runtime; an async component that shares the
//! database (the contract queue of `tascer-fleet`) uses one directly, with
//! [`is_transient`](super::is_transient) and
//! [`is_transient_pool`](super::is_transient_pool) to decide what to retry
//! and [`migrate_schema`](super::migrate::migrate_schema) for its tables.

use std::time::Duration;

use deadpool_postgres::{Client, Manager, ManagerConfig, Pool, PoolError, RecyclingMethod};
use tokio_postgres::NoTls;

use crate::error::StoreError;

/// How a [`PgPool`] sizes and waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolOptions {
    /// The most connections it opens.
    pub max_size: usize,
    /// How long opening one connection may take.
    pub create_timeout: Duration,
    /// How long a caller waits for a free connection.
    pub wait_timeout: Duration,
}

/// A pool of connections to one database (no TLS: see docs/fleet.md),
/// recycled with a fast check; cheap to clone (clones share the pool).
#[derive(Clone)]
pub struct PgPool {
    pool: Pool,
    location: String,
}

impl std::fmt::Debug for PgPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgPool")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl PgPool {
    /// A pool for the database `config` names; no connection is made
    /// until one is asked for ([`get`](Self::get)).
    pub fn new(config: tokio_postgres::Config, options: PoolOptions) -> Result<Self, StoreError> {
        let location = super::describe_config(&config);
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.max_size)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .create_timeout(Some(options.create_timeout))
            .wait_timeout(Some(options.wait_timeout))
            .build()
            .map_err(|e| StoreError::Config(format!("cannot set up the connection pool: {e}")))?;
        Ok(PgPool { pool, location })
    }

    /// `postgres://user@host:port/db` (never the password).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// A pooled connection (opened when none is free).
    pub async fn get(&self) -> Result<Client, PoolError> {
        self.pool.get().await
    }

    /// Closes the pool: its connections are dropped, and asking for one
    /// fails.
    pub fn close(&self) {
        self.pool.close();
    }
}
