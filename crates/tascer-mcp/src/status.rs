//! Server status as reported in `system/init.mcp_servers`.

use serde::Serialize;
use serde_json::Value;

/// Connection state of a server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum McpStatus {
    /// Handshake done; tools listed.
    Connected,
    /// Could not connect, or the connection was lost (see `error`).
    Failed,
    /// Connecting or restarting.
    #[default]
    Pending,
    /// Turned off (`mcp_toggle`): not connected, its tools fail.
    Disabled,
}

impl McpStatus {
    /// `connected`, `failed`, `pending` or `disabled` (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            McpStatus::Connected => "connected",
            McpStatus::Failed => "failed",
            McpStatus::Pending => "pending",
            McpStatus::Disabled => "disabled",
        }
    }
}

/// One `mcp_servers` entry: `{name, status, error?, server_info?, tools}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpServerStatus {
    /// Server name (the config key).
    pub name: String,
    /// Connection state.
    pub status: McpStatus,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `serverInfo` from the handshake (`{name, version, ...}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    /// Names of the server's tools (as the server spells them).
    pub tools: Vec<String>,
}
