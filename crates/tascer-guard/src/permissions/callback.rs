//! The `can_use_tool` callback and the interactive [`Asker`].

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;

use super::update::PermissionRuleValue;

/// What the callback (or a human) is asked.
#[derive(Debug, Clone, Serialize)]
pub struct CanUseToolRequest {
    /// Tool name.
    pub tool_name: String,
    /// Tool input.
    pub input: Value,
    /// The `tool_use` id.
    pub tool_use_id: String,
    /// Session id.
    pub session_id: String,
    /// Working directory.
    pub cwd: PathBuf,
    /// Rules that would allow this call next time.
    pub suggestions: Vec<PermissionRuleValue>,
    /// Why the call was not decided by rules.
    pub decision_reason: String,
    /// The path that made the call need approval, for file tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_path: Option<String>,
    /// The ask rule that matched, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_ask_rule: Option<String>,
}

/// The callback's answer. Its own type, not a [`Behavior`](tascer_core::Behavior):
/// it mirrors the SDK's `PermissionResult` (allow with a rewritten input,
/// deny with a message and an interrupt flag); the callback has no "ask".
#[derive(Debug, Clone, PartialEq)]
pub enum CanUseToolResult {
    /// Run the tool, optionally with a rewritten input.
    Allow {
        /// Replacement input.
        updated_input: Option<Value>,
        /// Permission updates ("always allow"): applied for the rest of
        /// the session and persisted where they say
        /// ([`PermissionEngine::apply_updates`](super::PermissionEngine::apply_updates)).
        updated_permissions: Vec<super::PermissionUpdate>,
    },
    /// Do not run it.
    Deny {
        /// Message for the model.
        message: String,
        /// Stop the whole turn.
        interrupt: bool,
    },
}

/// `can_use_tool`: called for every call the rules leave at "ask".
pub type CanUseTool =
    Arc<dyn Fn(CanUseToolRequest) -> BoxFuture<'static, CanUseToolResult> + Send + Sync>;

/// A human's answer to a permission prompt. Its own type, not a
/// [`Behavior`](tascer_core::Behavior): a person can allow once or allow
/// always (which adds session rules), and cannot answer "ask".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskAnswer {
    /// Allow this call only.
    AllowOnce,
    /// Allow, and add the suggested rules as session allow rules.
    AllowAlways,
    /// Do not run it.
    Deny {
        /// Message for the model (may be empty).
        message: String,
    },
}

/// Interactive prompting (implemented by the CLI).
pub trait Asker: Send + Sync {
    /// Asks whether the call may run.
    fn ask<'a>(&'a self, request: &'a CanUseToolRequest) -> BoxFuture<'a, AskAnswer>;
}
