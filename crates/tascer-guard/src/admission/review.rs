//! [`Admission::review`]: what runs after a tool — post-gates, then
//! `PostToolUse` (or `PostToolUseFailure`) hooks — and the failed call
//! kept for `error-acknowledge`.

use futures::future::BoxFuture;
use serde_json::Value;
use tascer_core::{ToolCall, ToolOutput};

use super::{Admission, CallRequest, HookActivity, Reviewed, StopRun};
use crate::gates::{GateContext, Phase};
use crate::hooks::{HookCommon, HookRunner, PostToolUseFailureInput, PostToolUseInput};
use crate::permissions::PermissionMode;
use crate::reviewers::FailedCall;

impl Admission {
    /// Reviews a call that ran with `request.call.input`: post-gates, then
    /// `PostToolUse` (or `PostToolUseFailure`) hooks. A successful
    /// `ExitPlanMode` also ends plan mode here.
    pub fn review<'a>(
        &'a self,
        request: CallRequest<'a>,
        output: ToolOutput,
    ) -> BoxFuture<'a, Reviewed> {
        Box::pin(self.review_steps(request, output))
    }

    async fn review_steps(&self, request: CallRequest<'_>, output: ToolOutput) -> Reviewed {
        let call = request.call;
        if call.tool_name == "ExitPlanMode"
            && !output.is_error
            && self.permissions.mode() == PermissionMode::Plan
            && let Err(err) = self.permissions.set_mode(PermissionMode::Default)
        {
            tracing::warn!("cannot leave plan mode: {err}");
        }

        let ctx = GateContext::new(
            Phase::Post,
            call.tool_name.as_str(),
            call.input.clone(),
            call.cwd.clone(),
        )
        .with_session_secrets(self.secrets.clone())
        .with_sandbox(self.sandbox.clone())
        .with_output(output.clone());
        let (post_gates, verdict) = self.run_gates(Phase::Post, &ctx).await;
        let gate_failed = verdict.mark_failed;
        let found_secrets = post_gates
            .iter()
            .any(|r| !r.passed && r.gate == "no_secrets_leaked");
        let mut output = output;
        if gate_failed
            && self
                .validation
                .for_tool(&call.tool_name)
                .tell_model_on_failure
            && let Some(message) = &verdict.message
        {
            output.content = format!("{}\n\n{message}", output.content.to_text()).into();
        }

        if output.is_error {
            self.note_failure(FailedCall {
                tool_name: call.tool_name.clone(),
                input: call.input.clone(),
                tool_use_id: call.tool_use_id.clone(),
                error: output.content.to_text(),
            });
        }

        let mut hooks = HookActivity::default();
        let stop = match &self.hooks {
            None => None,
            Some(runner) => {
                let common = self.common(request.hook_common.clone());
                self.after_hooks(runner, common, call, &mut output, &mut hooks)
                    .await
            }
        };
        Reviewed {
            output,
            post_gates,
            gate_failed,
            found_secrets,
            stop,
            hooks,
        }
    }

    /// `PostToolUse` (or `PostToolUseFailure`) hooks: their feedback and
    /// context are appended to the output the model sees.
    async fn after_hooks(
        &self,
        runner: &HookRunner,
        common: HookCommon,
        call: &ToolCall,
        output: &mut ToolOutput,
        hooks: &mut HookActivity,
    ) -> Option<StopRun> {
        let (feedback, context, outcome_common, runs) = if output.is_error {
            let (outcome, runs) = runner
                .post_tool_use_failure(PostToolUseFailureInput {
                    common,
                    tool_name: call.tool_name.clone(),
                    tool_input: call.input.clone(),
                    tool_use_id: call.tool_use_id.clone(),
                    error: output.content.to_text(),
                    is_interrupt: None,
                    ..Default::default()
                })
                .await;
            (
                outcome.block_reason,
                outcome.additional_context,
                outcome.common,
                runs,
            )
        } else {
            let response = output
                .raw
                .clone()
                .unwrap_or_else(|| Value::String(output.content.to_text()));
            let (outcome, runs) = runner
                .post_tool_use(PostToolUseInput {
                    common,
                    tool_name: call.tool_name.clone(),
                    tool_input: call.input.clone(),
                    tool_response: response,
                    tool_use_id: call.tool_use_id.clone(),
                    ..Default::default()
                })
                .await;
            if let Some(updated) = outcome.updated_tool_output.clone() {
                output.content = match &updated {
                    Value::String(s) => s.clone().into(),
                    other => other.to_string().into(),
                };
                output.raw = Some(updated);
            }
            (
                outcome.block_reason,
                outcome.additional_context,
                outcome.common,
                runs,
            )
        };
        hooks.add(runs, &outcome_common);
        let mut extra = Vec::new();
        if let Some(reason) = feedback {
            extra.push(format!("PostToolUse hook feedback: {reason}"));
        }
        extra.extend(context);
        if !extra.is_empty() {
            let text = format!("{}\n\n{}", output.content.to_text(), extra.join("\n"));
            output.content = text.into();
        }
        outcome_common.stop.map(StopRun::Hook)
    }
}
