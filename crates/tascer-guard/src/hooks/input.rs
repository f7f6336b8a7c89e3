//! Hook inputs: the JSON object a hook receives, exactly as Claude Code
//! sends it (common fields plus per-event fields, `hook_event_name` tag).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tascer_core::HookEvent;

/// Fields every hook input carries (besides `hook_event_name`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HookCommon {
    /// Session id.
    pub session_id: String,
    /// Path of the session transcript (JSONL).
    pub transcript_path: String,
    /// The session's working directory.
    pub cwd: String,
    /// Current permission mode (`default`, `acceptEdits`, `plan`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
}

/// Input of `PreToolUse`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PreToolUseInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// Tool name (`Bash`, `Edit`, `mcp__srv__tool`, …).
    pub tool_name: String,
    /// The tool's input as the model sent it.
    pub tool_input: Value,
    /// The `tool_use` id.
    pub tool_use_id: String,
    /// Subagent id when the call happens inside a subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Subagent type when the call happens inside a subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
}

/// Input of `PostToolUse`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PostToolUseInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// Tool name.
    pub tool_name: String,
    /// The tool's input.
    pub tool_input: Value,
    /// The tool's structured result.
    pub tool_response: Value,
    /// The `tool_use` id.
    pub tool_use_id: String,
    /// How long the tool ran, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Subagent id when the call happened inside a subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Subagent type when the call happened inside a subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
}

/// Input of `PostToolUseFailure`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PostToolUseFailureInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// Tool name.
    pub tool_name: String,
    /// The tool's input.
    pub tool_input: Value,
    /// The `tool_use` id.
    pub tool_use_id: String,
    /// The error message.
    pub error: String,
    /// True when the tool was interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_interrupt: Option<bool>,
    /// How long the tool ran, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Subagent id when the call happened inside a subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Subagent type when the call happened inside a subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
}

/// Input of `UserPromptSubmit`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UserPromptSubmitInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// The prompt text.
    pub prompt: String,
    /// Where the prompt came from (`user`, `sdk`, `system`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// Input of `Stop`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StopInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// True when the agent is already continuing because a Stop hook
    /// blocked an earlier stop (hooks use it to avoid endless loops).
    pub stop_hook_active: bool,
    /// Text of the last assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
}

/// Input of `SubagentStop`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubagentStopInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// True when a Stop hook already forced the subagent to go on.
    pub stop_hook_active: bool,
    /// The subagent's id.
    pub agent_id: String,
    /// Path of the subagent's transcript.
    pub agent_transcript_path: String,
    /// The subagent's type (matched by matchers).
    pub agent_type: String,
    /// Text of the subagent's last assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
}

/// What started a compaction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactTrigger {
    /// `/compact` by the user.
    #[default]
    Manual,
    /// The context window was full.
    Auto,
}

/// Input of `PreCompact`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PreCompactInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// What started the compaction (matched by matchers).
    pub trigger: CompactTrigger,
    /// Instructions given with `/compact`; `null` when none.
    #[serde(default)]
    pub custom_instructions: Option<String>,
}

/// Why a session started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionStartSource {
    /// A fresh session.
    #[default]
    Startup,
    /// A resumed session.
    Resume,
    /// After `/clear`.
    Clear,
    /// After a compaction.
    Compact,
    /// A forked session.
    Fork,
}

/// Input of `SessionStart`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionStartInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// Why the session started (matched by matchers).
    pub source: SessionStartSource,
    /// The model in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Input of `PostCompact`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PostCompactInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// What started the compaction (matched by matchers).
    pub trigger: CompactTrigger,
    /// The summary that replaced the conversation.
    pub compact_summary: String,
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionEndReason {
    /// `/clear`.
    Clear,
    /// Switched to another session.
    Resume,
    /// The user logged out.
    Logout,
    /// The user left the prompt.
    PromptInputExit,
    /// Any other reason (end of input, error, …).
    #[default]
    Other,
    /// Bypass mode was disabled by settings.
    BypassPermissionsDisabled,
}

/// Input of `SessionEnd`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionEndInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// Why the session ended (matched by matchers).
    pub reason: SessionEndReason,
}

/// Input of `Notification`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// The notification text.
    pub message: String,
    /// Optional title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Kind of notification (`permission_prompt`, `idle_prompt`,
    /// `auth_success`, `elicitation_dialog`); matched by matchers.
    pub notification_type: String,
}

/// Input of `Elicitation`: an MCP server asks the user for input.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElicitationInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// The server that asks (matched by matchers).
    pub mcp_server_name: String,
    /// What it asks.
    pub message: String,
    /// `form` or `url`.
    pub mode: String,
    /// `form`: the JSON Schema of the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
    /// `url`: the page where the user answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `url`: the server's id of the question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
}

/// Input of `ElicitationResult`: an MCP server's question was answered;
/// the answer is not sent yet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElicitationResultInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// The server that asked (matched by matchers).
    pub mcp_server_name: String,
    /// `url` mode: the server's id of the question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// `form` or `url`.
    pub mode: String,
    /// The answer: `accept`, `decline` or `cancel`.
    pub action: String,
    /// The fields of an `accept`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

/// Input of `PermissionRequest`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequestInput {
    /// Common fields.
    #[serde(flatten)]
    pub common: HookCommon,
    /// Tool name.
    pub tool_name: String,
    /// The tool's input.
    pub tool_input: Value,
    /// Permission updates the user could pick (wire `PermissionUpdate`s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_suggestions: Option<Vec<Value>>,
}

/// Any hook input; serializes to the exact JSON a Claude Code hook reads
/// on stdin, with `hook_event_name` naming the event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "hook_event_name")]
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
pub enum HookInput {
    /// `PreToolUse`.
    PreToolUse(PreToolUseInput),
    /// `PostToolUse`.
    PostToolUse(PostToolUseInput),
    /// `PostToolUseFailure`.
    PostToolUseFailure(PostToolUseFailureInput),
    /// `UserPromptSubmit`.
    UserPromptSubmit(UserPromptSubmitInput),
    /// `Stop`.
    Stop(StopInput),
    /// `SubagentStop`.
    SubagentStop(SubagentStopInput),
    /// `PreCompact`.
    PreCompact(PreCompactInput),
    /// `PostCompact`.
    PostCompact(PostCompactInput),
    /// `SessionStart`.
    SessionStart(SessionStartInput),
    /// `SessionEnd`.
    SessionEnd(SessionEndInput),
    /// `Notification`.
    Notification(NotificationInput),
    /// `PermissionRequest`.
    PermissionRequest(PermissionRequestInput),
    /// `Elicitation`.
    Elicitation(ElicitationInput),
    /// `ElicitationResult`.
    ElicitationResult(ElicitationResultInput),
}

impl HookInput {
    /// The event this input belongs to.
    pub fn event(&self) -> HookEvent {
        match self {
            HookInput::PreToolUse(_) => HookEvent::PreToolUse,
            HookInput::PostToolUse(_) => HookEvent::PostToolUse,
            HookInput::PostToolUseFailure(_) => HookEvent::PostToolUseFailure,
            HookInput::UserPromptSubmit(_) => HookEvent::UserPromptSubmit,
            HookInput::Stop(_) => HookEvent::Stop,
            HookInput::SubagentStop(_) => HookEvent::SubagentStop,
            HookInput::PreCompact(_) => HookEvent::PreCompact,
            HookInput::PostCompact(_) => HookEvent::PostCompact,
            HookInput::SessionStart(_) => HookEvent::SessionStart,
            HookInput::SessionEnd(_) => HookEvent::SessionEnd,
            HookInput::Notification(_) => HookEvent::Notification,
            HookInput::PermissionRequest(_) => HookEvent::PermissionRequest,
            HookInput::Elicitation(_) => HookEvent::Elicitation,
            HookInput::ElicitationResult(_) => HookEvent::ElicitationResult,
        }
    }

    /// The common fields.
    pub fn common(&self) -> &HookCommon {
        match self {
            HookInput::PreToolUse(i) => &i.common,
            HookInput::PostToolUse(i) => &i.common,
            HookInput::PostToolUseFailure(i) => &i.common,
            HookInput::UserPromptSubmit(i) => &i.common,
            HookInput::Stop(i) => &i.common,
            HookInput::SubagentStop(i) => &i.common,
            HookInput::PreCompact(i) => &i.common,
            HookInput::PostCompact(i) => &i.common,
            HookInput::SessionStart(i) => &i.common,
            HookInput::SessionEnd(i) => &i.common,
            HookInput::Notification(i) => &i.common,
            HookInput::PermissionRequest(i) => &i.common,
            HookInput::Elicitation(i) => &i.common,
            HookInput::ElicitationResult(i) => &i.common,
        }
    }

    /// The string matchers are tested against: the tool name for tool
    /// events and `PermissionRequest`, `source` for `SessionStart`,
    /// `reason` for `SessionEnd`, `notification_type` for `Notification`,
    /// `agent_type` for `SubagentStop`, `trigger` for `PreCompact` and
    /// `PostCompact`. `None`
    /// for events that ignore matchers (`UserPromptSubmit`, `Stop`).
    pub fn matcher_subject(&self) -> Option<String> {
        fn name<T: Serialize>(v: &T) -> String {
            match serde_json::to_value(v) {
                Ok(Value::String(s)) => s,
                _ => String::new(),
            }
        }
        match self {
            HookInput::PreToolUse(i) => Some(i.tool_name.clone()),
            HookInput::PostToolUse(i) => Some(i.tool_name.clone()),
            HookInput::PostToolUseFailure(i) => Some(i.tool_name.clone()),
            HookInput::PermissionRequest(i) => Some(i.tool_name.clone()),
            HookInput::SubagentStop(i) => Some(i.agent_type.clone()),
            HookInput::PreCompact(i) => Some(name(&i.trigger)),
            HookInput::PostCompact(i) => Some(name(&i.trigger)),
            HookInput::SessionStart(i) => Some(name(&i.source)),
            HookInput::SessionEnd(i) => Some(name(&i.reason)),
            HookInput::Notification(i) => Some(i.notification_type.clone()),
            HookInput::Elicitation(i) => Some(i.mcp_server_name.clone()),
            HookInput::ElicitationResult(i) => Some(i.mcp_server_name.clone()),
            HookInput::UserPromptSubmit(_) | HookInput::Stop(_) => None,
        }
    }

    /// The input as a JSON value (what command hooks get on stdin).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

macro_rules! into_input {
    ($($ty:ident => $variant:ident),* $(,)?) => {
        $(impl From<$ty> for HookInput {
            fn from(i: $ty) -> Self {
                HookInput::$variant(i)
            }
        })*
    };
}

into_input! {
    PreToolUseInput => PreToolUse,
    PostToolUseInput => PostToolUse,
    PostToolUseFailureInput => PostToolUseFailure,
    UserPromptSubmitInput => UserPromptSubmit,
    StopInput => Stop,
    SubagentStopInput => SubagentStop,
    PreCompactInput => PreCompact,
    PostCompactInput => PostCompact,
    SessionStartInput => SessionStart,
    SessionEndInput => SessionEnd,
    NotificationInput => Notification,
    PermissionRequestInput => PermissionRequest,
    ElicitationInput => Elicitation,
    ElicitationResultInput => ElicitationResult,
}
