//! A session's stored summary, read without writing anything, for
//! cross-checks against its ledger (`tascer verify`).

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::db::Db;
use crate::error::StoreError;

/// What the session store says about a session, in the fields the ledger
/// also records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    /// `sessions.model`.
    pub model: String,
    /// `sessions.total_cost_usd`.
    pub total_cost_usd: f64,
    /// `sessions.num_turns` (main-loop model calls).
    pub num_turns: u32,
    /// `sessions.forked_from`: a fork's copied messages are not in its
    /// own ledger.
    pub forked_from: Option<String>,
    /// Stored assistant frames (main loop and subagents).
    pub assistant_messages: u64,
    /// Stored user frames whose content is a prompt text (not tool
    /// results).
    pub prompts: u64,
}

/// The stored summary of `session_id`: `None` when the database has no
/// session tables or no such session. Reads only.
pub fn session_summary(db: &Db, session_id: &str) -> Result<Option<SessionSummary>, StoreError> {
    db.read(|conn| {
        let has_tables: bool = conn.query_row(
            "SELECT COUNT(*) = 2 FROM sqlite_master
                 WHERE type = 'table' AND name IN ('sessions', 'messages')",
            [],
            |r| r.get(0),
        )?;
        if !has_tables {
            return Ok(None);
        }
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
