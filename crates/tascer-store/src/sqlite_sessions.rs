//! The SQLite side of session administration (titles, deletion) and file
//! checkpoints ([`FileChange`]).

use rusqlite::{Transaction, params};

use crate::backend::now;
use crate::db::Db;
use crate::error::StoreError;
use crate::file_history::{DeletedSession, FileChange};

/// The tables holding a session's ledger, keyed by `session_id`.
const LEDGER_TABLES: &[&str] = &[
    "ledger_heads",
    "tool_calls",
    "permission_decisions",
    "hook_executions",
    "metrics",
    "ledger_evidence",
];

/// Gives the `sessions` table of a store made by an older build its
/// `title` column (one read when it has it).
pub(crate) fn migrate(db: &Db) -> Result<(), StoreError> {
    let present = db.read(|conn| -> rusqlite::Result<bool> {
        conn.prepare_cached("SELECT 1 FROM pragma_table_info('sessions') WHERE name = 'title'")?
            .exists([])
    })?;
    if present {
        return Ok(());
    }
    db.write(|tx| -> Result<(), StoreError> {
        let present = tx
            .prepare_cached("SELECT 1 FROM pragma_table_info('sessions') WHERE name = 'title'")?
            .exists([])?;
        if !present {
            tx.execute_batch("ALTER TABLE sessions ADD COLUMN title TEXT")?;
        }
        Ok(())
    })
}

/// Sets a session's title; false when it does not exist.
pub(crate) fn set_title(db: &Db, session_id: &str, title: &str) -> Result<bool, StoreError> {
    db.write(|tx| -> Result<bool, StoreError> {
        let n = tx
            .prepare_cached("UPDATE sessions SET title = ?2 WHERE id = ?1")?
            .execute(params![session_id, title])?;
        Ok(n > 0)
    })
}

/// Deletes everything of one session (see
/// [`Backend::delete_session`](crate::Backend::delete_session)).
pub(crate) fn delete_session(
    db: &Db,
    session_id: &str,
) -> Result<Option<DeletedSession>, StoreError> {
    db.write(|tx| -> Result<Option<DeletedSession>, StoreError> {
        let count = |table: &str| -> rusqlite::Result<u64> {
            let n: i64 = tx.query_row(
                &format!("SELECT COUNT(*) FROM {table} WHERE session_id = ?1"),
                params![session_id],
                |r| r.get(0),
            )?;
            Ok(u64::try_from(n).unwrap_or(0))
        };
        let deleted = DeletedSession {
            messages: count("messages")?,
            ledger_entries: count("ledger_entries")?,
            file_changes: count("file_changes")?,
        };
        // The rows that reference the session row first.
        for table in ["messages", "ledger_entries", "file_changes"]
            .iter()
            .chain(LEDGER_TABLES)
        {
            delete_rows(tx, table, session_id)?;
        }
        let sessions = tx.execute("DELETE FROM sessions WHERE id = ?1", params![session_id])?;
        let nothing = sessions == 0 && deleted == DeletedSession::default();
        Ok((!nothing).then_some(deleted))
    })
}

fn delete_rows(tx: &Transaction<'_>, table: &str, session_id: &str) -> rusqlite::Result<usize> {
    tx.execute(
        &format!("DELETE FROM {table} WHERE session_id = ?1"),
        params![session_id],
    )
}

/// Appends one file change.
pub(crate) fn record_file_change(
    db: &Db,
    session_id: &str,
    change: &FileChange,
) -> Result<(), StoreError> {
    let ts = now();
    db.write(|tx| -> Result<(), StoreError> {
        let seq: i64 = tx
            .prepare_cached(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM file_changes WHERE session_id = ?1",
            )?
            .query_row(params![session_id], |r| r.get(0))?;
        tx.prepare_cached(
            "INSERT INTO file_changes (session_id, seq, prompt_uuid, path, existed, before,
                 after_sha256, tool_use_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?
        .execute(params![
            session_id,
            seq,
            change.prompt_uuid,
            change.path,
            change.existed,
            change.before,
            change.after_sha256,
            change.tool_use_id,
            ts
        ])?;
        Ok(())
    })
}

/// A session's file changes, in order.
pub(crate) fn file_changes(db: &Db, session_id: &str) -> Result<Vec<FileChange>, StoreError> {
    db.read(|conn| {
        let mut stmt = conn.prepare(
            "SELECT prompt_uuid, path, existed, before, after_sha256, tool_use_id
             FROM file_changes WHERE session_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![session_id], |r| {
            Ok(FileChange {
                prompt_uuid: r.get(0)?,
                path: r.get(1)?,
                existed: r.get(2)?,
                before: r.get(3)?,
                after_sha256: r.get(4)?,
                tool_use_id: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    })
}
