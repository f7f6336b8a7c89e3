//! Each agent's verdict as the webhooks carry it (the payload's
//! `tascer.agents`, docs/reviewers.md "Webhooks"): one shape for the LLM
//! reviewers of a `tascer run` session, of `tascer hook`, and for the
//! gatekeeper's model verdicts (`tascer mcp serve`).
//!
//! Only model verdicts are agents: the deciders that are not a model
//! (auto-approve, a deny rule, a policy, the sandbox note) stay in the
//! event's `decision`/`answer`.

use serde::Serialize;
use serde_json::Value;
use tascer_guard::reviewers::{ReviewOutcome, ReviewRecord};

use crate::duration::millis;

/// How an agent's verdict weighed on the call or stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AgentLevel {
    /// The verdict let it through.
    Pass,
    /// It refused the call (or blocked the stop, declined the change).
    Block,
    /// The review failed (a timeout, a provider error, a malformed
    /// answer); `outcome` says whether the fail mode let it pass.
    Error,
}

/// One agent's verdict, as the webhook payload's `tascer.agents` holds it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct AgentVerdict {
    /// The agent: a reviewer (`tool-approve`, …) or a gatekeeper tool's
    /// model (`confirm`, `validate_intent`).
    pub agent: String,
    /// `pass`, `block` or `error`.
    pub level: AgentLevel,
    /// The agent's reason when it did not pass (what went wrong for an
    /// error); `None` when it passed.
    pub problem: Option<String>,
    /// What the agent (or Claude Code, or the MCP client) was told as a
    /// consequence: the refusal or the stop's correction; `None` when
    /// nothing was refused because of it.
    pub answer: Option<String>,
    /// The verdict word (`allow`, `deny`, `CONFIRMED`, …).
    pub verdict: String,
    /// How the review ended: `decided`, `failed_open`, `failed_closed`,
    /// `skipped`.
    pub outcome: String,
    /// The model asked.
    pub model: String,
    /// How long it took, milliseconds.
    pub duration_ms: u64,
    /// True when the verdict came from the reviewers' cache.
    pub cache_hit: bool,
    /// The call reviewed, if any.
    pub tool_use_id: Option<String>,
}

impl AgentVerdict {
    /// A verdict of `agent` by `model`, decided (not cached, no call):
    /// the gatekeeper's shape before its level and texts are set.
    pub fn new(
        agent: impl Into<String>,
        model: impl Into<String>,
        verdict: impl Into<String>,
        level: AgentLevel,
    ) -> Self {
        AgentVerdict {
            agent: agent.into(),
            level,
            problem: None,
            answer: None,
            verdict: verdict.into(),
            outcome: ReviewOutcome::Decided.as_str().to_string(),
            model: model.into(),
            duration_ms: 0,
            cache_hit: false,
            tool_use_id: None,
        }
    }

    /// An LLM reviewer's verdict; `told` is what the agent was told when
    /// the call was refused or the stop blocked (given to the verdicts
    /// that did not pass, as their `answer`).
    pub fn from_review(record: &ReviewRecord, told: Option<&str>) -> Self {
        let level = match record.outcome {
            ReviewOutcome::FailedOpen | ReviewOutcome::FailedClosed => AgentLevel::Error,
            _ if record.passed => AgentLevel::Pass,
            _ => AgentLevel::Block,
        };
        let problem = match level {
            AgentLevel::Pass => None,
            _ => Some(record.reason.clone()),
        };
        AgentVerdict {
            agent: record.reviewer.name().to_string(),
            level,
            problem,
            answer: (!record.passed).then(|| told.map(str::to_string)).flatten(),
            verdict: record.verdict().to_string(),
            outcome: record.outcome.as_str().to_string(),
            model: record.model.clone(),
            duration_ms: millis(record.duration),
            cache_hit: record.cache_hit,
            tool_use_id: record.call.as_ref().map(|(_, id)| id.clone()),
        }
    }

    /// As JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The payload's `agents` for some reviewer verdicts: one object each, in
/// order; `told` as in [`AgentVerdict::from_review`].
pub fn agent_verdicts(records: &[ReviewRecord], told: Option<&str>) -> Vec<Value> {
    records
        .iter()
        .map(|r| AgentVerdict::from_review(r, told).to_value())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::time::Duration;

    use tascer_guard::reviewers::ReviewerKind;

    use super::*;

    fn record(kind: ReviewerKind, passed: bool, outcome: ReviewOutcome) -> ReviewRecord {
        ReviewRecord {
            reviewer: kind,
            model: "m".into(),
            passed,
            reason: "why".into(),
            outcome,
            error: None,
            duration: Duration::from_millis(12),
            cache_hit: false,
            call: Some(("Bash".into(), "t1".into())),
            usage: None,
        }
    }

    #[test]
    fn levels_problems_and_answers_follow_the_verdicts() {
        let records = [
            record(ReviewerKind::ToolApprove, true, ReviewOutcome::Decided),
            record(ReviewerKind::ToolApprove, false, ReviewOutcome::Decided),
            record(ReviewerKind::ToolAppeal, false, ReviewOutcome::FailedClosed),
            record(ReviewerKind::ToolAppeal, true, ReviewOutcome::FailedOpen),
        ];
        let agents = agent_verdicts(&records, Some("refused"));
        let levels: Vec<&str> = agents
            .iter()
            .map(|a| a["level"].as_str().unwrap())
            .collect();
        assert_eq!(levels, ["pass", "block", "error", "error"]);
        assert_eq!(agents[0]["problem"], Value::Null);
        assert_eq!(agents[0]["answer"], Value::Null);
        assert_eq!(agents[1]["problem"], "why");
        assert_eq!(agents[1]["answer"], "refused");
        assert_eq!(agents[1]["verdict"], "deny");
        assert_eq!(agents[2]["outcome"], "failed_closed");
        assert_eq!(agents[2]["answer"], "refused");
        // Failed open: the call went on, nobody was told anything.
        assert_eq!(agents[3]["answer"], Value::Null);
        assert_eq!(agents[1]["agent"], "tool-approve");
        assert_eq!(agents[1]["tool_use_id"], "t1");
        assert_eq!(agents[1]["duration_ms"], 12);
    }
}
