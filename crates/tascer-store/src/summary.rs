//! A session's stored summary, read without writing anything, for
//! cross-checks against its ledger (`tascer verify`).

use serde::Serialize;

/// What the session store says about a session, in the fields the ledger
/// also records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    /// `sessions.model`.
    pub model: String,
    /// `sessions.total_cost_usd`.
    pub total_cost_usd: f64,
    /// `sessions.num_turns` (main-loop model calls).
    pub num_turns: u32,
    /// `sessions.forked_from`: a fork's copied messages are not in its
    /// own ledger.
    pub forked_from: Option<String>,
    /// Stored assistant frames (main loop and subagents).
    pub assistant_messages: u64,
    /// Stored user frames whose content is a prompt text (not tool
    /// results).
    pub prompts: u64,
}
