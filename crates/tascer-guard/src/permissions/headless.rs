//! Deciding an "ask" when no one can be asked (headless, no
//! `can_use_tool` callback): a denial that says what would allow the call.

use tascer_core::Behavior;

use super::decision::{DecisionSource, PermissionDecision};
use super::engine::{PermissionEngine, short_reason};
use super::mode::PermissionMode;

/// What the model is told when it asks a question no one can answer.
pub const NO_ONE_TO_ANSWER: &str = "Permission to use AskUserQuestion was not granted: no one \
     can answer questions in this session (it runs without a user, and its host has no can_use_tool callback to answer \
     them). Continue without asking: make the most reasonable choice and say which one you made.";

impl PermissionEngine {
    /// Turns an ask into a deny whose message says what would allow the
    /// call (`add "Bash(npm test:*)" to permissions.allow, or run with
    /// --permission-mode acceptEdits`). Other decisions pass unchanged.
    pub fn resolve_non_interactive(&self, decision: PermissionDecision) -> PermissionDecision {
        if decision.behavior != Behavior::Ask {
            return decision;
        }
        let short = short_reason(&decision.reason);
        let d = self.unanswered(decision, self.mode());
        let what = format!("{} ({short})", d.tool);
        self.tracker.lock().record(&d.alike, &what);
        d
    }

    /// The denial of an ask no one can answer, in `mode`, with nothing
    /// remembered (see [`resolve_non_interactive`](Self::resolve_non_interactive)).
    pub(super) fn unanswered(
        &self,
        decision: PermissionDecision,
        mode: PermissionMode,
    ) -> PermissionDecision {
        let mut d = decision;
        let mut hints = Vec::new();
        if !d.suggestions.is_empty() {
            let rules = d
                .suggestions
                .iter()
                .map(|s| format!("\"{s}\""))
                .collect::<Vec<_>>()
                .join(", ");
            hints.push(format!("add {rules} to permissions.allow"));
        }
        let ask_rule = matches!(
            d.decided_by,
            DecisionSource::Rule { .. } | DecisionSource::Policy { .. }
        );
        if d.edit_like && !ask_rule && mode == PermissionMode::Default {
            hints.push("run with --permission-mode acceptEdits".into());
        }
        let how = if hints.is_empty() {
            match &d.decided_by {
                DecisionSource::Rule { rule, .. } => format!("remove the ask rule \"{rule}\""),
                _ => "approve it interactively or with a can_use_tool callback".into(),
            }
        } else {
            hints.join(", or ")
        };
        d.reason = if d.tool == "AskUserQuestion" && !ask_rule {
            NO_ONE_TO_ANSWER.to_string()
        } else {
            format!(
                "Permission to use {} was not granted (needs approval and {UNANSWERED}: {}). To allow it: {how}.",
                d.tool, d.reason
            )
        };
        d.behavior = Behavior::Deny;
        d.updated_input = None;
        d
    }
}

/// What every denial of an unanswered ask says (headless, `dontAsk` and
/// `auto` mode alike).
const UNANSWERED: &str = "no one can be asked";

/// True when a recorded decision's reason is that of an ask no one could
/// answer ([`PermissionEngine::resolve_non_interactive`]): the rules,
/// policies and mode had left the call at ask.
pub fn is_unanswered_ask(reason: &str) -> bool {
    reason.contains(UNANSWERED) || reason.contains(NO_ONE_TO_ANSWER)
}
