//! The SQLite ledger store.
//!
//! The ledger lives in the same database file as the session store
//! (`$TASCER_HOME/tascer.db`) but in its own tables, written through the
//! store's write path ([`tascer_store::Db::write`]: `BEGIN IMMEDIATE`,
//! busy timeout, retries with backoff), over the same connection when the
//! two are opened on one [`Db`]. `ledger_entries` and `ledger_heads` are the record;
//! `tool_calls`, `permission_decisions`, `hook_executions` and `metrics`
//! are projections for queries, rebuilt from entries as they are appended
//! and never trusted by verification. `ledger_evidence` holds small
//! evidence blobs by digest (see [`crate::evidence`]); like evidence files,
//! they are checked against their digest, never trusted.

use std::path::Path;
use std::sync::Arc;

use ed25519_dalek::SigningKey;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use tascer_store::Db;

use crate::digest::GENESIS_PREV_HASH;
use crate::entry::{EntryKind, LedgerEntry, now_ts};
use crate::error::{LedgerError, Result};
use crate::jcs;
use crate::record::ToolRecord;
use crate::sign::SignedHead;

/// The ledger's tables.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ledger_entries (
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    ts         TEXT NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    prev_hash  TEXT NOT NULL,
    hash       TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS ledger_heads (
    session_id TEXT PRIMARY KEY,
    seq        INTEGER NOT NULL,
    hash       TEXT NOT NULL,
    signature  TEXT,
    key_id     TEXT,
    signed_at  TEXT
);
CREATE TABLE IF NOT EXISTS tool_calls (
    session_id  TEXT NOT NULL,
    tool_use_id TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    tool        TEXT NOT NULL,
    status      TEXT NOT NULL,
    started_at  TEXT,
    finished_at TEXT,
    proof_hash  TEXT,
    record      TEXT NOT NULL,
    PRIMARY KEY (session_id, tool_use_id)
);
CREATE TABLE IF NOT EXISTS permission_decisions (
    session_id  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    tool_use_id TEXT,
    decision    TEXT,
    data        TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS hook_executions (
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    event      TEXT,
    data       TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS metrics (
    session_id TEXT NOT NULL,
    name       TEXT NOT NULL,
    value      REAL,
    data       TEXT,
    ts         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS metrics_by_session ON metrics (session_id, name);
CREATE TABLE IF NOT EXISTS ledger_evidence (
    session_id TEXT NOT NULL,
    digest     TEXT NOT NULL,
    bytes      BLOB NOT NULL,
    PRIMARY KEY (session_id, digest)
);
";

/// The tables [`SCHEMA`] creates.
const TABLES: &[&str] = &[
    "ledger_entries",
    "ledger_heads",
    "tool_calls",
    "permission_decisions",
    "hook_executions",
    "metrics",
    "ledger_evidence",
];

/// A ledger row as stored, before any check: verification reads these so
/// that a corrupt row is reported, not a load error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEntry {
    /// `seq` column.
    pub seq: i64,
    /// `session_id` column.
    pub session_id: String,
    /// `ts` column.
    pub ts: String,
    /// `kind` column.
    pub kind: String,
    /// `payload` column (canonical JSON text when written by Tascer).
    pub payload: String,
    /// `prev_hash` column.
    pub prev_hash: String,
    /// `hash` column.
    pub hash: String,
}

impl RawEntry {
    /// Parses the row into an entry; `Err` says what is malformed.
    pub fn parse(&self) -> Result<LedgerEntry, String> {
        let seq = u64::try_from(self.seq).map_err(|_| format!("negative seq {}", self.seq))?;
        let kind: EntryKind = self.kind.parse().map_err(|e| format!("{e}"))?;
        let payload: Value =
            serde_json::from_str(&self.payload).map_err(|e| format!("payload is not JSON: {e}"))?;
        Ok(LedgerEntry {
            seq,
            session_id: self.session_id.clone(),
            ts: self.ts.clone(),
            kind,
            payload,
            prev_hash: self.prev_hash.clone(),
            hash: self.hash.clone(),
        })
    }
}

/// The ledger tables in one SQLite file, behind one [`Db`] handle.
#[derive(Debug)]
pub struct LedgerStore {
    db: Arc<Db>,
}

impl LedgerStore {
    /// Opens (creating if needed) the database at `path` and its ledger
    /// tables, in WAL mode, with its own connection.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::with_db(Arc::new(Db::open(path)?))
    }

    /// The ledger tables in an open database (shared with the session
    /// store, say); creates them if they are missing.
    pub fn with_db(db: Arc<Db>) -> Result<Self> {
        db.ensure_schema(TABLES, SCHEMA)?;
        Ok(LedgerStore { db })
    }

    /// Where the database file is.
    pub fn path(&self) -> &Path {
        self.db.path()
    }

    /// The database handle.
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }

    /// Appends one entry to a session's chain, in one transaction that also
    /// updates the projections and the session head (signed with `key` when
    /// given). The chain continues from the last committed entry, so a
    /// resumed session (another process, after a crash) extends the same
    /// chain.
    pub fn append(
        &self,
        session_id: &str,
        kind: EntryKind,
        payload: Value,
        key: Option<&SigningKey>,
    ) -> Result<LedgerEntry> {
        let entries = self.append_many(session_id, vec![(kind, payload)], key, &[])?;
        the_one(entries, session_id)
    }

    /// Appends entries to a session's chain, in order, in one transaction:
    /// like [`append`](Self::append) for each, with the head written (and
    /// signed) once, over the last. In the same transaction it stores
    /// `blobs` (`(digest, bytes)` pairs, digest as `sha256:<hex>`) in
    /// `ledger_evidence`, so entries and the small evidence they refer to
    /// are committed together; a blob already stored under its digest is
    /// left as it is. Nothing is written when any payload has no canonical
    /// form.
    pub fn append_many(
        &self,
        session_id: &str,
        entries: Vec<(EntryKind, Value)>,
        key: Option<&SigningKey>,
        blobs: &[(String, &[u8])],
    ) -> Result<Vec<LedgerEntry>> {
        if entries.is_empty() && blobs.is_empty() {
            return Ok(Vec::new());
        }
        // Canonicalize first: a payload without a canonical form never
        // reaches the database.
        let texts = entries
            .iter()
            .map(|(_, payload)| jcs::canonical_string(payload))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        self.db.write(|tx| {
            for (digest, bytes) in blobs {
                insert_blob(tx, session_id, digest, bytes)?;
            }
            let last: Option<(i64, String)> = tx
                .prepare_cached(
                    "SELECT seq, hash FROM ledger_entries WHERE session_id = ?1
                     ORDER BY seq DESC LIMIT 1",
                )?
                .query_row(params![session_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            let (mut seq, mut prev_hash) = match last {
                Some((seq, hash)) => (u64::try_from(seq).unwrap_or(0) + 1, hash),
                None => (1, GENESIS_PREV_HASH.to_string()),
            };
            let mut appended = Vec::with_capacity(entries.len());
            for ((kind, payload), payload_text) in entries.iter().zip(&texts) {
                let entry = LedgerEntry::with_canonical_payload(
                    seq,
                    session_id,
                    now_ts(),
                    *kind,
                    payload.clone(),
                    payload_text,
                    prev_hash,
                )?;
                tx.prepare_cached(
                    "INSERT INTO ledger_entries (session_id, seq, ts, kind, payload, prev_hash, hash)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )?
                .execute(params![
                    session_id,
                    i64::try_from(seq).unwrap_or(i64::MAX),
                    entry.ts,
                    kind.as_str(),
                    payload_text,
                    entry.prev_hash,
                    entry.hash
                ])?;
                project(tx, &entry, payload_text)?;
                prev_hash = entry.hash.clone();
                seq += 1;
                appended.push(entry);
            }
            if let Some(last) = appended.last() {
                let head = match key {
                    Some(key) => SignedHead::sign(session_id, last.seq, &last.hash, key)?,
                    None => SignedHead::unsigned(session_id, last.seq, &last.hash),
                };
                write_head(tx, &head)?;
            }
            Ok(appended)
        })
    }

    /// Every stored row of a session, ordered by `seq`, unchecked.
    pub fn raw_entries(&self, session_id: &str) -> Result<Vec<RawEntry>> {
        self.db.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT seq, session_id, ts, kind, payload, prev_hash, hash
                 FROM ledger_entries WHERE session_id = ?1 ORDER BY seq",
            )?;
            let rows = stmt.query_map(params![session_id], raw_from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Every entry of a session, ordered by `seq` (not verified; see
    /// [`verify_session`](crate::verify_session)).
    pub fn entries(&self, session_id: &str) -> Result<Vec<LedgerEntry>> {
        self.raw_entries(session_id)?
            .into_iter()
            .map(|raw| {
                raw.parse().map_err(|detail| LedgerError::Corrupt {
                    session_id: session_id.to_string(),
                    seq: raw.seq,
                    detail,
                })
            })
            .collect()
    }

    /// The last entry of a session, if any.
    pub fn last_entry(&self, session_id: &str) -> Result<Option<LedgerEntry>> {
        let raw = self.db.read(|conn| {
            conn.query_row(
                "SELECT seq, session_id, ts, kind, payload, prev_hash, hash
                 FROM ledger_entries WHERE session_id = ?1 ORDER BY seq DESC LIMIT 1",
                params![session_id],
                raw_from_row,
            )
            .optional()
        })?;
        raw.map(|raw| {
            raw.parse().map_err(|detail| LedgerError::Corrupt {
                session_id: session_id.to_string(),
                seq: raw.seq,
                detail,
            })
        })
        .transpose()
    }

    /// The stored head of a session, if any.
    pub fn head(&self, session_id: &str) -> Result<Option<SignedHead>> {
        Ok(self.db.read(|conn| {
            conn.query_row(
                "SELECT session_id, seq, hash, signature, key_id, signed_at
                 FROM ledger_heads WHERE session_id = ?1",
                params![session_id],
                |r| {
                    Ok(SignedHead {
                        session_id: r.get(0)?,
                        seq: u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                        hash: r.get(2)?,
                        signature: r.get(3)?,
                        key_id: r.get(4)?,
                        signed_at: r.get(5)?,
                    })
                },
            )
            .optional()
        })?)
    }

    /// Replaces a session's head (used by checkpoint signing).
    pub fn put_head(&self, head: &SignedHead) -> Result<()> {
        self.db
            .write(|tx| Ok::<_, LedgerError>(write_head(tx, head)?))
    }

    /// Ids of every session with ledger entries, sorted.
    pub fn sessions(&self) -> Result<Vec<String>> {
        Ok(self.db.read(|conn| {
            let mut stmt =
                conn.prepare("SELECT DISTINCT session_id FROM ledger_entries ORDER BY session_id")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?)
    }

    /// Stores one evidence blob of a session under `digest`
    /// (`sha256:<hex>`, computed by the caller), in its own transaction.
    /// A blob already stored under that digest is left as it is.
    pub fn put_blob(&self, session_id: &str, digest: &str, bytes: &[u8]) -> Result<()> {
        self.db
            .write(|tx| Ok::<_, LedgerError>(insert_blob(tx, session_id, digest, bytes)?))
    }

    /// The evidence blob stored under `digest` for a session, unchecked.
    pub fn blob(&self, session_id: &str, digest: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.db.read(|conn| {
            conn.prepare_cached(
                "SELECT bytes FROM ledger_evidence WHERE session_id = ?1 AND digest = ?2",
            )?
            .query_row(params![session_id, digest], |r| r.get(0))
            .optional()
        })?)
    }

    /// Records a named measurement for a session (not part of the chain).
    pub fn record_metric(
        &self,
        session_id: &str,
        name: &str,
        value: Option<f64>,
        data: Option<&Value>,
    ) -> Result<()> {
        let data = data.map(jcs::canonical_string).transpose()?;
        let ts = now_ts();
        self.db.write(|tx| {
            tx.execute(
                "INSERT INTO metrics (session_id, name, value, data, ts)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![session_id, name, value, data, ts],
            )?;
            Ok::<_, LedgerError>(())
        })
    }

    /// The projected tool calls of a session (latest record of each), in
    /// the order they were opened.
    pub fn tool_calls(&self, session_id: &str) -> Result<Vec<ToolRecord>> {
        let rows: Vec<String> = self.db.read(|conn| {
            let mut stmt =
                conn.prepare("SELECT record FROM tool_calls WHERE session_id = ?1 ORDER BY rowid")?;
            let rows = stmt.query_map(params![session_id], |r| r.get::<_, String>(0))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        rows.iter()
            .map(|row| Ok(serde_json::from_str(row)?))
            .collect()
    }

    /// Runs `f` with the underlying connection (for tests and tools that
    /// need raw SQL).
    pub fn with_connection<T>(&self, f: impl FnOnce(&Connection) -> T) -> T {
        self.db.read(f)
    }
}

fn raw_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawEntry> {
    Ok(RawEntry {
        seq: r.get(0)?,
        session_id: r.get(1)?,
        ts: r.get(2)?,
        kind: r.get(3)?,
        payload: r.get(4)?,
        prev_hash: r.get(5)?,
        hash: r.get(6)?,
    })
}

/// The one entry a single-entry append wrote.
pub(crate) fn the_one(mut entries: Vec<LedgerEntry>, session_id: &str) -> Result<LedgerEntry> {
    entries
        .pop()
        .ok_or_else(|| LedgerError::EmptySession(session_id.to_string()))
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

/// Updates the query tables from one entry (`payload_text`: its payload's
/// canonical JSON). Payloads that do not have the expected shape are simply
/// not projected.
fn project(conn: &Connection, entry: &LedgerEntry, payload_text: &str) -> Result<()> {
    let seq = i64::try_from(entry.seq).unwrap_or(i64::MAX);
    let field = |name: &str| {
        entry
            .payload
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    match entry.kind {
        EntryKind::ToolCallOpened | EntryKind::ToolRecord => {
            let (Some(tool_use_id), Some(tool), Some(status)) =
                (field("tool_use_id"), field("tool"), field("status"))
            else {
                return Ok(());
            };
            conn.prepare_cached(
                "INSERT INTO tool_calls (session_id, tool_use_id, seq, tool, status,
                     started_at, finished_at, proof_hash, record)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (session_id, tool_use_id) DO UPDATE SET seq = excluded.seq,
                     tool = excluded.tool, status = excluded.status,
                     started_at = excluded.started_at, finished_at = excluded.finished_at,
                     proof_hash = excluded.proof_hash, record = excluded.record",
            )?
            .execute(params![
                entry.session_id,
                tool_use_id,
                seq,
                tool,
                status,
                field("started_at"),
                field("finished_at"),
                field("proof_hash"),
                payload_text
            ])?;
        }
        EntryKind::PermissionDecision => {
            conn.prepare_cached(
                "INSERT OR REPLACE INTO permission_decisions
                     (session_id, seq, tool_use_id, decision, data)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                entry.session_id,
                seq,
                field("tool_use_id"),
                field("decision").or_else(|| field("behavior")),
                payload_text
            ])?;
        }
        EntryKind::HookExecution => {
            conn.prepare_cached(
                "INSERT OR REPLACE INTO hook_executions (session_id, seq, event, data)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![
                entry.session_id,
                seq,
                field("event").or_else(|| field("hook_event_name")),
                payload_text
            ])?;
        }
        EntryKind::SessionEnd => {
            let cost = entry.payload.get("cost_usd").and_then(Value::as_f64);
            conn.prepare_cached(
                "INSERT INTO metrics (session_id, name, value, data, ts)
                 VALUES (?1, 'session_end', ?2, ?3, ?4)",
            )?
            .execute(params![entry.session_id, cost, payload_text, entry.ts])?;
        }
        _ => {}
    }
    Ok(())
}
