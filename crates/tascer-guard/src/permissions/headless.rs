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
        if d.edit_like && !ask_rule && self.mode() == PermissionMode::Default {
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
        let short = short_reason(&d.reason);
        d.reason = if d.tool == "AskUserQuestion" && !ask_rule {
            NO_ONE_TO_ANSWER.to_string()
        } else {
            format!(
                "Permission to use {} was not granted (needs approval and no one can be asked: {}). To allow it: {how}.",
                d.tool, d.reason
            )
        };
        d.behavior = Behavior::Deny;
        d.updated_input = None;
        let what = format!("{} ({short})", d.tool);
        self.tracker.lock().record(&d.alike, &what);
        d
    }
}
