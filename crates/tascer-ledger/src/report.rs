//! Data for a session report: tool calls with their status, gates and proof.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use tascer_store::{DecisionRow, HookRunRow, MetricRow};

use crate::entry::{EntryKind, LedgerEntry};
use crate::payload::ReviewerVerdict;
use crate::record::{ToolRecord, ToolStatus};
use crate::sign::SignedHead;

/// One tool call as the ledger shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportTool {
    /// The latest record (the opening one while still pending).
    pub record: ToolRecord,
    /// Seq of the `tool_call_opened` entry, if any.
    pub opened_seq: Option<u64>,
    /// Seq of the closing `tool_record` entry, if closed.
    pub closed_seq: Option<u64>,
    /// Hash of the ledger entry that holds the latest record: the proof
    /// that this record is part of the chain.
    pub entry_hash: String,
    /// True when the record's own `proof_hash` matches its content.
    pub proof_valid: bool,
}

impl ReportTool {
    /// The status a report shows: pending until the call is closed, then
    /// the closing record's.
    pub fn status(&self) -> ToolStatus {
        if self.closed_seq.is_none() {
            ToolStatus::Pending
        } else {
            self.record.status
        }
    }
}

/// One reviewer verdict as the ledger shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportReview {
    /// Seq of its `reviewer_verdict` entry.
    pub seq: u64,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: ReviewerVerdict,
}

/// Everything a session report shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportData {
    /// Session id.
    pub session_id: String,
    /// Model from the start entry.
    pub model: Option<String>,
    /// Status from the end entry (`None` while running or if it crashed).
    pub status: Option<String>,
    /// Cost from the end entry.
    pub cost_usd: Option<f64>,
    /// Usage from the end entry.
    pub usage: Option<Value>,
    /// Time of the first entry.
    pub started_at: Option<String>,
    /// Time of the end entry.
    pub ended_at: Option<String>,
    /// Number of entries.
    pub entries: u64,
    /// The stored head.
    pub head: Option<SignedHead>,
    /// Tool calls in the order they were opened.
    pub tools: Vec<ReportTool>,
    /// Number of tool calls per status.
    pub tool_status_counts: BTreeMap<String, u64>,
    /// Permission decisions recorded.
    pub permission_decisions: u64,
    /// Gate results recorded as their own entries.
    pub gate_results: u64,
    /// LLM reviewer verdicts, in ledger order (each names its tool call,
    /// if any).
    #[serde(default)]
    pub reviews: Vec<ReportReview>,
    /// What the audit tables hold about the session (docs/audit.md):
    /// `None` for a report built from entries alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<ReportAudit>,
}

/// A session's rows of the audit tables, as a report shows them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReportAudit {
    /// Every permission decision, in ledger order.
    pub decisions: Vec<DecisionRow>,
    /// Every hook run, in ledger order.
    pub hook_runs: Vec<HookRunRow>,
    /// Every measurement (model calls, tool calls, hooks, turn ends).
    pub metrics: Vec<MetricRow>,
}

impl ReportAudit {
    /// The decision recorded for a tool call (the last one, should a
    /// resumed call have been decided twice).
    pub fn decision_for(&self, tool_use_id: &str) -> Option<&DecisionRow> {
        self.decisions
            .iter()
            .rev()
            .find(|d| d.tool_use_id.as_deref() == Some(tool_use_id))
    }

    /// The hook runs of a tool call, in order.
    pub fn hooks_for<'a>(&'a self, tool_use_id: &'a str) -> impl Iterator<Item = &'a HookRunRow> {
        self.hook_runs
            .iter()
            .filter(move |h| h.tool_use_id.as_deref() == Some(tool_use_id))
    }
}

impl ReportData {
    /// Builds the report from a session's entries (in seq order).
    pub fn from_entries(
        session_id: &str,
        entries: &[LedgerEntry],
        head: Option<SignedHead>,
    ) -> Self {
        let mut report = ReportData {
            session_id: session_id.to_string(),
            model: None,
            status: None,
            cost_usd: None,
            usage: None,
            started_at: entries.first().map(|e| e.ts.clone()),
            ended_at: None,
            entries: u64::try_from(entries.len()).unwrap_or(u64::MAX),
            head,
            tools: Vec::new(),
            tool_status_counts: BTreeMap::new(),
            permission_decisions: 0,
            gate_results: 0,
            reviews: Vec::new(),
            audit: None,
        };
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        for entry in entries {
            let p = &entry.payload;
            match entry.kind {
                EntryKind::SessionStart => {
                    report.model = p.get("model").and_then(Value::as_str).map(str::to_string);
                }
                EntryKind::SessionEnd => {
                    report.status = p.get("status").and_then(Value::as_str).map(str::to_string);
                    report.cost_usd = p.get("cost_usd").and_then(Value::as_f64);
                    report.usage = p.get("usage").cloned();
                    report.ended_at = Some(entry.ts.clone());
                }
                EntryKind::PermissionDecision => report.permission_decisions += 1,
                EntryKind::GateResult => report.gate_results += 1,
                EntryKind::ReviewerVerdict => {
                    if let Ok(verdict) = serde_json::from_value::<ReviewerVerdict>(p.clone()) {
                        report.reviews.push(ReportReview {
                            seq: entry.seq,
                            verdict,
                        });
                    }
                }
                EntryKind::ToolCallOpened | EntryKind::ToolRecord => {
                    let Ok(record) = serde_json::from_value::<ToolRecord>(p.clone()) else {
                        continue;
                    };
                    let opened = entry.kind == EntryKind::ToolCallOpened;
                    let proof_valid = record.proof_is_valid();
                    match index.get(&record.tool_use_id) {
                        Some(&i) => {
                            let tool = &mut report.tools[i];
                            if opened {
                                tool.opened_seq = Some(entry.seq);
                            } else {
                                tool.closed_seq = Some(entry.seq);
                            }
                            tool.record = record;
                            tool.entry_hash = entry.hash.clone();
                            tool.proof_valid = proof_valid;
                        }
                        None => {
                            index.insert(record.tool_use_id.clone(), report.tools.len());
                            report.tools.push(ReportTool {
                                record,
                                opened_seq: opened.then_some(entry.seq),
                                closed_seq: (!opened).then_some(entry.seq),
                                entry_hash: entry.hash.clone(),
                                proof_valid,
                            });
                        }
                    }
                }
                _ => {}
            }
        }
        for tool in &report.tools {
            *report
                .tool_status_counts
                .entry(tool.status().as_str().to_string())
                .or_default() += 1;
        }
        report
    }
}
