//! "What would this policy have done?": recorded tool calls re-judged
//! under other settings (`tascer policy check`, docs/policy-check.md).
//!
//! A [`Judge`] builds the permission engine a session would build from
//! the options and settings ([`crate::setup`], the one place that does
//! it), once per project directory, and asks it for the static part of a
//! decision only — rules, policies, the mode and the sandbox's way out
//! ([`PermissionEngine::evaluate_in_mode`]). Nothing runs: no tool, hook,
//! callback, person or reviewer ([`SKIPPED_DECIDERS`]).
//! [`RecordedCall::change`] compares that answer with what the ledger
//! recorded.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use tascer_core::Behavior;
use tascer_guard::permissions::{
    PermissionDecision, PermissionEngine, PermissionMode, ToolCall, is_unanswered_ask,
};
use tascer_ledger::ToolRecord;

use crate::error::Error;
use crate::options::Options;

/// The deciders a re-judgement leaves out: what they answered then is on
/// record, what they would answer now is not known without running them.
pub const SKIPPED_DECIDERS: &[&str] = &[
    "hooks (PreToolUse, PermissionRequest)",
    "the can_use_tool callback and SDK hosts",
    "people asked",
    "LLM reviewers",
    "workaround detection",
    "validation gates",
];

/// Re-judges calls with the permission engine that `options` (their
/// settings, setting sources and additional directories) give a session.
pub struct Judge {
    options: Options,
    home: PathBuf,
    engines: HashMap<PathBuf, PermissionEngine>,
}

impl Judge {
    /// A judge for `options`, reading user settings from `home` (the
    /// Tascer home). Engines are built on first use.
    pub fn new(options: Options, home: PathBuf) -> Self {
        Judge {
            options,
            home,
            engines: HashMap::new(),
        }
    }

    /// The engine of a session in `project`: the settings read there (and
    /// the options'), the default policies, the sandbox's way out when the
    /// settings enable the sandbox. An error names what is wrong with the
    /// settings.
    pub fn engine(&mut self, project: &Path) -> Result<&PermissionEngine, Error> {
        if !self.engines.contains_key(project) {
            let settings =
                crate::setup::load_settings_in(&self.options, project, None, &self.home)?;
            let engine = crate::setup::dry_run_engine(&self.options, &settings, project)?;
            self.engines.insert(project.to_path_buf(), engine);
        }
        self.engines
            .get(project)
            .ok_or_else(|| Error::InvalidOptions("no permission engine was built".into()))
    }

    /// What the rules, policies, `mode` and sandbox of a session in
    /// `project` decide for `call` (see
    /// [`PermissionEngine::evaluate_in_mode`]).
    pub fn judge(
        &mut self,
        project: &Path,
        call: &ToolCall,
        mode: PermissionMode,
    ) -> Result<PermissionDecision, Error> {
        Ok(self.engine(project)?.evaluate_in_mode(call, mode))
    }
}

/// How a call's outcome changes from the recorded one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// The same outcome (or an ask the skipped deciders answered then and
    /// would be asked again).
    Unchanged,
    /// Refused now, allowed or asked then.
    NewlyRefused,
    /// Asked now, settled by the rules, policies or mode then.
    NewlyAsked,
    /// Allowed now, refused or asked then.
    NewlyAllowed,
}

/// One recorded tool call, as the ledger's tool record has it.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedCall {
    /// The session.
    pub session_id: String,
    /// The model's `tool_use` id.
    pub tool_use_id: String,
    /// The tool.
    pub tool: String,
    /// The input as recorded.
    pub input: Value,
    /// The call's working directory (its context's `cwd`).
    pub cwd: PathBuf,
    /// When it started.
    pub started_at: String,
    /// The recorded decision: allow, ask or deny (`None`: none recorded).
    pub behavior: Option<Behavior>,
    /// Who decided (`decided_by` as recorded).
    pub decided_by: Value,
    /// Why, as recorded.
    pub reason: String,
    /// The permission mode recorded with the decision.
    pub mode: Option<PermissionMode>,
}

impl RecordedCall {
    /// The call of `record` in `session_id`; `session_cwd` stands in for a
    /// record without a context `cwd`.
    pub fn from_record(session_id: &str, record: &ToolRecord, session_cwd: &Path) -> Self {
        let permission = &record.permission;
        let text = |key: &str| permission.get(key).and_then(Value::as_str);
        let behavior = text("behavior")
            .or_else(|| text("decision"))
            .and_then(parse_behavior);
        let cwd = record
            .context
            .get("cwd")
            .and_then(Value::as_str)
            .map_or_else(|| session_cwd.to_path_buf(), PathBuf::from);
        RecordedCall {
            session_id: session_id.to_string(),
            tool_use_id: record.tool_use_id.clone(),
            tool: record.tool.clone(),
            input: record.input.clone(),
            cwd,
            started_at: record.started_at.clone(),
            behavior,
            decided_by: permission.get("decided_by").cloned().unwrap_or(Value::Null),
            reason: text("reason").unwrap_or_default().to_string(),
            mode: text("mode").and_then(|m| m.parse().ok()),
        }
    }

    /// The call as the engine takes it.
    pub fn tool_call(&self) -> ToolCall {
        ToolCall {
            tool_name: self.tool.clone(),
            input: self.input.clone(),
            tool_use_id: self.tool_use_id.clone(),
            cwd: self.cwd.clone(),
            session_id: self.session_id.clone(),
        }
    }

    /// The kind of decider recorded (`rule`, `mode`, `hook`, `user`, …).
    pub fn decider_kind(&self) -> &str {
        self.decided_by
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// True when the rules, policies and mode had left the call at ask
    /// and someone else answered (a hook, callback, person or reviewer),
    /// or no one could.
    pub fn was_asked(&self) -> bool {
        self.behavior == Some(Behavior::Ask)
            || matches!(
                self.decider_kind(),
                "callback" | "user" | "reviewer" | "workaround"
            )
            || (self.decider_kind() == "hook" && self.behavior != Some(Behavior::Deny))
            || is_unanswered_ask(&self.reason)
    }

    /// True when a hook refused the call: hooks run before the engine and
    /// are not run again, so no settings change shows them allowing it.
    fn refused_by_hook(&self) -> bool {
        self.decider_kind() == "hook" && self.behavior == Some(Behavior::Deny)
    }

    /// How `after` (the engine's answer now) changes the recorded outcome.
    /// An ask now is no change when the call was asked then too; a call a
    /// hook refused stays refused.
    pub fn change(&self, after: Behavior) -> Change {
        let Some(before) = self.behavior else {
            return Change::Unchanged;
        };
        if self.refused_by_hook() || after == before {
            return Change::Unchanged;
        }
        match after {
            Behavior::Ask if self.was_asked() => Change::Unchanged,
            Behavior::Ask => Change::NewlyAsked,
            Behavior::Allow => Change::NewlyAllowed,
            Behavior::Deny => Change::NewlyRefused,
        }
    }
}

/// `allow`, `ask` or `deny` as recorded.
fn parse_behavior(text: &str) -> Option<Behavior> {
    match text {
        "allow" => Some(Behavior::Allow),
        "ask" => Some(Behavior::Ask),
        "deny" => Some(Behavior::Deny),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn recorded(behavior: &str, decided_by: Value, reason: &str) -> RecordedCall {
        RecordedCall {
            session_id: "s".into(),
            tool_use_id: "t".into(),
            tool: "Bash".into(),
            input: json!({"command": "ls"}),
            cwd: PathBuf::from("/w"),
            started_at: String::new(),
            behavior: parse_behavior(behavior),
            decided_by,
            reason: reason.into(),
            mode: Some(PermissionMode::Default),
        }
    }

    #[test]
    fn a_rule_that_allowed_then_and_denies_now_is_a_new_refusal() {
        let call = recorded("allow", json!({"type": "rule", "rule": "Bash"}), "");
        assert_eq!(call.change(Behavior::Deny), Change::NewlyRefused);
        assert_eq!(call.change(Behavior::Allow), Change::Unchanged);
        assert_eq!(call.change(Behavior::Ask), Change::NewlyAsked);
    }

    #[test]
    fn an_ask_no_one_answered_is_asked_again_not_changed() {
        let reason =
            "Permission to use Bash was not granted (needs approval and no one can be asked: x).";
        let call = recorded("deny", json!({"type": "default"}), reason);
        assert_eq!(call.change(Behavior::Ask), Change::Unchanged);
        assert_eq!(call.change(Behavior::Allow), Change::NewlyAllowed);
        let user = recorded("allow", json!({"type": "user"}), "allowed once by the user");
        assert_eq!(user.change(Behavior::Ask), Change::Unchanged);
        assert_eq!(user.change(Behavior::Deny), Change::NewlyRefused);
    }

    #[test]
    fn a_hook_refusal_stays_a_refusal() {
        let call = recorded("deny", json!({"type": "hook"}), "no");
        assert_eq!(call.change(Behavior::Allow), Change::Unchanged);
        assert_eq!(call.change(Behavior::Ask), Change::Unchanged);
    }

    #[test]
    fn a_call_without_a_recorded_decision_is_not_judged_changed() {
        let call = recorded("", Value::Null, "");
        assert_eq!(call.change(Behavior::Deny), Change::Unchanged);
    }
}
