//! Governance around each tool call and turn: hooks, plus the [`Guard`]
//! (permissions, gates, context).
//!
//! The order follows Claude Code (claude-compat §4.2): PreToolUse hooks
//! first (they may deny, ask or rewrite the input), then the permission
//! decision, then the tool, then PostToolUse / PostToolUseFailure hooks
//! (the whole pipeline is in `pipeline.rs`). Every hook run is recorded as
//! a `system/hook_response` message.

use serde_json::{Value, json};
use tascer_core::ToolOutput;
use tascer_guard::hooks::{
    CompactTrigger, HookCommon, HookCommonOutcome, HookRun, HookRunner, NotificationInput,
    PermissionRequestDecision, PermissionRequestInput, PostCompactInput, PostToolUseFailureInput,
    PostToolUseInput, PreCompactInput, PreToolDecision, PreToolUseInput, SessionEndInput,
    SessionEndReason, SessionStartInput, SessionStartSource, StopInput, SubagentStopInput,
    UserPromptSubmitInput,
};
use tascer_guard::permissions::HookPermission;
use tascer_guard::permissions::{Behavior, DecisionSource, PermissionDecision};

use crate::agent::LoopEnv;
use crate::session_guard::Guard;

/// Why a run stops before the model is done.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Halt {
    /// A hook returned `continue: false`.
    Hook(String),
    /// A permission decision asked to stop (a `can_use_tool` deny with
    /// `interrupt`, or workaround escalation).
    Permission(String),
}

impl std::fmt::Display for Halt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Halt::Hook(reason) => write!(f, "Stopped by a hook: {reason}"),
            Halt::Permission(reason) => write!(f, "Stopped by a permission decision: {reason}"),
        }
    }
}

/// What happens to a tool call before it runs.
pub(crate) enum BeforeTool {
    /// Run it with this input.
    Run {
        /// The input to run (possibly rewritten by a hook).
        input: Value,
        /// What the hooks said about permission.
        permission: HookPermission,
    },
    /// Do not run it; the message is the tool error the model sees.
    Block {
        /// Why, for the model.
        message: String,
    },
    /// A hook asked to stop the whole run.
    Stop {
        /// The hook's stop reason, for the user.
        reason: String,
    },
}

/// Governance of one session.
pub(crate) struct Governance {
    hooks: Option<HookRunner>,
    cwd: String,
    transcript_path: String,
    /// Permissions, gates and context capture.
    pub guard: Guard,
}

impl Governance {
    /// Governance with these hooks (None = no hooks) and guard.
    pub fn new(
        hooks: Option<HookRunner>,
        guard: Guard,
        cwd: String,
        transcript_path: String,
    ) -> Self {
        Governance {
            hooks: hooks.filter(|h| !h.registry().is_empty()),
            cwd,
            transcript_path,
            guard,
        }
    }

    fn common(&self, env: &LoopEnv) -> HookCommon {
        HookCommon {
            session_id: env.session_id.clone(),
            transcript_path: self.transcript_path.clone(),
            cwd: self.cwd.clone(),
            permission_mode: Some(self.guard.mode().as_str().to_string()),
        }
    }

    /// Runs PreToolUse hooks and decides whether the call runs.
    pub async fn before_tool(
        &self,
        env: &LoopEnv,
        tool_name: &str,
        tool_use_id: &str,
        input: &Value,
        agent_id: Option<&str>,
    ) -> BeforeTool {
        let Some(hooks) = &self.hooks else {
            return BeforeTool::Run {
                input: input.clone(),
                permission: HookPermission::None,
            };
        };
        let (outcome, runs) = hooks
            .pre_tool_use(PreToolUseInput {
                common: self.common(env),
                tool_name: tool_name.to_string(),
                tool_input: input.clone(),
                tool_use_id: tool_use_id.to_string(),
                agent_id: agent_id.map(String::from),
                agent_type: None,
            })
            .await;
        record_runs(env, &runs, Some(tool_use_id));
        report_common(env, &outcome.common);
        if let Some(reason) = outcome.common.stop {
            return BeforeTool::Stop { reason };
        }
        let permission = match outcome.decision {
            Some(PreToolDecision::Deny { reason }) => {
                return BeforeTool::Block {
                    message: format!("PreToolUse hook denied this {tool_name} call: {reason}"),
                };
            }
            Some(PreToolDecision::Allow { reason }) => HookPermission::Allow { reason },
            Some(PreToolDecision::Ask { reason }) => HookPermission::Ask { reason },
            None => HookPermission::None,
        };
        BeforeTool::Run {
            input: outcome.updated_input.unwrap_or_else(|| input.clone()),
            permission,
        }
    }

    /// Runs PostToolUse (or PostToolUseFailure) hooks; their feedback and
    /// context are appended to the tool result the model sees. Returns a
    /// stop reason when a hook asked to stop the run.
    pub async fn after_tool(
        &self,
        env: &LoopEnv,
        tool_name: &str,
        tool_use_id: &str,
        input: &Value,
        output: &mut ToolOutput,
    ) -> Option<Halt> {
        let hooks = self.hooks.as_ref()?;
        let (feedback, context, common, runs) = if output.is_error {
            let (outcome, runs) = hooks
                .post_tool_use_failure(PostToolUseFailureInput {
                    common: self.common(env),
                    tool_name: tool_name.to_string(),
                    tool_input: input.clone(),
                    tool_use_id: tool_use_id.to_string(),
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
            let (outcome, runs) = hooks
                .post_tool_use(PostToolUseInput {
                    common: self.common(env),
                    tool_name: tool_name.to_string(),
                    tool_input: input.clone(),
                    tool_response: response,
                    tool_use_id: tool_use_id.to_string(),
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
        record_runs(env, &runs, Some(tool_use_id));
        report_common(env, &common);
        let mut extra = Vec::new();
        if let Some(reason) = feedback {
            extra.push(format!("PostToolUse hook feedback: {reason}"));
        }
        extra.extend(context);
        if !extra.is_empty() {
            let text = format!("{}\n\n{}", output.content.to_text(), extra.join("\n"));
            output.content = text.into();
        }
        common.stop.map(Halt::Hook)
    }

    /// Runs SessionStart hooks; returns the context they add for the model.
    pub async fn on_session_start(
        &self,
        env: &LoopEnv,
        source: SessionStartSource,
        model: &str,
    ) -> Vec<String> {
        let Some(hooks) = &self.hooks else {
            return Vec::new();
        };
        let (outcome, runs) = hooks
            .session_start(SessionStartInput {
                common: self.common(env),
                source,
                model: Some(model.to_string()),
            })
            .await;
        record_runs(env, &runs, None);
        report_common(env, &outcome.common);
        outcome.additional_context
    }

    /// Runs SessionEnd hooks (their output cannot change anything).
    pub async fn on_session_end(&self, env: &LoopEnv, reason: SessionEndReason) {
        let Some(hooks) = &self.hooks else {
            return;
        };
        let (outcome, runs) = hooks
            .session_end(SessionEndInput {
                common: self.common(env),
                reason,
            })
            .await;
        record_runs(env, &runs, None);
        report_common(env, &outcome.common);
    }

    /// Runs PermissionRequest hooks for a call left at "ask": a hook may
    /// answer for the user. Returns the decision with their answer folded
    /// in (unchanged when no hook had an opinion).
    pub async fn on_permission_request(
        &self,
        env: &LoopEnv,
        tool_name: &str,
        tool_use_id: &str,
        input: &Value,
        mut decision: PermissionDecision,
    ) -> PermissionDecision {
        let Some(hooks) = &self.hooks else {
            return decision;
        };
        let suggestions = decision
            .suggestions
            .iter()
            .map(|rule| {
                let r = tascer_guard::permissions::PermissionRuleValue::from_rule(rule);
                json!({"type": "addRules", "rules": [r], "behavior": "allow", "destination": "session"})
            })
            .collect();
        let (outcome, runs) = hooks
            .permission_request(PermissionRequestInput {
                common: self.common(env),
                tool_name: tool_name.to_string(),
                tool_input: input.clone(),
                permission_suggestions: Some(suggestions),
            })
            .await;
        record_runs(env, &runs, Some(tool_use_id));
        report_common(env, &outcome.common);
        match outcome.decision {
            Some(PermissionRequestDecision::Allow { updated_input, .. }) => {
                decision.behavior = Behavior::Allow;
                decision.decided_by = DecisionSource::Hook;
                decision.reason = "allowed by a PermissionRequest hook".into();
                decision.updated_input = updated_input.filter(|u| u != input);
            }
            Some(PermissionRequestDecision::Deny { message, interrupt }) => {
                decision.behavior = Behavior::Deny;
                decision.decided_by = DecisionSource::Hook;
                decision.reason =
                    message.unwrap_or_else(|| "denied by a PermissionRequest hook".into());
                decision.interrupt = interrupt.unwrap_or(false);
            }
            None => {}
        }
        decision
    }

    /// Runs Notification hooks (e.g. before a permission prompt).
    pub async fn notify(&self, env: &LoopEnv, message: &str, notification_type: &str) {
        let Some(hooks) = &self.hooks else {
            return;
        };
        let (outcome, runs) = hooks
            .notification(NotificationInput {
                common: self.common(env),
                message: message.to_string(),
                title: None,
                notification_type: notification_type.to_string(),
            })
            .await;
        record_runs(env, &runs, None);
        report_common(env, &outcome.common);
    }

    /// Runs UserPromptSubmit hooks: `Err(reason)` blocks the prompt,
    /// `Ok(context)` is extra context for the model.
    pub async fn on_prompt(&self, env: &LoopEnv, prompt: &str) -> Result<Vec<String>, String> {
        let Some(hooks) = &self.hooks else {
            return Ok(Vec::new());
        };
        let (outcome, runs) = hooks
            .user_prompt_submit(UserPromptSubmitInput {
                common: self.common(env),
                prompt: prompt.to_string(),
                source: Some("sdk".into()),
            })
            .await;
        record_runs(env, &runs, None);
        report_common(env, &outcome.common);
        if let Some(reason) = outcome.common.stop.or(outcome.block) {
            return Err(reason);
        }
        Ok(outcome.additional_context)
    }

    /// Runs PreCompact hooks: `Err(reason)` means do not compact.
    pub async fn on_pre_compact(
        &self,
        env: &LoopEnv,
        trigger: CompactTrigger,
        instructions: Option<&str>,
    ) -> Result<(), String> {
        let Some(hooks) = &self.hooks else {
            return Ok(());
        };
        let (outcome, runs) = hooks
            .pre_compact(PreCompactInput {
                common: self.common(env),
                trigger,
                custom_instructions: instructions.map(str::to_string),
            })
            .await;
        record_runs(env, &runs, None);
        report_common(env, &outcome.common);
        match outcome.common.stop.or(outcome.block) {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }

    /// Runs PostCompact hooks with the summary that replaced the
    /// conversation.
    pub async fn on_post_compact(&self, env: &LoopEnv, trigger: CompactTrigger, summary: &str) {
        let Some(hooks) = &self.hooks else {
            return;
        };
        let (outcome, runs) = hooks
            .post_compact(PostCompactInput {
                common: self.common(env),
                trigger,
                compact_summary: summary.to_string(),
            })
            .await;
        record_runs(env, &runs, None);
        report_common(env, &outcome.common);
    }

    /// Runs Stop (or, for a subagent, SubagentStop) hooks when the model
    /// ends its turn: `Some(text)` means go on with `text` as the next user
    /// message.
    pub async fn on_stop(
        &self,
        env: &LoopEnv,
        subagent: Option<(&str, &str)>,
        stop_hook_active: bool,
        last_text: &str,
    ) -> StopVerdict {
        let Some(hooks) = &self.hooks else {
            return StopVerdict::Finish;
        };
        let last = Some(last_text.to_string()).filter(|t| !t.is_empty());
        let (block, common, runs) = if let Some((agent_id, agent_type)) = subagent {
            let (o, runs) = hooks
                .subagent_stop(SubagentStopInput {
                    common: self.common(env),
                    stop_hook_active,
                    agent_id: agent_id.to_string(),
                    agent_transcript_path: self.transcript_path.clone(),
                    agent_type: agent_type.to_string(),
                    last_assistant_message: last,
                })
                .await;
            (o.block, o.common, runs)
        } else {
            let (o, runs) = hooks
                .stop(StopInput {
                    common: self.common(env),
                    stop_hook_active,
                    last_assistant_message: last,
                })
                .await;
            (o.block, o.common, runs)
        };
        record_runs(env, &runs, None);
        report_common(env, &common);
        if let Some(reason) = common.stop {
            return StopVerdict::Stop(reason);
        }
        match block {
            Some(text) => StopVerdict::Continue(text),
            None => StopVerdict::Finish,
        }
    }
}

/// What Stop hooks decided.
pub(crate) enum StopVerdict {
    /// End the turn.
    Finish,
    /// Go on with this text as the next user message.
    Continue(String),
    /// A hook stopped the run.
    Stop(String),
}

/// Records each hook run as a `system/hook_response` message.
fn record_runs(env: &LoopEnv, runs: &[HookRun], tool_use_id: Option<&str>) {
    for run in runs {
        let mut data = serde_json::to_value(run).unwrap_or(Value::Null);
        if let Some(obj) = data.as_object_mut() {
            obj.insert("tool_use_id".into(), json!(tool_use_id));
        }
        env.proof.hook_run(&data);
        env.emit(env.system_message("hook_response", data));
    }
}

/// Surfaces hooks' system messages and errors to the user.
fn report_common(env: &LoopEnv, common: &HookCommonOutcome) {
    for message in &common.system_messages {
        env.emit(env.system_message("hook_message", json!({ "message": message })));
    }
    for error in &common.errors {
        tracing::warn!("hook error: {error}");
    }
}
