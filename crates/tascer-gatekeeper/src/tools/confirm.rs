//! `confirm`: the binary gate. The decision is
//! [`Server::decide`](crate::server::Server)'s; this records it (a
//! confirmation not on record allows no commit) and words it.

use std::time::Instant;

use serde_json::{Map, Value, json};
use tascer_mcp::ServeToolResult;

use crate::decision::Verdict;
use crate::server::{ConfirmRecord, Server, elapsed_ms, tool_error};

impl Server {
    /// The `confirm` tool.
    pub(crate) async fn confirm(&self, args: Map<String, Value>) -> ServeToolResult {
        let repo = match self.repo(&args).await {
            Ok(r) => r,
            Err(e) => return tool_error(&e),
        };
        let started = Instant::now();
        let decision = self.decide(&repo, &args).await;
        let confirmed = decision.verdict == Verdict::Confirmed;
        if let Some(digest) = &decision.digest {
            self.repos.lock().entry(repo.clone()).or_default().confirm = Some(ConfirmRecord {
                digest: digest.clone(),
                confirmed,
            });
        }
        let duration_ms = elapsed_ms(started);
        let verdict = decision.verdict.as_str();
        let data = json!({
            "verdict": verdict,
            "reasons": decision.reasons,
            "reviewed_by": decision.reviewed_by,
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
            if let Some(state) = self.repos.lock().get_mut(&repo) {
                state.confirm = None;
            }
        }
        let mut text = verdict.to_owned();
        for r in &decision.reasons {
            text.push_str(&format!("\n- {r}"));
        }
        Self::recorded(ServeToolResult::structured(text, data, false), on_record)
    }
}
