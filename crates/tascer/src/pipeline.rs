//! The pipeline of one tool call (DESIGN.md), top to bottom in
//! [`Agent::govern`]: capture context and open the call's record →
//! [`Admission::admit`](tascer_guard::admission::Admission::admit) (hooks,
//! permission decision, asker, pre-gates) → the tool (the child sessions it
//! ran recorded) →
//! [`Admission::review`](tascer_guard::admission::Admission::review)
//! (post-gates, PostToolUse hooks) → the evidence the validation asks for
//! and, when it requires proof, the proof check → close the record. Admission decides;
//! this file only records what it returns and runs the tool.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use tascer_core::{HookEvent, Tool, ToolCall, ToolContext, ToolOutput};
use tascer_guard::admission::{CallRequest, StopRun};
use tascer_guard::gates::{EvidenceKind, PROOF_CHECK};
use tascer_guard::hooks::{PostToolUseFailureInput, PostToolUseInput, PreToolUseInput};
use tascer_ledger::{ToolRecord, ToolStatus};

use crate::agent::{Agent, Call, INTERRUPTED};
use crate::call_evidence::CallEvidence;
use crate::duration::micros;
use crate::governance::record_activity;
use crate::records::{decision_record, gate_outcomes, hook_records, verdict_payload};

/// How long a tool gets to wind down after an interrupt before it is dropped.
const INTERRUPT_GRACE: Duration = Duration::from_secs(3);

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
    ) -> (ToolOutput, Option<StopRun>) {
        let started = Instant::now();
        let mut tool_time = Duration::ZERO;
        let outcome = self.govern(call, cancel, &mut tool_time).await;
        let governance = started.elapsed().saturating_sub(tool_time);
        tracing::debug!(
            target: GOVERNANCE_TRACE_TARGET,
            tool = %call.name,
            governance_us = micros(governance),
            tool_us = micros(tool_time),
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
    ) -> (ToolOutput, Option<StopRun>) {
        let governance = &self.governance;
        let admission = &governance.admission;
        let cwd = self.env.shared_cwd.lock().clone();
        let tool_call = ToolCall {
            tool_name: call.name.clone(),
            input: call.input.clone(),
            tool_use_id: call.id.clone(),
            cwd: cwd.clone(),
            session_id: self.env.session_id.clone(),
        };

        // Context, and the record opened before anything is decided.
        let mut context = governance.context.capture(&cwd, &self.env.env);
        if let Some(obj) = context.as_object_mut() {
            obj.insert(
                "parent_tool_use_id".into(),
                serde_json::json!(self.parent_tool_use_id),
            );
        }
        let recorded_input = admission.recorded_input(&call.name, &call.input);
        let mut record = self
            .env
            .proof
            .open_tool(&call.id, &call.name, &recorded_input, context);

        // Admission: hooks, permission decision, asker, pre-gates.
        let admitted = admission.admit(self.call_request(&tool_call)).await;
        record_activity(&self.env, &admitted.hooks, &call.id);
        record.hooks = hook_records(&admitted.hooks.runs);
        self.env.proof.reviews(&admitted.reviews);
        if let Some(decision) = &admitted.decision {
            let recorded = decision_record(
                decision,
                &call.name,
                &call.id,
                admission.mode(),
                &recorded_input,
            );
            self.env.proof.permission(&recorded);
            record.permission = recorded;
        }
        record.pre_gates = gate_outcomes(&admitted.pre_gates);
        if governance.has_webhooks() {
            self.before_webhook(&tool_call, &admitted);
        }
        let input = match admitted.verdict {
            Ok(input) => input,
            Err(refusal) => {
                if refusal.is_denial() {
                    governance.add_denial(&call.name, &call.id, &call.input);
                }
                let output = ToolOutput::error(refusal.message);
                let closed = self
                    .env
                    .proof
                    .close_tool(record, &output, ToolStatus::Blocked);
                self.observe_closed(closed, &admitted.reviews);
                return (output, refusal.stop);
            }
        };

        // Everything before the tool runs is committed first: a crash while
        // it runs leaves the call opened and its permission on record. A
        // call that could not be put on record does not run (the turn
        // stops: see `WriteFailure`).
        if !self.env.proof.flush() {
            return (
                ToolOutput::error(
                    "Not run: the ledger could not record this call, so the session stopped.",
                ),
                None,
            );
        }
        let evidence = CallEvidence::before(
            admission.evidence_kinds(&call.name),
            &call.name,
            &input,
            &cwd,
        );
        let checkpoint = self
            .env
            .checkpoints
            .as_ref()
            .and_then(|c| c.before(&call.name, &input, &cwd));
        let output = self.run_tool(call, &input, &cwd, cancel, tool_time).await;
        if let (Some(checkpoints), Some(before)) = (&self.env.checkpoints, checkpoint) {
            checkpoints.after(before, &call.id);
        }
        governance.context.after_call(&call.name);
        let ran = ToolCall { input, ..tool_call };
        let (output, stop, closed) = self.close_call(call, &ran, record, output, evidence).await;
        self.observe_closed(closed, &admitted.reviews);
        (output, stop)
    }

    /// Tells the session's observer about a closed call.
    fn observe_closed(
        &self,
        (record, hash): (ToolRecord, Option<String>),
        reviews: &[tascer_guard::reviewers::ReviewRecord],
    ) {
        let hash = hash.filter(|h| !h.is_empty());
        self.env
            .observed
            .tool_call(&self.env.session_id, &record, hash, reviews);
    }

    /// After the tool ran: its evidence, review (post-gates, PostToolUse
    /// hooks), the proof check, and the record closed (returned with the
    /// hash of its ledger entry).
    async fn close_call(
        &self,
        call: &Call,
        ran: &ToolCall,
        mut record: ToolRecord,
        output: ToolOutput,
        evidence: CallEvidence,
    ) -> (ToolOutput, Option<StopRun>, (ToolRecord, Option<String>)) {
        let admission = &self.governance.admission;
        // The evidence the validation asks for, of a call that did its work.
        let missing =
            (!output.is_error).then(|| self.keep_evidence(&mut record, evidence, &output));
        let reviewed = admission.review(self.call_request(ran), output).await;
        record_activity(&self.env, &reviewed.hooks, &call.id);
        record.hooks.extend(hook_records(&reviewed.hooks.runs));
        let mut post_gates = reviewed.post_gates;
        let mut output = reviewed.output;
        let mut failed = output.is_error || reviewed.gate_failed;
        let validation = admission.tool_validation(&call.name);
        if let Some(check) =
            missing.and_then(|missing| validation.proof_check(self.env.proof.seals(), &missing))
        {
            if !check.passed {
                failed = true;
                if validation.tell_model_on_failure {
                    let text = output.content.to_text();
                    output.content = format!("{text}\n\n{PROOF_CHECK}: {}", check.message).into();
                }
            }
            post_gates.push(check);
        }
        record.post_gates = gate_outcomes(&post_gates);
        let status = if failed {
            ToolStatus::Failed
        } else {
            ToolStatus::Validated
        };
        if self.governance.has_webhooks() {
            self.after_webhook(ran, &output, status);
        }
        if ran.input != call.input {
            record.input = admission.recorded_input(&call.name, &ran.input);
        }
        let closed = if reviewed.found_secrets {
            let mut stored = output.clone();
            stored.content = admission.redact(&output.content.to_text()).into();
            stored.raw = None;
            self.env.proof.close_tool(record, &stored, status)
        } else {
            self.env.proof.close_tool(record, &output, status)
        };
        (output, reviewed.stop, closed)
    }

    /// Stages the evidence the call's validation asks for and lists it in
    /// `record`; returns the kinds the call could produce but that could
    /// not be captured.
    fn keep_evidence(
        &self,
        record: &mut ToolRecord,
        evidence: CallEvidence,
        output: &ToolOutput,
    ) -> Vec<EvidenceKind> {
        if evidence.is_empty() {
            return Vec::new();
        }
        let admission = &self.governance.admission;
        let scanned = admission.scans_secrets(&record.tool);
        let cwd = self.env.shared_cwd.lock().clone();
        let captured = evidence.after(output, &cwd, |text| {
            if scanned {
                admission.redact(text)
            } else {
                text.to_string()
            }
        });
        for (kind, bytes) in captured.pieces {
            let digest = self.env.proof.evidence(&bytes);
            record.add_evidence(kind.as_str(), digest);
        }
        captured.missing
    }

    /// Runs the call's tool with `input` (as admission left it) in `cwd`,
    /// adding the time it took to `tool_time`, and records the child
    /// sessions it ran.
    async fn run_tool(
        &self,
        call: &Call,
        input: &Value,
        cwd: &Path,
        cancel: &CancellationToken,
        tool_time: &mut Duration,
    ) -> ToolOutput {
        let ctx = ToolContext {
            session_id: self.env.session_id.clone(),
            tool_use_id: call.id.clone(),
            cwd: Arc::clone(&self.env.shared_cwd),
            env: Arc::clone(&self.env.env),
            cancel: cancel.child_token(),
            file_access: Some(self.governance.admission.permissions().file_access(cwd)),
        };
        let tool_started = Instant::now();
        let mut output = match self.tools.iter().find(|t| t.name() == call.name) {
            Some(tool) => run_one(tool.as_ref(), input.clone(), &ctx).await,
            None => ToolOutput::error(format!("Error: No such tool available: {}", call.name)),
        };
        *tool_time += tool_started.elapsed();
        self.record_child_sessions(&mut output);
        output
    }

    /// Records the child sessions the tool ran (see
    /// [`tascer_core::ChildSession`]), each a `checkpoint` naming the child
    /// and its head, in order, before anything else of the call is staged.
    fn record_child_sessions(&self, output: &mut ToolOutput) {
        for child in std::mem::take(&mut output.child_sessions) {
            self.env.add_child(&child);
            self.env
                .proof
                .child_session(tascer_ledger::child_link_payload(
                    &child.session_id,
                    &child.head,
                    child.seq,
                    child.detail,
                ));
        }
    }

    /// Queues the `PreToolUse` event with admission's decision.
    fn before_webhook(&self, call: &ToolCall, admitted: &tascer_guard::admission::Admitted) {
        let input = PreToolUseInput {
            common: self.governance.common(&self.env),
            tool_name: call.tool_name.clone(),
            tool_input: call.input.clone(),
            tool_use_id: call.tool_use_id.clone(),
            agent_id: self.parent_tool_use_id.clone(),
            agent_type: None,
        };
        let admission = &self.governance.admission;
        let recorded_input = admission.recorded_input(&call.tool_name, &call.input);
        let decision = admitted.decision.as_ref().map(|d| {
            decision_record(
                d,
                &call.tool_name,
                &call.tool_use_id,
                admission.mode(),
                &recorded_input,
            )
        });
        let refusal = admitted.verdict.as_ref().err().map(|r| r.message.as_str());
        let tascer = json!({
            "allowed": admitted.verdict.is_ok(),
            "reason": refusal,
            "decision": decision,
            "reviews": admitted
                .reviews
                .iter()
                .map(verdict_payload)
                .collect::<Vec<_>>(),
            "agents": crate::reviewer::agent_verdicts(&admitted.reviews, refusal),
        });
        self.governance
            .webhook(HookEvent::PreToolUse, &input, tascer);
    }

    /// Queues the `PostToolUse` (or `PostToolUseFailure`) event.
    fn after_webhook(&self, call: &ToolCall, output: &ToolOutput, status: ToolStatus) {
        let common = self.governance.common(&self.env);
        let tascer = json!({ "status": status.as_str() });
        if output.is_error {
            let input = PostToolUseFailureInput {
                common,
                tool_name: call.tool_name.clone(),
                tool_input: call.input.clone(),
                tool_use_id: call.tool_use_id.clone(),
                error: output.content.to_text(),
                ..Default::default()
            };
            self.governance
                .webhook(HookEvent::PostToolUseFailure, &input, tascer);
        } else {
            let input = PostToolUseInput {
                common,
                tool_name: call.tool_name.clone(),
                tool_input: call.input.clone(),
                tool_response: output
                    .raw
                    .clone()
                    .unwrap_or_else(|| Value::String(output.content.to_text())),
                tool_use_id: call.tool_use_id.clone(),
                agent_id: self.parent_tool_use_id.clone(),
                ..Default::default()
            };
            self.governance
                .webhook(HookEvent::PostToolUse, &input, tascer);
        }
    }

    /// What admission and review are asked about `call`.
    fn call_request<'a>(&'a self, call: &'a ToolCall) -> CallRequest<'a> {
        CallRequest {
            call,
            hook_common: self.governance.common(&self.env),
            agent_id: self.parent_tool_use_id.as_deref(),
        }
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
