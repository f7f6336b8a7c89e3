//! [`HookEvent`]: the points in a session where hooks run, with Claude
//! Code's names.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A hook event. Serialized, displayed and parsed with exactly Claude
/// Code's names (`"PreToolUse"`, `"SessionStart"`, …); declared, like
/// [`HookEvent::ALL`], in the order Claude Code's hooks reference lists
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub enum HookEvent {
    /// When a session starts or resumes; hooks may add context.
    SessionStart,
    /// Before a user prompt reaches the model; hooks may block it or add
    /// context.
    UserPromptSubmit,
    /// Before a tool runs; hooks may allow, deny, ask or rewrite the input.
    PreToolUse,
    /// When a permission prompt would be shown; hooks may allow or deny.
    PermissionRequest,
    /// After a tool succeeded; hooks may give the model feedback.
    PostToolUse,
    /// After a tool failed; hooks may give the model feedback.
    PostToolUseFailure,
    /// When the runtime shows the user a notification.
    Notification,
    /// When a subagent is about to stop; hooks may force it to go on.
    SubagentStop,
    /// When the main agent is about to stop; hooks may force it to go on.
    Stop,
    /// Before the conversation is compacted; hooks may block compaction.
    PreCompact,
    /// After the conversation was compacted; hooks get the summary.
    PostCompact,
    /// When a session ends.
    SessionEnd,
    /// When an MCP server asks the user for input (`elicitation/create`);
    /// hooks may answer it (accept with content, decline, cancel).
    Elicitation,
    /// After an MCP server's question was answered, before the answer is
    /// sent; hooks may override the action and content.
    ElicitationResult,
}

impl HookEvent {
    /// Every event Tascer fires, in the order Claude Code's hooks
    /// reference lists them.
    pub const ALL: [HookEvent; 14] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::Notification,
        HookEvent::SubagentStop,
        HookEvent::Stop,
        HookEvent::PreCompact,
        HookEvent::PostCompact,
        HookEvent::SessionEnd,
        HookEvent::Elicitation,
        HookEvent::ElicitationResult,
    ];

    /// Claude Code event names Tascer does not fire (yet). Settings that
    /// configure them are accepted with a warning instead of an error.
    pub const NOT_FIRED: &'static [&'static str] = &[
        "PostToolBatch",
        "UserPromptExpansion",
        "StopFailure",
        "SubagentStart",
        "PreModelSwitch",
        "PostModelSwitch",
        "PermissionDenied",
        "Setup",
        "TeammateIdle",
        "TaskCreated",
        "TaskCompleted",
        "ConfigChange",
        "WorktreeCreate",
        "WorktreeRemove",
        "InstructionsLoaded",
        "CwdChanged",
        "FileChanged",
        "DirectoryAdded",
        "MessageDisplay",
    ];

    /// Claude Code's name of the event.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::Notification => "Notification",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PostCompact => "PostCompact",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Elicitation => "Elicitation",
            HookEvent::ElicitationResult => "ElicitationResult",
        }
    }

    /// False for events whose hooks ignore matchers (`UserPromptSubmit`,
    /// `Stop`), as in Claude Code.
    pub fn uses_matcher(self) -> bool {
        !matches!(self, HookEvent::UserPromptSubmit | HookEvent::Stop)
    }

    /// True for the events whose matcher is tested against a tool name
    /// (`PreToolUse`, `PermissionRequest`, `PostToolUse`,
    /// `PostToolUseFailure`); other events match another field of their
    /// input (`source`, `trigger`, `notification_type`, …) or nothing.
    pub fn takes_tool_matcher(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PermissionRequest
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
        )
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error of [`HookEvent::from_str`]: the name is not an event Tascer fires.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown hook event `{0}`")]
pub struct UnknownHookEvent(pub String);

impl FromStr for HookEvent {
    type Err = UnknownHookEvent;

    /// Parses Claude Code's name of an event (case-sensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HookEvent::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| UnknownHookEvent(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::HookEvent;

    #[test]
    fn every_event_round_trips_through_its_name() {
        for e in HookEvent::ALL {
            assert_eq!(e.as_str().parse::<HookEvent>().ok(), Some(e));
            assert_eq!(e.to_string(), e.as_str());
            let json = serde_json::to_value(e).ok();
            assert_eq!(json, Some(serde_json::Value::from(e.as_str())));
            assert!(!HookEvent::NOT_FIRED.contains(&e.as_str()));
        }
        let mut sorted = HookEvent::ALL;
        sorted.sort();
        assert_eq!(sorted, HookEvent::ALL, "declared in the order of ALL");
        assert!("SubagentStart".parse::<HookEvent>().is_err());
    }
}
