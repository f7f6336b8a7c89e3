//! The outcome of a permission check, as data.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tascer_core::Behavior;

/// Who made a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum DecisionSource {
    /// The permission mode.
    Mode {
        /// The mode in force.
        mode: String,
    },
    /// A permission rule.
    Rule {
        /// The rule as written (`Bash(npm test:*)`).
        rule: String,
        /// The settings file it came from (`None` for rules given in code,
        /// `session` for rules added during the session).
        #[serde(skip_serializing_if = "Option::is_none")]
        source_file: Option<String>,
    },
    /// A policy.
    Policy {
        /// The policy's name.
        name: String,
    },
    /// The `can_use_tool` callback.
    Callback,
    /// An interactive [`Asker`](super::Asker).
    User,
    /// The decision cache (identical earlier call).
    Cache,
    /// Workaround detection escalated the call.
    Workaround,
    /// A hook: a PreToolUse hook's `permissionDecision` (or exit code 2),
    /// or a PermissionRequest hook's answer.
    Hook {
        /// The hook that decided (its command line or callback name),
        /// when one hook can be named.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// An LLM reviewer (`tool-approve`, `tool-appeal`,
    /// `error-acknowledge`, a validator) decided the call.
    Reviewer {
        /// The reviewer's name.
        name: String,
    },
    /// No rule decided; the default applied.
    Default,
}

/// The decision for one tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PermissionDecision {
    /// Allow, deny or ask.
    pub behavior: Behavior,
    /// Replacement input, when the callback rewrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// Who decided.
    pub decided_by: DecisionSource,
    /// Why, in words for the model or the user.
    pub reason: String,
    /// True when the whole turn should stop (callback deny with
    /// `interrupt`, or a workaround escalation to `StopSession`).
    pub interrupt: bool,
    /// How long deciding took.
    #[serde(rename = "duration_us", with = "duration_micros")]
    pub duration: Duration,
    /// Rules that would allow this call (for prompts and for
    /// non-interactive denial messages).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
    /// Keys grouping alike calls for workaround detection.
    #[serde(skip)]
    pub(crate) alike: Vec<String>,
    /// True when the call is a file edit (so `--permission-mode acceptEdits`
    /// can be suggested).
    #[serde(skip)]
    pub(crate) edit_like: bool,
    /// The tool the decision is about.
    #[serde(skip)]
    pub(crate) tool: String,
}

/// What the PreToolUse hooks said about permission, as input to
/// [`PermissionEngine::decide_after_hook`](super::PermissionEngine::decide_after_hook):
/// a behavior with the hook's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookPermission {
    /// `Allow`: the call skips the mode's and the default's "ask", but
    /// deny and ask rules and policies still apply. `Ask`: an allowed call
    /// becomes "ask". `Deny`: the call is denied (admission refuses a call
    /// a hook denied before it reaches the engine).
    pub behavior: Behavior,
    /// The hook's reason, if given.
    pub reason: Option<String>,
    /// The hook that decided, when one can be named.
    pub name: Option<String>,
}

impl PermissionDecision {
    /// A decision with no extra data.
    pub fn new(behavior: Behavior, decided_by: DecisionSource, reason: impl Into<String>) -> Self {
        PermissionDecision {
            behavior,
            updated_input: None,
            decided_by,
            reason: reason.into(),
            interrupt: false,
            duration: Duration::ZERO,
            suggestions: Vec::new(),
            alike: Vec::new(),
            edit_like: false,
            tool: String::new(),
        }
    }

    /// A decision made by a hook (`name`: the hook, when known).
    pub fn by_hook(behavior: Behavior, name: Option<String>, reason: impl Into<String>) -> Self {
        PermissionDecision::new(behavior, DecisionSource::Hook { name }, reason)
    }

    /// True when the tool may run.
    pub fn is_allowed(&self) -> bool {
        self.behavior == Behavior::Allow
    }
}

mod duration_micros {
    use std::time::Duration;

    use serde::Serializer;

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
    }
}
