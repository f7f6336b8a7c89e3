//! `ExecuteContracts`: the tool a manager session uses to run all pending
//! contracts and get their summary back. It returns each contract's
//! session as a [`ChildSession`]: the loop gives the manager's ledger one
//! `checkpoint` entry per contract naming the child session and its head
//! hash, so verifying the manager covers the whole tree. Subagents never
//! get it.

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tascer::Options;
use tascer_core::{ChildSession, Tool, ToolContext, ToolOutput};

use crate::manager::MANAGER_SYSTEM_PROMPT;
use crate::options::{EXECUTE_CONTRACTS_TOOL_NAME, with_text, without_execute_contracts};
use crate::report::RunStatus;
use crate::runner::{RunOptions, run_all};

/// A manager session's options: `options` with the `ExecuteContracts`
/// tool added to its custom tools, running the contracts with `run`, and
/// [`MANAGER_SYSTEM_PROMPT`] (the manager's job and the contract format)
/// and the contracts directory added to its system prompt.
///
/// Unless `run` names them, the contracts run in the session's working
/// directory (`options.cwd`, else the process's, made absolute) and their
/// sessions share its Tascer home (`options.home`, else
/// [`tascer::tascer_home`]). The tool is not added when `options.tools`
/// is a list without it or `options.disallowed_tools` names it.
/// Contractors never get it: [`contract_options`](crate::contract_options)
/// removes it from their options.
pub fn with_execute_contracts(mut options: Options, run: RunOptions) -> Options {
    let offered = options
        .tools
        .as_ref()
        .is_none_or(|only| only.iter().any(|n| n == EXECUTE_CONTRACTS_TOOL_NAME))
        && !options
            .disallowed_tools
            .iter()
            .any(|n| n == EXECUTE_CONTRACTS_TOOL_NAME);
    if !offered {
        return options;
    }
    let cwd = options
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .map(|dir| dir.canonicalize().unwrap_or(dir));
    let home = options.home.clone().unwrap_or_else(tascer::tascer_home);
    let taught = format!(
        "{MANAGER_SYSTEM_PROMPT}\n\nThis run's contracts directory: {}",
        run.dir.display()
    );
    options.system_prompt = with_text(&options.system_prompt, &taught);
    options
        .custom_tools
        .push(Arc::new(ExecuteContractsTool::new(run, cwd, home)));
    options
}

/// Runs the pending contracts of a directory for a manager session.
struct ExecuteContractsTool {
    run: RunOptions,
}

impl ExecuteContractsTool {
    /// The tool for a manager session running in `cwd`, whose children
    /// share its Tascer `home` unless `run.base` names another.
    fn new(mut run: RunOptions, cwd: Option<PathBuf>, home: PathBuf) -> Self {
        if run.cwd.is_none() {
            run.cwd = cwd;
        }
        if run.base.home.is_none() {
            run.base.home = Some(home);
        }
        // Contractors never get this tool themselves.
        without_execute_contracts(&mut run.base);
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
        let failed = summary.count(RunStatus::Failed) + summary.count(RunStatus::Malformed);
        let mut output = ToolOutput::text(summary.to_markdown()).with_raw(raw);
        // Failed or malformed contracts fail the call: the manager sees it,
        // and an unattended run ends in error unless a later call succeeds.
        output.is_error = failed > 0;
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
                cost_usd: session.cost_usd,
                num_turns: session.turns,
                unpriced_models: session.unpriced_models.clone(),
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names(options: &Options) -> Vec<String> {
        options
            .custom_tools
            .iter()
            .map(|t| t.name().to_string())
            .collect()
    }

    #[test]
    fn a_manager_gets_the_tool_unless_its_tools_leave_it_out() {
        let run = RunOptions::new("contracts");
        let o = with_execute_contracts(Options::new(), run.clone());
        assert_eq!(names(&o), [EXECUTE_CONTRACTS_TOOL_NAME]);
        let taught = match &o.system_prompt {
            tascer::SystemPrompt::Append(text) => text.clone(),
            other => format!("{other:?}"),
        };
        assert!(taught.starts_with(MANAGER_SYSTEM_PROMPT), "{taught}");
        assert!(taught.ends_with("This run's contracts directory: contracts"));
        assert!(!o.custom_tools[0].offered_to_subagents());

        let mut only = Options::new();
        only.tools = Some(vec!["Read".into()]);
        assert!(names(&with_execute_contracts(only, run.clone())).is_empty());
        let mut listed = Options::new();
        listed.tools = Some(vec![EXECUTE_CONTRACTS_TOOL_NAME.into()]);
        assert_eq!(
            names(&with_execute_contracts(listed, run.clone())),
            [EXECUTE_CONTRACTS_TOOL_NAME]
        );
        let mut denied = Options::new();
        denied.disallowed_tools = vec![EXECUTE_CONTRACTS_TOOL_NAME.into()];
        assert!(names(&with_execute_contracts(denied, run)).is_empty());
    }

    #[test]
    fn contractors_never_get_the_tool() {
        let manager = with_execute_contracts(Options::new(), RunOptions::new("contracts"));
        let contract = crate::parse_str(
            "# Contract: T\n## Status\npending\n## Task\nDo.\n",
            std::path::Path::new("t.md"),
        )
        .unwrap();
        let o = crate::contract_options(&contract, &manager, std::path::Path::new("/w"), &[], "P")
            .unwrap();
        assert!(names(&o).is_empty());
    }
}
