//! Per-event outcome types and how the effects of several hooks are
//! aggregated into one outcome.
//!
//! Rules (hooks are folded in run order, i.e. ascending priority):
//! - a deny beats an ask beats an allow; the reason is the first one given
//!   for the winning decision;
//! - any block blocks; block reasons are joined with newlines in order;
//! - additional contexts and system messages are kept in order;
//! - the last `updatedInput` / `updatedToolOutput` wins;
//! - the first `continue: false` sets [`HookCommonOutcome::stop`], which
//!   wins over every decision;
//! - non-blocking failures are listed in [`HookCommonOutcome::errors`].

mod lifecycle;
mod tool;

pub use lifecycle::{
    ElicitationOutcome, ElicitationResultOutcome, NotificationOutcome, PostCompactOutcome,
    PreCompactOutcome, SessionEndOutcome, SessionStartOutcome, StopOutcome, SubagentStopOutcome,
    UserPromptSubmitOutcome,
};
pub use tool::{
    PermissionRequestOutcome, PostToolUseFailureOutcome, PostToolUseOutcome, PreToolDecision,
    PreToolUseOutcome,
};

use tascer_core::HookEvent;

use super::effect::HookEffect;
use super::output::HookOutput;

/// Default text when a hook stops the run without a `stopReason`.
pub(crate) const DEFAULT_STOP: &str = "Stopped by hook";
/// Default text when a hook blocks without a reason.
pub(crate) const DEFAULT_BLOCK: &str = "Blocked by hook";

/// What every outcome carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookCommonOutcome {
    /// Set when a hook answered `continue: false` (or a fail-closed hook
    /// failed on an event that cannot otherwise block): stop the whole
    /// run. Holds `stopReason`, for the user. Wins over every decision.
    pub stop: Option<String>,
    /// `systemMessage`s, for the user, in order.
    pub system_messages: Vec<String>,
    /// True when some hook asked to hide its output (`suppressOutput`).
    pub suppress_output: bool,
    /// Non-blocking hook errors and user-only stderr, in order (Claude
    /// Code shows these as `<Event> hook error`).
    pub errors: Vec<String>,
}

impl HookCommonOutcome {
    fn apply_output(&mut self, out: &HookOutput) {
        if out.stops() && self.stop.is_none() {
            self.stop = Some(
                out.stop_reason
                    .clone()
                    .unwrap_or_else(|| DEFAULT_STOP.to_string()),
            );
        }
        if let Some(m) = &out.system_message {
            self.system_messages.push(m.clone());
        }
        if out.suppress_output == Some(true) {
            self.suppress_output = true;
        }
    }
}

/// An outcome of one event, folded from the effects of its hooks.
pub trait EventOutcome: Default {
    /// The event.
    const EVENT: HookEvent;

    /// The common part.
    fn common_mut(&mut self) -> &mut HookCommonOutcome;

    /// Applies the event-specific part of one effect. The common part of
    /// JSON output and non-blocking failures are handled by
    /// [`EventOutcome::aggregate`].
    fn apply(&mut self, effect: &HookEffect);

    /// Folds effects, in run order, into an outcome.
    fn aggregate<'a>(effects: impl IntoIterator<Item = &'a HookEffect>) -> Self {
        let mut outcome = Self::default();
        for effect in effects {
            match effect {
                HookEffect::Output(out) => outcome.common_mut().apply_output(out),
                HookEffect::Failed(msg) => outcome.common_mut().errors.push(msg.clone()),
                _ => {}
            }
            outcome.apply(effect);
        }
        outcome
    }
}

/// The `hookSpecificOutput` meant for event `E`, if any.
fn specific<E: EventOutcome>(out: &HookOutput) -> Option<&super::output::HookSpecificOutput> {
    out.specific_for(E::EVENT)
}

/// Appends `reason` to an optional newline-joined block reason.
fn push_reason(slot: &mut Option<String>, reason: &str) {
    let reason = if reason.trim().is_empty() {
        DEFAULT_BLOCK
    } else {
        reason.trim()
    };
    match slot {
        Some(s) => {
            s.push('\n');
            s.push_str(reason);
        }
        None => *slot = Some(reason.to_string()),
    }
}

/// Joins additional contexts with blank lines; `None` when empty.
pub fn join_context(contexts: &[String]) -> Option<String> {
    if contexts.is_empty() {
        None
    } else {
        Some(contexts.join("\n\n"))
    }
}
