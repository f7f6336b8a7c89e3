//! [`SqliteBackend`]: everything in one SQLite file (WAL), through the one
//! write path of [`Db`] (`BEGIN IMMEDIATE`, busy timeout, retries).

use std::path::Path;
use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, params};

use crate::audit::{DecisionFilter, DecisionRow, HookRunRow, MetricRow};
use crate::backend::{
    AttachedMessage, Backend, BackendKind, BatchBuilder, Blob, EntryRow, MessageRow, NewSession,
    Projection, SessionInfo, SignedHead, StoredMessage, Tail, Totals, now, with_session_id,
};
use crate::db::Db;
use crate::error::StoreError;
use crate::file_history::{DeletedSession, FileChange};
use crate::schema;
use crate::sqlite_audit;
use crate::sqlite_sessions;
use crate::summary::SessionSummary;

/// The SQLite backend: sessions, messages and the ledger's tables in one
/// database file, shared by every process of a Tascer home.
#[derive(Debug)]
pub struct SqliteBackend {
    db: Arc<Db>,
    location: String,
    /// The file as opened (device and inode), to tell when it was
    /// replaced.
    identity: Option<(u64, u64)>,
}

impl SqliteBackend {
    /// Opens (creating if needed) the database at `path`, with its own
    /// connection.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::with_db(Arc::new(Db::open(path)?))
    }

    /// Opens the database at `path` for a short-lived process (a hook
    /// process writes a few entries and exits): its connection leaves the
    /// WAL in place on close, for the next process, and
    /// [`Backend::bound_wal`] truncates the WAL once it grows.
    pub fn open_short_lived(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let db = Db::open(path)?;
        db.keep_wal_on_close();
        Self::with_db(Arc::new(db))
    }

    /// The backend over an open database; creates missing tables.
    pub fn with_db(db: Arc<Db>) -> Result<Self, StoreError> {
        db.ensure_schema(schema::TABLES, schema::SCHEMA)?;
        sqlite_audit::migrate(&db)?;
        sqlite_sessions::migrate(&db)?;
        let location = db.path().display().to_string();
        let identity = file_identity(db.path());
        Ok(SqliteBackend {
            db,
            location,
            identity,
        })
    }

    /// The database handle, to share with the local tables (the
    /// reviewers' cache, the webhook outbox).
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }
}

/// The device and inode of a file (`None` when absent): what changes when
/// a file is replaced or deleted, not when it is written.
fn file_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// A fork's file checkpoints: the parent's, of the prompts the fork
/// copied (`?1` the fork, `?2` the parent).
const COPY_FILE_CHANGES: &str = "INSERT INTO file_changes (session_id, seq, prompt_uuid, path,
         existed, before, after_sha256, tool_use_id, created_at)
     SELECT ?1, seq, prompt_uuid, path, existed, before, after_sha256, tool_use_id, created_at
     FROM file_changes
     WHERE session_id = ?2 AND prompt_uuid IN (SELECT uuid FROM messages WHERE session_id = ?1)";

impl Backend for SqliteBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Sqlite
    }

    fn location(&self) -> &str {
        &self.location
    }

    fn local_db(&self, _home: &Path) -> Result<Arc<Db>, StoreError> {
        Ok(Arc::clone(&self.db))
    }

    fn bound_wal(&self) {
        self.db.bound_wal();
    }

    fn checkpoint_wal_in_place(&self) {
        self.db.checkpoint_in_place();
    }

    fn wal_checkpoint_due(&self) -> bool {
        self.db.checkpoint_due()
    }

    fn replaced(&self) -> bool {
        file_identity(self.db.path()) != self.identity
    }

    fn keeps_large_evidence(&self) -> bool {
        false
    }

    fn create_session(&self, new: &NewSession<'_>) -> Result<(), StoreError> {
        let ts = now();
        self.db.write(|tx| insert_session(tx, new, &ts))
    }

    fn append_message(
        &self,
        session_id: &str,
        message: &MessageRow,
        totals: Option<&Totals>,
    ) -> Result<(), StoreError> {
        let ts = now();
        self.db
            .write(|tx| Ok(insert_message(tx, session_id, message, totals, &ts)?))
    }

    fn update_totals(&self, session_id: &str, totals: &Totals) -> Result<(), StoreError> {
        let ts = now();
        self.db.write(|tx| {
            tx.prepare_cached(
                "UPDATE sessions SET num_turns = ?2, total_cost_usd = ?3, status = ?4,
                     updated_at = ?5
                 WHERE id = ?1",
            )?
            .execute(params![
                session_id,
                totals.num_turns,
                totals.total_cost_usd,
                totals.status,
                ts
            ])?;
            Ok(())
        })
    }

    fn session(&self, id: &str) -> Result<Option<SessionInfo>, StoreError> {
        self.db.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!("{SELECT_INFO} WHERE s.id = ?1"))?;
            Ok(stmt.query_row(params![id], info_from_row).optional()?)
        })
    }

    fn latest_for_cwd(&self, cwd: &str) -> Result<Option<SessionInfo>, StoreError> {
        self.db.read(|conn| {
            let mut stmt = conn.prepare(&format!(
                "{SELECT_INFO} WHERE s.cwd = ?1 ORDER BY s.updated_at DESC, s.rowid DESC LIMIT 1"
            ))?;
            Ok(stmt.query_row(params![cwd], info_from_row).optional()?)
        })
    }

    fn list(&self, limit: usize) -> Result<Vec<SessionInfo>, StoreError> {
        self.db.read(|conn| {
            let mut stmt = conn.prepare(&format!(
                "{SELECT_INFO} ORDER BY s.updated_at DESC, s.rowid DESC LIMIT ?1"
            ))?;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = stmt.query_map(params![limit], info_from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    fn messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        self.db.read(|conn| {
            let mut stmt =
                conn.prepare("SELECT seq, data FROM messages WHERE session_id = ?1 ORDER BY seq")?;
            let rows = stmt.query_map(params![session_id], |r| {
                Ok(StoredMessage {
                    seq: r.get(0)?,
                    data: r.get(1)?,
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    fn fork(&self, from: &str, new_id: &str, through_seq: Option<i64>) -> Result<(), StoreError> {
        let ts = now();
        self.db.write(|tx| {
            let source = tx
                .prepare_cached(&format!("{SELECT_INFO} WHERE s.id = ?1"))?
                .query_row(params![from], info_from_row)
                .optional()?
                .ok_or_else(|| StoreError::NotFound(from.to_string()))?;
            insert_session(
                tx,
                &NewSession {
                    id: new_id,
                    cwd: &source.cwd,
                    model: &source.model,
                    forked_from: Some(from),
                },
                &ts,
            )?;
            let rows: Vec<(i64, String, String, String)> = {
                let mut stmt = tx.prepare(
                    "SELECT seq, uuid, kind, data FROM messages
                     WHERE session_id = ?1 AND (?2 IS NULL OR seq <= ?2) ORDER BY seq",
                )?;
                stmt.query_map(params![from, through_seq], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })?
                .collect::<Result<_, _>>()?
            };
            for (seq, uuid, kind, data) in rows {
                let data =
                    with_session_id(&data, new_id).map_err(|source| StoreError::Corrupt {
                        session_id: from.to_string(),
                        seq,
                        source,
                    })?;
                tx.execute(
                    "INSERT INTO messages (session_id, seq, uuid, kind, data, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![new_id, seq, uuid, kind, data, ts],
                )?;
            }
            tx.execute(
                "UPDATE sessions SET first_prompt = ?2 WHERE id = ?1",
                params![new_id, source.first_prompt],
            )?;
            tx.execute(COPY_FILE_CHANGES, params![new_id, from])?;
            Ok::<_, StoreError>(())
        })
    }

    fn session_summary(&self, session_id: &str) -> Result<Option<SessionSummary>, StoreError> {
        self.db.read(|conn| {
            Ok(conn
                .query_row(
                    "SELECT s.model, s.total_cost_usd, s.num_turns, s.forked_from,
                         (SELECT COUNT(*) FROM messages m
                          WHERE m.session_id = s.id AND m.kind = 'assistant'),
                         (SELECT COUNT(*) FROM messages m
                          WHERE m.session_id = s.id AND m.kind = 'user'
                            AND json_type(m.data, '$.message.content') = 'text')
                     FROM sessions s WHERE s.id = ?1",
                    params![session_id],
                    |r| {
                        Ok(SessionSummary {
                            model: r.get(0)?,
                            total_cost_usd: r.get(1)?,
                            num_turns: r.get(2)?,
                            forked_from: r.get(3)?,
                            assistant_messages: u64::try_from(r.get::<_, i64>(4)?).unwrap_or(0),
                            prompts: u64::try_from(r.get::<_, i64>(5)?).unwrap_or(0),
                        })
                    },
                )
                .optional()?)
        })
    }

    fn set_title(&self, session_id: &str, title: &str) -> Result<bool, StoreError> {
        sqlite_sessions::set_title(&self.db, session_id, title)
    }

    fn delete_session(&self, session_id: &str) -> Result<Option<DeletedSession>, StoreError> {
        sqlite_sessions::delete_session(&self.db, session_id)
    }

    fn record_file_change(&self, session_id: &str, change: &FileChange) -> Result<(), StoreError> {
        sqlite_sessions::record_file_change(&self.db, session_id, change)
    }

    fn file_changes(&self, session_id: &str) -> Result<Vec<FileChange>, StoreError> {
        sqlite_sessions::file_changes(&self.db, session_id)
    }

    fn append_entries(
        &self,
        session_id: &str,
        blobs: &[Blob],
        mut build: BatchBuilder,
        message: Option<AttachedMessage<'_>>,
    ) -> Result<(), StoreError> {
        let ts = now();
        // BEGIN IMMEDIATE holds the file's write lock: the tail cannot
        // move under the builder.
        self.db.write(|tx| {
            for (digest, bytes) in blobs {
                insert_blob(tx, session_id, digest, bytes)?;
            }
            let tail = tx
                .prepare_cached(
                    "SELECT seq, hash FROM ledger_entries WHERE session_id = ?1
                     ORDER BY seq DESC LIMIT 1",
                )?
                .query_row(params![session_id], |r| {
                    Ok(Tail {
                        seq: u64::try_from(r.get::<_, i64>(0)?).unwrap_or(0),
                        hash: r.get(1)?,
                    })
                })
                .optional()?;
            let batch = build(tail.as_ref()).map_err(StoreError::Build)?;
            for row in &batch.entries {
                insert_entry(tx, row, false)?;
            }
            for projection in &batch.projections {
                project(tx, session_id, projection)?;
            }
            if let Some(head) = &batch.head {
                write_head(tx, head)?;
            }
            if let Some(attached) = message {
                insert_message(tx, session_id, attached.row, attached.totals, &ts)?;
            }
            Ok(())
        })
    }

    fn entries(&self, session_id: &str) -> Result<Vec<EntryRow>, StoreError> {
        self.db.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT seq, session_id, ts, kind, payload, prev_hash, hash
                 FROM ledger_entries WHERE session_id = ?1 ORDER BY seq",
            )?;
            let rows = stmt.query_map(params![session_id], entry_from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    fn last_entry(&self, session_id: &str) -> Result<Option<EntryRow>, StoreError> {
        self.db.read(|conn| {
            Ok(conn
                .query_row(
                    "SELECT seq, session_id, ts, kind, payload, prev_hash, hash
                     FROM ledger_entries WHERE session_id = ?1 ORDER BY seq DESC LIMIT 1",
                    params![session_id],
                    entry_from_row,
                )
                .optional()?)
        })
    }

    fn head(&self, session_id: &str) -> Result<Option<SignedHead>, StoreError> {
        self.db.read(|conn| {
            // Cached: a hook server reads it at every event, where parsing
            // the statement again cost more than the read itself.
            Ok(conn
                .prepare_cached(
                    "SELECT session_id, seq, hash, signature, key_id, signed_at
                     FROM ledger_heads WHERE session_id = ?1",
                )?
                .query_row(params![session_id], |r| {
                    Ok(SignedHead {
                        session_id: r.get(0)?,
                        seq: u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                        hash: r.get(2)?,
                        signature: r.get(3)?,
                        key_id: r.get(4)?,
                        signed_at: r.get(5)?,
                    })
                })
                .optional()?)
        })
    }

    fn put_head(&self, head: &SignedHead) -> Result<(), StoreError> {
        self.db.write(|tx| Ok(write_head(tx, head)?))
    }

    fn ledger_sessions(&self) -> Result<Vec<String>, StoreError> {
        self.db.read(|conn| {
            let mut stmt =
                conn.prepare("SELECT DISTINCT session_id FROM ledger_entries ORDER BY session_id")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    fn put_blob(&self, session_id: &str, digest: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.db
            .write(|tx| Ok(insert_blob(tx, session_id, digest, bytes)?))
    }

    fn blob(&self, session_id: &str, digest: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.db.read(|conn| {
            Ok(conn
                .prepare_cached(
                    "SELECT bytes FROM ledger_evidence WHERE session_id = ?1 AND digest = ?2",
                )?
                .query_row(params![session_id, digest], |r| r.get(0))
                .optional()?)
        })
    }

    fn blobs(&self, session_id: &str) -> Result<Vec<Blob>, StoreError> {
        self.db.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT digest, bytes FROM ledger_evidence WHERE session_id = ?1 ORDER BY digest",
            )?;
            let rows = stmt.query_map(params![session_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    fn record_metric(&self, session_id: &str, metric: &Projection) -> Result<(), StoreError> {
        self.db.write(|tx| Ok(project(tx, session_id, metric)?))
    }

    fn tool_call_records(&self, session_id: &str) -> Result<Vec<String>, StoreError> {
        self.db.read(|conn| {
            // An upsert keeps the row's rowid: rowid order is the order
            // the calls were opened in.
            let mut stmt =
                conn.prepare("SELECT record FROM tool_calls WHERE session_id = ?1 ORDER BY rowid")?;
            let rows = stmt.query_map(params![session_id], |r| r.get::<_, String>(0))?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    fn import_entries(&self, rows: &[EntryRow]) -> Result<(), StoreError> {
        self.db.write(|tx| {
            for row in rows {
                insert_entry(tx, row, true)?;
            }
            Ok(())
        })
    }

    fn decisions(&self, filter: &DecisionFilter) -> Result<Vec<DecisionRow>, StoreError> {
        self.db.read(|conn| sqlite_audit::decisions(conn, filter))
    }

    fn hook_runs(&self, session_id: &str) -> Result<Vec<HookRunRow>, StoreError> {
        self.db
            .read(|conn| sqlite_audit::hook_runs(conn, session_id))
    }

    fn metrics(&self, session_id: &str) -> Result<Vec<MetricRow>, StoreError> {
        self.db.read(|conn| sqlite_audit::metrics(conn, session_id))
    }
}

/// Inserts a session row, refusing an id that exists.
/// Appends `message` at the next seq of its session and records `totals`
/// (when given) on the session row.
fn insert_message(
    tx: &Connection,
    session_id: &str,
    message: &MessageRow,
    totals: Option<&Totals>,
    ts: &str,
) -> rusqlite::Result<()> {
    let seq: i64 = tx
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?1")?
        .query_row(params![session_id], |r| r.get(0))?;
    tx.prepare_cached(
        "INSERT INTO messages (session_id, seq, uuid, kind, data, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        session_id,
        seq,
        message.uuid,
        message.kind,
        message.data,
        ts
    ])?;
    tx.prepare_cached(
        "UPDATE sessions SET updated_at = ?2,
             first_prompt = COALESCE(first_prompt, ?3),
             num_turns = COALESCE(?4, num_turns),
             total_cost_usd = COALESCE(?5, total_cost_usd),
             status = COALESCE(?6, status)
         WHERE id = ?1",
    )?
    .execute(params![
        session_id,
        ts,
        message.prompt,
        totals.map(|t| t.num_turns),
        totals.map(|t| t.total_cost_usd),
        totals.map(|t| t.status.as_str())
    ])?;
    Ok(())
}

fn insert_session(
    tx: &rusqlite::Transaction<'_>,
    new: &NewSession<'_>,
    ts: &str,
) -> Result<(), StoreError> {
    let exists: Option<String> = tx
        .prepare_cached("SELECT id FROM sessions WHERE id = ?1")?
        .query_row(params![new.id], |r| r.get(0))
        .optional()?;
    if exists.is_some() {
        return Err(StoreError::AlreadyExists(new.id.to_string()));
    }
    tx.prepare_cached(
        "INSERT INTO sessions (id, cwd, model, created_at, updated_at, forked_from)
         VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
    )?
    .execute(params![new.id, new.cwd, new.model, ts, new.forked_from])?;
    Ok(())
}

const SELECT_INFO: &str = "SELECT s.id, s.cwd, s.model, s.created_at, s.updated_at, s.forked_from,
        s.num_turns, s.total_cost_usd, s.status, s.first_prompt,
        (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id), s.title
     FROM sessions s";

fn info_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionInfo> {
    Ok(SessionInfo {
        id: r.get(0)?,
        cwd: r.get(1)?,
        model: r.get(2)?,
        created_at: r.get(3)?,
        updated_at: r.get(4)?,
        forked_from: r.get(5)?,
        num_turns: r.get(6)?,
        total_cost_usd: r.get(7)?,
        status: r.get(8)?,
        first_prompt: r.get(9)?,
        message_count: u64::try_from(r.get::<_, i64>(10)?).unwrap_or(0),
        title: r.get(11)?,
    })
}

fn entry_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EntryRow> {
    Ok(EntryRow {
        seq: r.get(0)?,
        session_id: r.get(1)?,
        ts: r.get(2)?,
        kind: r.get(3)?,
        payload: r.get(4)?,
        prev_hash: r.get(5)?,
        hash: r.get(6)?,
    })
}

/// Inserts a ledger row; `replace` overwrites a row with the same
/// `(session_id, seq)` (imports into a scratch store only).
fn insert_entry(conn: &Connection, row: &EntryRow, replace: bool) -> rusqlite::Result<()> {
    let sql = if replace {
        "INSERT OR REPLACE INTO ledger_entries (session_id, seq, ts, kind, payload, prev_hash, hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
    } else {
        "INSERT INTO ledger_entries (session_id, seq, ts, kind, payload, prev_hash, hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
    };
    conn.prepare_cached(sql)?.execute(params![
        row.session_id,
        row.seq,
        row.ts,
        row.kind,
        row.payload,
        row.prev_hash,
        row.hash
    ])?;
    Ok(())
}

fn insert_blob(
    conn: &Connection,
    session_id: &str,
    digest: &str,
    bytes: &[u8],
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO ledger_evidence (session_id, digest, bytes) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![session_id, digest, bytes])?;
    Ok(())
}

fn write_head(conn: &Connection, head: &SignedHead) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO ledger_heads (session_id, seq, hash, signature, key_id, signed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash,
             signature = excluded.signature, key_id = excluded.key_id,
             signed_at = excluded.signed_at",
    )?
    .execute(params![
        head.session_id,
        i64::try_from(head.seq).unwrap_or(i64::MAX),
        head.hash,
        head.signature,
        head.key_id,
        head.signed_at
    ])?;
    Ok(())
}

/// Writes one query row.
fn project(conn: &Connection, session_id: &str, projection: &Projection) -> rusqlite::Result<()> {
    let seq = |s: &u64| i64::try_from(*s).unwrap_or(i64::MAX);
    match projection {
        Projection::ToolCall {
            tool_use_id,
            seq: s,
            tool,
            status,
            started_at,
            finished_at,
            proof_hash,
            record,
        } => conn
            .prepare_cached(
                "INSERT INTO tool_calls (session_id, tool_use_id, seq, tool, status,
                     started_at, finished_at, proof_hash, record)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (session_id, tool_use_id) DO UPDATE SET seq = excluded.seq,
                     tool = excluded.tool, status = excluded.status,
                     started_at = excluded.started_at, finished_at = excluded.finished_at,
                     proof_hash = excluded.proof_hash, record = excluded.record",
            )?
            .execute(params![
                session_id,
                tool_use_id,
                seq(s),
                tool,
                status,
                started_at,
                finished_at,
                proof_hash,
                record
            ]),
        Projection::PermissionDecision(row) => sqlite_audit::insert_decision(conn, session_id, row),
        Projection::HookExecution(row) => sqlite_audit::insert_hook_run(conn, session_id, row),
        Projection::Metric(row) => sqlite_audit::insert_metric(conn, session_id, row),
    }
    .map(|_| ())
}
