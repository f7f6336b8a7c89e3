//! The SQLite-backed session store.

use std::path::Path;
use std::sync::Arc;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use tascer_core::{ChatMessage, Message};

use crate::db::Db;
use crate::error::StoreError;
use crate::history::history_from_messages;
use crate::schema;

/// What is known about a stored session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionInfo {
    /// Session id (a UUID).
    pub id: String,
    /// Working directory the session ran in.
    pub cwd: String,
    /// Model it was started with.
    pub model: String,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last write.
    pub updated_at: String,
    /// The session it was forked from, if any.
    pub forked_from: Option<String>,
    /// Model calls so far.
    pub num_turns: u32,
    /// Cost so far, USD.
    pub total_cost_usd: f64,
    /// `open`, `success`, `error`, …
    pub status: String,
    /// The first prompt, for listings.
    pub first_prompt: Option<String>,
    /// Number of stored messages.
    pub message_count: u64,
}

/// A session to create.
#[derive(Debug, Clone)]
pub struct NewSession<'a> {
    /// Session id (a UUID).
    pub id: &'a str,
    /// Working directory.
    pub cwd: &'a str,
    /// Model.
    pub model: &'a str,
    /// The session it forks, if any.
    pub forked_from: Option<&'a str>,
}

/// A session's running totals, as stored on its row.
#[derive(Debug, Clone, PartialEq)]
pub struct Totals {
    /// Model calls so far.
    pub num_turns: u32,
    /// Cost so far, USD.
    pub total_cost_usd: f64,
    /// `running`, `success`, `error`, ...
    pub status: String,
}

/// The embedded session store: one SQLite file in WAL mode.
///
/// Every write is its own transaction through [`Db::write`] (it waits for
/// and retries contended locks), so whatever was written survives a crash
/// of the process and no write is lost to another process writing.
#[derive(Debug)]
pub struct SessionStore {
    db: Arc<Db>,
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl SessionStore {
    /// Opens (creating if needed) the store at `path`, with its own
    /// connection.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::with_db(Arc::new(Db::open(path)?))
    }

    /// The store over an open database (shared with the ledger, say);
    /// creates its tables if they are missing.
    pub fn with_db(db: Arc<Db>) -> Result<Self, StoreError> {
        db.ensure_schema(schema::TABLES, schema::SCHEMA)?;
        Ok(SessionStore { db })
    }

    /// Opens the store file `tascer.db` inside the Tascer home directory.
    pub fn open_in_home(home: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open(home.as_ref().join("tascer.db"))
    }

    /// Where the database file is.
    pub fn path(&self) -> &Path {
        self.db.path()
    }

    /// The database handle, to share with the ledger.
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }

    /// Creates a session row.
    pub fn create_session(&self, new: &NewSession<'_>) -> Result<(), StoreError> {
        let ts = now();
        self.db.write(|tx| insert_session(tx, new, &ts))
    }

    /// Appends one message to a session (its own transaction).
    pub fn append_message(&self, session_id: &str, message: &Message) -> Result<(), StoreError> {
        self.append_message_with_totals(session_id, message, None)
    }

    /// Appends one message to a session and, in the same transaction,
    /// records the session's running totals when given (one write instead
    /// of two when both change together, as after each model call).
    pub fn append_message_with_totals(
        &self,
        session_id: &str,
        message: &Message,
        totals: Option<&Totals>,
    ) -> Result<(), StoreError> {
        let data = serde_json::to_string(message)?;
        let (kind, uuid) = describe(message);
        let prompt = match message {
            Message::User(u) if u.parent_tool_use_id.is_none() => match &u.message.content {
                tascer_core::UserContent::Text(t) => Some(t.chars().take(200).collect::<String>()),
                tascer_core::UserContent::Blocks(_) => None,
            },
            _ => None,
        };
        let ts = now();
        self.db.write(|tx| {
            let seq: i64 = tx
                .prepare_cached(
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?1",
                )?
                .query_row(params![session_id], |r| r.get(0))?;
            tx.prepare_cached(
                "INSERT INTO messages (session_id, seq, uuid, kind, data, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![session_id, seq, uuid, kind, data, ts])?;
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
                prompt,
                totals.map(|t| t.num_turns),
                totals.map(|t| t.total_cost_usd),
                totals.map(|t| t.status.as_str())
            ])?;
            Ok(())
        })
    }

    /// Records a session's running totals and status.
    pub fn update_totals(
        &self,
        session_id: &str,
        num_turns: u32,
        total_cost_usd: f64,
        status: &str,
    ) -> Result<(), StoreError> {
        let ts = now();
        self.db.write(|tx| {
            tx.prepare_cached(
                "UPDATE sessions SET num_turns = ?2, total_cost_usd = ?3, status = ?4,
                     updated_at = ?5
                 WHERE id = ?1",
            )?
            .execute(params![session_id, num_turns, total_cost_usd, status, ts])?;
            Ok(())
        })
    }

    /// One session, if it exists.
    pub fn session(&self, id: &str) -> Result<Option<SessionInfo>, StoreError> {
        self.db.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!("{SELECT_INFO} WHERE s.id = ?1"))?;
            Ok(stmt.query_row(params![id], info_from_row).optional()?)
        })
    }

    /// The most recently updated session that ran in `cwd`.
    pub fn latest_for_cwd(&self, cwd: &str) -> Result<Option<SessionInfo>, StoreError> {
        self.db.read(|conn| {
            let mut stmt = conn.prepare(&format!(
                "{SELECT_INFO} WHERE s.cwd = ?1 ORDER BY s.updated_at DESC, s.rowid DESC LIMIT 1"
            ))?;
            Ok(stmt.query_row(params![cwd], info_from_row).optional()?)
        })
    }

    /// The most recent sessions, newest first.
    pub fn list(&self, limit: usize) -> Result<Vec<SessionInfo>, StoreError> {
        self.db.read(|conn| {
            let mut stmt = conn.prepare(&format!(
                "{SELECT_INFO} ORDER BY s.updated_at DESC, s.rowid DESC LIMIT ?1"
            ))?;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = stmt.query_map(params![limit], info_from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Every message of a session, in order.
    pub fn messages(&self, session_id: &str) -> Result<Vec<Message>, StoreError> {
        let rows: Vec<(i64, String)> = self.db.read(|conn| {
            let mut stmt =
                conn.prepare("SELECT seq, data FROM messages WHERE session_id = ?1 ORDER BY seq")?;
            let rows = stmt.query_map(params![session_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        rows.into_iter()
            .map(|(seq, data)| {
                serde_json::from_str(&data).map_err(|source| StoreError::Corrupt {
                    session_id: session_id.to_string(),
                    seq,
                    source,
                })
            })
            .collect()
    }

    /// The conversation to send to the model when resuming a session.
    pub fn history(&self, session_id: &str) -> Result<Vec<ChatMessage>, StoreError> {
        if self.session(session_id)?.is_none() {
            return Err(StoreError::NotFound(session_id.to_string()));
        }
        Ok(history_from_messages(&self.messages(session_id)?))
    }

    /// Copies a session's messages into a new session `new_id`, in one
    /// transaction.
    pub fn fork(&self, from: &str, new_id: &str) -> Result<SessionInfo, StoreError> {
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
            // Frames carry their session id; the fork's copies carry the new one.
            let rows: Vec<(i64, String, String, String)> = {
                let mut stmt = tx.prepare(
                    "SELECT seq, uuid, kind, data FROM messages WHERE session_id = ?1 ORDER BY seq",
                )?;
                stmt.query_map(params![from], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })?
                .collect::<Result<_, _>>()?
            };
            for (seq, uuid, kind, data) in rows {
                let mut value: serde_json::Value =
                    serde_json::from_str(&data).map_err(|source| StoreError::Corrupt {
                        session_id: from.to_string(),
                        seq,
                        source,
                    })?;
                if let Some(obj) = value.as_object_mut() {
                    obj.insert("session_id".into(), new_id.into());
                }
                tx.execute(
                    "INSERT INTO messages (session_id, seq, uuid, kind, data, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![new_id, seq, uuid, kind, value.to_string(), ts],
                )?;
            }
            tx.execute(
                "UPDATE sessions SET first_prompt = ?2 WHERE id = ?1",
                params![new_id, source.first_prompt],
            )?;
            Ok::<_, StoreError>(())
        })?;
        self.session(new_id)?
            .ok_or_else(|| StoreError::NotFound(new_id.to_string()))
    }
}

/// Inserts a session row, refusing an id that exists.
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
        (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)
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
    })
}

fn describe(message: &Message) -> (&'static str, &str) {
    match message {
        Message::User(m) => ("user", &m.uuid),
        Message::Assistant(m) => ("assistant", &m.uuid),
        Message::System(m) => ("system", &m.uuid),
        Message::Result(m) => ("result", &m.uuid),
        Message::StreamEvent(m) => ("stream_event", &m.uuid),
    }
}
