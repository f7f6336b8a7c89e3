//! [`HookRunner`]: runs the matching hooks of an event, in priority order,
//! isolates their failures, records every run and aggregates the effects.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt;
use serde_json::Value;
use tascer_core::{Behavior, HookEvent};

use super::command::CommandResult;
use super::effect::HookEffect;
use super::error::HookError;
use super::input::{
    ElicitationInput, ElicitationResultInput, HookInput, NotificationInput, PermissionRequestInput,
    PostCompactInput, PostToolUseFailureInput, PostToolUseInput, PreCompactInput, PreToolUseInput,
    SessionEndInput, SessionStartInput, StopInput, SubagentStopInput, UserPromptSubmitInput,
};
use super::outcome::{
    ElicitationOutcome, ElicitationResultOutcome, EventOutcome, NotificationOutcome,
    PermissionRequestOutcome, PostCompactOutcome, PostToolUseFailureOutcome, PostToolUseOutcome,
    PreCompactOutcome, PreToolUseOutcome, SessionEndOutcome, SessionStartOutcome, StopOutcome,
    SubagentStopOutcome, UserPromptSubmitOutcome,
};
use super::output::{HookOutput, PermissionRequestDecision, TopDecision};
use super::record::{HookKind, HookRun, HookRunOutcome};
use super::registered::{HookHandler, RegisteredHook};
use super::registry::HookRegistry;

/// Runs hooks. Cheap to clone; share one per session.
#[derive(Debug, Clone, Default)]
pub struct HookRunner {
    registry: Arc<HookRegistry>,
}

/// Effects and records of one event's hooks, in run order.
#[derive(Debug, Clone, Default)]
pub struct HookRunResults {
    /// What each hook meant.
    pub effects: Vec<HookEffect>,
    /// The record of each run.
    pub runs: Vec<HookRun>,
}

impl HookRunner {
    /// A runner over `registry`.
    pub fn new(registry: HookRegistry) -> HookRunner {
        HookRunner {
            registry: Arc::new(registry),
        }
    }

    /// The registry.
    pub fn registry(&self) -> &HookRegistry {
        &self.registry
    }

    /// Runs the hooks matching `input`, sequentially in priority order.
    /// Identical command hooks run once. Never fails: each failure is an
    /// effect and a record.
    pub async fn run(&self, input: &HookInput) -> HookRunResults {
        let hooks = self.registry.matching(input);
        let mut results = HookRunResults::default();
        if hooks.is_empty() {
            return results;
        }
        let value = input.to_value();
        let stdin = value.to_string();
        let mut seen_commands = HashSet::new();
        for hook in hooks {
            if let HookHandler::Command(c) = &hook.handler
                && !seen_commands.insert(c.command.clone())
            {
                continue;
            }
            let (effect, run) = run_one(hook, input, &value, &stdin).await;
            results.effects.push(effect);
            results.runs.push(run);
        }
        results
    }

    /// Runs the hooks matching `input` and folds them into outcome `O`
    /// (which must belong to the input's event).
    pub async fn run_as<O: EventOutcome>(&self, input: &HookInput) -> (O, Vec<HookRun>) {
        let results = self.run(input).await;
        (O::aggregate(&results.effects), results.runs)
    }

    /// `PreToolUse`: before a tool call.
    pub async fn pre_tool_use(&self, input: PreToolUseInput) -> (PreToolUseOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `PermissionRequest`: when a permission prompt would be shown.
    pub async fn permission_request(
        &self,
        input: PermissionRequestInput,
    ) -> (PermissionRequestOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `PostToolUse`: after a successful tool call.
    pub async fn post_tool_use(
        &self,
        input: PostToolUseInput,
    ) -> (PostToolUseOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `PostToolUseFailure`: after a failed tool call.
    pub async fn post_tool_use_failure(
        &self,
        input: PostToolUseFailureInput,
    ) -> (PostToolUseFailureOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `UserPromptSubmit`: before a prompt reaches the model.
    pub async fn user_prompt_submit(
        &self,
        input: UserPromptSubmitInput,
    ) -> (UserPromptSubmitOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `Stop`: when the main agent is about to stop.
    pub async fn stop(&self, input: StopInput) -> (StopOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `SubagentStop`: when a subagent is about to stop.
    pub async fn subagent_stop(
        &self,
        input: SubagentStopInput,
    ) -> (SubagentStopOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `PreCompact`: before compaction.
    pub async fn pre_compact(&self, input: PreCompactInput) -> (PreCompactOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `PostCompact`: after compaction, with the summary.
    pub async fn post_compact(
        &self,
        input: PostCompactInput,
    ) -> (PostCompactOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `SessionStart`: when a session starts or resumes.
    pub async fn session_start(
        &self,
        input: SessionStartInput,
    ) -> (SessionStartOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `SessionEnd`: when a session ends.
    pub async fn session_end(&self, input: SessionEndInput) -> (SessionEndOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `Elicitation`: when an MCP server asks the user for input.
    pub async fn elicitation(&self, input: ElicitationInput) -> (ElicitationOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `ElicitationResult`: after an MCP server's question was answered,
    /// before the answer is sent.
    pub async fn elicitation_result(
        &self,
        input: ElicitationResultInput,
    ) -> (ElicitationResultOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }

    /// `Notification`: when a notification is shown.
    pub async fn notification(
        &self,
        input: NotificationInput,
    ) -> (NotificationOutcome, Vec<HookRun>) {
        self.run_as(&input.into()).await
    }
}

/// True when `out` blocks, denies or stops for `event`.
fn output_blocks(out: &HookOutput, event: HookEvent) -> bool {
    if out.stops() || out.decision == Some(TopDecision::Block) {
        return true;
    }
    let Some(spec) = out.specific_for(event) else {
        return false;
    };
    match event {
        HookEvent::PreToolUse => spec.permission_decision == Some(Behavior::Deny),
        HookEvent::PermissionRequest => {
            matches!(spec.decision, Some(PermissionRequestDecision::Deny { .. }))
        }
        _ => false,
    }
}

/// The effect of a failure of `hook`.
fn failure(hook: &RegisteredHook, name: &str, message: &str) -> HookEffect {
    if hook.options.fail_closed {
        HookEffect::FailedClosed(format!("Hook `{name}` failed (fail-closed): {message}"))
    } else {
        HookEffect::Failed(format!("{} hook error (`{name}`): {message}", hook.event))
    }
}

fn first_line(s: &str) -> &str {
    s.trim().lines().next().unwrap_or_default()
}

async fn run_one(
    hook: &RegisteredHook,
    input: &HookInput,
    value: &Value,
    stdin: &str,
) -> (HookEffect, HookRun) {
    let name = hook.name();
    let started = Instant::now();
    let mut run = HookRun {
        hook_name: name.clone(),
        event: hook.event,
        matcher: hook.matcher.pattern().map(str::to_string),
        kind: HookKind::InProcess,
        priority: hook.options.priority,
        fail_closed: hook.options.fail_closed,
        input: value.clone(),
        stdout: None,
        stderr: None,
        exit_code: None,
        output: None,
        outcome: HookRunOutcome::Success,
        error: None,
        duration: Default::default(),
    };
    let result = match &hook.handler {
        HookHandler::Command(cmd) => {
            run.kind = HookKind::Command;
            let res = cmd.execute(stdin.to_string(), hook.options.timeout).await;
            command_effect(hook, &name, res, &mut run)
        }
        HookHandler::InProcess(h) => {
            let fut = AssertUnwindSafe(h.call(input)).catch_unwind();
            let res = match tokio::time::timeout(hook.options.timeout, fut).await {
                Ok(Ok(r)) => r,
                Ok(Err(_)) => Err(HookError::msg("hook panicked")),
                Err(_) => Err(HookError::Timeout(hook.options.timeout)),
            };
            match res {
                Ok(out) => {
                    run.output = Some(out.clone());
                    HookEffect::Output(out)
                }
                Err(e) => {
                    run.outcome = if matches!(e, HookError::Timeout(_)) {
                        HookRunOutcome::Timeout
                    } else {
                        HookRunOutcome::Error
                    };
                    run.error = Some(e.to_string());
                    failure(hook, &name, &e.to_string())
                }
            }
        }
    };
    if let HookEffect::Output(out) = &result
        && output_blocks(out, hook.event)
    {
        run.outcome = HookRunOutcome::Blocked;
    }
    run.duration = started.elapsed();
    match &result {
        HookEffect::Failed(m) | HookEffect::FailedClosed(m) => {
            tracing::warn!(hook = %name, event = %hook.event, "{m}")
        }
        HookEffect::Text(t) => {
            tracing::debug!(hook = %name, event = %hook.event, stdout = %t, "hook output")
        }
        _ => {}
    }
    (result, run)
}

/// Applies Claude Code's exit-code contract to a command result.
fn command_effect(
    hook: &RegisteredHook,
    name: &str,
    res: CommandResult,
    run: &mut HookRun,
) -> HookEffect {
    run.stdout = Some(res.stdout.clone());
    run.stderr = Some(res.stderr.clone());
    run.exit_code = res.exit_code;
    let mut fail = |outcome: HookRunOutcome, message: String| {
        run.outcome = outcome;
        run.error = Some(message.clone());
        failure(hook, name, &message)
    };
    if let Some(e) = res.spawn_error {
        return fail(HookRunOutcome::Error, HookError::Spawn(e).to_string());
    }
    if res.timed_out {
        return fail(
            HookRunOutcome::Timeout,
            HookError::Timeout(hook.options.timeout).to_string(),
        );
    }
    match res.exit_code {
        Some(0) => {
            let text = res.stdout.trim();
            if text.is_empty() {
                HookEffect::Output(HookOutput::default())
            } else if text.starts_with('{') {
                match HookOutput::parse(text) {
                    Some(out) => {
                        run.output = Some(out.clone());
                        HookEffect::Output(out)
                    }
                    None => fail(
                        HookRunOutcome::Error,
                        HookError::InvalidOutput(first_line(text).chars().take(200).collect())
                            .to_string(),
                    ),
                }
            } else {
                HookEffect::Text(text.to_string())
            }
        }
        Some(2) => {
            run.outcome = HookRunOutcome::Blocked;
            let stderr = res.stderr.trim();
            HookEffect::Blocking(if stderr.is_empty() {
                format!("Blocked by hook `{name}`")
            } else {
                stderr.to_string()
            })
        }
        Some(code) => fail(
            HookRunOutcome::Error,
            format!(
                "Failed with non-blocking status code {code}: {}",
                first_line(&res.stderr)
            ),
        ),
        None => fail(
            HookRunOutcome::Error,
            format!("killed by signal {}", res.signal.unwrap_or_default()),
        ),
    }
}
