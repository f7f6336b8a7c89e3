//! Pending calls: the record of a call Claude Code's `PreToolUse` hook
//! admitted, kept until its `PostToolUse` (each event is its own process,
//! or a hook server that may be renewed in between) closes it.
//!
//! One row per call, keyed by session and tool use id, in the home's local
//! SQLite file (a row, not a file per call: creating and deleting a file
//! on every call cost the hook more than the ledger's own write). The
//! event that closes the call deletes the row once the call's record is
//! written; rows of calls that never got their `PostToolUse` (the session
//! was killed) are deleted after [`MAX_AGE_MS`].

use std::sync::Arc;

use rusqlite::{OptionalExtension, params};

use crate::db::Db;
use crate::error::StoreError;
use crate::lease::now_ms;

/// How long a pending call waits for its `PostToolUse`: a week.
pub const MAX_AGE_MS: i64 = 7 * 24 * 60 * 60 * 1000;

const TABLES: &[&str] = &["pending_calls"];

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS pending_calls (
        session_id  TEXT NOT NULL,
        tool_use_id TEXT NOT NULL,
        record      TEXT NOT NULL,
        created_ms  INTEGER NOT NULL,
        PRIMARY KEY (session_id, tool_use_id)
    );";

/// The pending calls table in the home's local database.
#[derive(Debug, Clone)]
pub struct PendingCalls {
    db: Arc<Db>,
}

impl PendingCalls {
    /// The table over an open database; creates it if missing.
    pub fn with_db(db: Arc<Db>) -> Result<Self, StoreError> {
        db.ensure_schema(TABLES, SCHEMA)?;
        Ok(PendingCalls { db })
    }

    /// Keeps `record` (JSON) for the call `tool_use_id` of `session_id`,
    /// replacing a record kept for the same call, and deletes the records
    /// older than [`MAX_AGE_MS`].
    pub fn put(&self, session_id: &str, tool_use_id: &str, record: &str) -> Result<(), StoreError> {
        let now = now_ms();
        self.db.write(|tx| {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO pending_calls (session_id, tool_use_id, record, created_ms)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![session_id, tool_use_id, record, now])?;
            tx.prepare_cached("DELETE FROM pending_calls WHERE created_ms < ?1")?
                .execute(params![now.saturating_sub(MAX_AGE_MS)])?;
            Ok(())
        })
    }

    /// The record kept for the call; `None` when none is.
    pub fn get(&self, session_id: &str, tool_use_id: &str) -> Result<Option<String>, StoreError> {
        let record = self.db.read(|conn| {
            conn.prepare_cached(
                "SELECT record FROM pending_calls WHERE session_id = ?1 AND tool_use_id = ?2",
            )?
            .query_row(params![session_id, tool_use_id], |r| r.get(0))
            .optional()
        })?;
        Ok(record)
    }

    /// Deletes the record kept for the call, once it is closed.
    pub fn remove(&self, session_id: &str, tool_use_id: &str) -> Result<(), StoreError> {
        self.db.write(|tx| {
            tx.prepare_cached(
                "DELETE FROM pending_calls WHERE session_id = ?1 AND tool_use_id = ?2",
            )?
            .execute(params![session_id, tool_use_id])?;
            Ok(())
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn table() -> (tempfile::TempDir, PendingCalls) {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(dir.path().join("t.db")).unwrap());
        (dir, PendingCalls::with_db(db).unwrap())
    }

    #[test]
    fn a_record_is_kept_per_call_until_removed() {
        let (_dir, pending) = table();
        pending.put("s1", "t1", "{\"a\":1}").unwrap();
        pending.put("s1", "t2", "{\"a\":2}").unwrap();
        pending.put("s2", "t1", "{\"a\":3}").unwrap();
        pending.put("s1", "t1", "{\"a\":4}").unwrap();
        assert_eq!(
            pending.get("s1", "t1").unwrap().as_deref(),
            Some("{\"a\":4}")
        );
        pending.remove("s1", "t1").unwrap();
        assert_eq!(pending.get("s1", "t1").unwrap(), None, "removed");
        assert_eq!(
            pending.get("s2", "t1").unwrap().as_deref(),
            Some("{\"a\":3}")
        );
        assert_eq!(
            pending.get("s1", "t2").unwrap().as_deref(),
            Some("{\"a\":2}")
        );
        assert_eq!(pending.get("s9", "t9").unwrap(), None);
    }

    #[test]
    fn records_older_than_a_week_are_deleted_by_the_next_put() {
        let (dir, pending) = table();
        pending.put("s1", "old", "{}").unwrap();
        let conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
        conn.execute(
            "UPDATE pending_calls SET created_ms = created_ms - ?1",
            params![MAX_AGE_MS + 1],
        )
        .unwrap();
        pending.put("s1", "new", "{}").unwrap();
        assert_eq!(pending.get("s1", "old").unwrap(), None);
        assert!(pending.get("s1", "new").unwrap().is_some());
    }
}
