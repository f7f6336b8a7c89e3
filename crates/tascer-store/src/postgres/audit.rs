//! The audit tables in PostgreSQL ([`crate::audit`]; their columns come
//! from migration 2): the rows a ledger append projects into them and the
//! queries that read them.

use std::sync::Arc;

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::PgBackend;
use crate::audit::{
    DECISION_COLUMNS, DecisionFilter, DecisionRow, HOOK_COLUMNS, HookRunRow, METRIC_COLUMNS,
    MetricRow, decision_where,
};
use crate::error::StoreError;

/// An owned statement parameter.
pub(super) type Value = Box<dyn ToSql + Sync + Send>;

pub(super) const UPSERT_DECISION: &str = "INSERT INTO permission_decisions
         (session_id, seq, ts, tool_use_id, tool, decision, decider_kind, decider, reason, mode,
          input_digest, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (session_id, seq) DO UPDATE SET ts = excluded.ts,
         tool_use_id = excluded.tool_use_id, tool = excluded.tool,
         decision = excluded.decision, decider_kind = excluded.decider_kind,
         decider = excluded.decider, reason = excluded.reason, mode = excluded.mode,
         input_digest = excluded.input_digest, data = excluded.data";

pub(super) const UPSERT_HOOK: &str = "INSERT INTO hook_executions
         (session_id, seq, ts, tool_use_id, event, matcher, hook, hook_kind, outcome, exit_code,
          duration_ms, error, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (session_id, seq) DO UPDATE SET ts = excluded.ts,
         tool_use_id = excluded.tool_use_id, event = excluded.event,
         matcher = excluded.matcher, hook = excluded.hook, hook_kind = excluded.hook_kind,
         outcome = excluded.outcome, exit_code = excluded.exit_code,
         duration_ms = excluded.duration_ms, error = excluded.error, data = excluded.data";

pub(super) const INSERT_METRIC: &str = "INSERT INTO metrics (session_id, kind, name, seq, ts,
         tool_use_id, duration_ms, input_tokens, output_tokens, cache_read_tokens,
         cache_creation_tokens, cost_usd, value, data)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)";

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn seq_of(r: &Row, i: usize) -> Result<u64, tokio_postgres::Error> {
    Ok(u64::try_from(r.try_get::<_, i64>(i)?).unwrap_or(0))
}

/// The parameters of [`UPSERT_DECISION`].
pub(super) fn decision_params(session_id: &str, row: &DecisionRow) -> Vec<Value> {
    vec![
        Box::new(session_id.to_string()),
        Box::new(to_i64(row.seq)),
        Box::new(row.ts.clone()),
        Box::new(row.tool_use_id.clone()),
        Box::new(row.tool.clone()),
        Box::new(row.decision.clone()),
        Box::new(row.decider_kind.clone()),
        Box::new(row.decider.clone()),
        Box::new(row.reason.clone()),
        Box::new(row.mode.clone()),
        Box::new(row.input_digest.clone()),
        Box::new(row.data.clone()),
    ]
}

/// The parameters of [`UPSERT_HOOK`].
pub(super) fn hook_params(session_id: &str, row: &HookRunRow) -> Vec<Value> {
    vec![
        Box::new(session_id.to_string()),
        Box::new(to_i64(row.seq)),
        Box::new(row.ts.clone()),
        Box::new(row.tool_use_id.clone()),
        Box::new(row.event.clone()),
        Box::new(row.matcher.clone()),
        Box::new(row.hook.clone()),
        Box::new(row.hook_kind.clone()),
        Box::new(row.outcome.clone()),
        Box::new(row.exit_code),
        Box::new(row.duration_ms),
        Box::new(row.error.clone()),
        Box::new(row.data.clone()),
    ]
}

/// The parameters of [`INSERT_METRIC`].
pub(super) fn metric_params(session_id: &str, row: &MetricRow) -> Vec<Value> {
    vec![
        Box::new(session_id.to_string()),
        Box::new(row.kind.clone()),
        Box::new(row.name.clone()),
        Box::new(row.seq.map(to_i64)),
        Box::new(row.ts.clone()),
        Box::new(row.tool_use_id.clone()),
        Box::new(row.duration_ms),
        Box::new(row.input_tokens),
        Box::new(row.output_tokens),
        Box::new(row.cache_read_tokens),
        Box::new(row.cache_creation_tokens),
        Box::new(row.cost_usd),
        Box::new(row.value),
        Box::new(row.data.clone()),
    ]
}

fn decision_from_row(r: &Row) -> Result<DecisionRow, tokio_postgres::Error> {
    Ok(DecisionRow {
        session_id: r.try_get(0)?,
        seq: seq_of(r, 1)?,
        ts: r.try_get::<_, Option<String>>(2)?.unwrap_or_default(),
        tool_use_id: r.try_get(3)?,
        tool: r.try_get(4)?,
        decision: r.try_get(5)?,
        decider_kind: r.try_get(6)?,
        decider: r.try_get(7)?,
        reason: r.try_get(8)?,
        mode: r.try_get(9)?,
        input_digest: r.try_get(10)?,
        data: r.try_get(11)?,
    })
}

fn hook_from_row(r: &Row) -> Result<HookRunRow, tokio_postgres::Error> {
    Ok(HookRunRow {
        session_id: r.try_get(0)?,
        seq: seq_of(r, 1)?,
        ts: r.try_get::<_, Option<String>>(2)?.unwrap_or_default(),
        tool_use_id: r.try_get(3)?,
        event: r.try_get(4)?,
        matcher: r.try_get(5)?,
        hook: r.try_get(6)?,
        hook_kind: r.try_get(7)?,
        outcome: r.try_get(8)?,
        exit_code: r.try_get(9)?,
        duration_ms: r.try_get(10)?,
        error: r.try_get(11)?,
        data: r.try_get(12)?,
    })
}

fn metric_from_row(r: &Row) -> Result<MetricRow, tokio_postgres::Error> {
    Ok(MetricRow {
        session_id: r.try_get(0)?,
        kind: r.try_get::<_, Option<String>>(1)?.unwrap_or_default(),
        name: r.try_get(2)?,
        seq: r
            .try_get::<_, Option<i64>>(3)?
            .map(|s| u64::try_from(s).unwrap_or(0)),
        ts: r.try_get(4)?,
        tool_use_id: r.try_get(5)?,
        duration_ms: r.try_get(6)?,
        input_tokens: r.try_get(7)?,
        output_tokens: r.try_get(8)?,
        cache_read_tokens: r.try_get(9)?,
        cache_creation_tokens: r.try_get(10)?,
        cost_usd: r.try_get(11)?,
        value: r.try_get(12)?,
        data: r.try_get(13)?,
    })
}

/// The decisions `filter` selects (see
/// [`Backend::decisions`](crate::Backend::decisions)).
pub(super) fn decisions(
    backend: &PgBackend,
    filter: &DecisionFilter,
) -> Result<Vec<DecisionRow>, StoreError> {
    let (clause, values) = decision_where(filter, |n| format!("${n}"));
    let limit = filter
        .limit
        .map(|n| format!("LIMIT {}", i64::try_from(n).unwrap_or(i64::MAX)))
        .unwrap_or_default();
    let sql = Arc::new(format!(
        "SELECT {DECISION_COLUMNS} FROM permission_decisions {clause}
         ORDER BY ts DESC, session_id COLLATE \"C\" DESC, seq DESC {limit}"
    ));
    let values = Arc::new(values);
    backend.read("read permission decisions", move |client| {
        let (sql, values) = (Arc::clone(&sql), Arc::clone(&values));
        Box::pin(async move {
            let params: Vec<&(dyn ToSql + Sync)> =
                values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
            let rows = client.query(sql.as_str(), &params).await?;
            let mut rows = rows
                .iter()
                .map(decision_from_row)
                .collect::<Result<Vec<_>, _>>()?;
            rows.reverse();
            Ok(rows)
        })
    })
}

/// Every hook run of a session, by seq.
pub(super) fn hook_runs(
    backend: &PgBackend,
    session_id: &str,
) -> Result<Vec<HookRunRow>, StoreError> {
    let id = session_id.to_string();
    backend.read("read hook runs", move |client| {
        let id = id.clone();
        Box::pin(async move {
            let stmt = client
                .prepare_cached(&format!(
                    "SELECT {HOOK_COLUMNS} FROM hook_executions WHERE session_id = $1 ORDER BY seq"
                ))
                .await?;
            let rows = client.query(&stmt, &[&id]).await?;
            Ok(rows
                .iter()
                .map(hook_from_row)
                .collect::<Result<Vec<_>, _>>()?)
        })
    })
}

/// Every measurement of a session, in the order written.
pub(super) fn metrics(backend: &PgBackend, session_id: &str) -> Result<Vec<MetricRow>, StoreError> {
    let id = session_id.to_string();
    backend.read("read metrics", move |client| {
        let id = id.clone();
        Box::pin(async move {
            let stmt = client
                .prepare_cached(&format!(
                    "SELECT {METRIC_COLUMNS} FROM metrics WHERE session_id = $1 ORDER BY id"
                ))
                .await?;
            let rows = client.query(&stmt, &[&id]).await?;
            Ok(rows
                .iter()
                .map(metric_from_row)
                .collect::<Result<Vec<_>, _>>()?)
        })
    })
}
