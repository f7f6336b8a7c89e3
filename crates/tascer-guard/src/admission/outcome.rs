//! What admission and review are asked and what they return: the call
//! ([`CallRequest`]), the hooks that ran ([`HookActivity`]), a refusal and
//! who made it ([`Refusal`], [`RefusedBy`], [`StopRun`]), and the outcomes
//! ([`Admitted`], [`Reviewed`]).

use serde_json::Value;
use tascer_core::{ToolCall, ToolOutput};

use crate::gates::GateResult;
use crate::hooks::{HookCommon, HookCommonOutcome, HookRun};
use crate::permissions::PermissionDecision;
use crate::reviewers::ReviewRecord;

/// One call to decide, with the fields hooks receive.
#[derive(Debug, Clone)]
pub struct CallRequest<'a> {
    /// The call as the model made it.
    pub call: &'a ToolCall,
    /// `session_id`, `transcript_path` and `cwd` for hook input; the
    /// permission mode is filled in by admission.
    pub hook_common: HookCommon,
    /// The subagent making the call (its parent `tool_use` id), if any.
    pub agent_id: Option<&'a str>,
}

/// Hook runs of one step and what they said for the user.
#[derive(Debug, Clone, Default)]
pub struct HookActivity {
    /// Every hook run, in order (for the ledger and `hook_response` frames).
    pub runs: Vec<HookRun>,
    /// `systemMessage`s for the user.
    pub system_messages: Vec<String>,
    /// Non-blocking hook errors.
    pub errors: Vec<String>,
    /// `additionalContext` for the model.
    pub additional_context: Vec<String>,
}

impl HookActivity {
    pub(super) fn add(&mut self, runs: Vec<HookRun>, common: &HookCommonOutcome) {
        self.runs.extend(runs);
        self.system_messages
            .extend(common.system_messages.iter().cloned());
        self.errors.extend(common.errors.iter().cloned());
    }
}

/// Who refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusedBy {
    /// A `PreToolUse` hook denied it, or stopped the run.
    Hook,
    /// The permission decision (rules, mode, policies, callback, hooks
    /// answering a permission request, the user).
    Permission,
    /// A pre-gate failed.
    Gate,
}

/// A request to stop the whole run, not only the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopRun {
    /// A hook answered `continue: false`; its reason, for the user.
    Hook(String),
    /// A permission decision asked to stop (a deny with `interrupt`, or
    /// workaround escalation).
    Permission(String),
}

impl std::fmt::Display for StopRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopRun::Hook(reason) => write!(f, "Stopped by a hook: {reason}"),
            StopRun::Permission(reason) => {
                write!(f, "Stopped by a permission decision: {reason}")
            }
        }
    }
}

/// Why a call does not run.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The tool error the model sees.
    pub message: String,
    /// Who refused it.
    pub by: RefusedBy,
    /// Set when the whole run must stop.
    pub stop: Option<StopRun>,
}

impl Refusal {
    /// True for a permission denial (by a hook or the decision), which the
    /// result's `permission_denials` lists; a failed gate or a stop is not.
    pub fn is_denial(&self) -> bool {
        self.by != RefusedBy::Gate && !matches!(self.stop, Some(StopRun::Hook(_)))
    }
}

/// What admission decided, with everything it did on the way.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// `Ok(input)`: run the tool with this input (possibly rewritten by a
    /// hook, the callback or a permission-request hook); `Err`: do not.
    pub verdict: Result<Value, Refusal>,
    /// The permission decision, whoever made it: a call a `PreToolUse`
    /// hook refused has the hook's (deny, [`DecisionSource::Hook`]).
    /// [`Admission::admit`] always sets it.
    pub decision: Option<PermissionDecision>,
    /// The pre-gates' results (empty when the call was refused before them).
    pub pre_gates: Vec<GateResult>,
    /// `PreToolUse`, `PermissionRequest` and `Notification` hook runs.
    pub hooks: HookActivity,
    /// The LLM reviewers' verdicts on the call, in order.
    pub reviews: Vec<ReviewRecord>,
}

impl Admitted {
    /// A call refused before the pre-gates ran.
    pub(super) fn refused(
        refusal: Refusal,
        decision: Option<PermissionDecision>,
        hooks: HookActivity,
        reviews: Vec<ReviewRecord>,
    ) -> Self {
        Admitted {
            verdict: Err(refusal),
            decision,
            pre_gates: Vec::new(),
            hooks,
            reviews,
        }
    }
}

/// What review found after the tool ran.
#[derive(Debug, Clone)]
pub struct Reviewed {
    /// The output the model sees: a failed post-gate's message (for tools
    /// that tell the model), a hook's replacement output, its feedback and
    /// context appended.
    pub output: ToolOutput,
    /// The post-gates' results.
    pub post_gates: Vec<GateResult>,
    /// True when a post-gate failed: the call is recorded as failed.
    pub gate_failed: bool,
    /// True when a post-gate found a secret: stored evidence must be
    /// redacted ([`Admission::redact`]).
    pub found_secrets: bool,
    /// Set when a hook asked to stop the run.
    pub stop: Option<StopRun>,
    /// `PostToolUse` / `PostToolUseFailure` hook runs.
    pub hooks: HookActivity,
}
