//! `confirm`: the binary gate. The decision is
//! [`Server::decide`](crate::server::Server)'s; this records it (a
//! confirmation not on record allows no commit) and words it.

use std::path::Path;
use std::time::Instant;

use serde_json::{Map, Value, json};
use tascer_mcp::ServeToolResult;

use crate::decision::Verdict;
use crate::server::{ConfirmRecord, Server, elapsed_ms, tool_error};

/// One confirm's outcome, as the `confirm` tool returns it and as
/// `commit`'s chain reads it.
pub(crate) struct ConfirmOutcome {
    /// True for CONFIRMED (and on record).
    pub confirmed: bool,
    /// Why, one reason per entry.
    pub reasons: Vec<String>,
    /// The summary text (`CONFIRMED` or `DECLINED`, then the reasons).
    pub text: String,
    /// The structured result.
    pub data: Value,
    /// The ledger record's outcome (see [`Server::recorded`]).
    pub on_record: std::result::Result<(), String>,
}

impl Server {
    /// The `confirm` tool.
    pub(crate) async fn confirm(&self, args: Map<String, Value>) -> ServeToolResult {
        let repo = match self.repo(&args).await {
            Ok(r) => r,
            Err(e) => return tool_error(&e),
        };
        let outcome = self.run_confirm(&repo, &args).await;
        Self::recorded(
            ServeToolResult::structured(outcome.text, outcome.data, false),
            outcome.on_record,
        )
    }

    /// Decides whether `repo` in its current state is confirmed, records
    /// the decision and keeps it for `commit`.
    pub(crate) async fn run_confirm(
        &self,
        repo: &Path,
        args: &Map<String, Value>,
    ) -> ConfirmOutcome {
        let started = Instant::now();
        let decision = self.decide(repo, args).await;
        let mut confirmed = decision.verdict == Verdict::Confirmed;
        if let Some(digest) = &decision.digest {
            self.repos
                .lock()
                .entry(repo.to_path_buf())
                .or_default()
                .confirm = Some(ConfirmRecord {
                digest: digest.clone(),
                confirmed,
                reasons: decision.reasons.clone(),
                reviewed: decision.reviewed_by.is_some(),
            });
        }
        let duration_ms = elapsed_ms(started);
        let verdict = decision.verdict.as_str();
        let data = json!({
            "verdict": verdict,
            "reasons": decision.reasons,
            "reviewed_by": decision.reviewed_by,
            "model_from": decision.model_from,
            "repo": repo.display().to_string(),
            "tree_digest": decision.digest,
        });
        let on_record = self.record(
            "mcp.confirm",
            confirmed,
            &decision.reasons.join("; "),
            duration_ms,
            data.clone(),
        );
        if on_record.is_err() {
            // A confirmation that is not on record does not allow a commit.
            if let Some(state) = self.repos.lock().get_mut(repo) {
                state.confirm = None;
            }
            confirmed = false;
        }
        let mut text = verdict.to_owned();
        for r in &decision.reasons {
            text.push_str(&format!("\n- {r}"));
        }
        ConfirmOutcome {
            confirmed,
            reasons: decision.reasons,
            text,
            data,
            on_record,
        }
    }
}
