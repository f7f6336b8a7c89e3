//! One session as a timeline: its messages, and each tool call with its
//! permission decision (and who made it), gates, hooks, reviewer verdicts,
//! timing and evidence (the diffs of the files it changed), from the
//! ledger's report and the audit tables.

use serde::Serialize;
use serde_json::Value;
use tascer::Message;
use tascer_ledger::{GateOutcome, Ledger, LedgerError, ReportAudit, ReportReview, ReportTool};
use tascer_store::{DecisionRow, HookRunRow, MetricRow, SessionInfo, SessionStore};

use crate::error::ApiError;

/// The most bytes of one piece of evidence a timeline shows.
pub const EVIDENCE_BYTES: usize = 64 * 1024;

/// A session as the timeline page shows it.
#[derive(Debug, Serialize)]
pub struct Timeline {
    /// The stored session.
    pub session: SessionInfo,
    /// Its messages, in their stream-json shape.
    pub messages: Vec<Message>,
    /// What its ledger holds, `None` when it has no entries.
    pub ledger: Option<LedgerFacts>,
    /// Its tool calls, in the order they were opened.
    pub calls: Vec<Call>,
    /// Reviewer verdicts not tied to a tool call (a Stop's).
    pub reviews: Vec<ReportReview>,
    /// Hook runs not tied to a tool call (session, prompt, stop events).
    pub session_hooks: Vec<HookRunRow>,
    /// Model calls and turn ends (the `metrics` rows not of a tool call).
    pub metrics: Vec<MetricRow>,
}

/// The ledger's facts about the session.
#[derive(Debug, Serialize)]
pub struct LedgerFacts {
    /// Entries.
    pub entries: u64,
    /// Time of the first entry.
    pub started_at: Option<String>,
    /// Time of the end entry.
    pub ended_at: Option<String>,
    /// Status from the end entry.
    pub status: Option<String>,
    /// Cost from the end entry.
    pub cost_usd: Option<f64>,
    /// The stored head's hash, when signed.
    pub head: Option<String>,
    /// Tool calls per status.
    pub tool_status_counts: std::collections::BTreeMap<String, u64>,
}

/// One tool call.
#[derive(Debug, Serialize)]
pub struct Call {
    /// Its id.
    pub tool_use_id: String,
    /// The tool.
    pub tool: String,
    /// The input it ran with.
    pub input: Value,
    /// `pending`, `validated`, `failed`, `blocked`, …
    pub status: String,
    /// When its record was opened.
    pub started_at: String,
    /// When it was closed.
    pub finished_at: Option<String>,
    /// The whole pipeline's time (the `tool_call` metric), milliseconds.
    pub duration_ms: Option<i64>,
    /// Its permission decision as the audit table holds it (who decided).
    pub decision: Option<DecisionRow>,
    /// Gates before the call.
    pub pre_gates: Vec<GateOutcome>,
    /// Gates after the call.
    pub post_gates: Vec<GateOutcome>,
    /// The hooks that ran for it.
    pub hooks: Vec<HookRunRow>,
    /// Reviewer verdicts about it.
    pub reviews: Vec<ReportReview>,
    /// Its recorded output.
    pub output: Option<Value>,
    /// Its evidence as text: diffs, standard output and error, contents.
    pub evidence: Vec<EvidenceText>,
    /// The ledger entry holding its latest record.
    pub entry_hash: String,
    /// True when the record's proof hash matches its content.
    pub proof_valid: bool,
}

/// One piece of evidence, as text.
#[derive(Debug, Serialize)]
pub struct EvidenceText {
    /// `diff`, `stdout`, `stderr` or `file`.
    pub kind: String,
    /// Its digest (`sha256:<hex>`).
    pub digest: String,
    /// Its text (invalid UTF-8 replaced), cut at [`EVIDENCE_BYTES`].
    pub text: Option<String>,
    /// True when the text was cut.
    pub truncated: bool,
    /// Why it could not be read, if it could not.
    pub error: Option<String>,
}

/// The timeline of session `id`; a 404 when the store has no such session.
pub fn timeline(store: &SessionStore, ledger: &Ledger, id: &str) -> Result<Timeline, ApiError> {
    let internal = |e: &(dyn std::error::Error + 'static)| ApiError::internal(e);
    let session = store
        .session(id)
        .map_err(|e| internal(&e))?
        .ok_or_else(|| ApiError::not_found(format!("no session {id} in the store")))?;
    let messages = store.messages(id).map_err(|e| internal(&e))?;
    let mut timeline = Timeline {
        session,
        messages,
        ledger: None,
        calls: Vec::new(),
        reviews: Vec::new(),
        session_hooks: Vec::new(),
        metrics: Vec::new(),
    };
    let report = match ledger.report(id) {
        Ok(report) => report,
        Err(LedgerError::EmptySession(_)) => return Ok(timeline),
        Err(e) => return Err(internal(&e)),
    };
    let audit = report.audit.clone().unwrap_or_default();
    timeline.calls = report
        .tools
        .iter()
        .map(|tool| call(ledger, id, tool, &audit, &report.reviews))
        .collect();
    timeline.reviews = report
        .reviews
        .iter()
        .filter(|r| r.verdict.tool_use_id.is_none())
        .cloned()
        .collect();
    timeline.session_hooks = audit
        .hook_runs
        .iter()
        .filter(|h| h.tool_use_id.is_none())
        .cloned()
        .collect();
    timeline.metrics = audit
        .metrics
        .iter()
        .filter(|m| m.kind != "tool_call" && m.kind != "hook")
        .cloned()
        .collect();
    timeline.ledger = Some(LedgerFacts {
        entries: report.entries,
        started_at: report.started_at,
        ended_at: report.ended_at,
        status: report.status,
        cost_usd: report.cost_usd,
        head: report.head.map(|h| h.hash),
        tool_status_counts: report.tool_status_counts,
    });
    Ok(timeline)
}

/// One tool call of the report, with its audit rows and evidence.
fn call(
    ledger: &Ledger,
    session: &str,
    tool: &ReportTool,
    audit: &ReportAudit,
    reviews: &[ReportReview],
) -> Call {
    let r = &tool.record;
    let id = r.tool_use_id.as_str();
    let duration_ms = audit
        .metrics
        .iter()
        .find(|m| m.kind == "tool_call" && m.tool_use_id.as_deref() == Some(id))
        .and_then(|m| m.duration_ms);
    let evidence = r
        .evidence_by_kind
        .iter()
        .flat_map(|(kind, digests)| digests.iter().map(move |d| (kind, d)))
        .map(|(kind, digest)| evidence_text(ledger, session, kind, digest))
        .collect();
    Call {
        tool_use_id: r.tool_use_id.clone(),
        tool: r.tool.clone(),
        input: r.input.clone(),
        status: tool.status().as_str().to_string(),
        started_at: r.started_at.clone(),
        finished_at: r.finished_at.clone(),
        duration_ms,
        decision: audit.decision_for(id).cloned(),
        pre_gates: r.pre_gates.clone(),
        post_gates: r.post_gates.clone(),
        hooks: audit.hooks_for(id).cloned().collect(),
        reviews: reviews
            .iter()
            .filter(|v| v.verdict.tool_use_id.as_deref() == Some(id))
            .cloned()
            .collect(),
        output: r.output.clone(),
        evidence,
        entry_hash: tool.entry_hash.clone(),
        proof_valid: tool.proof_valid,
    }
}

/// A piece of evidence read from the ledger, as text.
fn evidence_text(ledger: &Ledger, session: &str, kind: &str, digest: &str) -> EvidenceText {
    let mut out = EvidenceText {
        kind: kind.to_string(),
        digest: digest.to_string(),
        text: None,
        truncated: false,
        error: None,
    };
    match ledger.get_evidence(session, digest) {
        Ok(bytes) => {
            out.truncated = bytes.len() > EVIDENCE_BYTES;
            let cut = &bytes[..bytes.len().min(EVIDENCE_BYTES)];
            out.text = Some(String::from_utf8_lossy(cut).into_owned());
        }
        Err(e) => out.error = Some(tascer_core::error_chain(&e)),
    }
    out
}
