//! The query rows of a ledger entry ([`project`]): the latest record of
//! each tool call (`tool_calls`) and the audit tables (docs/audit.md) —
//! every permission decision, every hook run, and the measurements of
//! model calls, tool calls, hooks and turns. They are derived as the entry
//! is appended and written in the same transaction; verification never
//! trusts them.

use serde_json::Value;
use tascer_store::{DecisionRow, HookRunRow, MetricKind, MetricRow, Projection};

use crate::digest::sha256_hex;
use crate::entry::{EntryKind, LedgerEntry};
use crate::jcs;

/// `sha256:<hex>` of a tool input's canonical JSON (RFC 8785): the
/// `input_digest` of a permission decision, computed over the input its
/// `tool_call_opened` record stores (also the session's options digest).
/// An input without a canonical form (never one parsed from JSON) is
/// digested as serde_json writes it.
pub fn input_digest(input: &Value) -> String {
    match jcs::canonicalize(input) {
        Ok(bytes) => format!("sha256:{}", sha256_hex(&bytes)),
        Err(_) => format!("sha256:{}", sha256_hex(input.to_string().as_bytes())),
    }
}

/// The query rows of one entry (`payload_text`: its payload's canonical
/// JSON). Fields a payload lacks are left empty; a tool record without
/// its id, tool or status is not projected.
pub fn project(entry: &LedgerEntry, payload_text: &str) -> Vec<Projection> {
    let p = &entry.payload;
    match entry.kind {
        EntryKind::ToolCallOpened | EntryKind::ToolRecord => {
            let (Some(tool_use_id), Some(tool), Some(status)) =
                (text(p, "tool_use_id"), text(p, "tool"), text(p, "status"))
            else {
                return Vec::new();
            };
            let mut rows = Vec::with_capacity(2);
            if entry.kind == EntryKind::ToolRecord {
                rows.push(Projection::Metric(MetricRow {
                    kind: MetricKind::ToolCall.as_str().into(),
                    name: tool.clone(),
                    seq: Some(entry.seq),
                    ts: entry.ts.clone(),
                    tool_use_id: Some(tool_use_id.clone()),
                    duration_ms: span_ms(p),
                    ..MetricRow::default()
                }));
            }
            rows.insert(
                0,
                Projection::ToolCall {
                    tool_use_id,
                    seq: entry.seq,
                    tool,
                    status,
                    started_at: text(p, "started_at"),
                    finished_at: text(p, "finished_at"),
                    proof_hash: text(p, "proof_hash"),
                    record: payload_text.to_string(),
                },
            );
            rows
        }
        EntryKind::PermissionDecision => vec![Projection::PermissionDecision(decision_row(
            entry,
            payload_text,
        ))],
        EntryKind::HookExecution => {
            let row = hook_row(entry, payload_text);
            let metric = MetricRow {
                kind: MetricKind::Hook.as_str().into(),
                name: row.hook.clone().unwrap_or_default(),
                seq: Some(entry.seq),
                ts: entry.ts.clone(),
                tool_use_id: row.tool_use_id.clone(),
                duration_ms: row.duration_ms,
                ..MetricRow::default()
            };
            vec![Projection::HookExecution(row), Projection::Metric(metric)]
        }
        EntryKind::ModelResponse => vec![Projection::Metric(MetricRow {
            kind: MetricKind::ModelCall.as_str().into(),
            name: text(p, "model").unwrap_or_default(),
            tool_use_id: text(p, "parent_tool_use_id"),
            duration_ms: int(p, "duration_ms"),
            cost_usd: p.get("cost_usd").and_then(Value::as_f64),
            ..usage_metric(entry)
        })],
        EntryKind::ReviewerVerdict => reviewer_metric(entry).into_iter().collect(),
        EntryKind::SessionEnd => {
            let cost = p.get("cost_usd").and_then(Value::as_f64);
            vec![Projection::Metric(MetricRow {
                kind: MetricKind::SessionEnd.as_str().into(),
                name: MetricKind::SessionEnd.as_str().into(),
                cost_usd: cost,
                value: cost,
                data: Some(payload_text.to_string()),
                ..usage_metric(entry)
            })]
        }
        _ => Vec::new(),
    }
}

/// A string field of a payload.
fn text(payload: &Value, name: &str) -> Option<String> {
    payload
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// An integer field of a payload.
fn int(payload: &Value, name: &str) -> Option<i64> {
    payload.get(name).and_then(Value::as_i64)
}

/// The row of a `permission_decision` entry. `decided_by` is the
/// decision's source as `tascer-guard` serializes it (`{"type": "rule",
/// "rule": …}`); rows written by hosts with only `decision` still fill it.
fn decision_row(entry: &LedgerEntry, payload_text: &str) -> DecisionRow {
    let p = &entry.payload;
    let by = p.get("decided_by");
    let by_field = |name: &str| by.and_then(|b| text(b, name));
    DecisionRow {
        session_id: entry.session_id.clone(),
        seq: entry.seq,
        ts: entry.ts.clone(),
        tool_use_id: text(p, "tool_use_id"),
        tool: text(p, "tool"),
        decision: text(p, "decision").or_else(|| text(p, "behavior")),
        decider_kind: by_field("type"),
        decider: by_field("rule")
            .or_else(|| by_field("name"))
            .or_else(|| by_field("mode")),
        reason: text(p, "reason"),
        mode: text(p, "mode"),
        input_digest: text(p, "input_digest"),
        data: payload_text.to_string(),
    }
}

/// The row of a `hook_execution` entry (a `HookRun` as `tascer-guard`
/// serializes it, with the call's `tool_use_id`).
fn hook_row(entry: &LedgerEntry, payload_text: &str) -> HookRunRow {
    let p = &entry.payload;
    HookRunRow {
        session_id: entry.session_id.clone(),
        seq: entry.seq,
        ts: entry.ts.clone(),
        tool_use_id: text(p, "tool_use_id"),
        event: text(p, "event").or_else(|| text(p, "hook_event_name")),
        matcher: text(p, "matcher"),
        hook: text(p, "hook_name"),
        hook_kind: text(p, "kind"),
        outcome: text(p, "outcome"),
        exit_code: int(p, "exit_code"),
        duration_ms: int(p, "duration_ms"),
        error: text(p, "error"),
        data: payload_text.to_string(),
    }
}

/// The model call behind an LLM reviewer's verdict: none for a cached or
/// skipped verdict (no call was made).
fn reviewer_metric(entry: &LedgerEntry) -> Option<Projection> {
    let p = &entry.payload;
    let cached = p.get("cache_hit").and_then(Value::as_bool) == Some(true);
    if cached || text(p, "outcome").as_deref() == Some("skipped") {
        return None;
    }
    let reviewer = text(p, "reviewer").unwrap_or_default();
    Some(Projection::Metric(MetricRow {
        kind: MetricKind::ReviewerCall.as_str().into(),
        name: text(p, "model").unwrap_or_default(),
        tool_use_id: text(p, "tool_use_id"),
        duration_ms: int(p, "duration_ms"),
        data: Some(serde_json::json!({"reviewer": reviewer}).to_string()),
        ..usage_metric(entry)
    }))
}

/// A metric row with the entry's seq, time and `usage` tokens.
fn usage_metric(entry: &LedgerEntry) -> MetricRow {
    let usage = entry.payload.get("usage");
    let tokens = |name: &str| usage.and_then(|u| int(u, name));
    MetricRow {
        seq: Some(entry.seq),
        ts: entry.ts.clone(),
        input_tokens: tokens("input_tokens"),
        output_tokens: tokens("output_tokens"),
        cache_read_tokens: tokens("cache_read_input_tokens"),
        cache_creation_tokens: tokens("cache_creation_input_tokens"),
        ..MetricRow::default()
    }
}

/// Milliseconds from a record's `started_at` to its `finished_at`.
fn span_ms(record: &Value) -> Option<i64> {
    let at =
        |name: &str| text(record, name).and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok());
    let (start, end) = (at("started_at")?, at("finished_at")?);
    Some((end - start).num_milliseconds().max(0))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn entry(kind: EntryKind, payload: Value) -> LedgerEntry {
        LedgerEntry {
            seq: 7,
            session_id: "s".into(),
            ts: "2026-01-01T00:00:00.000Z".into(),
            kind,
            payload,
            prev_hash: String::new(),
            hash: String::new(),
        }
    }

    #[test]
    fn a_decision_names_who_made_it() {
        let e = entry(
            EntryKind::PermissionDecision,
            json!({"behavior": "allow", "decided_by": {"type": "rule", "rule": "Bash(ls:*)"},
                   "reason": "r", "tool": "Bash", "tool_use_id": "t1", "mode": "default",
                   "input_digest": "sha256:ab"}),
        );
        let [Projection::PermissionDecision(row)] = &project(&e, "{}")[..] else {
            panic!("one decision row");
        };
        assert_eq!(row.decision.as_deref(), Some("allow"));
        assert_eq!(row.decider_kind.as_deref(), Some("rule"));
        assert_eq!(row.decider.as_deref(), Some("Bash(ls:*)"));
        assert_eq!(row.input_digest.as_deref(), Some("sha256:ab"));
        assert_eq!((row.seq, row.ts.as_str()), (7, "2026-01-01T00:00:00.000Z"));
    }

    #[test]
    fn a_closed_tool_call_and_a_hook_run_are_measured() {
        let record = entry(
            EntryKind::ToolRecord,
            json!({"tool_use_id": "t1", "tool": "Bash", "status": "validated",
                   "started_at": "2026-01-01T00:00:00.000Z",
                   "finished_at": "2026-01-01T00:00:01.250Z"}),
        );
        let rows = project(&record, "{}");
        assert!(matches!(rows[0], Projection::ToolCall { .. }));
        let Projection::Metric(metric) = &rows[1] else {
            panic!("a metric")
        };
        assert_eq!(
            (metric.kind.as_str(), metric.duration_ms),
            ("tool_call", Some(1250))
        );
        let hook = entry(
            EntryKind::HookExecution,
            json!({"hook_name": "./check.sh", "event": "PreToolUse", "outcome": "blocked",
                   "duration_ms": 12, "tool_use_id": "t1", "exit_code": 2}),
        );
        let rows = project(&hook, "{}");
        let Projection::HookExecution(run) = &rows[0] else {
            panic!("a hook row")
        };
        assert_eq!(run.hook.as_deref(), Some("./check.sh"));
        assert_eq!(run.exit_code, Some(2));
        let Projection::Metric(metric) = &rows[1] else {
            panic!("a metric")
        };
        assert_eq!(
            (metric.kind.as_str(), metric.name.as_str()),
            ("hook", "./check.sh")
        );
    }

    #[test]
    fn a_reviewers_model_call_is_measured_unless_its_verdict_was_cached() {
        let verdict = |cache_hit: bool| {
            entry(
                EntryKind::ReviewerVerdict,
                json!({"reviewer": "tool-approve", "model": "haiku", "verdict": "deny",
                       "reason": "r", "outcome": "decided", "duration_ms": 800,
                       "cache_hit": cache_hit, "tool_use_id": "t1",
                       "usage": {"input_tokens": 300, "output_tokens": 12}}),
            )
        };
        let rows = project(&verdict(false), "{}");
        let [Projection::Metric(m)] = &rows[..] else {
            panic!("one metric: {rows:?}")
        };
        assert_eq!(
            (
                m.kind.as_str(),
                m.name.as_str(),
                m.duration_ms,
                m.input_tokens
            ),
            ("reviewer_call", "haiku", Some(800), Some(300))
        );
        assert_eq!(m.data.as_deref(), Some(r#"{"reviewer":"tool-approve"}"#));
        assert!(project(&verdict(true), "{}").is_empty());
    }

    #[test]
    fn the_input_digest_is_over_the_canonical_form() {
        assert_eq!(
            input_digest(&json!({"b": 1, "a": "x"})),
            input_digest(&serde_json::from_str::<Value>(r#"{"a":"x","b":1}"#).unwrap())
        );
    }
}
