//! [`HookEvent`]: the points in a session where hooks run.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A hook event. Serialized with exactly Claude Code's names
/// (`"PreToolUse"`, `"SessionStart"`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HookEvent {
    /// Before a tool runs; hooks may allow, deny, ask or rewrite the input.
    PreToolUse,
    /// After a tool succeeded; hooks may give the model feedback.
    PostToolUse,
    /// After a tool failed; hooks may give the model feedback.
    PostToolUseFailure,
    /// Before a user prompt reaches the model; hooks may block it or add
    /// context.
    UserPromptSubmit,
    /// When the main agent is about to stop; hooks may force it to go on.
    Stop,
    /// When a subagent is about to stop; hooks may force it to go on.
    SubagentStop,
    /// Before the conversation is compacted; hooks may block compaction.
    PreCompact,
    /// After the conversation was compacted; hooks get the summary.
    PostCompact,
    /// When a session starts or resumes; hooks may add context.
    SessionStart,
    /// When a session ends.
    SessionEnd,
    /// When the runtime shows the user a notification.
    Notification,
    /// When a permission prompt would be shown; hooks may allow or deny.
    PermissionRequest,
}

impl HookEvent {
    /// Every supported event, in declaration order.
    pub const ALL: [HookEvent; 12] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::PostCompact,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::Notification,
        HookEvent::PermissionRequest,
    ];

    /// Claude Code's name of the event.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::PostCompact => "PostCompact",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Notification => "Notification",
            HookEvent::PermissionRequest => "PermissionRequest",
        }
    }

    /// False for events whose hooks ignore matchers (`UserPromptSubmit`,
    /// `Stop`), as in Claude Code.
    pub fn uses_matcher(self) -> bool {
        !matches!(self, HookEvent::UserPromptSubmit | HookEvent::Stop)
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error of [`HookEvent::from_str`]: the name is not a supported event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown hook event `{0}`")]
pub struct UnknownHookEvent(pub String);

impl FromStr for HookEvent {
    type Err = UnknownHookEvent;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HookEvent::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| UnknownHookEvent(s.to_string()))
    }
}

/// Claude Code event names Tascer does not fire (yet). Settings that
/// configure them are accepted with a warning instead of an error.
pub(crate) const UNSUPPORTED_CLAUDE_EVENTS: &[&str] = &[
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
    "Elicitation",
    "ElicitationResult",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "DirectoryAdded",
    "MessageDisplay",
];
