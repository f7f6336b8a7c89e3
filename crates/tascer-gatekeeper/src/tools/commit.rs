//! `commit`: runs the chain `check` → `confirm` for the working-tree state
//! as it is (see `chain.rs`) and commits every change once it is
//! CONFIRMED, with the caller's message, else the reviewer model's, else a
//! summary of the changed files; admission judges the git commands first.

use std::path::Path;

use serde_json::{Map, Value, json};
use tascer_mcp::{ServeToolResult, ToolCallContext};

use crate::decision::commit_refusal;
use crate::error::text;
use crate::git;
use crate::model::{self, GateModel, GateQuestion, MODEL_DIFF_BYTES};
use crate::server::{Server, str_arg, tool_error};

impl Server {
    /// The `commit` tool.
    pub(crate) async fn commit(
        &self,
        args: Map<String, Value>,
        ctx: ToolCallContext,
    ) -> ServeToolResult {
        let repo = match self.repo(&args).await {
            Ok(r) => r,
            Err(e) => return tool_error(&e),
        };
        let steps = match self.confirm_chain(&repo, &args, &ctx).await {
            Ok(steps) => steps,
            Err(refused) => return refused,
        };
        let digest = match git::tree_digest(&repo).await {
            Ok(d) => d,
            Err(e) => return tool_error(&e),
        };
        let confirm = self.repos.lock().get(&repo).and_then(|s| s.confirm.clone());
        if let Some(reason) = commit_refusal(confirm.as_ref(), &digest) {
            // Already an error result; a recording failure is logged.
            let _ = self.record(
                "mcp.commit",
                false,
                reason,
                0,
                json!({"repo": repo.display().to_string()}),
            );
            return ServeToolResult::error(format!("commit refused: {reason}"));
        }
        let changes = match git::changes(&repo).await {
            Ok(c) => c,
            Err(e) => return tool_error(&e),
        };
        let (message, author, message_model) = match str_arg(&args, "message") {
            Some(m) => (m.to_owned(), "caller", None),
            None => match self.model_message(&repo).await {
                Some((m, model)) => (m, "model", Some(model)),
                None => (git::fallback_message(&changes), "fallback", None),
            },
        };
        let git_commit = format!("git commit -q -m {}", tascer_core::shell_quote(&message));
        let refused = match self.admitter(&repo, "commit") {
            Ok(admitter) => {
                admitter
                    .commands(&["git add -A", git_commit.as_str()])
                    .await
            }
            Err(refused) => Some(refused),
        };
        if let Some(refused) = refused {
            return self.refused("commit", &repo, &refused);
        }
        let commit = match git::commit_all(&repo, &message).await {
            Ok(c) => c,
            Err(e) => {
                // Already an error result; a recording failure is logged.
                let _ = self.record(
                    "mcp.commit",
                    false,
                    &text(&e),
                    0,
                    json!({"repo": repo.display().to_string()}),
                );
                return tool_error(&e);
            }
        };
        if let Some(state) = self.repos.lock().get_mut(&repo) {
            state.confirm = None;
        }
        let data = json!({
            "commit": commit,
            "message": message,
            "message_from": author,
            "message_model": message_model,
            "files": changes.iter().map(|c| json!({"path": c.path, "change": c.kind})).collect::<Vec<_>>(),
            "repo": repo.display().to_string(),
            "tree_digest": digest,
            "steps": steps,
        });
        let on_record = self.record("mcp.commit", true, &message, 0, data.clone());
        Self::recorded(
            ServeToolResult::structured(format!("committed {commit}: {message}"), data, false),
            on_record,
        )
    }

    /// A commit message from the model of `mcpServe.models.commitMessage`
    /// (see `model.rs`) and that model's `provider/model` name; none
    /// without a model, or when it fails.
    async fn model_message(&self, repo: &Path) -> Option<(String, String)> {
        let reviewer = match GateModel::for_question(GateQuestion::CommitMessage, repo, &self.home)
        {
            Ok(reviewer) => reviewer?,
            Err(e) => {
                tracing::warn!("no commit message from a model: {}", text(&e));
                return None;
            }
        };
        let diff = git::review_diff(repo, MODEL_DIFF_BYTES).await.ok()?;
        match reviewer.ask(model::COMMIT_SYSTEM, diff).await {
            Ok(answer) => {
                let m = answer.text.trim().trim_matches('`').trim().to_owned();
                (!m.is_empty()).then(|| (m, reviewer.name()))
            }
            Err(e) => {
                tracing::warn!(
                    "commit message from the model failed, using the fallback: {}",
                    text(&e)
                );
                None
            }
        }
    }
}
