//! Admission and review: the one place that decides whether a tool call
//! runs, with which input, and what its result is worth.
//!
//! [`Admission::admit`] runs, in Claude Code's order (claude-compat §4.2):
//!
//! 1. `PreToolUse` hooks — they may deny, ask, allow or rewrite the input,
//!    or stop the run;
//! 2. the permission decision — deny rules → ask rules → mode → policies
//!    (file access, shell command, MCP) → allow rules → workaround
//!    detection → the `can_use_tool` callback (the hooks' answer folded in);
//! 3. for a call still at "ask": `PermissionRequest` hooks, then the LLM
//!    reviewers when they are on (`tool-approve`, then `tool-appeal`),
//!    else a `Notification` and the asker when someone can answer, else a
//!    denial that says what would allow the call;
//! 4. after a failed call, the `error-acknowledge` reviewer on the next
//!    call that would run; then the validator of a call that would change
//!    a plan, a `CLAUDE.md` or a workspace file (`admission/validate.rs`);
//! 5. pre-gates.
//!
//! [`Admission::review`] runs after the tool: post-gates, then
//! `PostToolUse` (or `PostToolUseFailure`) hooks; a failed call is kept
//! for `error-acknowledge`. [`Admission::validate_stop`] asks
//! `intent-validate` whether the agent may stop.
//!
//! Both return data — the decision, every hook run, every gate result —
//! and write nothing: the caller (the agent loop, `tascer hook`, `tascer
//! mcp serve`) records what they return and runs the tool.
//!
//! The three return boxed futures. An `async fn`'s state machine is
//! compiled again in every crate that awaits it (with everything it
//! awaits in turn); a boxed one is compiled once, here. The allocation
//! per call costs nothing next to a tool call, and the release build and
//! the binary shrink (BENCHMARKS.md, 2026-12-02).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::Value;
use tascer_core::ToolCall;

use crate::gates::{
    EvidenceKind, GateContext, GateResult, GateRunner, GateVerdict, Phase, ToolValidation,
    ValidationConfig, redact_with,
};
use crate::hooks::{
    HookCommon, HookRunner, NotificationInput, PermissionRequestDecision, PermissionRequestInput,
    PreToolDecision, PreToolUseInput, deciding_hook,
};
use crate::permissions::{
    Asker, Behavior, DecisionSource, HookPermission, PermissionDecision, PermissionEngine,
    PermissionMode, allow_suggestions, parse_updates,
};
use crate::reviewers::{CallReview, FailedCall, ReviewRecord, Reviewers, StopReview};

mod outcome;
mod review;
mod validate;

pub use outcome::{Admitted, CallRequest, HookActivity, Refusal, RefusedBy, Reviewed, StopRun};

/// Decides tool calls for one session: hooks, permissions, the asker and
/// gates. Cheap to share behind an `Arc`.
pub struct Admission {
    permissions: Arc<PermissionEngine>,
    hooks: Option<HookRunner>,
    asker: Option<Arc<dyn Asker>>,
    answers_questions: bool,
    defer_asks: bool,
    gates: GateRunner,
    validation: ValidationConfig,
    secrets: Vec<String>,
    /// The OS sandbox gate commands run under.
    sandbox: Option<tascer_sandbox::CommandSandbox>,
    reviewers: Option<Arc<Reviewers>>,
    /// The last call that failed, until the next call that would run is
    /// checked against it (`error-acknowledge`).
    pending_failure: Mutex<Option<FailedCall>>,
    /// How long one answer may take, reviewers included.
    answer_within: Option<Duration>,
}

impl Admission {
    /// Admission over a permission engine, with no hooks, no asker and no
    /// gates.
    pub fn new(permissions: Arc<PermissionEngine>) -> Self {
        Admission {
            permissions,
            hooks: None,
            asker: None,
            answers_questions: false,
            defer_asks: false,
            gates: GateRunner::new(crate::gates::GateRegistry::new()),
            // No gates until [`gates`](Self::gates) configures them.
            validation: ValidationConfig {
                per_tool: Default::default(),
                ..ValidationConfig::default()
            },
            secrets: Vec::new(),
            sandbox: None,
            reviewers: None,
            pending_failure: Mutex::new(None),
            answer_within: None,
        }
    }

    /// Answers every call (and stop) within `within` of being asked: a
    /// reviewer still waiting then fails, and its fail mode decides (for a
    /// host whose own hook timeout would otherwise let the call through).
    pub fn answer_within(mut self, within: Option<Duration>) -> Self {
        self.answer_within = within;
        self
    }

    /// The deadline of an answer asked for now.
    fn deadline(&self) -> Option<Instant> {
        self.answer_within.map(|d| Instant::now() + d)
    }

    /// Asks these LLM reviewers (settings `safety.reviewers`) in place of
    /// a human, checks failures and stops with them.
    pub fn reviewers(mut self, reviewers: Option<Arc<Reviewers>>) -> Self {
        self.reviewers = reviewers;
        self
    }

    /// The reviewers, if any are on.
    pub fn reviewer_chain(&self) -> Option<&Arc<Reviewers>> {
        self.reviewers.as_ref()
    }

    /// Keeps `failure` for `error-acknowledge` (when it is on): the next
    /// call that would run is checked against it. [`reviewers`](Self::review)
    /// does this for calls it sees fail; a host that runs in a new process
    /// per event (`tascer hook`) hands over a failure it stored.
    pub fn note_failure(&self, failure: FailedCall) {
        if self.reviewers.as_ref().is_some_and(|r| r.checks_failures()) {
            *self.pending_failure.lock() = Some(failure);
        }
    }

    /// Takes the failure waiting to be acknowledged, if any (for a host
    /// that must store it until the next event).
    pub fn take_failure(&self) -> Option<FailedCall> {
        self.pending_failure.lock().take()
    }

    /// `intent-validate` on a stop (see [`Reviewers::validate_stop`]):
    /// whether the agent may stop, or must go on with a correction.
    pub fn validate_stop<'a>(
        &'a self,
        last_answer: &'a str,
        blocks_so_far: u32,
        stop_hook_active: bool,
    ) -> BoxFuture<'a, StopReview> {
        Box::pin(self.validate_stop_steps(last_answer, blocks_so_far, stop_hook_active))
    }

    async fn validate_stop_steps(
        &self,
        last_answer: &str,
        blocks_so_far: u32,
        stop_hook_active: bool,
    ) -> StopReview {
        match &self.reviewers {
            Some(r) => {
                r.validate_stop(
                    last_answer,
                    blocks_so_far,
                    stop_hook_active,
                    self.deadline(),
                )
                .await
            }
            None => StopReview::default(),
        }
    }

    /// Runs these hooks (an empty registry is the same as none).
    pub fn hooks(mut self, hooks: HookRunner) -> Self {
        self.hooks = Some(hooks).filter(|h| !h.registry().is_empty());
        self
    }

    /// Asks this asker when a call needs approval; without one, such a
    /// call is denied with what would allow it.
    pub fn asker(mut self, asker: Option<Arc<dyn Asker>>) -> Self {
        self.asker = asker;
        self
    }

    /// Marks that a user answerer handles `AskUserQuestion`: the question
    /// itself is the human interaction, so its "ask" is settled by it.
    pub fn answers_questions(mut self, yes: bool) -> Self {
        self.answers_questions = yes;
        self
    }

    /// Leaves a call still at "ask" (after `PermissionRequest` hooks) to
    /// the caller instead of asking or denying it: the pre-gates still run
    /// (a failing one refuses the call), then the verdict is a refusal
    /// whose decision's behavior is [`Behavior::Ask`]. For a host
    /// that asks its user itself (Claude Code, through `tascer hook`).
    pub fn defer_asks(mut self, yes: bool) -> Self {
        self.defer_asks = yes;
        self
    }

    /// Runs these gates as `validation` configures them.
    pub fn gates(mut self, gates: GateRunner, validation: ValidationConfig) -> Self {
        self.gates = gates;
        self.validation = validation;
        self
    }

    /// Runs gate commands (`tests_pass`) under the session's OS sandbox,
    /// as the Bash tool's commands run.
    pub fn sandbox(mut self, sandbox: Option<tascer_sandbox::CommandSandbox>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Secrets the gates look for in outputs and written content (the
    /// provider's keys); shorter than 8 characters are ignored.
    pub fn secrets(mut self, secrets: Vec<String>) -> Self {
        self.secrets = secrets.into_iter().filter(|s| s.len() >= 8).collect();
        self
    }

    /// The permission engine.
    pub fn permissions(&self) -> &Arc<PermissionEngine> {
        &self.permissions
    }

    /// The hooks, if any are registered.
    pub fn hook_runner(&self) -> Option<&HookRunner> {
        self.hooks.as_ref()
    }

    /// The current permission mode.
    pub fn mode(&self) -> PermissionMode {
        self.permissions.mode()
    }

    /// Decides whether `request.call` runs, and with which input: the
    /// steps of the module docs, in order.
    pub fn admit<'a>(&'a self, request: CallRequest<'a>) -> BoxFuture<'a, Admitted> {
        Box::pin(self.admit_steps(request))
    }

    async fn admit_steps(&self, request: CallRequest<'_>) -> Admitted {
        let call = request.call;
        let deadline = self.deadline();
        let common = self.common(request.hook_common.clone());
        let mut hooks = HookActivity::default();

        // 1. PreToolUse hooks.
        let (input, hook_permission) = match self.pre_tool_use(&request, &common, &mut hooks).await
        {
            Ok(step) => step,
            Err((refusal, decision)) => {
                return Admitted::refused(refusal, Some(decision), hooks, Vec::new());
            }
        };

        // 2. The permission decision on the (possibly rewritten) input.
        let call_now = ToolCall {
            input: input.clone(),
            ..call.clone()
        };
        let decision = self
            .permissions
            .decide_after_hook(&call_now, hook_permission.as_ref())
            .await;

        // 3. Still at ask: PermissionRequest hooks, then the reviewers or
        // the asker.
        let mut reviews = Vec::new();
        let decision = self
            .settle_ask(
                &common,
                &call_now,
                decision,
                (&mut hooks, &mut reviews),
                deadline,
            )
            .await;

        // 4. After a failure: does this call acknowledge it?
        let decision = self
            .check_acknowledged(&call_now, decision, &mut reviews, deadline)
            .await;
        let decision = self
            .check_change(&call_now, decision, &mut reviews, deadline)
            .await;
        if !self.would_run(&decision) {
            let stop = decision
                .interrupt
                .then(|| StopRun::Permission(decision.reason.clone()));
            let refusal = Refusal {
                message: decision.reason.clone(),
                by: RefusedBy::Permission,
                stop,
            };
            return Admitted::refused(refusal, Some(decision), hooks, reviews);
        }
        let input = decision.updated_input.clone().unwrap_or(input);
        // A call that would run and is still at ask is left to the host.
        let deferred = decision.behavior == Behavior::Ask;

        // 5. Pre-gates.
        let (pre_gates, verdict) = self.pre_gates(call, input, &decision, deferred).await;
        Admitted {
            verdict,
            decision: Some(decision),
            pre_gates,
            hooks,
            reviews,
        }
    }

    /// Step 1, the `PreToolUse` hooks: `Ok` with the input to decide on (a
    /// hook may have rewritten it) and what the hooks said about
    /// permission; `Err` with the hook's decision when a hook denied the
    /// call or stopped the run.
    async fn pre_tool_use(
        &self,
        request: &CallRequest<'_>,
        common: &HookCommon,
        hooks: &mut HookActivity,
    ) -> Result<(Value, Option<HookPermission>), (Refusal, PermissionDecision)> {
        let call = request.call;
        let Some(runner) = &self.hooks else {
            return Ok((call.input.clone(), None));
        };
        let (outcome, runs) = runner
            .pre_tool_use(PreToolUseInput {
                common: common.clone(),
                tool_name: call.tool_name.clone(),
                tool_input: call.input.clone(),
                tool_use_id: call.tool_use_id.clone(),
                agent_id: request.agent_id.map(String::from),
                agent_type: None,
            })
            .await;
        let (denier, only) = (deciding_hook(&runs, true), deciding_hook(&runs, false));
        hooks.add(runs, &outcome.common);
        hooks.additional_context.extend(outcome.additional_context);
        if let Some(reason) = outcome.common.stop {
            let mut decision = PermissionDecision::by_hook(Behavior::Deny, denier, &reason);
            decision.interrupt = true;
            let stop = StopRun::Hook(reason);
            let refusal = Refusal {
                message: stop.to_string(),
                by: RefusedBy::Hook,
                stop: Some(stop),
            };
            return Err((refusal, decision));
        }
        let permission = match outcome.decision {
            Some(PreToolDecision::Deny { reason }) => {
                self.permissions.record_denial(call, &reason);
                let message = format!(
                    "PreToolUse hook denied this {} call: {reason}",
                    call.tool_name
                );
                let refusal = Refusal {
                    message,
                    by: RefusedBy::Hook,
                    stop: None,
                };
                return Err((
                    refusal,
                    PermissionDecision::by_hook(Behavior::Deny, denier, reason),
                ));
            }
            Some(allow_or_ask) => Some(HookPermission {
                behavior: allow_or_ask.behavior(),
                reason: allow_or_ask.reason().map(String::from),
                name: only,
            }),
            None => None,
        };
        let input = outcome.updated_input.unwrap_or_else(|| call.input.clone());
        Ok((input, permission))
    }

    /// Step 3, a call still at "ask": the `PermissionRequest` hooks, then
    /// `tool-approve` (and `tool-appeal`) when the reviewers are on, then —
    /// in `auto` mode, where nobody is asked — a denial; else, unless asks
    /// are deferred to the host, a `Notification` and the asker, or a
    /// denial that says what would allow the call.
    async fn settle_ask(
        &self,
        common: &HookCommon,
        call: &ToolCall,
        mut decision: PermissionDecision,
        (hooks, reviews): (&mut HookActivity, &mut Vec<ReviewRecord>),
        deadline: Option<Instant>,
    ) -> PermissionDecision {
        if decision.behavior == Behavior::Ask {
            decision = self
                .on_permission_request(common, call, decision, hooks)
                .await;
        }
        if decision.behavior == Behavior::Ask
            && reviewable(call, &decision)
            && let Some(reviewers) = &self.reviewers
            && let Some(review) = reviewers.approve(call, &decision.reason, deadline).await
        {
            decision = self.apply_review(call, decision, &review);
            reviews.extend(review.records);
        }
        if decision.behavior == Behavior::Ask
            && self.mode() == PermissionMode::Auto
            && !for_the_user(call)
        {
            let mut denied = self.permissions.resolve_non_interactive(decision);
            denied.reason = format!(
                "auto mode: nobody is asked and no reviewer approved it. {}",
                denied.reason
            );
            return denied;
        }
        if decision.behavior == Behavior::Ask && !self.defer_asks {
            if self.asker.is_some() {
                self.notify(
                    common,
                    &format!("Tascer needs your permission to use {}", call.tool_name),
                    hooks,
                )
                .await;
            }
            decision = self.resolve_ask(call, decision).await;
        }
        decision
    }

    /// True when `decision` lets the call run, or leaves it to the host to
    /// ask about (`defer_asks`): the calls the later checks look at.
    fn would_run(&self, decision: &PermissionDecision) -> bool {
        decision.behavior == Behavior::Allow
            || (decision.behavior == Behavior::Ask && self.defer_asks)
    }

    /// Step 4: after a failed call, `error-acknowledge` on the next call
    /// that would run (or is left to the host); a call that ignores the
    /// failure is denied.
    async fn check_acknowledged(
        &self,
        call: &ToolCall,
        mut decision: PermissionDecision,
        reviews: &mut Vec<ReviewRecord>,
        deadline: Option<Instant>,
    ) -> PermissionDecision {
        if self.would_run(&decision)
            && let Some(reviewers) = &self.reviewers
            && let Some(failure) = self.take_failure()
            && let Some(review) = reviewers.acknowledge(&failure, call, deadline).await
        {
            if !review.allowed {
                decision = self.apply_review(call, decision, &review);
            }
            reviews.extend(review.records);
        }
        decision
    }

    /// Step 5, the pre-gates on the input that would run: a failing one
    /// refuses the call; a deferred ask is refused after them, for the host
    /// to ask.
    async fn pre_gates(
        &self,
        call: &ToolCall,
        input: Value,
        decision: &PermissionDecision,
        deferred: bool,
    ) -> (Vec<GateResult>, Result<Value, Refusal>) {
        let ctx = GateContext::new(
            Phase::Pre,
            call.tool_name.as_str(),
            input.clone(),
            call.cwd.clone(),
        )
        .with_session_secrets(self.secrets.clone())
        .with_sandbox(self.sandbox.clone());
        let (pre_gates, verdict) = self.run_gates(Phase::Pre, &ctx).await;
        let verdict = if verdict.block {
            Err(Refusal {
                message: verdict
                    .message
                    .unwrap_or_else(|| "Blocked by a validation gate".into()),
                by: RefusedBy::Gate,
                stop: None,
            })
        } else if deferred {
            // The host asks its user; the gates have had their say.
            Err(Refusal {
                message: decision.reason.clone(),
                by: RefusedBy::Permission,
                stop: None,
            })
        } else {
            Ok(input)
        };
        (pre_gates, verdict)
    }

    /// The decision after a reviewer's verdict: allowed or denied by it
    /// (a denial counts toward workaround detection like any other).
    fn apply_review(
        &self,
        call: &ToolCall,
        mut decision: PermissionDecision,
        review: &CallReview,
    ) -> PermissionDecision {
        decision.decided_by = DecisionSource::Reviewer {
            name: review.by.name().to_string(),
        };
        decision.updated_input = None;
        if review.allowed {
            decision.behavior = Behavior::Allow;
            decision.reason = format!("allowed by the {} reviewer: {}", review.by, review.reason);
        } else {
            decision.behavior = Behavior::Deny;
            decision.reason = match review.by {
                crate::reviewers::ReviewerKind::ErrorAcknowledge => review.reason.clone(),
                by => format!("denied by the {by} reviewer: {}", review.reason),
            };
            self.permissions.record_denial(call, &decision.reason);
        }
        decision
    }

    /// The validation config the gates run by.
    pub fn validation(&self) -> &ValidationConfig {
        &self.validation
    }

    /// The validation of `tool_name` (its entry over the defaults).
    pub fn tool_validation(&self, tool_name: &str) -> Cow<'_, ToolValidation> {
        self.validation.for_tool(tool_name)
    }

    /// The evidence kinds the tool's validation keeps.
    pub fn evidence_kinds(&self, tool_name: &str) -> Vec<EvidenceKind> {
        self.validation.for_tool(tool_name).evidence.clone()
    }

    /// True when `no_secrets_leaked` checks the tool's calls: what is
    /// stored of them (input, evidence) is redacted.
    pub fn scans_secrets(&self, tool_name: &str) -> bool {
        let v = self.validation.for_tool(tool_name);
        v.pre_gates
            .iter()
            .chain(&v.post_gates)
            .any(|g| g == "no_secrets_leaked")
    }

    /// Removes secrets (gitleaks rules and the session's own keys) from
    /// text before it is stored.
    pub fn redact(&self, text: &str) -> String {
        redact_with(text, &self.secrets)
    }

    /// The input as the ledger stores it: for tools checked by
    /// `no_secrets_leaked`, every string with secrets redacted.
    pub fn recorded_input(&self, tool_name: &str, input: &Value) -> Value {
        if self.scans_secrets(tool_name) {
            redact_strings(input, &self.secrets)
        } else {
            input.clone()
        }
    }

    fn common(&self, mut common: HookCommon) -> HookCommon {
        common.permission_mode = Some(self.mode().as_str().to_string());
        common
    }

    /// `PermissionRequest` hooks for a call left at "ask": a hook may
    /// answer for the user.
    async fn on_permission_request(
        &self,
        common: &HookCommon,
        call: &ToolCall,
        mut decision: PermissionDecision,
        hooks: &mut HookActivity,
    ) -> PermissionDecision {
        let Some(runner) = &self.hooks else {
            return decision;
        };
        let suggestions = allow_suggestions(decision.suggestions.iter().map(String::as_str));
        let (outcome, runs) = runner
            .permission_request(PermissionRequestInput {
                common: common.clone(),
                tool_name: call.tool_name.clone(),
                tool_input: call.input.clone(),
                permission_suggestions: Some(suggestions),
            })
            .await;
        let (denier, only) = (deciding_hook(&runs, true), deciding_hook(&runs, false));
        hooks.add(runs, &outcome.common);
        match outcome.decision {
            Some(PermissionRequestDecision::Allow {
                updated_input,
                updated_permissions,
            }) => {
                decision.behavior = Behavior::Allow;
                decision.decided_by = DecisionSource::Hook { name: only };
                decision.reason = "allowed by a PermissionRequest hook".into();
                decision.updated_input = updated_input.filter(|u| *u != call.input);
                let (updates, mut warnings) =
                    parse_updates(&updated_permissions.unwrap_or_default());
                warnings.extend(self.permissions.apply_updates(&updates));
                warnings.iter().for_each(|w| tracing::warn!("{w}"));
            }
            Some(PermissionRequestDecision::Deny { message, interrupt }) => {
                decision.behavior = Behavior::Deny;
                decision.decided_by = DecisionSource::Hook {
                    name: denier.or(only),
                };
                decision.reason =
                    message.unwrap_or_else(|| "denied by a PermissionRequest hook".into());
                decision.interrupt = interrupt.unwrap_or(false);
            }
            None => {}
        }
        decision
    }

    /// `Notification` hooks (before a permission prompt).
    async fn notify(&self, common: &HookCommon, message: &str, hooks: &mut HookActivity) {
        let Some(runner) = &self.hooks else {
            return;
        };
        let (outcome, runs) = runner
            .notification(NotificationInput {
                common: common.clone(),
                message: message.to_string(),
                title: None,
                notification_type: "permission_prompt".to_string(),
            })
            .await;
        hooks.add(runs, &outcome.common);
    }

    /// Resolves a call still at "ask": the asker, or (with none) a denial
    /// that says what would allow the call.
    async fn resolve_ask(
        &self,
        call: &ToolCall,
        decision: PermissionDecision,
    ) -> PermissionDecision {
        if call.tool_name == "AskUserQuestion" && self.answers_questions {
            let mut d = decision;
            d.behavior = Behavior::Allow;
            d.decided_by = DecisionSource::User;
            d.reason = "the question goes to the user answerer".into();
            return d;
        }
        match &self.asker {
            Some(asker) => {
                self.permissions
                    .resolve_with_asker(call, decision, asker.as_ref())
                    .await
            }
            None => self.permissions.resolve_non_interactive(decision),
        }
    }

    async fn run_gates(&self, phase: Phase, ctx: &GateContext) -> (Vec<GateResult>, GateVerdict) {
        if self
            .validation
            .for_tool(&ctx.tool_name)
            .gates(phase)
            .is_empty()
        {
            return (Vec::new(), GateVerdict::from_results(phase, &[]));
        }
        let results = self.gates.run(phase, ctx, &self.validation).await;
        let verdict = GateVerdict::from_results(phase, &results);
        (results, verdict)
    }
}

/// True when a reviewer may answer this ask: not one that workaround
/// detection escalated or a request to leave the OS sandbox (a human must
/// see those), not a question or plan meant for the user.
fn reviewable(call: &ToolCall, decision: &PermissionDecision) -> bool {
    decision.decided_by != DecisionSource::Workaround
        && !crate::permissions::wants_unsandboxed(call)
        && !for_the_user(call)
}

/// True for the tools meant for the user (a question, a plan to
/// approve): their ask is the user's to answer, in every mode.
fn for_the_user(call: &ToolCall) -> bool {
    matches!(call.tool_name.as_str(), "AskUserQuestion" | "ExitPlanMode")
}

/// `value` with secrets redacted from every string in it.
fn redact_strings(value: &Value, secrets: &[String]) -> Value {
    match value {
        Value::String(s) => Value::String(redact_with(s, secrets)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| redact_strings(v, secrets)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), redact_strings(v, secrets)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "admission_tests.rs"]
mod tests;
