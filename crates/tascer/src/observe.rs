//! The facts an [`Observer`] is told about a tool call, read from the
//! call's closed ledger record: one translation for the loop and for the
//! hosts (`tascer hook`), so both report the same decision, gates, hooks
//! and ledger hash (docs/telemetry.md).

use std::time::SystemTime;

use serde_json::Value;
use tascer_core::observe::{DecisionFacts, GateFacts, HookFacts, ToolCallFacts, VerdictFacts};
use tascer_guard::reviewers::ReviewRecord;
use tascer_ledger::{GateOutcome, ToolRecord, ToolStatus};

pub use tascer_core::observe::{AgentEndFacts, AgentFacts, ModelCallFacts, Observer, SessionFacts};

/// The facts of the call `record` closes: `hash` is the hash of the
/// ledger entry that closed it, `reviews` the reviewer verdicts given on
/// it.
pub fn tool_facts(
    session_id: &str,
    record: &ToolRecord,
    hash: Option<String>,
    reviews: &[ReviewRecord],
) -> ToolCallFacts {
    let mut gates = gate_facts(&record.pre_gates, "pre");
    gates.extend(gate_facts(&record.post_gates, "post"));
    let is_error = record.status != ToolStatus::Validated;
    let error = is_error.then(|| output_text(record));
    ToolCallFacts {
        session_id: session_id.to_string(),
        tool_name: record.tool.clone(),
        tool_use_id: record.tool_use_id.clone(),
        tool_type: tool_type(&record.tool).to_string(),
        input: record.input.clone(),
        decision: decision_facts(&record.permission),
        ran: record.status != ToolStatus::Blocked,
        status: record.status.as_str().to_string(),
        is_error,
        error,
        gates,
        verdicts: reviews.iter().map(verdict_facts).collect(),
        hooks: record.hooks.iter().map(hook_facts).collect(),
        ledger_hash: hash,
        policy_digest: None,
        start: timestamp(&record.started_at),
        end: record.finished_at.as_deref().and_then(timestamp),
    }
}

/// `extension` for an MCP tool (`mcp__server__tool`), else `function`.
pub fn tool_type(name: &str) -> &'static str {
    if name.starts_with("mcp__") {
        "extension"
    } else {
        "function"
    }
}

/// The decision as [`decision_record`](crate::records::decision_record)
/// wrote it; `None` when no decision was recorded.
fn decision_facts(permission: &Value) -> Option<DecisionFacts> {
    let behavior = permission.get("behavior")?.as_str()?.to_string();
    let by = permission.get("decided_by");
    let text = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let source_name = ["rule", "name", "mode"]
        .iter()
        .find_map(|key| text(by, key));
    Some(DecisionFacts {
        behavior,
        source: text(by, "type").unwrap_or_else(|| "default".into()),
        source_name,
        reason: text(Some(permission), "reason").unwrap_or_default(),
    })
}

fn gate_facts(gates: &[GateOutcome], phase: &str) -> Vec<GateFacts> {
    gates
        .iter()
        .map(|g| GateFacts {
            name: g.gate.clone(),
            passed: g.passed,
            message: g.message.clone(),
            phase: phase.to_string(),
        })
        .collect()
}

fn verdict_facts(review: &ReviewRecord) -> VerdictFacts {
    VerdictFacts {
        reviewer: review.reviewer.name().to_string(),
        passed: review.passed,
        reason: review.reason.clone(),
    }
}

fn hook_facts(hook: &Value) -> HookFacts {
    let text = |key: &str| {
        hook.get(key)
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .unwrap_or_default()
    };
    HookFacts {
        event: text("event"),
        outcome: text("outcome"),
        duration_ms: hook.get("duration_ms").and_then(Value::as_u64).unwrap_or(0),
    }
}

/// The recorded output's text, for a call that did not succeed.
fn output_text(record: &ToolRecord) -> String {
    match &record.output {
        Some(Value::String(text)) => text.clone(),
        _ => record.status.as_str().to_string(),
    }
}

/// An RFC 3339 time as a `SystemTime`.
fn timestamp(text: &str) -> Option<SystemTime> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(SystemTime::from)
}

/// The settings' `telemetry` block as the session `options` describe
/// would read it (the same files, layered the same way), for a host
/// that sets telemetry up before the session starts.
pub fn telemetry_settings(
    options: &crate::Options,
) -> Result<tascer_guard::settings::TelemetrySettings, crate::Error> {
    let cwd = match &options.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| crate::Error::Cwd(e.to_string()))?,
    };
    let home = options.home.clone().unwrap_or_else(crate::tascer_home);
    let settings = crate::setup::load_settings_in(options, &cwd, None, &home)?;
    Ok(settings.telemetry())
}
