//! The [`Policy`] trait: pluggable checks that run beside the rules.

use tascer_core::Behavior;

use super::call::ToolCall;
use super::facts::CallFacts;

/// What a policy says about a call. Its own type, not a
/// [`Behavior`](tascer_core::Behavior): a policy may also abstain, and an
/// allow needs no reason (the decision names the policy).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicyVerdict {
    /// The policy approves the call (like an allow rule).
    Allow,
    /// A human must decide (like an ask rule; beats the mode).
    Ask {
        /// Why.
        reason: String,
    },
    /// The call must not run (like a deny rule; beats everything).
    Deny {
        /// Why.
        reason: String,
    },
    /// The policy has no opinion.
    Abstain,
}

impl PolicyVerdict {
    /// Allow, ask or deny; `None` when the policy abstains.
    pub fn behavior(&self) -> Option<Behavior> {
        match self {
            PolicyVerdict::Allow => Some(Behavior::Allow),
            PolicyVerdict::Ask { .. } => Some(Behavior::Ask),
            PolicyVerdict::Deny { .. } => Some(Behavior::Deny),
            PolicyVerdict::Abstain => None,
        }
    }

    /// Strictness rank: Deny > Ask > Allow > Abstain.
    pub fn rank(&self) -> u8 {
        match self {
            PolicyVerdict::Deny { .. } => 3,
            PolicyVerdict::Ask { .. } => 2,
            PolicyVerdict::Allow => 1,
            PolicyVerdict::Abstain => 0,
        }
    }

    /// The stricter of two verdicts (the first on a tie).
    pub fn stricter(self, other: PolicyVerdict) -> PolicyVerdict {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }
}

/// A check on tool calls.
pub trait Policy: Send + Sync {
    /// Name used in decisions (`DecisionSource::Policy { name }`).
    fn name(&self) -> &str;

    /// Checks a call.
    fn check(&self, call: &ToolCall) -> PolicyVerdict;

    /// Checks a call with facts the engine already computed (parsed shell
    /// command, canonical paths). Defaults to [`check`](Self::check).
    fn check_with_facts(&self, call: &ToolCall, facts: &CallFacts) -> PolicyVerdict {
        let _ = facts;
        self.check(call)
    }

    /// False when the verdict for `call` depends on more than its input
    /// (e.g. the filesystem), so identical inputs must not be answered
    /// from the decision cache.
    fn cacheable(&self, call: &ToolCall) -> bool {
        let _ = call;
        true
    }
}
