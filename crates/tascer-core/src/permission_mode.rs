//! [`PermissionMode`] and [`ToolClass`]: permission modes and the tool
//! classes they treat differently (plain types: the settings files name a
//! mode, and which tools `safety.autoApprove` may name depends on their
//! class).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much the agent may do without asking (Claude Code's
/// `PermissionMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum PermissionMode {
    /// Rules apply; anything left undecided is asked.
    #[default]
    Default,
    /// File edits (and filesystem Bash commands `mkdir touch rm mv cp`)
    /// inside the working directories are approved; rest as `Default`.
    AcceptEdits,
    /// Read-only planning: tools that change anything are denied.
    Plan,
    /// Everything that reaches the mode step is approved; deny rules, ask
    /// rules and policy verdicts still apply.
    BypassPermissions,
    /// Never prompt: whatever allow rules do not approve is denied and the
    /// `can_use_tool` callback is never called.
    DontAsk,
    /// The safe profile: nobody is asked. Reads and edits inside the
    /// working directories and read-only shell commands run; everything
    /// else goes to the LLM reviewers (`tool-approve`, `tool-appeal`) when
    /// they are on, and is refused when they are not.
    Auto,
}

impl PermissionMode {
    /// The wire name (`"acceptEdits"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::DontAsk => "dontAsk",
            PermissionMode::Auto => "auto",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is not one of Tascer's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown permission mode `{0}` (expected default, acceptEdits, plan, bypassPermissions, dontAsk or auto)"
)]
pub struct UnknownPermissionMode(pub String);

impl FromStr for PermissionMode {
    type Err = UnknownPermissionMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "default" => Ok(PermissionMode::Default),
            "acceptEdits" => Ok(PermissionMode::AcceptEdits),
            "plan" => Ok(PermissionMode::Plan),
            "bypassPermissions" => Ok(PermissionMode::BypassPermissions),
            "dontAsk" => Ok(PermissionMode::DontAsk),
            "auto" => Ok(PermissionMode::Auto),
            other => Err(UnknownPermissionMode(other.to_string())),
        }
    }
}

/// What kind of thing a tool does, as far as modes are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolClass {
    /// Reads local files or session state only (`Read`, `Glob`, `Grep`, …).
    ReadOnly,
    /// Edits files (`Edit`, `MultiEdit`, `Write`, `NotebookEdit`).
    Edit,
    /// Runs shell commands (`Bash`).
    Shell,
    /// Reaches the network read-only (`WebFetch`, `WebSearch`).
    Web,
    /// An MCP tool (`mcp__server__tool`).
    Mcp,
    /// Anything else (sub-agents, unknown custom tools).
    Other,
}

/// Tools whose rules are written `Read(…)`.
pub const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep", "LS", "NotebookRead"];
/// Tools whose rules are written `Edit(…)`.
pub const EDIT_TOOLS: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit"];
/// Tools that never change anything outside the session.
const READ_ONLY_OTHER: &[&str] = &[
    "TodoWrite",
    "TodoRead",
    "ExitPlanMode",
    "EnterPlanMode",
    "AskUserQuestion",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "BashOutput",
    "TaskOutput",
];

impl ToolClass {
    /// Classifies a tool by name.
    pub fn of(tool_name: &str) -> ToolClass {
        if READ_TOOLS.contains(&tool_name) || READ_ONLY_OTHER.contains(&tool_name) {
            ToolClass::ReadOnly
        } else if EDIT_TOOLS.contains(&tool_name) {
            ToolClass::Edit
        } else if tool_name == "Bash" {
            ToolClass::Shell
        } else if tool_name == "WebFetch" || tool_name == "WebSearch" {
            ToolClass::Web
        } else if tool_name.starts_with("mcp__") {
            ToolClass::Mcp
        } else {
            ToolClass::Other
        }
    }

    /// True for the classes allowed in plan mode.
    pub fn allowed_in_plan(self) -> bool {
        matches!(self, ToolClass::ReadOnly | ToolClass::Web)
    }
}
