//! Governance of one session: [`Admission`] (hooks, permissions, gates —
//! the one place that decides whether a tool call runs, in
//! `tascer-guard`), the session-level hook events (prompt, stop, session
//! start and end, compaction), context capture, the session's list of
//! denied calls, `intent-validate` on stops and the webhook sink. Every hook
//! run and reviewer verdict is recorded in the ledger (hook runs also as
//! `system/hook_response` messages).

use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tascer_core::{HookEvent, PermissionDenial};
use tascer_guard::admission::{Admission, HookActivity};
use tascer_guard::hooks::{
    CompactTrigger, ElicitationInput, ElicitationResultInput, HookCommon, HookCommonOutcome,
    HookRun, HookRunner, PostCompactInput, PreCompactInput, SessionEndInput, SessionEndReason,
    SessionStartInput, SessionStartSource, StopInput, SubagentStopInput, UserPromptSubmitInput,
};
use tascer_guard::reviewers::ReviewRecord;
use tascer_mcp::{ElicitationRequest, ElicitationResponse};
use tascer_webhook::Webhooks;

use crate::agent_log::agent_verdicts;
use crate::call_context::ContextCapture;
use crate::loop_env::LoopEnv;
use crate::records::{hook_run_payload, intent_blocks, verdict_payload};

/// Governance of one session.
pub(crate) struct Governance {
    cwd: String,
    transcript_path: String,
    /// Decides every tool call.
    pub admission: Arc<Admission>,
    /// Context capture for the calls' records.
    pub context: ContextCapture,
    denials: Mutex<Vec<PermissionDenial>>,
    webhooks: Option<Arc<Webhooks>>,
}

impl Governance {
    /// Governance with this admission and context capture.
    pub fn new(
        admission: Admission,
        context: ContextCapture,
        cwd: String,
        transcript_path: String,
    ) -> Self {
        Governance {
            cwd,
            transcript_path,
            admission: Arc::new(admission),
            context,
            denials: Mutex::new(Vec::new()),
            webhooks: None,
        }
    }

    /// Sends hook events to these webhooks.
    pub fn with_webhooks(mut self, webhooks: Option<Arc<Webhooks>>) -> Self {
        self.webhooks = webhooks;
        self
    }

    /// Stops the webhooks' background delivery (at the session's end).
    pub async fn stop_webhooks(&self) {
        if let Some(webhooks) = &self.webhooks {
            webhooks.stop_delivery().await;
        }
    }

    /// True when hook events go to webhooks.
    pub fn has_webhooks(&self) -> bool {
        self.webhooks.is_some()
    }

    /// Queues a hook event for the webhooks (if any): `input` as a hook
    /// receives it, `tascer` what Tascer decided. Never waits for them.
    pub fn webhook(&self, event: HookEvent, input: impl serde::Serialize, tascer: Value) {
        if let Some(webhooks) = &self.webhooks {
            let input = serde_json::to_value(input).unwrap_or(Value::Null);
            webhooks.send(event, input, tascer);
        }
    }

    fn hooks(&self) -> Option<&HookRunner> {
        self.admission.hook_runner()
    }

    /// The fields every hook input carries.
    pub fn common(&self, env: &LoopEnv) -> HookCommon {
        HookCommon {
            session_id: env.session_id.clone(),
            transcript_path: self.transcript_path.clone(),
            cwd: self.cwd.clone(),
            permission_mode: Some(self.admission.mode().as_str().to_string()),
        }
    }

    /// Records a call that was not allowed to run (for the result's
    /// `permission_denials`).
    pub fn add_denial(&self, tool_name: &str, tool_use_id: &str, input: &Value) {
        self.denials.lock().push(PermissionDenial {
            tool_name: tool_name.to_string(),
            tool_use_id: tool_use_id.to_string(),
            tool_input: input.clone(),
        });
    }

    /// Takes the denials recorded since the last call.
    pub fn take_denials(&self) -> Vec<PermissionDenial> {
        std::mem::take(&mut *self.denials.lock())
    }

    /// Runs SessionStart hooks; returns the context they add for the model.
    pub async fn on_session_start(
        &self,
        env: &LoopEnv,
        source: SessionStartSource,
        model: &str,
    ) -> Vec<String> {
        let input = SessionStartInput {
            common: self.common(env),
            source,
            model: Some(model.to_string()),
        };
        self.webhook(HookEvent::SessionStart, &input, Value::Null);
        let Some(hooks) = self.hooks() else {
            return Vec::new();
        };
        let (outcome, runs) = hooks.session_start(input).await;
        record_runs(env, &runs, None);
        report_common(env, &outcome.common);
        outcome.additional_context
    }

    /// Runs SessionEnd hooks (their output cannot change anything).
    pub async fn on_session_end(&self, env: &LoopEnv, reason: SessionEndReason) {
        let input = SessionEndInput {
            common: self.common(env),
            reason,
        };
        self.webhook(HookEvent::SessionEnd, &input, Value::Null);
        let Some(hooks) = self.hooks() else {
            return;
        };
        let (outcome, runs) = hooks.session_end(input).await;
        record_runs(env, &runs, None);
        report_common(env, &outcome.common);
    }

    /// Runs UserPromptSubmit hooks: `Err(reason)` blocks the prompt,
    /// `Ok(context)` is extra context for the model.
    pub async fn on_prompt(&self, env: &LoopEnv, prompt: &str) -> Result<Vec<String>, String> {
        let input = UserPromptSubmitInput {
            common: self.common(env),
            prompt: prompt.to_string(),
            source: Some("sdk".into()),
        };
        let Some(hooks) = self.hooks() else {
            self.webhook(HookEvent::UserPromptSubmit, &input, Value::Null);
            return Ok(Vec::new());
        };
        let (outcome, runs) = hooks.user_prompt_submit(input.clone()).await;
        record_runs(env, &runs, None);
        report_common(env, &outcome.common);
        let blocked = outcome.common.stop.or(outcome.block);
        self.webhook(
            HookEvent::UserPromptSubmit,
            &input,
            json!({ "blocked": blocked }),
        );
        if let Some(reason) = blocked {
            return Err(reason);
        }
        Ok(outcome.additional_context)
    }

    /// True when Elicitation hooks (settings or an SDK host's callbacks)
    /// can answer MCP servers' questions.
    pub fn answers_elicitation(&self) -> bool {
        self.hooks()
            .is_some_and(|h| h.registry().has(HookEvent::Elicitation))
    }

    /// Runs Elicitation hooks for an MCP server's question: the answer of
    /// the last hook that gave one (`None`: no hook answered).
    pub async fn on_elicitation(
        &self,
        env: &LoopEnv,
        request: &ElicitationRequest,
    ) -> Option<ElicitationResponse> {
        let hooks = self.hooks()?;
        let (outcome, runs) = hooks
            .elicitation(ElicitationInput {
                common: self.common(env),
                mcp_server_name: request.server.clone(),
                message: request.message.clone(),
                mode: request.mode().to_string(),
                requested_schema: (!request.requested_schema.is_null())
                    .then(|| request.requested_schema.clone()),
                url: request.url.clone(),
                elicitation_id: request.elicitation_id.clone(),
            })
            .await;
        record_runs(env, &runs, None);
        report_common(env, &outcome.common);
        Some(elicitation_answer(
            outcome.action.as_deref()?,
            outcome.content,
            "an Elicitation hook",
        ))
    }

    /// Runs ElicitationResult hooks on the answer to an MCP server's
    /// question before it is sent: the last hook that gives an `action`
    /// replaces the answer; without one the answer stays.
    pub async fn on_elicitation_result(
        &self,
        env: &LoopEnv,
        request: &ElicitationRequest,
        answer: ElicitationResponse,
    ) -> ElicitationResponse {
        let Some(hooks) = self
            .hooks()
            .filter(|h| h.registry().has(HookEvent::ElicitationResult))
        else {
            return answer;
        };
        let (action, content) = match &answer {
            ElicitationResponse::Accept(content) => {
                ("accept", Some(serde_json::Value::Object(content.clone())))
            }
            ElicitationResponse::Decline(_) => ("decline", None),
            _ => ("cancel", None),
        };
        let (outcome, runs) = hooks
            .elicitation_result(ElicitationResultInput {
                common: self.common(env),
                mcp_server_name: request.server.clone(),
                elicitation_id: request.elicitation_id.clone(),
                mode: request.mode().to_string(),
                action: action.to_string(),
                content,
            })
            .await;
        record_runs(env, &runs, None);
        report_common(env, &outcome.common);
        match outcome.action.as_deref() {
            Some(action) => {
                elicitation_answer(action, outcome.content, "an ElicitationResult hook")
            }
            None => answer,
        }
    }

    /// Runs PreCompact hooks: `Err(reason)` means do not compact.
    pub async fn on_pre_compact(
        &self,
        env: &LoopEnv,
        trigger: CompactTrigger,
        instructions: Option<&str>,
    ) -> Result<(), String> {
        let Some(hooks) = self.hooks() else {
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
        let Some(hooks) = self.hooks() else {
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
    /// ends its turn, then — for the main agent, when the hooks let it
    /// stop — `intent-validate`: `Continue(text)` means go on with `text`
    /// as the next user message.
    pub async fn on_stop(
        &self,
        env: &LoopEnv,
        subagent: Option<(&str, &str)>,
        stop_hook_active: bool,
        last_text: &str,
    ) -> StopVerdict {
        let verdict = self
            .stop_hooks(env, subagent, stop_hook_active, last_text)
            .await;
        if subagent.is_some() {
            return verdict;
        }
        let mut reviews = Vec::new();
        let verdict = match verdict {
            StopVerdict::Finish => {
                let (verdict, records) = self.validate_stop(env, stop_hook_active, last_text).await;
                reviews = records;
                verdict
            }
            other => other,
        };
        let input = StopInput {
            common: self.common(env),
            stop_hook_active,
            last_assistant_message: Some(last_text.to_string()).filter(|t| !t.is_empty()),
        };
        let (decision, reason) = match &verdict {
            StopVerdict::Finish => ("finish", None),
            StopVerdict::Continue(text) => ("block", Some(text.as_str())),
            StopVerdict::Stop(reason) => ("stop", Some(reason.as_str())),
        };
        let told = matches!(verdict, StopVerdict::Continue(_))
            .then_some(reason)
            .flatten();
        self.webhook(
            HookEvent::Stop,
            &input,
            json!({
                "decision": decision,
                "reason": reason,
                "reviews": reviews.iter().map(verdict_payload).collect::<Vec<_>>(),
                "agents": agent_verdicts(&reviews, told),
            }),
        );
        verdict
    }

    /// `intent-validate` on the main agent's stop; its verdict goes into
    /// the ledger. Returns what to do and the verdicts.
    async fn validate_stop(
        &self,
        env: &LoopEnv,
        stop_hook_active: bool,
        last_text: &str,
    ) -> (StopVerdict, Vec<ReviewRecord>) {
        if !self
            .admission
            .reviewer_chain()
            .is_some_and(|r| r.validates_stops())
        {
            return (StopVerdict::Finish, Vec::new());
        }
        let blocks = match env.proof.ledger().store().entries(&env.session_id) {
            Ok(entries) => intent_blocks(&entries),
            Err(err) => {
                tracing::warn!("cannot count intent-validate's earlier blocks: {err}");
                0
            }
        };
        let review = self
            .admission
            .validate_stop(last_text, blocks, stop_hook_active)
            .await;
        env.proof.reviews(&review.records);
        match review.block {
            Some(text) => (StopVerdict::Continue(text), review.records),
            None => (StopVerdict::Finish, review.records),
        }
    }

    /// The Stop or SubagentStop hooks.
    async fn stop_hooks(
        &self,
        env: &LoopEnv,
        subagent: Option<(&str, &str)>,
        stop_hook_active: bool,
        last_text: &str,
    ) -> StopVerdict {
        let Some(hooks) = self.hooks() else {
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

/// Records what admission's or review's hooks did: each run as a
/// `system/hook_response` message and in the ledger, their messages for the
/// user.
pub(crate) fn record_activity(env: &LoopEnv, activity: &HookActivity, tool_use_id: &str) {
    record_runs(env, &activity.runs, Some(tool_use_id));
    for message in &activity.system_messages {
        env.emit(env.system_message("hook_message", json!({ "message": message })));
    }
    for error in &activity.errors {
        tracing::warn!("hook error: {error}");
    }
}

/// Records each hook run as a `system/hook_response` message.
fn record_runs(env: &LoopEnv, runs: &[HookRun], tool_use_id: Option<&str>) {
    for run in runs {
        let data = hook_run_payload(run, tool_use_id);
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

/// The answer a hook gave (`action`, `content`); `who` names the hook in
/// a decline's reason.
fn elicitation_answer(
    action: &str,
    content: Option<serde_json::Value>,
    who: &str,
) -> ElicitationResponse {
    match action {
        "accept" => ElicitationResponse::Accept(
            content
                .and_then(|c| c.as_object().cloned())
                .unwrap_or_default(),
        ),
        "cancel" => ElicitationResponse::Cancel,
        "decline" => ElicitationResponse::Decline(format!("declined by {who}")),
        other => ElicitationResponse::Decline(format!(
            "{who} answered {other:?} (accept, decline or cancel)"
        )),
    }
}
