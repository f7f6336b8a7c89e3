//! What the database alone costs, for the benchmarks to compare Tascer's
//! writes against (`scripts/bench`).

use std::time::{Duration, Instant};

use rusqlite::params;

use crate::backend::Backend;
use crate::error::StoreError;
use crate::sqlite::SqliteBackend;

/// `n` bare `INSERT`s of `payload` into a table of their own
/// (`bench_raw`), each in its own write transaction (`BEGIN IMMEDIATE` …
/// `COMMIT`) on the backend's connection, timed one by one: what SQLite
/// alone costs for a row like a ledger entry. [`StoreError::Config`] when
/// the store is not an SQLite file.
pub fn bare_insert_times(
    backend: &dyn Backend,
    payload: &str,
    n: usize,
) -> Result<Vec<Duration>, StoreError> {
    let any: &dyn std::any::Any = backend;
    let Some(sqlite) = any.downcast_ref::<SqliteBackend>() else {
        return Err(StoreError::Config(format!(
            "the store {} is not an SQLite file; the baseline needs one",
            backend.location()
        )));
    };
    sqlite.db().read(|c| {
        c.execute_batch(
            "CREATE TABLE IF NOT EXISTS bench_raw (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)",
        )?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            c.execute_batch("BEGIN IMMEDIATE")?;
            c.execute(
                "INSERT INTO bench_raw (payload) VALUES (?1)",
                params![payload],
            )?;
            c.execute_batch("COMMIT")?;
            out.push(t.elapsed());
        }
        Ok(out)
    })
}
