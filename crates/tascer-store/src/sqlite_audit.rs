//! The audit tables in SQLite ([`crate::audit`]): the migration that gives
//! a store made by an older build their typed columns and indexes, the
//! rows a ledger append projects into them, and the queries that read
//! them.

use rusqlite::{Connection, params, params_from_iter};

use crate::audit::{
    DECISION_COLUMNS, DecisionFilter, DecisionRow, HOOK_COLUMNS, HookRunRow, METRIC_COLUMNS,
    MetricRow, decision_where,
};
use crate::db::Db;
use crate::error::StoreError;

/// The columns the audit added to the tables of older stores, with their
/// types. Fresh stores get them from the schema.
const ADDED_COLUMNS: &[(&str, &str, &str)] = &[
    ("permission_decisions", "ts", "TEXT"),
    ("permission_decisions", "tool", "TEXT"),
    ("permission_decisions", "decider_kind", "TEXT"),
    ("permission_decisions", "decider", "TEXT"),
    ("permission_decisions", "reason", "TEXT"),
    ("permission_decisions", "mode", "TEXT"),
    ("permission_decisions", "input_digest", "TEXT"),
    ("hook_executions", "ts", "TEXT"),
    ("hook_executions", "tool_use_id", "TEXT"),
    ("hook_executions", "matcher", "TEXT"),
    ("hook_executions", "hook", "TEXT"),
    ("hook_executions", "hook_kind", "TEXT"),
    ("hook_executions", "outcome", "TEXT"),
    ("hook_executions", "exit_code", "INTEGER"),
    ("hook_executions", "duration_ms", "INTEGER"),
    ("hook_executions", "error", "TEXT"),
    ("metrics", "kind", "TEXT"),
    ("metrics", "seq", "INTEGER"),
    ("metrics", "tool_use_id", "TEXT"),
    ("metrics", "duration_ms", "INTEGER"),
    ("metrics", "input_tokens", "INTEGER"),
    ("metrics", "output_tokens", "INTEGER"),
    ("metrics", "cache_read_tokens", "INTEGER"),
    ("metrics", "cache_creation_tokens", "INTEGER"),
    ("metrics", "cost_usd", "REAL"),
];

/// Fills the added columns of rows written before them, from their
/// payload (`data`) and their ledger entry's time; then the indexes.
/// Idempotent.
const BACKFILL_AND_INDEX: &str = "
UPDATE permission_decisions SET ts = (SELECT e.ts FROM ledger_entries e
        WHERE e.session_id = permission_decisions.session_id AND e.seq = permission_decisions.seq)
    WHERE ts IS NULL;
UPDATE permission_decisions SET
        tool = json_extract(data, '$.tool'),
        decision = COALESCE(decision, json_extract(data, '$.behavior')),
        decider_kind = json_extract(data, '$.decided_by.type'),
        decider = COALESCE(json_extract(data, '$.decided_by.rule'),
                           json_extract(data, '$.decided_by.name'),
                           json_extract(data, '$.decided_by.mode')),
        reason = json_extract(data, '$.reason'),
        mode = json_extract(data, '$.mode'),
        input_digest = json_extract(data, '$.input_digest')
    WHERE decider_kind IS NULL AND tool IS NULL AND json_valid(data);
UPDATE hook_executions SET ts = (SELECT e.ts FROM ledger_entries e
        WHERE e.session_id = hook_executions.session_id AND e.seq = hook_executions.seq)
    WHERE ts IS NULL;
UPDATE hook_executions SET
        tool_use_id = json_extract(data, '$.tool_use_id'),
        matcher = json_extract(data, '$.matcher'),
        hook = json_extract(data, '$.hook_name'),
        hook_kind = json_extract(data, '$.kind'),
        outcome = json_extract(data, '$.outcome'),
        exit_code = json_extract(data, '$.exit_code'),
        duration_ms = json_extract(data, '$.duration_ms'),
        error = json_extract(data, '$.error')
    WHERE hook IS NULL AND outcome IS NULL AND json_valid(data);
UPDATE metrics SET kind = name WHERE kind IS NULL;
UPDATE metrics SET cost_usd = value,
        input_tokens = json_extract(data, '$.usage.input_tokens'),
        output_tokens = json_extract(data, '$.usage.output_tokens'),
        cache_read_tokens = json_extract(data, '$.usage.cache_read_input_tokens'),
        cache_creation_tokens = json_extract(data, '$.usage.cache_creation_input_tokens')
    WHERE kind = 'session_end' AND cost_usd IS NULL AND json_valid(data);
CREATE INDEX IF NOT EXISTS permission_decisions_by_ts ON permission_decisions (ts);
CREATE INDEX IF NOT EXISTS permission_decisions_by_call
    ON permission_decisions (session_id, tool_use_id);
CREATE INDEX IF NOT EXISTS permission_decisions_by_tool ON permission_decisions (tool, ts);
CREATE INDEX IF NOT EXISTS permission_decisions_by_decider
    ON permission_decisions (decider_kind, ts);
CREATE INDEX IF NOT EXISTS permission_decisions_by_decision
    ON permission_decisions (decision, ts);
CREATE INDEX IF NOT EXISTS hook_executions_by_call ON hook_executions (session_id, tool_use_id);
CREATE INDEX IF NOT EXISTS hook_executions_by_event ON hook_executions (event, ts);
CREATE INDEX IF NOT EXISTS metrics_by_call ON metrics (session_id, tool_use_id);
CREATE INDEX IF NOT EXISTS metrics_by_kind ON metrics (kind, ts);";

/// The index the migration creates last: when it exists, the store is up
/// to date.
const LAST_INDEX: &str = "metrics_by_kind";

/// Gives the audit tables of a store made by an older build their typed
/// columns (filled from the rows' payloads) and indexes, in one write
/// transaction; a store that has them is recognised with one read.
pub(crate) fn migrate(db: &Db) -> Result<(), StoreError> {
    let done = db.read(|conn| -> rusqlite::Result<bool> {
        conn.prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1")?
            .exists([LAST_INDEX])
    })?;
    if done {
        return Ok(());
    }
    db.write(|tx| -> Result<(), StoreError> {
        for (table, column, kind) in ADDED_COLUMNS {
            let present = tx
                .prepare_cached("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2")?
                .exists([table, column])?;
            if !present {
                tx.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
            }
        }
        tx.execute_batch(BACKFILL_AND_INDEX)?;
        Ok(())
    })
}

/// Converts a count or seq for a column.
fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Writes a decision's row (a replayed entry replaces its row).
pub(crate) fn insert_decision(
    conn: &Connection,
    session_id: &str,
    row: &DecisionRow,
) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO permission_decisions (session_id, seq, ts, tool_use_id, tool,
             decision, decider_kind, decider, reason, mode, input_digest, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        session_id,
        to_i64(row.seq),
        row.ts,
        row.tool_use_id,
        row.tool,
        row.decision,
        row.decider_kind,
        row.decider,
        row.reason,
        row.mode,
        row.input_digest,
        row.data
    ])
}

/// Writes a hook run's row.
pub(crate) fn insert_hook_run(
    conn: &Connection,
    session_id: &str,
    row: &HookRunRow,
) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO hook_executions (session_id, seq, ts, tool_use_id, event,
             matcher, hook, hook_kind, outcome, exit_code, duration_ms, error, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        session_id,
        to_i64(row.seq),
        row.ts,
        row.tool_use_id,
        row.event,
        row.matcher,
        row.hook,
        row.hook_kind,
        row.outcome,
        row.exit_code,
        row.duration_ms,
        row.error,
        row.data
    ])
}

/// Writes a measurement's row.
pub(crate) fn insert_metric(
    conn: &Connection,
    session_id: &str,
    row: &MetricRow,
) -> rusqlite::Result<usize> {
    conn.prepare_cached(
        "INSERT INTO metrics (session_id, kind, name, seq, ts, tool_use_id, duration_ms,
             input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd,
             value, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        session_id,
        row.kind,
        row.name,
        row.seq.map(to_i64),
        row.ts,
        row.tool_use_id,
        row.duration_ms,
        row.input_tokens,
        row.output_tokens,
        row.cache_read_tokens,
        row.cache_creation_tokens,
        row.cost_usd,
        row.value,
        row.data
    ])
}

fn seq_of(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<u64> {
    Ok(u64::try_from(r.get::<_, i64>(i)?).unwrap_or(0))
}

fn decision_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DecisionRow> {
    Ok(DecisionRow {
        session_id: r.get(0)?,
        seq: seq_of(r, 1)?,
        ts: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
        tool_use_id: r.get(3)?,
        tool: r.get(4)?,
        decision: r.get(5)?,
        decider_kind: r.get(6)?,
        decider: r.get(7)?,
        reason: r.get(8)?,
        mode: r.get(9)?,
        input_digest: r.get(10)?,
        data: r.get(11)?,
    })
}

fn hook_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HookRunRow> {
    Ok(HookRunRow {
        session_id: r.get(0)?,
        seq: seq_of(r, 1)?,
        ts: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
        tool_use_id: r.get(3)?,
        event: r.get(4)?,
        matcher: r.get(5)?,
        hook: r.get(6)?,
        hook_kind: r.get(7)?,
        outcome: r.get(8)?,
        exit_code: r.get(9)?,
        duration_ms: r.get(10)?,
        error: r.get(11)?,
        data: r.get(12)?,
    })
}

fn metric_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<MetricRow> {
    Ok(MetricRow {
        session_id: r.get(0)?,
        kind: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
        name: r.get(2)?,
        seq: r
            .get::<_, Option<i64>>(3)?
            .map(|s| u64::try_from(s).unwrap_or(0)),
        ts: r.get(4)?,
        tool_use_id: r.get(5)?,
        duration_ms: r.get(6)?,
        input_tokens: r.get(7)?,
        output_tokens: r.get(8)?,
        cache_read_tokens: r.get(9)?,
        cache_creation_tokens: r.get(10)?,
        cost_usd: r.get(11)?,
        value: r.get(12)?,
        data: r.get(13)?,
    })
}

/// The decisions `filter` selects (see
/// [`Backend::decisions`](crate::Backend::decisions)).
pub(crate) fn decisions(
    conn: &Connection,
    filter: &DecisionFilter,
) -> Result<Vec<DecisionRow>, StoreError> {
    let (clause, values) = decision_where(filter, |n| format!("?{n}"));
    let limit = filter
        .limit
        .map(|n| format!("LIMIT {}", i64::try_from(n).unwrap_or(i64::MAX)))
        .unwrap_or_default();
    // Newest first under the limit, then put back in time order.
    let sql = format!(
        "SELECT {DECISION_COLUMNS} FROM permission_decisions {clause}
         ORDER BY ts DESC, session_id DESC, seq DESC {limit}"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(values.iter()), decision_from_row)?;
    let mut rows = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    rows.reverse();
    Ok(rows)
}

/// Every hook run of a session, by seq.
pub(crate) fn hook_runs(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<HookRunRow>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {HOOK_COLUMNS} FROM hook_executions WHERE session_id = ?1 ORDER BY seq"
    ))?;
    let rows = stmt.query_map(params![session_id], hook_from_row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Every measurement of a session, in the order written.
pub(crate) fn metrics(conn: &Connection, session_id: &str) -> Result<Vec<MetricRow>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {METRIC_COLUMNS} FROM metrics WHERE session_id = ?1 ORDER BY rowid"
    ))?;
    let rows = stmt.query_map(params![session_id], metric_from_row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}
