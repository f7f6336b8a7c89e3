//! The chain `commit` runs before it commits: `check`, then `confirm`,
//! for the working-tree state as it is, in one call. A step already
//! passed for this very state is not run again; a reviewer that DECLINED
//! this very state is not asked again (`confirm` itself asks again).

use std::path::Path;

use serde_json::{Map, Value, json};
use tascer_mcp::{ServeToolResult, ToolCallContext};

use crate::error::text;
use crate::git;
use crate::server::{Server, str_arg, tool_error};

/// What the chain did, for `commit`'s result: `{check, confirm}`, each
/// `{ran, passed, …}`.
pub(crate) type ChainSteps = Value;

impl Server {
    /// Runs `check` and `confirm` on `repo` as needed until its current
    /// state is CONFIRMED. `Err` is `commit`'s answer: the failing step
    /// and its reason (recorded as a refused commit).
    pub(crate) async fn confirm_chain(
        &self,
        repo: &Path,
        args: &Map<String, Value>,
        ctx: &ToolCallContext,
    ) -> Result<ChainSteps, ServeToolResult> {
        let digest = git::tree_digest(repo).await.map_err(|e| tool_error(&e))?;
        let (check, confirm) = {
            let repos = self.repos.lock();
            let state = repos.get(repo);
            (
                state.and_then(|s| s.check.clone()),
                state.and_then(|s| s.confirm.clone()),
            )
        };
        if let Some(confirm) = confirm.filter(|c| c.digest == digest) {
            if confirm.confirmed {
                return Ok(json!({
                    "check": {"ran": false, "passed": true},
                    "confirm": {"ran": false, "verdict": "CONFIRMED", "reasons": confirm.reasons},
                }));
            }
            if confirm.reviewed {
                let reason = format!(
                    "the reviewer DECLINED this working-tree state ({}); change it, or call \
                     `confirm` to ask for a new review",
                    confirm.reasons.join("; ")
                );
                return Err(self.chain_refused(repo, "confirm", &reason, None));
            }
        }
        let check_step = if check.is_some_and(|c| c.digest == digest && c.passed) {
            json!({"ran": false, "passed": true})
        } else {
            let outcome = self
                .run_check(repo, None, ctx)
                .await
                .map_err(|e| self.chain_refused(repo, "check", &text(&e), None))?;
            if let Err(not_recorded) = &outcome.on_record {
                return Err(self.chain_refused(repo, "check", not_recorded, None));
            }
            if !outcome.passed {
                let reason = if outcome.refused {
                    outcome.text.clone()
                } else {
                    format!("the check failed ({})", outcome.failed.join(", "))
                };
                return Err(self.chain_refused(repo, "check", &reason, Some(&outcome.text)));
            }
            json!({"ran": true, "passed": true, "result": outcome.data})
        };
        let mut confirm_args = args.clone();
        if str_arg(args, "intent").is_none()
            && let Some(message) = str_arg(args, "message")
        {
            confirm_args.insert("intent".into(), json!(message));
        }
        let outcome = self.run_confirm(repo, &confirm_args).await;
        if let Err(not_recorded) = &outcome.on_record {
            return Err(self.chain_refused(repo, "confirm", not_recorded, None));
        }
        if !outcome.confirmed {
            let reason = format!("`confirm` DECLINED: {}", outcome.reasons.join("; "));
            return Err(self.chain_refused(repo, "confirm", &reason, None));
        }
        Ok(json!({
            "check": check_step,
            "confirm": {"ran": true, "verdict": "CONFIRMED", "reasons": outcome.reasons,
                        "reviewed_by": outcome.data["reviewed_by"]},
        }))
    }

    /// `commit` refused because chain step `step` did not pass: recorded,
    /// and a tool error naming the step and its reason (then `details`,
    /// e.g. the failing check's output).
    fn chain_refused(
        &self,
        repo: &Path,
        step: &str,
        reason: &str,
        details: Option<&str>,
    ) -> ServeToolResult {
        // Already an error result; a recording failure is logged.
        let _ = self.record(
            "mcp.commit",
            false,
            &format!("{step}: {reason}"),
            0,
            json!({"repo": repo.display().to_string(), "step": step}),
        );
        let mut text = format!("commit refused at {step}: {reason}");
        if let Some(details) = details {
            text.push_str("\n\n");
            text.push_str(details);
        }
        ServeToolResult::structured(
            text,
            json!({"committed": false, "step": step, "reason": reason,
                   "repo": repo.display().to_string()}),
            true,
        )
    }
}
