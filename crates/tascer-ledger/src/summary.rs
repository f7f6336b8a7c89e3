//! Cross-checking a session's stored summary against its ledger.
//!
//! The session store keeps a summary row per session (model, cost, turns)
//! and the messages; the ledger records the same facts entry by entry
//! (`session_start.model`, one `model_response` per model call, one
//! `user_prompt` per prompt, each turn's `session_end` with the running
//! cost). A summary edited in the database, or messages missing from the
//! store, show up as a field on which the two disagree.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tascer_store::SessionSummary;

use crate::entry::{EntryKind, LedgerEntry};

/// One field on which a session's stored summary and its ledger disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryMismatch {
    /// The stored field: `model`, `total_cost_usd`, `num_turns`,
    /// `assistant_messages` or `prompts`.
    pub field: String,
    /// What the session store holds.
    pub stored: String,
    /// What the ledger records.
    pub ledger: String,
}

impl std::fmt::Display for SummaryMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: the session store says {}, the ledger says {}",
            self.field, self.stored, self.ledger
        )
    }
}

/// What the ledger says about the summary's fields.
#[derive(Debug, Default)]
struct FromLedger {
    model: Option<String>,
    main_turns: u64,
    responses: u64,
    prompts: u64,
    last_end_cost: Option<f64>,
    responses_after_last_end: u64,
}

fn is_compaction(entry: Option<&LedgerEntry>) -> bool {
    entry.is_some_and(|e| {
        e.kind == EntryKind::Checkpoint
            && e.payload.get("event").and_then(Value::as_str) == Some("compaction")
    })
}

fn is_sampling(entry: &LedgerEntry) -> bool {
    entry
        .payload
        .get("mcp_sampling_server")
        .is_some_and(|server| !server.is_null())
}

impl FromLedger {
    fn read(entries: &[LedgerEntry]) -> Self {
        let mut out = FromLedger::default();
        for (i, entry) in entries.iter().enumerate() {
            match entry.kind {
                EntryKind::SessionStart if out.model.is_none() => {
                    out.model = entry
                        .payload
                        .get("model")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                }
                // A compaction's summary call (its checkpoint follows it
                // directly) and an MCP server's sampling call are not
                // turns and leave no assistant message.
                EntryKind::ModelResponse
                    if !is_compaction(entries.get(i + 1)) && !is_sampling(entry) =>
                {
                    out.responses += 1;
                    out.responses_after_last_end += 1;
                    if entry
                        .payload
                        .get("parent_tool_use_id")
                        .is_none_or(Value::is_null)
                    {
                        out.main_turns += 1;
                    }
                }
                EntryKind::UserPrompt => out.prompts += 1,
                EntryKind::SessionEnd => {
                    out.last_end_cost = entry.payload.get("cost_usd").and_then(Value::as_f64);
                    out.responses_after_last_end = 0;
                }
                _ => {}
            }
        }
        out
    }
}

fn same_cost(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The fields on which `stored` disagrees with the session's ledger
/// `entries` (empty when they agree):
///
/// - `model`: the model the session started with;
/// - `num_turns`: main-loop model calls (`model_response` entries without
///   a `parent_tool_use_id`, compaction and MCP sampling calls excepted);
/// - `total_cost_usd`: the last `session_end`'s cost when no model call
///   followed it, else at least that much (a turn is under way or was cut
///   off);
/// - `assistant_messages` and `prompts`: one stored assistant message per
///   model call (the same exceptions) and one stored prompt per `user_prompt` entry (not checked
///   for a fork, whose copied messages are in its parent's ledger).
pub fn check_summary(entries: &[LedgerEntry], stored: &SessionSummary) -> Vec<SummaryMismatch> {
    let ledger = FromLedger::read(entries);
    let mut out = Vec::new();
    let mut differ = |field: &str, stored: String, ledger: String| {
        out.push(SummaryMismatch {
            field: field.to_string(),
            stored,
            ledger,
        });
    };
    if let Some(model) = &ledger.model
        && model != &stored.model
    {
        differ("model", format!("{:?}", stored.model), format!("{model:?}"));
    }
    if u64::from(stored.num_turns) != ledger.main_turns {
        differ(
            "num_turns",
            stored.num_turns.to_string(),
            ledger.main_turns.to_string(),
        );
    }
    if let Some(cost) = ledger.last_end_cost {
        let settled = ledger.responses_after_last_end == 0;
        if settled && !same_cost(stored.total_cost_usd, cost) {
            differ(
                "total_cost_usd",
                stored.total_cost_usd.to_string(),
                cost.to_string(),
            );
        } else if !settled
            && stored.total_cost_usd < cost
            && !same_cost(stored.total_cost_usd, cost)
        {
            differ(
                "total_cost_usd",
                stored.total_cost_usd.to_string(),
                format!("at least {cost}"),
            );
        }
    }
    if stored.forked_from.is_none() {
        if stored.assistant_messages != ledger.responses {
            differ(
                "assistant_messages",
                stored.assistant_messages.to_string(),
                format!("{} model calls", ledger.responses),
            );
        }
        if stored.prompts != ledger.prompts {
            differ(
                "prompts",
                stored.prompts.to_string(),
                ledger.prompts.to_string(),
            );
        }
    }
    out
}
