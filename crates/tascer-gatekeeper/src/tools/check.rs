//! `check`: runs the repository's lint and test commands (after admission
//! let each of them run) and records the outcome for the working-tree
//! state they ran on.

use std::path::Path;
use std::time::Instant;

use serde_json::{Map, Value, json};
use tascer_mcp::{ServeToolResult, ToolCallContext};

use crate::admit::Refused;
use crate::check_plan::{self, CheckPlan, CommandRun};
use crate::error::Result;
use crate::git;
use crate::server::{CheckRecord, Server, elapsed_ms, tool_error};

/// One check's outcome, as the `check` tool returns it and as `commit`'s
/// chain reads it.
pub(crate) struct CheckOutcome {
    /// True when every command ran and passed.
    pub passed: bool,
    /// The commands that failed, or the one admission refused.
    pub failed: Vec<String>,
    /// The summary text.
    pub text: String,
    /// The structured result.
    pub data: Value,
    /// True when admission refused a command (nothing ran).
    pub refused: bool,
    /// The ledger record's outcome (see [`Server::recorded`]).
    pub on_record: std::result::Result<(), String>,
}

impl CheckOutcome {
    /// The tool result: a refusal is a tool error, a failing check is not.
    pub fn into_result(self) -> ServeToolResult {
        Server::recorded(
            ServeToolResult::structured(self.text, self.data, self.refused),
            self.on_record,
        )
    }
}

impl Server {
    /// The `check` tool.
    pub(crate) async fn check(
        &self,
        args: Map<String, Value>,
        ctx: ToolCallContext,
    ) -> ServeToolResult {
        let repo = match self.repo(&args).await {
            Ok(r) => r,
            Err(e) => return tool_error(&e),
        };
        let timeout = args.get("timeout_secs").and_then(Value::as_u64);
        match self.run_check(&repo, timeout, &ctx).await {
            Ok(outcome) => outcome.into_result(),
            Err(e) => tool_error(&e),
        }
    }

    /// Runs the check of `repo` (`timeout_secs` overriding the
    /// configured per-command timeout) and records it for the state it
    /// ran on.
    pub(crate) async fn run_check(
        &self,
        repo: &Path,
        timeout_secs: Option<u64>,
        ctx: &ToolCallContext,
    ) -> Result<CheckOutcome> {
        let mut plan: CheckPlan = check_plan::plan(repo)?;
        if let Some(secs) = timeout_secs {
            plan.timeout = std::time::Duration::from_secs(secs.max(1));
        }
        let commands: Vec<&str> = plan
            .lint
            .iter()
            .chain(&plan.test)
            .map(String::as_str)
            .collect();
        let refused = match self.admitter(repo, "check") {
            Ok(admitter) => admitter.commands(&commands).await,
            Err(refused) => Some(refused),
        };
        if let Some(refused) = refused {
            return self.check_refused(repo, refused).await;
        }
        let started = Instant::now();
        let _ = ctx
            .log(
                "info",
                json!(format!(
                    "check: {} command(s) in {}",
                    plan.lint.len() + plan.test.len(),
                    repo.display()
                )),
            )
            .await;
        let runs = check_plan::run_plan(repo, &plan, ctx.cancellation()).await;
        let digest = git::tree_digest(repo).await?;
        let total = plan.lint.len() + plan.test.len();
        let failed: Vec<String> = runs
            .iter()
            .filter(|r| !r.passed())
            .map(|r| r.command.clone())
            .collect();
        let passed = runs.len() == total && failed.is_empty();
        let duration_ms = elapsed_ms(started);
        self.repos
            .lock()
            .entry(repo.to_path_buf())
            .or_default()
            .check = Some(CheckRecord {
            digest: digest.clone(),
            passed,
            failed: failed.clone(),
        });
        let text = check_text(repo, &plan, &runs, passed, &digest);
        let data = json!({
            "passed": passed,
            "repo": repo.display().to_string(),
            "tree_digest": digest,
            "source": plan.source,
            "timeout_secs": plan.timeout.as_secs(),
            "commands": runs,
            "duration_ms": duration_ms,
        });
        let recorded = json!({
            "repo": data["repo"], "tree_digest": data["tree_digest"], "source": data["source"],
            "commands": runs.iter().map(|r| json!({
                "phase": r.phase, "command": r.command, "exit_code": r.exit_code,
                "timed_out": r.timed_out, "duration_ms": r.duration_ms,
            })).collect::<Vec<_>>(),
        });
        let message = if passed {
            format!("{total} command(s) passed")
        } else {
            format!("failed: {}", failed.join(", "))
        };
        let on_record = self.record("mcp.check", passed, &message, duration_ms, recorded);
        Ok(CheckOutcome {
            passed,
            failed,
            text,
            data,
            refused: false,
            on_record,
        })
    }

    /// A check whose commands admission refused: recorded as a failed
    /// check of this working-tree state (so `confirm` declines), with a
    /// text naming the command and Tascer's reason.
    async fn check_refused(&self, repo: &Path, refused: Refused) -> Result<CheckOutcome> {
        let digest = git::tree_digest(repo).await?;
        self.repos
            .lock()
            .entry(repo.to_path_buf())
            .or_default()
            .check = Some(CheckRecord {
            digest: digest.clone(),
            passed: false,
            failed: vec![refused.call.clone()],
        });
        let message = format!("refused by Tascer: {refused}");
        let data = json!({
            "passed": false,
            "repo": repo.display().to_string(),
            "tree_digest": digest,
            "refused": {"command": refused.call, "reason": refused.reason},
        });
        let on_record = self.record("mcp.check", false, &message, 0, data.clone());
        Ok(CheckOutcome {
            passed: false,
            failed: vec![refused.call],
            text: format!("check REFUSED in {}: {message}", repo.display()),
            data,
            refused: true,
            on_record,
        })
    }
}

/// The text summary of a check.
fn check_text(
    repo: &Path,
    plan: &CheckPlan,
    runs: &[CommandRun],
    passed: bool,
    digest: &str,
) -> String {
    let mut text = format!(
        "check {} in {} ({}; commands from {})\n",
        if passed { "PASSED" } else { "FAILED" },
        repo.display(),
        digest,
        plan.source
    );
    for r in runs {
        let status = match (r.exit_code, r.timed_out) {
            (_, true) => format!("timed out after {}s", plan.timeout.as_secs()),
            (Some(c), _) => format!("exit {c}"),
            (None, _) => "killed".into(),
        };
        text.push_str(&format!(
            "\n[{}] {} — {status}, {:.1}s\n",
            r.phase,
            r.command,
            r.duration_ms as f64 / 1000.0
        ));
        if !r.tail.is_empty() {
            for line in r.tail.lines() {
                text.push_str("    ");
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    text
}
