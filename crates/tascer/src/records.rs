//! What the ledger records of admission's and review's answers: gate
//! results, the permission decision, each LLM reviewer verdict; and, read
//! back from a session's ledger, how many stops `intent-validate` blocked.
//!
//! The loop's ledger writer ([`crate::proof`]) and the hosts that run tools
//! themselves record the same shapes (re-exported from [`crate::host`] and
//! [`crate::reviewer`]).

use serde_json::{Value, json};
use tascer_guard::gates::GateResult;
use tascer_guard::hooks::HookRun;
use tascer_guard::permissions::{PermissionDecision, PermissionMode};
use tascer_guard::reviewers::{ReviewOutcome, ReviewRecord, ReviewerKind};
use tascer_ledger::{EntryKind, GateOutcome, LedgerEntry, ReviewerVerdict};

use crate::duration::millis;

/// Gate results as the ledger records them.
pub fn gate_outcomes(results: &[GateResult]) -> Vec<GateOutcome> {
    results
        .iter()
        .map(|r| GateOutcome {
            gate: r.gate.clone(),
            passed: r.passed,
            message: r.message.clone(),
            duration_ms: r.duration_ms,
        })
        .collect()
}

/// The permission decision as recorded in the ledger (and projected into
/// the `permission_decisions` audit table): the decision, who made it
/// (`decided_by`), the call, the mode, and `input_digest` —
/// [`tascer_ledger::input_digest`] of `recorded_input`, the input as the
/// call's `tool_call_opened` record stores it.
pub fn decision_record(
    decision: &PermissionDecision,
    tool_name: &str,
    tool_use_id: &str,
    mode: PermissionMode,
    recorded_input: &Value,
) -> Value {
    let mut value = serde_json::to_value(decision).unwrap_or(Value::Null);
    if let Some(obj) = value.as_object_mut() {
        obj.insert("tool".into(), json!(tool_name));
        obj.insert("tool_use_id".into(), json!(tool_use_id));
        obj.insert("mode".into(), json!(mode.as_str()));
        obj.insert(
            "input_digest".into(),
            json!(tascer_ledger::input_digest(recorded_input)),
        );
    }
    value
}

/// The `hook_execution` payload of one hook run: the run as
/// `tascer-guard` records it, with the tool call it ran for (`None` for
/// session, prompt and stop events). Projected into the `hook_executions`
/// audit table.
pub fn hook_run_payload(run: &HookRun, tool_use_id: Option<&str>) -> Value {
    let mut data = serde_json::to_value(run).unwrap_or(Value::Null);
    if let Some(obj) = data.as_object_mut() {
        obj.insert("tool_use_id".into(), json!(tool_use_id));
    }
    data
}

/// The ledger entries of some hook runs (see [`hook_run_payload`]).
pub fn hook_run_entries(runs: &[HookRun], tool_use_id: Option<&str>) -> Vec<(EntryKind, Value)> {
    runs.iter()
        .map(|r| (EntryKind::HookExecution, hook_run_payload(r, tool_use_id)))
        .collect()
}

/// The hook runs of a tool call as its record's `hooks` field lists them:
/// who ran, for which event and matcher, how it ended and how long it
/// took. The hook's input and output are in its own `hook_execution`
/// entry, not repeated in the record.
pub fn hook_records(runs: &[HookRun]) -> Vec<Value> {
    runs.iter()
        .map(|r| {
            json!({
                "hook": r.hook_name,
                "event": r.event,
                "matcher": r.matcher,
                "kind": r.kind,
                "outcome": r.outcome,
                "exit_code": r.exit_code,
                "duration_ms": u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
                "error": r.error,
            })
        })
        .collect()
}

/// The ledger payload of one verdict.
pub fn verdict_payload(record: &ReviewRecord) -> Value {
    let verdict = ReviewerVerdict {
        reviewer: record.reviewer.name().to_string(),
        model: record.model.clone(),
        verdict: record.verdict().to_string(),
        reason: record.reason.clone(),
        outcome: record.outcome.as_str().to_string(),
        error: record.error.clone(),
        duration_ms: millis(record.duration),
        cache_hit: record.cache_hit,
        tool_use_id: record.call.as_ref().map(|(_, id)| id.clone()),
        tool: record.call.as_ref().map(|(tool, _)| tool.clone()),
        usage: record.usage,
    };
    verdict.to_payload().unwrap_or(Value::Null)
}

/// The ledger entries of some verdicts.
pub fn verdict_entries(records: &[ReviewRecord]) -> Vec<(EntryKind, Value)> {
    records
        .iter()
        .map(|r| (EntryKind::ReviewerVerdict, verdict_payload(r)))
        .collect()
}

/// How many stops `intent-validate` blocked in a session, from its ledger.
pub fn intent_blocks(entries: &[LedgerEntry]) -> u32 {
    let blocked = entries
        .iter()
        .filter(|e| e.kind == EntryKind::ReviewerVerdict)
        .filter_map(|e| serde_json::from_value::<ReviewerVerdict>(e.payload.clone()).ok())
        .filter(|v| {
            v.reviewer == ReviewerKind::IntentValidate.name()
                && v.verdict == ReviewerKind::IntentValidate.verdict(false)
                && v.outcome != ReviewOutcome::Skipped.as_str()
        })
        .count();
    u32::try_from(blocked).unwrap_or(u32::MAX)
}
