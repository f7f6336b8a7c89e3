//! [`PgBackend`]: the shared store on PostgreSQL.
//!
//! The store's API is synchronous (it is called from the agent loop's
//! synchronous steps, as the SQLite store is), and the driver,
//! `tokio-postgres`, is async. A blocking client (`postgres::Client`)
//! would start a runtime of its own per call and panic inside the caller's
//! tokio runtime, so the backend owns a small runtime (one worker thread)
//! that holds the connection pool (`deadpool-postgres`), and each call is
//! a task on it: the calling thread sends the work and waits on a channel
//! (a std channel, which is fine inside or outside any runtime). Several
//! threads calling at once get several pooled connections.
//!
//! Every operation is retried when it fails for a transient reason (the
//! server unreachable or restarting, a dropped connection, a serialization
//! failure `40001`, a deadlock `40P01`), with exponential backoff and
//! jitter, for up to [`PgOptions::retry_for`]. Then it fails with
//! [`StoreError::Postgres`], which names the server and database (never
//! the password). A retried write first checks whether the attempt before
//! it committed after all (the connection can drop after the server
//! committed and before it said so), so a retry never writes twice.

mod audit;
mod error;
mod message;
pub mod migrate;
mod pool;
mod queries;
mod rows;
mod sessions;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use deadpool_postgres::ClientWrapper;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use tokio_postgres::config::Host;

use crate::error::StoreError;
use error::Failure;
pub use error::{describe as describe_error, is_transient, is_transient_pool};
pub use migrate::{Migrated, Migration, Schema};
pub use pool::{PgPool, PoolOptions};

/// Environment variable: how long (milliseconds) a PostgreSQL operation
/// keeps retrying transient failures before it gives up (default 20000).
pub const RETRY_ENV: &str = "TASCER_STORE_RETRY_MS";
/// Environment variable: the most connections one process opens to the
/// PostgreSQL store (default 4).
pub const POOL_SIZE_ENV: &str = "TASCER_STORE_POOL_SIZE";

/// How a [`PgBackend`] connects and retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgOptions {
    /// How long an operation keeps retrying transient failures.
    pub retry_for: Duration,
    /// The most connections the pool opens.
    pub pool_size: usize,
    /// How long one connection attempt may take (when the URL does not say
    /// `connect_timeout`).
    pub connect_timeout: Duration,
}

impl Default for PgOptions {
    /// 20 s of retries (like the SQLite store's contention budget), 4
    /// connections, 5 s per connection attempt.
    fn default() -> Self {
        PgOptions {
            retry_for: Duration::from_secs(20),
            pool_size: 4,
            connect_timeout: Duration::from_secs(5),
        }
    }
}

impl PgOptions {
    /// The defaults, overridden by [`RETRY_ENV`] and [`POOL_SIZE_ENV`]
    /// when they are set to a number.
    pub fn from_env() -> Self {
        let number = |name: &str| -> Option<u64> { std::env::var(name).ok()?.trim().parse().ok() };
        let mut options = PgOptions::default();
        if let Some(ms) = number(RETRY_ENV) {
            options.retry_for = Duration::from_millis(ms);
        }
        if let Some(n) = number(POOL_SIZE_ENV).filter(|n| *n > 0) {
            options.pool_size = usize::try_from(n).unwrap_or(usize::MAX);
        }
        options
    }
}

/// A transaction on a pooled connection.
pub(crate) type Tx<'t> = deadpool_postgres::Transaction<'t>;

/// True when the query returns a row.
pub(crate) async fn exists(
    tx: &Tx<'_>,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<bool, Failure> {
    let stmt = tx.prepare_cached(sql).await?;
    Ok(tx.query_opt(&stmt, params).await?.is_some())
}

/// What one attempt of an operation returns.
pub(crate) type Attempt<'t, T> = BoxFuture<'t, Result<T, Failure>>;

/// The shared store in a PostgreSQL database (see the module docs).
pub struct PgBackend {
    shared: Arc<Shared>,
    handle: tokio::runtime::Handle,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for PgBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgBackend")
            .field("location", &self.shared.pool.location())
            .finish_non_exhaustive()
    }
}

/// What the runtime's tasks share.
struct Shared {
    pool: PgPool,
    options: PgOptions,
}

impl Drop for PgBackend {
    fn drop(&mut self) {
        self.shared.pool.close();
        // Dropping a runtime blocks, which panics inside another runtime;
        // shutting it down in the background does not.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// `postgres://user@host:port/dbname` of a connection config: enough to
/// name the server in a message, never the password.
pub fn describe_config(config: &tokio_postgres::Config) -> String {
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let name = match host {
                Host::Tcp(name) => name.clone(),
                Host::Unix(path) => path.display().to_string(),
            };
            match ports.get(i).or(ports.first()) {
                Some(port) => format!("{name}:{port}"),
                None => name,
            }
        })
        .collect();
    let db = config.get_dbname().unwrap_or_default();
    format!("postgres://{user}{}/{db}", hosts.join(","))
}

/// Parses a `postgres://` URL (or `key=value` connection string), with an
/// error that does not repeat it (it may hold a password).
pub fn parse_url(url: &str) -> Result<tokio_postgres::Config, StoreError> {
    url.parse::<tokio_postgres::Config>().map_err(|e| {
        StoreError::Config(format!(
            "the PostgreSQL store URL is not valid ({}); expected \
             postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
            error::describe(&e)
        ))
    })
}

impl PgBackend {
    /// Connects to the database at `url` with the options of the
    /// environment ([`PgOptions::from_env`]) and applies pending
    /// migrations.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_with(url, PgOptions::from_env())
    }

    /// Connects to the database at `url` and applies pending migrations
    /// ([`migrate`]): the first connection is made here, so a server that
    /// cannot be reached (after the retries) is an error now.
    pub fn open_with(url: &str, options: PgOptions) -> Result<Self, StoreError> {
        let mut config = parse_url(url)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.connect_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("tascer");
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("tascer-store-pg")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Config(format!("cannot start the store's runtime: {e}")))?;
        let pool = PgPool::new(
            config,
            PoolOptions {
                max_size: options.pool_size,
                create_timeout: options.connect_timeout.saturating_mul(2),
                wait_timeout: options.retry_for.max(Duration::from_secs(1)),
            },
        )?;
        let backend = PgBackend {
            shared: Arc::new(Shared { pool, options }),
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
        };
        backend.migrate()?;
        Ok(backend)
    }

    /// Applies pending migrations (done by [`open`](Self::open)).
    pub fn migrate(&self) -> Result<Migrated, StoreError> {
        let shared = Arc::clone(&self.shared);
        self.run(async move {
            let shared = &*shared;
            shared
                .retrying("open the store", move |_| async move {
                    let mut client = shared.pool.get().await.map_err(Failure::Pool)?;
                    migrate::migrate(&mut client, migrate::MIGRATIONS)
                        .await
                        .map_err(|e| match e {
                            migrate::MigrateError::Pg(e) => Failure::Pg(e),
                            migrate::MigrateError::Schema(detail) => {
                                Failure::Store(StoreError::Schema {
                                    location: shared.pool.location().to_string(),
                                    detail,
                                })
                            }
                        })
                })
                .await
        })
    }

    /// The server and database, without the password.
    pub fn location(&self) -> &str {
        self.shared.pool.location()
    }

    /// Runs `work` on the backend's runtime and waits for it.
    fn run<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (send, receive) = std::sync::mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = send.send(work.await);
        });
        receive.recv().map_err(|_| StoreError::Postgres {
            location: self.shared.pool.location().to_string(),
            what: "finish the operation",
            attempts: 1,
            waited_ms: 0,
            detail: "the store's connection runtime stopped".to_string(),
            transient: false,
        })?
    }

    /// Runs `op` in a transaction on a pooled connection and commits it,
    /// retrying transient failures (see the module docs). `op` gets the
    /// attempt number (from 1) so a retried write can first check whether
    /// the previous attempt committed.
    pub(crate) fn transact<T, F>(&self, what: &'static str, op: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'t> FnMut(&'t Tx<'t>, u32) -> Attempt<'t, T> + Send + 'static,
    {
        let shared = Arc::clone(&self.shared);
        let op = Mutex::new(op);
        self.run(async move {
            let (shared, op) = (&*shared, &op);
            shared
                .retrying(what, move |attempt| async move {
                    let mut client = shared.pool.get().await.map_err(Failure::Pool)?;
                    let tx = client.transaction().await?;
                    // The lock is held only to make the future, which
                    // borrows the transaction, not `op`.
                    let work = (*op.lock())(&tx, attempt);
                    let value = work.await?;
                    tx.commit().await?;
                    Ok(value)
                })
                .await
        })
    }

    /// Runs the read `op` on a pooled connection, retrying transient
    /// failures.
    pub(crate) fn read<T, F>(&self, what: &'static str, op: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnMut(&'c ClientWrapper) -> Attempt<'c, T> + Send + 'static,
    {
        let shared = Arc::clone(&self.shared);
        let op = Mutex::new(op);
        self.run(async move {
            let (shared, op) = (&*shared, &op);
            shared
                .retrying(what, move |_| async move {
                    let client = shared.pool.get().await.map_err(Failure::Pool)?;
                    let work = (*op.lock())(&client);
                    work.await
                })
                .await
        })
    }
}

impl Shared {
    /// Runs `attempt` (given its number, from 1) until it succeeds, fails
    /// for good, or [`PgOptions::retry_for`] is spent.
    async fn retrying<T, F, Fut>(&self, what: &'static str, mut attempt: F) -> Result<T, StoreError>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let started = Instant::now();
        let mut n = 0;
        loop {
            n += 1;
            match attempt(n).await {
                Ok(value) => return Ok(value),
                Err(failure) => self.after_failure(what, failure, n, started).await?,
            }
        }
    }

    /// After a failed attempt: waits before the next one when the failure
    /// is transient and time is left, else returns the error to give.
    async fn after_failure(
        &self,
        what: &'static str,
        failure: Failure,
        attempt: u32,
        started: Instant,
    ) -> Result<(), StoreError> {
        let transient = failure.is_transient();
        let pause = crate::db::Contention::backoff(attempt);
        if transient && started.elapsed() + pause <= self.options.retry_for {
            tracing_retry(self.pool.location(), what, attempt, &failure);
            tokio::time::sleep(pause).await;
            return Ok(());
        }
        match failure {
            Failure::Store(e) => Err(e),
            failure => Err(StoreError::Postgres {
                location: self.pool.location().to_string(),
                what,
                attempts: attempt,
                waited_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                detail: failure.detail(),
                transient,
            }),
        }
    }
}

/// Logs (once per operation) that the store is being retried, so a long
/// wait is not a silent hang.
fn tracing_retry(location: &str, what: &str, attempt: u32, failure: &Failure) {
    if attempt == 1 {
        tracing::warn!(
            "PostgreSQL store {location}: cannot {what} ({}); retrying",
            failure.detail()
        );
    }
}
