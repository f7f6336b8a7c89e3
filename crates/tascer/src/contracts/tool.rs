//! `ExecuteContracts`: the tool a manager session uses to run all pending
//! contracts and get their summary back. It returns each contract's
//! session as a [`ChildSession`]: the loop gives the manager's ledger one
//! `checkpoint` entry per contract naming the child session and its head
//! hash, so verifying the manager covers the whole tree. Subagents never
//! get it.

use std::path::PathBuf;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tascer_core::{ChildSession, Tool, ToolContext, ToolOutput};

use super::runner::{RunOptions, run_all};

/// The tool's name.
pub const EXECUTE_CONTRACTS_TOOL_NAME: &str = "ExecuteContracts";

/// Runs the pending contracts of a directory for a manager session.
pub(crate) struct ExecuteContractsTool {
    run: RunOptions,
}

impl ExecuteContractsTool {
    /// The tool for a manager session running in `cwd`, whose children
    /// share its Tascer `home` unless `run.base` names another.
    pub fn new(run: &RunOptions, cwd: PathBuf, home: PathBuf) -> Self {
        let mut run = run.clone();
        if run.cwd.is_none() {
            run.cwd = Some(cwd);
        }
        if run.base.home.is_none() {
            run.base.home = Some(home);
        }
        // Contractors never get this tool themselves.
        run.base.execute_contracts = None;
        ExecuteContractsTool { run }
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let mut run = self.run.clone();
        if let Some(dir) = input.get("dir").and_then(Value::as_str) {
            run.dir = PathBuf::from(dir);
        }
        let summary = tokio::select! {
            s = run_all(&run) => s,
            () = ctx.cancel.cancelled() => {
                return ToolOutput::error("interrupted: contracts still in progress are left in_progress and are retried on the next run");
            }
        };
        let summary = match summary {
            Ok(s) => s,
            Err(err) => return ToolOutput::error(format!("cannot run the contracts: {err}")),
        };
        let raw = serde_json::to_value(&summary).unwrap_or(Value::Null);
        let mut output = ToolOutput::text(summary.to_markdown()).with_raw(raw);
        for report in &summary.contracts {
            let Some(session) = &report.session else {
                continue;
            };
            let (Some(head), Some(seq)) = (&session.ledger_head, session.ledger_seq) else {
                continue;
            };
            output = output.with_child_session(ChildSession {
                session_id: session.session_id.clone(),
                head: head.clone(),
                seq,
                detail: json!({
                    "tool_use_id": ctx.tool_use_id,
                    "contract": report.name,
                    "status": report.status.as_str(),
                }),
            });
        }
        output
    }
}

impl Tool for ExecuteContractsTool {
    fn name(&self) -> &str {
        EXECUTE_CONTRACTS_TOOL_NAME
    }

    fn description(&self) -> &str {
        "Runs every pending contract (markdown task files in the contracts directory) as its own \
         governed agent session, writes each outcome into its file, moves completed ones to \
         contracts_completed/, and returns a summary: per contract its status, why, session id, \
         turns, cost and ledger head. Review the summary and the Result sections afterwards."
    }

    fn offered_to_subagents(&self) -> bool {
        false
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "dir": {"type": "string", "description": "The contracts directory (default: the configured one, usually contracts/)"}
            },
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(self.run(input, ctx))
    }
}
