//! Rows of the PostgreSQL store as the backend's types.

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::audit;
use crate::backend::{EntryRow, Projection, SessionInfo, SignedHead};

/// Upserts a call's `tool_calls` row.
const UPSERT_TOOL_CALL: &str = "INSERT INTO tool_calls (session_id, tool_use_id, opened_seq, seq,
         tool, status, started_at, finished_at, proof_hash, record)
     VALUES ($1, $2, $3, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (session_id, tool_use_id) DO UPDATE SET seq = excluded.seq,
         tool = excluded.tool, status = excluded.status, started_at = excluded.started_at,
         finished_at = excluded.finished_at, proof_hash = excluded.proof_hash,
         record = excluded.record";

/// A count or seq as a column value.
pub(super) fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A column value as a count or seq (0 when negative).
pub(super) fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// A `SELECT_INFO` row.
pub(super) fn info_from_row(r: &Row) -> Result<SessionInfo, tokio_postgres::Error> {
    Ok(SessionInfo {
        id: r.try_get(0)?,
        cwd: r.try_get(1)?,
        model: r.try_get(2)?,
        created_at: r.try_get(3)?,
        updated_at: r.try_get(4)?,
        forked_from: r.try_get(5)?,
        num_turns: u32::try_from(r.try_get::<_, i64>(6)?).unwrap_or(0),
        total_cost_usd: r.try_get(7)?,
        status: r.try_get(8)?,
        first_prompt: r.try_get(9)?,
        message_count: to_u64(r.try_get(10)?),
        title: r.try_get(11)?,
    })
}

/// A ledger entry row.
pub(super) fn entry_from_row(r: &Row) -> Result<EntryRow, tokio_postgres::Error> {
    Ok(EntryRow {
        seq: r.try_get(0)?,
        session_id: r.try_get(1)?,
        ts: r.try_get(2)?,
        kind: r.try_get(3)?,
        payload: r.try_get(4)?,
        prev_hash: r.try_get(5)?,
        hash: r.try_get(6)?,
    })
}

/// A `ledger_heads` row.
pub(super) fn head_from_row(r: &Row) -> Result<SignedHead, tokio_postgres::Error> {
    Ok(SignedHead {
        session_id: r.try_get(0)?,
        seq: to_u64(r.try_get(1)?),
        hash: r.try_get(2)?,
        signature: r.try_get(3)?,
        key_id: r.try_get(4)?,
        signed_at: r.try_get(5)?,
    })
}

/// A projection's parameters, owned, so a batch's statements can be sent
/// together.
pub(super) struct ProjectionParams {
    /// The statement.
    pub sql: &'static str,
    /// Its parameters.
    pub values: Vec<Box<dyn ToSql + Sync + Send>>,
}

pub(super) fn projection_params(session_id: &str, projection: &Projection) -> ProjectionParams {
    let text = |s: &str| -> Box<dyn ToSql + Sync + Send> { Box::new(s.to_string()) };
    let opt = |s: &Option<String>| -> Box<dyn ToSql + Sync + Send> { Box::new(s.clone()) };
    match projection {
        Projection::ToolCall {
            tool_use_id,
            seq,
            tool,
            status,
            started_at,
            finished_at,
            proof_hash,
            record,
        } => ProjectionParams {
            sql: UPSERT_TOOL_CALL,
            values: vec![
                text(session_id),
                text(tool_use_id),
                Box::new(to_i64(*seq)),
                text(tool),
                text(status),
                opt(started_at),
                opt(finished_at),
                opt(proof_hash),
                text(record),
            ],
        },
        Projection::PermissionDecision(row) => ProjectionParams {
            sql: audit::UPSERT_DECISION,
            values: audit::decision_params(session_id, row),
        },
        Projection::HookExecution(row) => ProjectionParams {
            sql: audit::UPSERT_HOOK,
            values: audit::hook_params(session_id, row),
        },
        Projection::Metric(row) => ProjectionParams {
            sql: audit::INSERT_METRIC,
            values: audit::metric_params(session_id, row),
        },
    }
}
