//! The pipeline of one tool call (DESIGN.md): context → PreToolUse hooks →
//! permission decision → pre-gates → the tool → post-gates →
//! PostToolUse hooks, each step recorded in the call's ledger record.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use tascer_core::{Tool, ToolContext, ToolOutput};
use tascer_guard::permissions::{Behavior, ToolCall};
use tascer_ledger::{ToolRecord, ToolStatus};

use crate::agent::{Agent, Call, INTERRUPTED, lock};
use crate::governance::{BeforeTool, Halt};
use crate::session_guard::{changed_files, decision_record};

/// How long a tool gets to wind down after an interrupt before it is dropped.
const INTERRUPT_GRACE: Duration = Duration::from_secs(3);

/// The end of a call that did not run.
struct Refusal {
    message: String,
    status: ToolStatus,
    halt: Option<Halt>,
    denied: bool,
}

/// The `tracing` target of the event that reports, for every tool call,
/// how long its governance took: `governance_us` is the time in the
/// pipeline other than the tool itself (context, hooks, permission, gates,
/// evidence, ledger writes; also any wait for a user's answer or a command
/// hook), `tool_us` the tool's own time. A `DEBUG` event.
pub const GOVERNANCE_TRACE_TARGET: &str = "tascer::governance";

impl Agent {
    /// One call through the pipeline. Returns what the model sees and, when
    /// the run must stop, why.
    pub(crate) async fn run_governed(
        &self,
        call: &Call,
        cancel: &CancellationToken,
    ) -> (ToolOutput, Option<Halt>) {
        let started = Instant::now();
        let mut tool_time = Duration::ZERO;
        let outcome = self.govern(call, cancel, &mut tool_time).await;
        let governance = started.elapsed().saturating_sub(tool_time);
        tracing::debug!(
            target: GOVERNANCE_TRACE_TARGET,
            tool = %call.name,
            governance_us = u64::try_from(governance.as_micros()).unwrap_or(u64::MAX),
            tool_us = u64::try_from(tool_time.as_micros()).unwrap_or(u64::MAX),
            "governed tool call"
        );
        outcome
    }

    /// The pipeline itself; adds the time the tool ran to `tool_time`.
    async fn govern(
        &self,
        call: &Call,
        cancel: &CancellationToken,
        tool_time: &mut Duration,
    ) -> (ToolOutput, Option<Halt>) {
        let guard = &self.governance.guard;
        let cwd = lock(&self.env.shared_cwd).clone();
        let mut context = guard.capture_context(&cwd, &self.env.env);
        if let Some(obj) = context.as_object_mut() {
            obj.insert(
                "parent_tool_use_id".into(),
                serde_json::json!(self.parent_tool_use_id),
            );
        }
        let recorded_input = guard.recorded_input(&call.name, &call.input);
        let mut record = self
            .env
            .proof
            .open_tool(&call.id, &call.name, &recorded_input, context);
        let input = match self.admit(call, &cwd, &mut record).await {
            Ok(input) => input,
            Err(refusal) => {
                if refusal.denied {
                    guard.add_denial(&call.name, &call.id, &call.input);
                }
                let output = ToolOutput::error(refusal.message);
                self.env.proof.close_tool(record, &output, refusal.status);
                return (output, refusal.halt);
            }
        };

        // Everything before the tool runs is committed first: a crash while
        // it runs leaves the call opened and its permission on record.
        self.env.proof.flush();
        let ctx = ToolContext {
            session_id: self.env.session_id.clone(),
            tool_use_id: call.id.clone(),
            cwd: Arc::clone(&self.env.shared_cwd),
            env: Arc::clone(&self.env.env),
            cancel: cancel.child_token(),
            file_access: Some(guard.file_access(&cwd)),
        };
        let tool_started = Instant::now();
        let mut output = match self.tools.iter().find(|t| t.name() == call.name) {
            Some(tool) => run_one(tool.as_ref(), input.clone(), &ctx).await,
            None => ToolOutput::error(format!("Error: No such tool available: {}", call.name)),
        };
        *tool_time += tool_started.elapsed();
        guard.after_call(&call.name, !output.is_error);

        let post = guard.post_gates(&call.name, &input, &cwd, &output).await;
        record.post_gates = post.outcomes();
        let gate_failed = post.verdict.mark_failed;
        if gate_failed
            && guard.tells_model(&call.name)
            && let Some(message) = &post.verdict.message
        {
            output.content = format!("{}\n\n{message}", output.content.to_text()).into();
        }
        if guard.keeps_files(&call.name) && !output.is_error {
            for file in changed_files(&call.name, &input, &cwd) {
                if let Ok(bytes) = std::fs::read(&file) {
                    record.evidence.push(self.env.proof.evidence(&bytes));
                }
            }
        }

        let halt = self
            .governance
            .after_tool(&self.env, &call.name, &call.id, &input, &mut output)
            .await;
        let status = if output.is_error || gate_failed {
            ToolStatus::Failed
        } else {
            ToolStatus::Validated
        };
        if input != call.input {
            record.input = guard.recorded_input(&call.name, &input);
        }
        if post.found_secrets() {
            let mut stored = output.clone();
            stored.content = guard.redact(&output.content.to_text()).into();
            stored.raw = None;
            self.env.proof.close_tool(record, &stored, status);
        } else {
            self.env.proof.close_tool(record, &output, status);
        }
        (output, halt)
    }

    /// Hooks, permission and pre-gates: the input to run, or why the call
    /// does not run.
    async fn admit(
        &self,
        call: &Call,
        cwd: &std::path::Path,
        record: &mut ToolRecord,
    ) -> Result<Value, Refusal> {
        let guard = &self.governance.guard;
        let tool_call = |input: &Value| ToolCall {
            tool_name: call.name.clone(),
            input: input.clone(),
            tool_use_id: call.id.clone(),
            cwd: cwd.to_path_buf(),
            session_id: self.env.session_id.clone(),
        };
        let (input, hook_permission) = match self
            .governance
            .before_tool(
                &self.env,
                &call.name,
                &call.id,
                &call.input,
                self.parent_tool_use_id.as_deref(),
            )
            .await
        {
            BeforeTool::Run { input, permission } => (input, permission),
            BeforeTool::Block { message } => {
                guard.note_hook_denial(&tool_call(&call.input), &message);
                return Err(Refusal {
                    message,
                    status: ToolStatus::Blocked,
                    halt: None,
                    denied: true,
                });
            }
            BeforeTool::Stop { reason } => {
                return Err(Refusal {
                    message: Halt::Hook(reason.clone()).to_string(),
                    status: ToolStatus::Blocked,
                    halt: Some(Halt::Hook(reason)),
                    denied: false,
                });
            }
        };

        let call_now = tool_call(&input);
        let mut decision = guard.decide(&call_now, &hook_permission).await;
        if decision.behavior == Behavior::Ask {
            decision = self
                .governance
                .on_permission_request(&self.env, &call.name, &call.id, &input, decision)
                .await;
        }
        if decision.behavior == Behavior::Ask {
            if guard.can_ask() {
                let message = format!("Tascer needs your permission to use {}", call.name);
                self.governance
                    .notify(&self.env, &message, "permission_prompt")
                    .await;
            }
            decision = guard.resolve_ask(&call_now, decision).await;
        }
        let recorded = decision_record(&decision, &call.name, &call.id, guard.mode());
        self.env.proof.permission(&recorded);
        record.permission = recorded;
        if decision.behavior != Behavior::Allow {
            let halt = decision
                .interrupt
                .then(|| Halt::Permission(decision.reason.clone()));
            return Err(Refusal {
                message: decision.reason,
                status: ToolStatus::Blocked,
                halt,
                denied: true,
            });
        }
        let input = decision.updated_input.unwrap_or(input);

        let pre = guard.pre_gates(&call.name, &input, cwd).await;
        record.pre_gates = pre.outcomes();
        if pre.verdict.block {
            return Err(Refusal {
                message: pre
                    .verdict
                    .message
                    .unwrap_or_else(|| "Blocked by a validation gate".into()),
                status: ToolStatus::Blocked,
                halt: None,
                denied: false,
            });
        }
        Ok(input)
    }
}

/// Runs one tool, honouring interrupts: the tool gets a grace period to stop
/// on its own (killing its processes), then it is dropped.
async fn run_one(tool: &dyn Tool, input: Value, ctx: &ToolContext) -> ToolOutput {
    let call = tool.call(input, ctx);
    tokio::pin!(call);
    tokio::select! {
        output = &mut call => output,
        _ = ctx.cancel.cancelled() => {
            match tokio::time::timeout(INTERRUPT_GRACE, &mut call).await {
                Ok(output) => output,
                Err(_) => ToolOutput::error(format!("{INTERRUPTED}: the {} call was stopped", tool.name())),
            }
        }
    }
}
