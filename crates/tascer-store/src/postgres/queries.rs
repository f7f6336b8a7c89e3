//! The [`Backend`] operations of [`PgBackend`], in SQL.
//!
//! Each operation copies its arguments into owned values (the work runs on
//! the backend's runtime) and is one retried transaction or read. Two
//! writers to one session's messages, or to one session's ledger,
//! serialize on a transaction-level advisory lock keyed by the session
//! (`pg_advisory_xact_lock(class, hashtext(session_id))`); the primary
//! keys `(session_id, seq)` back it up.

use std::sync::Arc;

use futures::future::{BoxFuture, try_join_all};
use parking_lot::Mutex;
use tokio_postgres::types::ToSql;

use super::audit;
use super::error::Failure;
use super::message::OwnedMessage;
use super::rows::{
    entry_from_row, head_from_row, info_from_row, projection_params, to_i64, to_u64,
};
use super::{PgBackend, Tx, exists};
use crate::audit::{DecisionFilter, DecisionRow, HookRunRow, MetricRow};
use crate::backend::{
    AttachedMessage, Backend, BackendKind, BatchBuilder, Blob, EntryRow, MessageRow, NewSession,
    Projection, SessionInfo, SignedHead, StoredMessage, Tail, Totals, now, with_session_id,
};
use crate::error::StoreError;
use crate::file_history::{DeletedSession, FileChange};
use crate::summary::SessionSummary;

/// Advisory lock class of a session's messages.
const MESSAGES_LOCK: i32 = 1;
/// Advisory lock class of a session's ledger.
const LEDGER_LOCK: i32 = 2;

const SELECT_INFO: &str = "SELECT s.id, s.cwd, s.model, s.created_at, s.updated_at, s.forked_from,
        s.num_turns, s.total_cost_usd, s.status, s.first_prompt,
        (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id), s.title
     FROM sessions s";

const SELECT_ENTRY: &str = "SELECT seq, session_id, ts, kind, payload, prev_hash, hash
     FROM ledger_entries WHERE session_id = $1";

const INSERT_ENTRY: &str =
    "INSERT INTO ledger_entries (session_id, seq, ts, kind, payload, prev_hash, hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7)";

const INSERT_BLOB: &str = "INSERT INTO ledger_evidence (session_id, digest, bytes)
     VALUES ($1, $2, $3) ON CONFLICT (session_id, digest) DO NOTHING";

const UPSERT_HEAD: &str =
    "INSERT INTO ledger_heads (session_id, seq, hash, signature, key_id, signed_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash,
         signature = excluded.signature, key_id = excluded.key_id, signed_at = excluded.signed_at";

/// A statement parameter.
type Param<'a> = &'a (dyn ToSql + Sync);
/// One statement of a pipelined batch.
type Write<'a> = BoxFuture<'a, Result<u64, tokio_postgres::Error>>;

/// Takes the transaction-level lock of `class` for a session.
async fn lock_session(tx: &Tx<'_>, class: i32, session_id: &str) -> Result<(), Failure> {
    let stmt = tx
        .prepare_cached("SELECT pg_advisory_xact_lock($1, hashtext($2))")
        .await?;
    tx.execute(&stmt, &[&class, &session_id]).await?;
    Ok(())
}

/// Sends one statement with owned parameters (part of a pipelined batch).
fn send<'a>(
    tx: &'a Tx<'_>,
    stmt: &'a tokio_postgres::Statement,
    values: &'a [Box<dyn ToSql + Sync + Send>],
) -> Write<'a> {
    Box::pin(tx.execute_raw(stmt, values.iter().map(|v| v.as_ref() as Param<'_>)))
}

fn entry_params(row: &EntryRow) -> Vec<Box<dyn ToSql + Sync + Send>> {
    vec![
        Box::new(row.session_id.clone()),
        Box::new(row.seq),
        Box::new(row.ts.clone()),
        Box::new(row.kind.clone()),
        Box::new(row.payload.clone()),
        Box::new(row.prev_hash.clone()),
        Box::new(row.hash.clone()),
    ]
}

fn head_params(head: &SignedHead) -> Vec<Box<dyn ToSql + Sync + Send>> {
    vec![
        Box::new(head.session_id.clone()),
        Box::new(to_i64(head.seq)),
        Box::new(head.hash.clone()),
        Box::new(head.signature.clone()),
        Box::new(head.key_id.clone()),
        Box::new(head.signed_at.clone()),
    ]
}

/// Writes a batch's rows: statements prepared (cached), then sent
/// together (pipelined on the one connection) and awaited.
async fn write_batch(
    tx: &Tx<'_>,
    session_id: &str,
    blobs: &[Blob],
    batch: &crate::backend::LedgerBatch,
) -> Result<(), Failure> {
    let blob_params: Vec<Vec<Box<dyn ToSql + Sync + Send>>> = blobs
        .iter()
        .map(|(digest, bytes)| -> Vec<Box<dyn ToSql + Sync + Send>> {
            vec![
                Box::new(session_id.to_string()),
                Box::new(digest.clone()),
                Box::new(bytes.clone()),
            ]
        })
        .collect();
    let entries: Vec<_> = batch.entries.iter().map(entry_params).collect();
    let projections: Vec<_> = batch
        .projections
        .iter()
        .map(|p| projection_params(session_id, p))
        .collect();
    let head = batch.head.as_ref().map(head_params);

    let blob_stmt = tx.prepare_cached(INSERT_BLOB).await?;
    let entry_stmt = tx.prepare_cached(INSERT_ENTRY).await?;
    let head_stmt = tx.prepare_cached(UPSERT_HEAD).await?;
    let mut projection_stmts = Vec::with_capacity(projections.len());
    for p in &projections {
        projection_stmts.push(tx.prepare_cached(p.sql).await?);
    }

    let mut writes: Vec<Write<'_>> = Vec::new();
    for values in &blob_params {
        writes.push(send(tx, &blob_stmt, values));
    }
    for values in &entries {
        writes.push(send(tx, &entry_stmt, values));
    }
    for (p, stmt) in projections.iter().zip(&projection_stmts) {
        writes.push(send(tx, stmt, &p.values));
    }
    if let Some(values) = &head {
        writes.push(send(tx, &head_stmt, values));
    }
    try_join_all(writes).await?;
    Ok(())
}

/// A fork's file checkpoints: the parent's, of the prompts the fork
/// copied (`$1` the fork, `$2` the parent).
const COPY_FILE_CHANGES: &str = "INSERT INTO file_changes (session_id, seq, prompt_uuid, path,
         existed, before, after_sha256, tool_use_id, created_at)
     SELECT $1, seq, prompt_uuid, path, existed, before, after_sha256, tool_use_id, created_at
     FROM file_changes
     WHERE session_id = $2 AND prompt_uuid IN (SELECT uuid FROM messages WHERE session_id = $1)";

impl Backend for PgBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Postgres
    }

    fn location(&self) -> &str {
        PgBackend::location(self)
    }

    fn keeps_large_evidence(&self) -> bool {
        true
    }

    fn create_session(&self, new: &NewSession<'_>) -> Result<(), StoreError> {
        let args = Arc::new((
            new.id.to_string(),
            new.cwd.to_string(),
            new.model.to_string(),
            new.forked_from.map(str::to_string),
            now(),
        ));
        self.transact("create a session", move |tx, attempt| {
            let args = Arc::clone(&args);
            Box::pin(async move {
                let (id, cwd, model, forked_from, ts) = &*args;
                if attempt > 1
                    && exists(
                        tx,
                        "SELECT 1 FROM sessions WHERE id = $1 AND cwd = $2 AND model = $3
                             AND forked_from IS NOT DISTINCT FROM $4 AND created_at = $5",
                        &[id, cwd, model, forked_from, ts],
                    )
                    .await?
                {
                    // The previous attempt committed before its connection dropped.
                    return Ok(());
                }
                let stmt = tx
                    .prepare_cached(
                        "INSERT INTO sessions (id, cwd, model, created_at, updated_at, forked_from)
                         VALUES ($1, $2, $3, $4, $4, $5) ON CONFLICT (id) DO NOTHING",
                    )
                    .await?;
                if tx
                    .execute(&stmt, &[id, cwd, model, ts, forked_from])
                    .await?
                    == 0
                {
                    return Err(StoreError::AlreadyExists(id.clone()).into());
                }
                Ok(())
            })
        })
    }

    fn append_message(
        &self,
        session_id: &str,
        message: &MessageRow,
        totals: Option<&Totals>,
    ) -> Result<(), StoreError> {
        let args = Arc::new(OwnedMessage::new(session_id, message, totals));
        self.transact("append a message", move |tx, attempt| {
            let args = Arc::clone(&args);
            Box::pin(async move {
                lock_session(tx, MESSAGES_LOCK, &args.session_id).await?;
                if attempt > 1 && args.stored(tx).await? {
                    return Ok(());
                }
                args.insert(tx).await
            })
        })
    }

    fn update_totals(&self, session_id: &str, totals: &Totals) -> Result<(), StoreError> {
        let args = Arc::new((
            session_id.to_string(),
            i64::from(totals.num_turns),
            totals.total_cost_usd,
            totals.status.clone(),
            now(),
        ));
        self.transact("update session totals", move |tx, _| {
            let args = Arc::clone(&args);
            Box::pin(async move {
                let (id, turns, cost, status, ts) = &*args;
                let stmt = tx
                    .prepare_cached(
                        "UPDATE sessions SET num_turns = $2, total_cost_usd = $3, status = $4,
                             updated_at = $5
                         WHERE id = $1",
                    )
                    .await?;
                tx.execute(&stmt, &[id, turns, cost, status, ts]).await?;
                Ok(())
            })
        })
    }

    fn session(&self, id: &str) -> Result<Option<SessionInfo>, StoreError> {
        let id = id.to_string();
        self.read("read a session", move |client| {
            let id = id.clone();
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(&format!("{SELECT_INFO} WHERE s.id = $1"))
                    .await?;
                let row = client.query_opt(&stmt, &[&id]).await?;
                Ok(row.as_ref().map(info_from_row).transpose()?)
            })
        })
    }

    fn latest_for_cwd(&self, cwd: &str) -> Result<Option<SessionInfo>, StoreError> {
        let cwd = cwd.to_string();
        self.read("read the latest session", move |client| {
            let cwd = cwd.clone();
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(&format!(
                        "{SELECT_INFO} WHERE s.cwd = $1
                         ORDER BY s.updated_at DESC, s.row_no DESC LIMIT 1"
                    ))
                    .await?;
                let row = client.query_opt(&stmt, &[&cwd]).await?;
                Ok(row.as_ref().map(info_from_row).transpose()?)
            })
        })
    }

    fn list(&self, limit: usize) -> Result<Vec<SessionInfo>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read("list sessions", move |client| {
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(&format!(
                        "{SELECT_INFO} ORDER BY s.updated_at DESC, s.row_no DESC LIMIT $1"
                    ))
                    .await?;
                let rows = client.query(&stmt, &[&limit]).await?;
                Ok(rows
                    .iter()
                    .map(info_from_row)
                    .collect::<Result<Vec<_>, _>>()?)
            })
        })
    }

    fn messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        let id = session_id.to_string();
        self.read("read messages", move |client| {
            let id = id.clone();
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(
                        "SELECT seq, data FROM messages WHERE session_id = $1 ORDER BY seq",
                    )
                    .await?;
                let rows = client.query(&stmt, &[&id]).await?;
                Ok(rows
                    .iter()
                    .map(|r| {
                        Ok(StoredMessage {
                            seq: r.try_get(0)?,
                            data: r.try_get(1)?,
                        })
                    })
                    .collect::<Result<Vec<_>, tokio_postgres::Error>>()?)
            })
        })
    }

    fn fork(&self, from: &str, new_id: &str, through_seq: Option<i64>) -> Result<(), StoreError> {
        let args = Arc::new((from.to_string(), new_id.to_string(), now(), through_seq));
        self.transact("fork a session", move |tx, attempt| {
            let args = Arc::clone(&args);
            Box::pin(async move {
                let (from, new_id, ts, through_seq) = &*args;
                if attempt > 1
                    && exists(
                        tx,
                        "SELECT 1 FROM sessions WHERE id = $1 AND forked_from = $2
                             AND created_at = $3",
                        &[new_id, from, ts],
                    )
                    .await?
                {
                    return Ok(());
                }
                lock_session(tx, MESSAGES_LOCK, from).await?;
                let info = tx
                    .prepare_cached(&format!("{SELECT_INFO} WHERE s.id = $1"))
                    .await?;
                let source = match tx.query_opt(&info, &[from]).await? {
                    Some(row) => info_from_row(&row)?,
                    None => return Err(StoreError::NotFound(from.clone()).into()),
                };
                let insert = tx
                    .prepare_cached(
                        "INSERT INTO sessions (id, cwd, model, created_at, updated_at, forked_from,
                             first_prompt)
                         VALUES ($1, $2, $3, $4, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
                    )
                    .await?;
                let inserted = tx
                    .execute(
                        &insert,
                        &[
                            new_id,
                            &source.cwd,
                            &source.model,
                            ts,
                            from,
                            &source.first_prompt,
                        ],
                    )
                    .await?;
                if inserted == 0 {
                    return Err(StoreError::AlreadyExists(new_id.clone()).into());
                }
                let select = tx
                    .prepare_cached(
                        "SELECT seq, uuid, kind, data FROM messages WHERE session_id = $1
                             AND ($2::BIGINT IS NULL OR seq <= $2) ORDER BY seq",
                    )
                    .await?;
                let copies = tx
                    .query(&select, &[from, through_seq])
                    .await?
                    .iter()
                    .map(|r| -> Result<Vec<Box<dyn ToSql + Sync + Send>>, Failure> {
                        let seq: i64 = r.try_get(0)?;
                        let data: String = r.try_get(3)?;
                        let data = with_session_id(&data, new_id).map_err(|source| {
                            StoreError::Corrupt {
                                session_id: from.clone(),
                                seq,
                                source,
                            }
                        })?;
                        Ok(vec![
                            Box::new(new_id.clone()),
                            Box::new(seq),
                            Box::new(r.try_get::<_, String>(1)?),
                            Box::new(r.try_get::<_, String>(2)?),
                            Box::new(data),
                            Box::new(ts.clone()),
                        ])
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let copy = tx
                    .prepare_cached(
                        "INSERT INTO messages (session_id, seq, uuid, kind, data, created_at)
                         VALUES ($1, $2, $3, $4, $5, $6)",
                    )
                    .await?;
                try_join_all(copies.iter().map(|values| send(tx, &copy, values))).await?;
                let files = tx.prepare_cached(COPY_FILE_CHANGES).await?;
                tx.execute(&files, &[new_id, from]).await?;
                Ok(())
            })
        })
    }

    fn session_summary(&self, session_id: &str) -> Result<Option<SessionSummary>, StoreError> {
        let id = session_id.to_string();
        self.read("read a session summary", move |client| {
            let id = id.clone();
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(
                        "SELECT s.model, s.total_cost_usd, s.num_turns, s.forked_from,
                             (SELECT COUNT(*) FROM messages m
                              WHERE m.session_id = s.id AND m.kind = 'assistant'),
                             (SELECT COUNT(*) FROM messages m
                              WHERE m.session_id = s.id AND m.kind = 'user'
                                AND jsonb_typeof(m.data::jsonb -> 'message' -> 'content')
                                    = 'string')
                         FROM sessions s WHERE s.id = $1",
                    )
                    .await?;
                let Some(r) = client.query_opt(&stmt, &[&id]).await? else {
                    return Ok(None);
                };
                Ok(Some(SessionSummary {
                    model: r.try_get(0)?,
                    total_cost_usd: r.try_get(1)?,
                    num_turns: u32::try_from(r.try_get::<_, i64>(2)?).unwrap_or(0),
                    forked_from: r.try_get(3)?,
                    assistant_messages: to_u64(r.try_get(4)?),
                    prompts: to_u64(r.try_get(5)?),
                }))
            })
        })
    }

    fn set_title(&self, session_id: &str, title: &str) -> Result<bool, StoreError> {
        self.pg_set_title(session_id, title)
    }

    fn delete_session(&self, session_id: &str) -> Result<Option<DeletedSession>, StoreError> {
        self.pg_delete_session(session_id)
    }

    fn record_file_change(&self, session_id: &str, change: &FileChange) -> Result<(), StoreError> {
        self.pg_record_file_change(session_id, change)
    }

    fn file_changes(&self, session_id: &str) -> Result<Vec<FileChange>, StoreError> {
        self.pg_file_changes(session_id)
    }

    fn append_entries(
        &self,
        session_id: &str,
        blobs: &[Blob],
        build: BatchBuilder,
        message: Option<AttachedMessage<'_>>,
    ) -> Result<(), StoreError> {
        let session = Arc::new(session_id.to_string());
        let message = Arc::new(
            message.map(|attached| OwnedMessage::new(session_id, attached.row, attached.totals)),
        );
        let blobs = Arc::new(blobs.to_vec());
        let build = Arc::new(Mutex::new(build));
        // (seq, hash) of the last entry the previous attempt wrote.
        let previous: Arc<Mutex<Option<(i64, String)>>> = Arc::default();
        self.transact("append to the ledger", move |tx, attempt| {
            let (session, message, blobs, build, previous) = (
                Arc::clone(&session),
                Arc::clone(&message),
                Arc::clone(&blobs),
                Arc::clone(&build),
                Arc::clone(&previous),
            );
            Box::pin(async move {
                // Messages before the ledger, as every writer that takes
                // both locks does.
                if let Some(message) = &*message {
                    lock_session(tx, MESSAGES_LOCK, &session).await?;
                    if attempt > 1 && message.stored(tx).await? {
                        // The previous attempt committed (message and
                        // entries together) before its connection dropped.
                        return Ok(());
                    }
                }
                lock_session(tx, LEDGER_LOCK, &session).await?;
                let written = previous.lock().clone();
                if let Some((seq, hash)) = written.filter(|_| attempt > 1)
                    && exists(
                        tx,
                        "SELECT 1 FROM ledger_entries WHERE session_id = $1 AND seq = $2
                             AND hash = $3",
                        &[&*session, &seq, &hash],
                    )
                    .await?
                {
                    // The previous attempt committed before its connection dropped.
                    return Ok(());
                }
                let last = tx
                    .prepare_cached(
                        "SELECT seq, hash FROM ledger_entries WHERE session_id = $1
                         ORDER BY seq DESC LIMIT 1",
                    )
                    .await?;
                let tail = match tx.query_opt(&last, &[&*session]).await? {
                    Some(row) => Some(Tail {
                        seq: to_u64(row.try_get(0)?),
                        hash: row.try_get(1)?,
                    }),
                    None => None,
                };
                let batch = {
                    let mut build = build.lock();
                    (*build)(tail.as_ref()).map_err(StoreError::Build)?
                };
                *previous.lock() = batch.entries.last().map(|e| (e.seq, e.hash.clone()));
                write_batch(tx, &session, &blobs, &batch).await?;
                if let Some(message) = &*message {
                    message.insert(tx).await?;
                }
                Ok(())
            })
        })
    }

    fn entries(&self, session_id: &str) -> Result<Vec<EntryRow>, StoreError> {
        let id = session_id.to_string();
        self.read("read ledger entries", move |client| {
            let id = id.clone();
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(&format!("{SELECT_ENTRY} ORDER BY seq"))
                    .await?;
                let rows = client.query(&stmt, &[&id]).await?;
                Ok(rows
                    .iter()
                    .map(entry_from_row)
                    .collect::<Result<Vec<_>, _>>()?)
            })
        })
    }

    fn last_entry(&self, session_id: &str) -> Result<Option<EntryRow>, StoreError> {
        let id = session_id.to_string();
        self.read("read the last ledger entry", move |client| {
            let id = id.clone();
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(&format!("{SELECT_ENTRY} ORDER BY seq DESC LIMIT 1"))
                    .await?;
                let row = client.query_opt(&stmt, &[&id]).await?;
                Ok(row.as_ref().map(entry_from_row).transpose()?)
            })
        })
    }

    fn head(&self, session_id: &str) -> Result<Option<SignedHead>, StoreError> {
        let id = session_id.to_string();
        self.read("read a ledger head", move |client| {
            let id = id.clone();
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(
                        "SELECT session_id, seq, hash, signature, key_id, signed_at
                         FROM ledger_heads WHERE session_id = $1",
                    )
                    .await?;
                let row = client.query_opt(&stmt, &[&id]).await?;
                Ok(row.as_ref().map(head_from_row).transpose()?)
            })
        })
    }

    fn put_head(&self, head: &SignedHead) -> Result<(), StoreError> {
        let values = Arc::new(head_params(head));
        self.transact("write a ledger head", move |tx, _| {
            let values = Arc::clone(&values);
            Box::pin(async move {
                let stmt = tx.prepare_cached(UPSERT_HEAD).await?;
                send(tx, &stmt, &values).await?;
                Ok(())
            })
        })
    }

    fn ledger_sessions(&self) -> Result<Vec<String>, StoreError> {
        self.read("list ledger sessions", move |client| {
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(
                        "SELECT session_id FROM ledger_entries GROUP BY session_id
                         ORDER BY session_id COLLATE \"C\"",
                    )
                    .await?;
                let rows = client.query(&stmt, &[]).await?;
                Ok(rows
                    .iter()
                    .map(|r| r.try_get(0))
                    .collect::<Result<Vec<_>, _>>()?)
            })
        })
    }

    fn put_blob(&self, session_id: &str, digest: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let values: Arc<Vec<Box<dyn ToSql + Sync + Send>>> = Arc::new(vec![
            Box::new(session_id.to_string()),
            Box::new(digest.to_string()),
            Box::new(bytes.to_vec()),
        ]);
        self.transact("store evidence", move |tx, _| {
            let values = Arc::clone(&values);
            Box::pin(async move {
                let stmt = tx.prepare_cached(INSERT_BLOB).await?;
                send(tx, &stmt, &values).await?;
                Ok(())
            })
        })
    }

    fn blob(&self, session_id: &str, digest: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let args = Arc::new((session_id.to_string(), digest.to_string()));
        self.read("read evidence", move |client| {
            let args = Arc::clone(&args);
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(
                        "SELECT bytes FROM ledger_evidence WHERE session_id = $1 AND digest = $2",
                    )
                    .await?;
                let row = client.query_opt(&stmt, &[&args.0, &args.1]).await?;
                Ok(row.map(|r| r.try_get(0)).transpose()?)
            })
        })
    }

    fn blobs(&self, session_id: &str) -> Result<Vec<Blob>, StoreError> {
        let id = session_id.to_string();
        self.read("read evidence", move |client| {
            let id = id.clone();
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(
                        "SELECT digest, bytes FROM ledger_evidence WHERE session_id = $1
                         ORDER BY digest COLLATE \"C\"",
                    )
                    .await?;
                let rows = client.query(&stmt, &[&id]).await?;
                Ok(rows
                    .iter()
                    .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                    .collect::<Result<Vec<_>, tokio_postgres::Error>>()?)
            })
        })
    }

    fn record_metric(&self, session_id: &str, metric: &Projection) -> Result<(), StoreError> {
        let params = Arc::new(projection_params(session_id, metric));
        self.transact("record a metric", move |tx, _| {
            let params = Arc::clone(&params);
            Box::pin(async move {
                let stmt = tx.prepare_cached(params.sql).await?;
                send(tx, &stmt, &params.values).await?;
                Ok(())
            })
        })
    }

    fn tool_call_records(&self, session_id: &str) -> Result<Vec<String>, StoreError> {
        let id = session_id.to_string();
        self.read("read tool calls", move |client| {
            let id = id.clone();
            Box::pin(async move {
                let stmt = client
                    .prepare_cached(
                        "SELECT record FROM tool_calls WHERE session_id = $1 ORDER BY opened_seq",
                    )
                    .await?;
                let rows = client.query(&stmt, &[&id]).await?;
                Ok(rows
                    .iter()
                    .map(|r| r.try_get(0))
                    .collect::<Result<Vec<_>, _>>()?)
            })
        })
    }

    fn import_entries(&self, rows: &[EntryRow]) -> Result<(), StoreError> {
        let rows: Arc<Vec<_>> = Arc::new(rows.iter().map(entry_params).collect());
        self.transact("import ledger entries", move |tx, _| {
            let rows = Arc::clone(&rows);
            Box::pin(async move {
                let stmt = tx.prepare_cached(INSERT_ENTRY).await?;
                try_join_all(rows.iter().map(|values| send(tx, &stmt, values))).await?;
                Ok(())
            })
        })
    }

    fn decisions(&self, filter: &DecisionFilter) -> Result<Vec<DecisionRow>, StoreError> {
        audit::decisions(self, filter)
    }

    fn hook_runs(&self, session_id: &str) -> Result<Vec<HookRunRow>, StoreError> {
        audit::hook_runs(self, session_id)
    }

    fn metrics(&self, session_id: &str) -> Result<Vec<MetricRow>, StoreError> {
        audit::metrics(self, session_id)
    }
}
