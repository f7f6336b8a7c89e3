//! The one database handle of a process: one SQLite connection (WAL) shared
//! by the session store and the ledger, and the one write path both use.
//!
//! Many processes may write the same file (`$TASCER_HOME/tascer.db`). A
//! write never gives up on the first sign of contention:
//!
//! - every write transaction starts as a writer (`BEGIN IMMEDIATE`), so it
//!   waits for the write lock up front instead of failing when a read
//!   transaction tries to become a write transaction (the `SQLITE_BUSY`
//!   that SQLite's busy handler cannot wait out);
//! - SQLite's busy handler waits up to [`Contention::busy_timeout`] for the
//!   lock;
//! - when it is still busy, the whole transaction is retried up to
//!   [`Contention::retries`] more times, with exponential backoff and
//!   jitter.
//!
//! Only when all of that fails does a write return an error, which names
//! the database file ([`DbError::Contended`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, Transaction, TransactionBehavior};

/// Environment variable: how long SQLite waits for a lock, in milliseconds.
pub const BUSY_TIMEOUT_ENV: &str = "TASCER_DB_BUSY_TIMEOUT_MS";
/// Environment variable: how many times a contended write is retried after
/// the busy timeout ran out.
pub const RETRIES_ENV: &str = "TASCER_DB_RETRIES";

/// The home's own SQLite file, `<home>/tascer.db`: the default store, and
/// the local database of what stays on a host when the store is
/// PostgreSQL (leases, the reviewers' cache, the webhook outbox).
pub const HOME_DB_FILE: &str = "tascer.db";

/// The WAL size past which [`Db::bound_wal`] checkpoints and truncates
/// it: it bounds what the next process reads to recover the WAL, and how
/// often a short-lived process pays for the checkpoint's `fsync`s (a hook
/// process: every 15 to 20 events).
pub const WAL_TRUNCATE_BYTES: u64 = 512 * 1024;

/// How long that checkpoint waits for other connections before leaving the
/// truncation to a later process.
pub const WAL_TRUNCATE_WAIT: Duration = Duration::from_millis(100);

/// The commits of a connection after which [`Db::checkpoint_in_place`]
/// copies the WAL into the database, in a process that keeps its
/// connection open between writes (the hook server: about 32 events, 2 MiB
/// of WAL). Well below SQLite's own automatic checkpoint (1000 pages,
/// about 4 MiB), which runs in the commit that crosses it: this one runs
/// after the answer, off the time a hook waits.
pub const WAL_CHECKPOINT_COMMITS: u32 = 64;

/// First backoff between retries; doubled each time up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
/// Longest backoff between retries.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// How a [`Db`] waits for and retries contended writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contention {
    /// How long SQLite's busy handler waits for a lock on each attempt.
    pub busy_timeout: Duration,
    /// Retries after the first attempt stayed busy.
    pub retries: u32,
}

impl Default for Contention {
    /// 5 s busy timeout, 4 retries: a write gives up after about 20 s of
    /// solid contention.
    fn default() -> Self {
        Contention {
            busy_timeout: Duration::from_secs(5),
            retries: 4,
        }
    }
}

impl Contention {
    /// The defaults, overridden by [`BUSY_TIMEOUT_ENV`] and [`RETRIES_ENV`]
    /// when they are set to a number.
    pub fn from_env() -> Self {
        let mut contention = Contention::default();
        if let Some(ms) = env_number(BUSY_TIMEOUT_ENV) {
            contention.busy_timeout = Duration::from_millis(ms);
        }
        if let Some(n) = env_number(RETRIES_ENV) {
            contention.retries = u32::try_from(n).unwrap_or(u32::MAX);
        }
        contention
    }

    /// The pause before retry number `retry` (1-based): exponential from
    /// 50 ms, capped at 2 s, with up to 50 % random jitter so that writers
    /// that collided do not collide again.
    pub(crate) fn backoff(retry: u32) -> Duration {
        let base = FIRST_BACKOFF
            .saturating_mul(1u32 << retry.saturating_sub(1).min(8))
            .min(MAX_BACKOFF);
        let half = u64::try_from(base.as_millis() / 2).unwrap_or(0);
        base + Duration::from_millis(fastrand::u64(0..=half))
    }
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// What can go wrong opening or writing the database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The directory for the database could not be created.
    #[error("cannot create directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The database file could not be opened or prepared.
    #[error("cannot open database {path}: {source}")]
    Open {
        /// The database path.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// Other processes held the database's write lock through every
    /// attempt.
    #[error(
        "database {path} stayed locked by other writers through {attempts} attempts over \
         {waited_ms} ms ({source}); raise {BUSY_TIMEOUT_ENV} or {RETRIES_ENV}, or run fewer \
         sessions on this Tascer home at once"
    )]
    Contended {
        /// The database path.
        path: PathBuf,
        /// Attempts made.
        attempts: u32,
        /// Time spent trying, milliseconds.
        waited_ms: u64,
        /// The last SQLite error.
        source: rusqlite::Error,
    },
    /// A write failed for another reason (disk full, read-only file, …).
    #[error("cannot write database {path}: {source}")]
    Write {
        /// The database path.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
}

/// True for the errors that mean "another connection holds the lock".
pub(crate) fn is_contention(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// One SQLite connection (WAL mode) and the write path over it.
///
/// Open one per process and share it (`Arc<Db>`) between the session
/// store and the ledger: their writes then queue inside the process
/// instead of competing for the file lock.
#[derive(Debug)]
pub struct Db {
    conn: Mutex<Connection>,
    path: PathBuf,
    contention: Contention,
    /// Transactions committed since the last
    /// [`checkpoint_in_place`](Self::checkpoint_in_place).
    commits: AtomicU32,
    /// The schemas [`ensure_schema`](Self::ensure_schema) found or created
    /// on this connection: not looked for again.
    ensured: Mutex<Vec<&'static str>>,
}

impl Db {
    /// Opens (creating if needed) the database at `path` with the
    /// contention settings of the environment ([`Contention::from_env`]).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, DbError> {
        Self::open_with(path, Contention::from_env())
    }

    /// Opens (creating if needed) the database at `path`: WAL mode,
    /// `synchronous = NORMAL`, foreign keys on, and the busy timeout set
    /// before anything else touches the file.
    pub fn open_with(path: impl AsRef<Path>, contention: Contention) -> Result<Self, DbError> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| DbError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let open_err = |source| DbError::Open {
            path: path.clone(),
            source,
        };
        let conn = Connection::open(&path).map_err(open_err)?;
        conn.busy_timeout(contention.busy_timeout)
            .map_err(open_err)?;
        // One plan per statement, whatever its parameters: without this,
        // SQLite prepares a cached statement again each time a parameter
        // it could plan around is bound anew (the last entry of a session,
        // `ORDER BY seq DESC LIMIT 1`: about a tenth of an append).
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .map_err(open_err)?;
        let db = Db {
            conn: Mutex::new(conn),
            path,
            contention,
            commits: AtomicU32::new(0),
            ensured: Mutex::new(Vec::new()),
        };
        // Switching to WAL needs a lock: retried like a write.
        db.retrying(|conn| {
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            conn.pragma_update(None, "foreign_keys", "ON")
        })
        .map_err(|e| match e {
            DbError::Write { path, source } => DbError::Open { path, source },
            other => other,
        })?;
        Ok(db)
    }

    /// Opens (creating if needed) the home's own database,
    /// `<home>/tascer.db` ([`HOME_DB_FILE`]).
    pub fn open_in_home(home: impl AsRef<Path>) -> Result<Self, DbError> {
        Self::open(home.as_ref().join(HOME_DB_FILE))
    }

    /// Leaves the WAL in place when this connection closes, for a
    /// short-lived process (a hook process writes a few entries and
    /// exits). Closing the last connection to a WAL database checkpoints
    /// it (four `fsync`s) and deletes the WAL and its index, which the next
    /// process creates again: on a busy disk that costs more than
    /// everything else such a process does. What was committed is in the
    /// WAL, as durable as any commit with `synchronous = NORMAL`;
    /// [`bound_wal`](Self::bound_wal) truncates it once it grows. If the
    /// connection cannot be tuned, closing just costs the usual.
    pub(crate) fn keep_wal_on_close(&self) {
        let tuned = self.read(|conn| {
            conn.set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            )
        });
        if let Err(e) = tuned {
            tracing::debug!("cannot keep the WAL on close: {e}");
        }
    }

    /// Once the WAL has grown past [`WAL_TRUNCATE_BYTES`], checkpoints it
    /// into the database and truncates it, waiting at most
    /// [`WAL_TRUNCATE_WAIT`] for other connections (the connection keeps
    /// that shorter busy wait afterwards: a hook process exits next). A
    /// process that opens the
    /// database alone recovers the WAL and no longer knows which frames
    /// were checkpointed, so without a truncation every process that keeps
    /// the WAL on close would append to it. If other processes hold the
    /// database, the truncation is left to a later process (or to their
    /// own close).
    pub(crate) fn bound_wal(&self) {
        let mut wal = self.path.as_os_str().to_owned();
        wal.push("-wal");
        let size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        if size <= WAL_TRUNCATE_BYTES {
            return;
        }
        let truncated = self.read(|conn| {
            conn.busy_timeout(WAL_TRUNCATE_WAIT)?;
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
                row.get::<_, i64>(0)
            })
        });
        match truncated {
            Ok(0) => {}
            Ok(_) => tracing::debug!("the WAL is in use; a later process truncates it"),
            Err(e) => tracing::debug!("cannot truncate the WAL: {e}"),
        }
    }

    /// For a process that keeps this connection open between writes (the
    /// hook server): once it has committed [`WAL_CHECKPOINT_COMMITS`]
    /// transactions since the last time, copies the WAL into the database
    /// without waiting for other connections and without truncating it (a
    /// passive checkpoint). The next writes then reuse the file from its
    /// start: its blocks stay allocated, and the checkpoint's `fsync`s come
    /// once per 64 commits instead of once per [`WAL_TRUNCATE_BYTES`].
    /// Before such a process ends, [`bound_wal`](Self::bound_wal) leaves
    /// the WAL bounded for the next.
    pub(crate) fn checkpoint_in_place(&self) {
        if !self.checkpoint_due() {
            return;
        }
        self.commits.store(0, Ordering::Relaxed);
        let copied = self.read(|conn| {
            conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
                row.get::<_, i64>(0)
            })
        });
        if let Err(e) = copied {
            tracing::debug!("cannot checkpoint the WAL: {e}");
        }
    }

    /// True once [`checkpoint_in_place`](Self::checkpoint_in_place) has
    /// something to do.
    pub(crate) fn checkpoint_due(&self) -> bool {
        self.commits.load(Ordering::Relaxed) >= WAL_CHECKPOINT_COMMITS
    }

    /// Where the database file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The contention settings in use.
    pub fn contention(&self) -> Contention {
        self.contention
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock()
    }

    /// Runs `f` with the connection, for reads (WAL readers do not wait
    /// for writers).
    pub(crate) fn read<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        f(&self.conn())
    }

    /// Creates missing tables: runs `schema` (idempotent DDL) in a write
    /// transaction unless every one of `tables` exists already, so opening
    /// a prepared database takes no write lock. Once a schema is in place
    /// this connection does not look for it again (a long-lived process
    /// opens its tables for every event).
    pub(crate) fn ensure_schema(
        &self,
        tables: &[&str],
        schema: &'static str,
    ) -> Result<(), DbError> {
        if self.ensured.lock().contains(&schema) {
            return Ok(());
        }
        self.find_or_create(tables, schema)?;
        self.ensured.lock().push(schema);
        Ok(())
    }

    /// [`ensure_schema`](Self::ensure_schema) without the memory.
    fn find_or_create(&self, tables: &[&str], schema: &str) -> Result<(), DbError> {
        let wrapped = |source| DbError::Write {
            path: self.path.clone(),
            source,
        };
        let present = self
            .read(|conn| -> rusqlite::Result<usize> {
                let mut stmt = conn.prepare_cached(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                )?;
                let mut n = 0;
                for table in tables {
                    n += usize::from(stmt.exists([table])?);
                }
                Ok(n)
            })
            .map_err(wrapped)?;
        if present == tables.len() {
            return Ok(());
        }
        self.write(|tx| tx.execute_batch(schema).map_err(wrapped))
    }

    /// Runs `f` in a write transaction (`BEGIN IMMEDIATE`) and commits it.
    ///
    /// When the write lock cannot be had (or the commit finds the database
    /// busy), the transaction is rolled back and `f` runs again in a new
    /// one, up to [`Contention::retries`] times with backoff, so `f` must
    /// read what it needs inside the transaction. An error of `f` itself
    /// rolls back and is returned at once.
    pub(crate) fn write<T, E>(
        &self,
        mut f: impl FnMut(&Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<DbError>,
    {
        let mut conn = self.conn();
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let outcome = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
                Ok(tx) => {
                    let value = f(&tx)?;
                    tx.commit().map(|()| value)
                }
                Err(err) => Err(err),
            };
            match outcome {
                Ok(value) => {
                    self.commits.fetch_add(1, Ordering::Relaxed);
                    return Ok(value);
                }
                Err(err) => self.after_failure(err, attempt, started)?,
            }
        }
    }

    /// Runs `f` (statements that may need a lock, outside a transaction),
    /// retried on contention like [`write`](Self::write).
    fn retrying<T>(
        &self,
        mut f: impl FnMut(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, DbError> {
        let conn = self.conn();
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            attempt += 1;
            match f(&conn) {
                Ok(value) => return Ok(value),
                Err(err) => self.after_failure(err, attempt, started)?,
            }
        }
    }

    /// After a failed attempt: sleeps before the next one when the error
    /// is contention and retries are left, else returns the error to give.
    fn after_failure(
        &self,
        err: rusqlite::Error,
        attempt: u32,
        started: Instant,
    ) -> Result<(), DbError> {
        if !is_contention(&err) {
            return Err(DbError::Write {
                path: self.path.clone(),
                source: err,
            });
        }
        if attempt > self.contention.retries {
            return Err(DbError::Contended {
                path: self.path.clone(),
                attempts: attempt,
                waited_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                source: err,
            });
        }
        std::thread::sleep(Contention::backoff(attempt));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a failed statement of a test becomes: a write error naming
    /// the file.
    fn write_error(path: &Path) -> impl Fn(rusqlite::Error) -> DbError + Copy + '_ {
        move |source| DbError::Write {
            path: path.to_path_buf(),
            source,
        }
    }

    fn quick() -> Contention {
        Contention {
            busy_timeout: Duration::from_millis(20),
            retries: 2,
        }
    }

    #[test]
    fn a_write_waits_for_another_writer_to_finish() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let db = Db::open_with(&path, Contention::default()).unwrap();
        db.write(|tx| {
            tx.execute_batch("CREATE TABLE t (x INTEGER)")
                .map_err(write_error(&path))
        })
        .unwrap();
        let other = Connection::open(&path).unwrap();
        other
            .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1);")
            .unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            other.execute_batch("COMMIT").unwrap();
        });
        db.write(|tx| {
            tx.execute("INSERT INTO t VALUES (2)", [])
                .map_err(write_error(&path))
        })
        .unwrap();
        release.join().unwrap();
        let n: i64 = db
            .read(|c| c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, 2);
    }

    #[test]
    fn a_write_that_stays_locked_fails_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let db = Db::open_with(&path, quick()).unwrap();
        let other = Connection::open(&path).unwrap();
        other
            .execute_batch("BEGIN IMMEDIATE; CREATE TABLE t (x INTEGER);")
            .unwrap();
        let mut calls = 0;
        let err = db
            .write(|tx| {
                calls += 1;
                tx.execute_batch("CREATE TABLE u (x INTEGER)")
                    .map_err(write_error(&path))
            })
            .unwrap_err();
        assert_eq!(calls, 0, "the transaction never started");
        match &err {
            DbError::Contended { attempts, .. } => assert_eq!(*attempts, 3),
            other => panic!("unexpected {other:?}"),
        }
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains(BUSY_TIMEOUT_ENV), "{text}");
    }

    #[test]
    fn a_checkpoint_in_place_lets_the_next_writes_reuse_the_wal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let db = Db::open_with(&path, quick()).unwrap();
        let insert = |db: &Db| {
            db.write(|tx| {
                tx.execute("INSERT INTO t VALUES (zeroblob(3000))", [])
                    .map_err(write_error(&path))
            })
            .unwrap();
        };
        db.write(|tx| {
            tx.execute_batch("CREATE TABLE t (x BLOB)")
                .map_err(write_error(&path))
        })
        .unwrap();
        let wal = dir.path().join("t.db-wal");
        let wal_size = || std::fs::metadata(&wal).unwrap().len();
        let mut rows = 0;
        // One commit short: nothing is copied, the next writes append.
        for _ in 1..WAL_CHECKPOINT_COMMITS - 1 {
            insert(&db);
            rows += 1;
        }
        db.checkpoint_in_place();
        let size = wal_size();
        insert(&db);
        rows += 1;
        assert!(wal_size() > size, "appended");
        // The commits reached: copied; the next writes go back to the start.
        db.checkpoint_in_place();
        let size = wal_size();
        for _ in 0..WAL_CHECKPOINT_COMMITS / 4 {
            insert(&db);
            rows += 1;
        }
        assert_eq!(wal_size(), size, "the WAL is reused from its start");
        let n: i64 = db
            .read(|c| c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, rows);
    }

    #[test]
    fn a_cached_statement_is_not_prepared_again_for_new_parameters() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let db = Db::open_with(&path, quick()).unwrap();
        let wrapped = write_error(&path);
        db.write(|tx| {
            tx.execute_batch("CREATE TABLE t (s TEXT, n INTEGER, PRIMARY KEY (s, n))")
                .map_err(wrapped)
        })
        .unwrap();
        let mut reprepared = 0;
        for i in 0..5 {
            reprepared = db
                .write(|tx| {
                    let mut last = tx
                        .prepare_cached("SELECT n FROM t WHERE s = ?1 ORDER BY n DESC LIMIT 1")
                        .map_err(wrapped)?;
                    let _ = last.query_row([format!("s{}", i % 2)], |r| r.get::<_, i64>(0));
                    let count = last.get_status(rusqlite::StatementStatus::RePrepare);
                    tx.execute("INSERT INTO t VALUES (?1, ?2)", rusqlite::params!["s0", i])
                        .map_err(wrapped)?;
                    Ok::<_, DbError>(count)
                })
                .unwrap();
        }
        assert_eq!(reprepared, 0);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        assert!(Contention::backoff(1) >= FIRST_BACKOFF);
        assert!(Contention::backoff(1) <= FIRST_BACKOFF * 3 / 2);
        assert!(Contention::backoff(3) >= FIRST_BACKOFF * 4);
        assert!(Contention::backoff(30) <= MAX_BACKOFF * 3 / 2);
    }
}
