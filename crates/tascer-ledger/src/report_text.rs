//! Reports and verification outcomes as plain-text lines for people: what
//! `tascer report` and `tascer verify` print, and what the gatekeeper's
//! `session_report` / `session_verify` tools return.

use serde_json::Value;
use tascer_core::error_chain;

use crate::error::AuditError;
use crate::record::GateOutcome;
use crate::report::{ReportData, ReportReview, ReportTool};
use crate::report_audit::{decision_counts, decision_text, hook_text, metric_lines};
use crate::verify::VerifyReport;

/// One line (plus indented warnings) describing a verification outcome.
/// `signer` is the key id the head names; `key_given` says whether a
/// trusted public key was at hand (else the line says how to pass one).
pub fn verify_lines(report: &VerifyReport, signer: Option<&str>, key_given: bool) -> Vec<String> {
    let id = &report.session_id;
    let mut lines = Vec::new();
    if let Some(b) = &report.first_broken {
        lines.push(format!(
            "✗ {id}: entry {}: {} ({})",
            b.seq,
            b.reason.name(),
            b.detail
        ));
        return lines;
    }
    if !report.summary_mismatches.is_empty() {
        lines.push(format!(
            "✗ {id}: the chain is intact ({} entries) but the stored session summary disagrees \
             with it",
            report.entries_checked
        ));
        for m in &report.summary_mismatches {
            lines.push(format!("    {m}"));
        }
        return lines;
    }
    let n = report.entries_checked;
    let status = if report.signed {
        format!("signed by {}", signer.unwrap_or("(unknown key)"))
    } else if let Some(signer) = signer {
        let hint = if key_given {
            ""
        } else {
            ": pass --key PUBKEY_PEM"
        };
        format!("signed by {signer}, signature NOT checked (no trusted public key{hint})")
    } else {
        "UNSIGNED (no signing key was configured: a rewritten chain or a cut-off tail cannot be \
         detected)"
            .to_string()
    };
    lines.push(format!("✓ {id}: {n} entries, {status}"));
    for w in &report.warnings {
        lines.push(format!("    warning: {w}"));
    }
    lines
}

/// `gate ✓ (12 ms), other ✗: message` or `none`.
fn gates_text(gates: &[GateOutcome]) -> String {
    if gates.is_empty() {
        return "none".into();
    }
    gates
        .iter()
        .map(|g| {
            let mark = if g.passed { "✓" } else { "✗" };
            let msg = if g.passed || g.message.is_empty() {
                String::new()
            } else {
                format!(": {}", g.message.lines().next().unwrap_or(""))
            };
            format!("{} {mark} ({} ms){msg}", g.gate, g.duration_ms)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The permission decision of a record, as a short word when there is one.
fn permission_text(permission: &Value) -> String {
    match permission {
        Value::Null => "none recorded".into(),
        Value::String(s) => s.clone(),
        Value::Object(map) => ["decision", "behavior"]
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str))
            .map_or_else(|| permission.to_string(), str::to_string),
        other => other.to_string(),
    }
}

/// The hooks a tool record lists, in words.
fn record_hooks(hooks: &[Value]) -> Vec<String> {
    hooks
        .iter()
        .map(|h| {
            let field = |name: &str| h.get(name).and_then(Value::as_str).unwrap_or("?");
            let hook = h.get("hook").or_else(|| h.get("hook_name"));
            format!(
                "{} {} {}",
                field("event"),
                hook.and_then(Value::as_str).unwrap_or("?"),
                field("outcome")
            )
        })
        .collect()
}

/// `tool-approve deny (cached, 12 ms, model m): reason → tool-appeal …`.
fn reviews_text(reviews: &[&ReportReview]) -> String {
    reviews
        .iter()
        .map(|r| {
            let v = &r.verdict;
            let mut how = vec![v.outcome.replace('_', " ")];
            if v.cache_hit {
                how.push("cached".into());
            }
            how.push(format!("{} ms", v.duration_ms));
            if !v.model.is_empty() {
                how.push(format!("model {}", v.model));
            }
            let reason = v.reason.lines().next().unwrap_or_default();
            format!(
                "{} {} ({}): {reason}",
                v.reviewer,
                v.verdict,
                how.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join(" → ")
}

/// A session report for people, as lines: the session, its tool calls,
/// stop reviews, the ledger head and `verify`'s outcome (`key_given` as
/// for [`verify_lines`]).
pub fn report_lines(
    data: &ReportData,
    verify: &Result<VerifyReport, AuditError>,
    key_given: bool,
) -> Vec<String> {
    let mut out = session_lines(data);
    out.push(String::new());
    tool_lines(data, &mut out);
    session_hook_lines(data, &mut out);
    ledger_lines(data, verify, key_given, &mut out);
    out
}

/// The hooks that ran for the session rather than a tool call (session
/// start and end, prompts, stops, compaction).
fn session_hook_lines(data: &ReportData, out: &mut Vec<String>) {
    let Some(audit) = &data.audit else {
        return;
    };
    let runs: Vec<String> = audit
        .hook_runs
        .iter()
        .filter(|h| h.tool_use_id.is_none())
        .map(|h| format!("  entry {}: {}", h.seq, hook_text(h)))
        .collect();
    if !runs.is_empty() {
        out.push(String::new());
        out.push(format!("session hooks: {}", runs.len()));
        out.extend(runs);
    }
}

/// The session's model, status, times, cost and entry counts.
fn session_lines(data: &ReportData) -> Vec<String> {
    let mut out = vec![
        format!("session {}", data.session_id),
        format!(
            "  model    {}",
            data.model.as_deref().unwrap_or("(unknown)")
        ),
        format!(
            "  status   {}",
            data.status
                .as_deref()
                .unwrap_or("(no session_end entry: running, or it crashed)")
        ),
        format!(
            "  started  {}   ended {}",
            data.started_at.as_deref().unwrap_or("-"),
            data.ended_at.as_deref().unwrap_or("-")
        ),
    ];
    if let Some(cost) = data.cost_usd {
        out.push(format!("  cost     ${cost:.4}"));
    }
    if let Some(usage) = &data.usage {
        out.push(format!("  usage    {usage}"));
    }
    let (gates, failed) = gate_counts(data);
    let decisions = match &data.audit {
        Some(audit) => decision_counts(&audit.decisions),
        None => data.permission_decisions.to_string(),
    };
    out.push(format!(
        "  entries  {}   permission decisions {decisions}   gate results {gates} ({failed} \
         failed)",
        data.entries
    ));
    if let Some(audit) = &data.audit {
        for line in metric_lines(&audit.metrics) {
            out.push(format!("  {line}"));
        }
    }
    out
}

/// Every gate result of the session and how many failed: those inside the
/// tool records (a session's gates) and those recorded as entries of
/// their own.
fn gate_counts(data: &ReportData) -> (usize, usize) {
    let in_records = data
        .tools
        .iter()
        .flat_map(|t| t.record.pre_gates.iter().chain(&t.record.post_gates));
    let (mut all, mut failed) = (data.gate_results as usize, 0);
    for gate in in_records {
        all += 1;
        failed += usize::from(!gate.passed);
    }
    (all, failed)
}

/// Every tool call with its gates, permission, reviews and proof.
fn tool_lines(data: &ReportData, out: &mut Vec<String>) {
    let counts = data
        .tool_status_counts
        .iter()
        .map(|(s, n)| format!("{n} {s}"))
        .collect::<Vec<_>>()
        .join(", ");
    if data.tools.is_empty() {
        out.push("tool calls: none".into());
    } else {
        out.push(format!("tool calls: {} ({counts})", data.tools.len()));
    }
    for tool in &data.tools {
        tool_call_lines(data, tool, out);
    }
}

/// One tool call.
fn tool_call_lines(data: &ReportData, tool: &ReportTool, out: &mut Vec<String>) {
    let r = &tool.record;
    let seqs = match (tool.opened_seq, tool.closed_seq) {
        (Some(o), Some(c)) => format!("entries {o}→{c}"),
        (Some(o), None) => format!("entry {o}, never closed"),
        (None, Some(c)) => format!("entry {c}"),
        (None, None) => String::new(),
    };
    out.push(format!(
        "  [{}] {} {} ({seqs})",
        tool.status().as_str(),
        r.tool,
        r.tool_use_id
    ));
    out.push(format!("      pre-gates   {}", gates_text(&r.pre_gates)));
    out.push(format!("      post-gates  {}", gates_text(&r.post_gates)));
    // The audit tables when they hold the call, else the record's own
    // (a ledger written before them).
    let permission = data
        .audit
        .as_ref()
        .and_then(|a| a.decision_for(&r.tool_use_id))
        .map_or_else(|| permission_text(&r.permission), decision_text);
    let mut hooks: Vec<String> = data
        .audit
        .iter()
        .flat_map(|a| a.hooks_for(&r.tool_use_id))
        .map(hook_text)
        .collect();
    if hooks.is_empty() {
        hooks = record_hooks(&r.hooks);
    }
    out.push(format!(
        "      permission  {permission}   hooks run {}",
        hooks.len()
    ));
    if !hooks.is_empty() {
        out.push(format!("      hooks       {}", hooks.join("; ")));
    }
    let reviews: Vec<&ReportReview> = data
        .reviews
        .iter()
        .filter(|v| v.verdict.tool_use_id.as_deref() == Some(r.tool_use_id.as_str()))
        .collect();
    if !reviews.is_empty() {
        out.push(format!("      reviewers   {}", reviews_text(&reviews)));
    }
    let proof = match &r.proof_hash {
        Some(h) if tool.proof_valid => format!("{h} (valid)"),
        Some(h) => format!("{h} (DOES NOT MATCH the record)"),
        None => "none (not sealed)".into(),
    };
    out.push(format!("      proof       {proof}"));
    out.push(format!("      entry hash  {}", tool.entry_hash));
}

/// Stop reviews, the ledger head and the verification.
fn ledger_lines(
    data: &ReportData,
    verify: &Result<VerifyReport, AuditError>,
    key_given: bool,
    out: &mut Vec<String>,
) {
    let stops: Vec<&ReportReview> = data
        .reviews
        .iter()
        .filter(|v| v.verdict.tool_use_id.is_none())
        .collect();
    if !stops.is_empty() {
        out.push(String::new());
        out.push(format!("stop reviews: {}", stops.len()));
        for review in stops {
            out.push(format!(
                "  entry {}: {}",
                review.seq,
                reviews_text(&[review])
            ));
        }
    }
    out.push(String::new());
    match &data.head {
        Some(h) => {
            let signed = match &h.key_id {
                Some(k) if h.signature.is_some() => format!("signed by {k}"),
                _ => "unsigned".into(),
            };
            out.push(format!(
                "ledger head: entry {} {} ({signed})",
                h.seq, h.hash
            ));
        }
        None => out.push("ledger head: none stored".into()),
    }
    match verify {
        Ok(v) => {
            let signer = data.head.as_ref().and_then(|h| h.key_id.as_deref());
            for line in verify_lines(v, signer, key_given) {
                out.push(format!("verify: {line}"));
            }
        }
        Err(err) => out.push(format!("verify: ✗ cannot verify: {}", error_chain(err))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn an_empty_report_says_so_and_why_it_was_not_verified() {
        let data = ReportData::from_entries("s1", &[], None);
        let verify = Err(AuditError::UnknownSession {
            session: "s1".into(),
        });
        let lines = report_lines(&data, &verify, false);
        assert_eq!(lines[0], "session s1");
        assert!(lines.contains(&"tool calls: none".to_string()), "{lines:?}");
        assert_eq!(
            lines[lines.len() - 2..],
            [
                "ledger head: none stored".to_string(),
                "verify: ✗ cannot verify: unknown session s1: it has no ledger entries".into()
            ]
        );
    }
}
