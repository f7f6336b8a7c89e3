//! The PostgreSQL side of session administration (titles, deletion) and
//! file checkpoints ([`FileChange`]).

use std::sync::Arc;

use super::PgBackend;
use crate::backend::now;
use crate::error::StoreError;
use crate::file_history::{DeletedSession, FileChange};

/// Every table holding rows of one session, keyed by `session_id`.
const SESSION_TABLES: &[&str] = &[
    "messages",
    "ledger_entries",
    "file_changes",
    "ledger_heads",
    "tool_calls",
    "permission_decisions",
    "hook_executions",
    "metrics",
    "ledger_evidence",
];

/// Advisory lock class of a session's file checkpoints.
const FILE_CHANGES_LOCK: i32 = 3;

impl PgBackend {
    /// [`Backend::set_title`](crate::Backend::set_title).
    pub(crate) fn pg_set_title(&self, session_id: &str, title: &str) -> Result<bool, StoreError> {
        let args = Arc::new((session_id.to_string(), title.to_string()));
        self.transact("rename a session", move |tx, _| {
            let args = Arc::clone(&args);
            Box::pin(async move {
                let (id, title) = &*args;
                let stmt = tx
                    .prepare_cached("UPDATE sessions SET title = $2 WHERE id = $1")
                    .await?;
                Ok(tx.execute(&stmt, &[id, title]).await? > 0)
            })
        })
    }

    /// [`Backend::delete_session`](crate::Backend::delete_session): the
    /// append-only triggers let the rows of the session named in
    /// `tascer.delete_session` go, for this transaction only.
    pub(crate) fn pg_delete_session(
        &self,
        session_id: &str,
    ) -> Result<Option<DeletedSession>, StoreError> {
        let id = Arc::new(session_id.to_string());
        self.transact("delete a session", move |tx, _| {
            let id = Arc::clone(&id);
            Box::pin(async move {
                let id: &String = &id;
                tx.execute(
                    "SELECT set_config('tascer.delete_session', $1, true)",
                    &[id],
                )
                .await?;
                let mut deleted = DeletedSession::default();
                for table in SESSION_TABLES {
                    let n = tx
                        .execute(&format!("DELETE FROM {table} WHERE session_id = $1"), &[id])
                        .await?;
                    match *table {
                        "messages" => deleted.messages = n,
                        "ledger_entries" => deleted.ledger_entries = n,
                        "file_changes" => deleted.file_changes = n,
                        _ => {}
                    }
                }
                let sessions = tx
                    .execute("DELETE FROM sessions WHERE id = $1", &[id])
                    .await?;
                let nothing = sessions == 0 && deleted == DeletedSession::default();
                Ok((!nothing).then_some(deleted))
            })
        })
    }

    /// [`Backend::record_file_change`](crate::Backend::record_file_change).
    pub(crate) fn pg_record_file_change(
        &self,
        session_id: &str,
        change: &FileChange,
    ) -> Result<(), StoreError> {
        let args = Arc::new((session_id.to_string(), change.clone(), now()));
        self.transact("record a file checkpoint", move |tx, attempt| {
            let args = Arc::clone(&args);
            Box::pin(async move {
                let (id, c, ts) = &*args;
                tx.execute(
                    "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                    &[&FILE_CHANGES_LOCK, id],
                )
                .await?;
                if attempt > 1
                    && tx
                        .query_opt(
                            "SELECT 1 FROM file_changes WHERE session_id = $1 AND created_at = $2
                                 AND tool_use_id = $3 AND path = $4",
                            &[id, ts, &c.tool_use_id, &c.path],
                        )
                        .await?
                        .is_some()
                {
                    // The previous attempt committed before its connection dropped.
                    return Ok(());
                }
                tx.execute(
                    "INSERT INTO file_changes (session_id, seq, prompt_uuid, path, existed,
                         before, after_sha256, tool_use_id, created_at)
                     SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6, $7, $8
                     FROM file_changes WHERE session_id = $1",
                    &[
                        id,
                        &c.prompt_uuid,
                        &c.path,
                        &c.existed,
                        &c.before,
                        &c.after_sha256,
                        &c.tool_use_id,
                        ts,
                    ],
                )
                .await?;
                Ok(())
            })
        })
    }

    /// [`Backend::file_changes`](crate::Backend::file_changes).
    pub(crate) fn pg_file_changes(&self, session_id: &str) -> Result<Vec<FileChange>, StoreError> {
        let id = Arc::new(session_id.to_string());
        self.read("read file checkpoints", move |client| {
            let id = Arc::clone(&id);
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT prompt_uuid, path, existed, before, after_sha256, tool_use_id
                         FROM file_changes WHERE session_id = $1 ORDER BY seq",
                        &[&*id],
                    )
                    .await?;
                Ok(rows
                    .iter()
                    .map(|r| {
                        Ok(FileChange {
                            prompt_uuid: r.try_get(0)?,
                            path: r.try_get(1)?,
                            existed: r.try_get(2)?,
                            before: r.try_get(3)?,
                            after_sha256: r.try_get(4)?,
                            tool_use_id: r.try_get(5)?,
                        })
                    })
                    .collect::<Result<Vec<_>, tokio_postgres::Error>>()?)
            })
        })
    }
}
