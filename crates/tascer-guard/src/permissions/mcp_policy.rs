//! [`McpPolicy`]: allow or deny MCP servers and tools.

use tascer_core::Behavior;

use super::call::ToolCall;
use super::policy::{Policy, PolicyVerdict};

/// A server or server/tool entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    server: String,
    tool: Option<String>,
}

impl Entry {
    /// Accepts `server`, `server__tool`, `mcp__server`, `mcp__server__*`
    /// and `mcp__server__tool`.
    fn parse(name: &str) -> Entry {
        let name = name.strip_prefix("mcp__").unwrap_or(name);
        match name.split_once("__") {
            Some((server, "*" | "")) => Entry {
                server: server.to_string(),
                tool: None,
            },
            Some((server, tool)) => Entry {
                server: server.to_string(),
                tool: Some(tool.to_string()),
            },
            None => Entry {
                server: name.to_string(),
                tool: None,
            },
        }
    }

    fn matches(&self, server: &str, tool: &str) -> bool {
        self.server == server && self.tool.as_deref().is_none_or(|t| t == tool)
    }
}

/// Allow and deny lists for MCP tools (`mcp__<server>__<tool>`). Deny wins;
/// calls of servers on neither list get [`default`](Self::default_behavior)
/// (no opinion unless set). Non-MCP tools are ignored.
#[derive(Debug, Clone, Default)]
pub struct McpPolicy {
    allow: Vec<Entry>,
    deny: Vec<Entry>,
    default: Option<Behavior>,
}

impl McpPolicy {
    /// No entries.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allows a server (`github`) or one tool (`github__search`).
    pub fn allow(mut self, name: &str) -> Self {
        self.allow.push(Entry::parse(name));
        self
    }

    /// Denies a server or one tool.
    pub fn deny(mut self, name: &str) -> Self {
        self.deny.push(Entry::parse(name));
        self
    }

    /// What unlisted MCP tools get.
    pub fn default_behavior(mut self, behavior: Behavior) -> Self {
        self.default = Some(behavior);
        self
    }
}

/// Splits `mcp__server__tool` into server and tool.
pub fn split_mcp_name(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix("mcp__")?.split_once("__")
}

impl Policy for McpPolicy {
    fn name(&self) -> &str {
        "mcp"
    }

    fn check(&self, call: &ToolCall) -> PolicyVerdict {
        let Some((server, tool)) = split_mcp_name(&call.tool_name) else {
            return PolicyVerdict::Abstain;
        };
        if self.deny.iter().any(|e| e.matches(server, tool)) {
            return PolicyVerdict::Deny {
                reason: format!("MCP tool `{tool}` of server `{server}` is denied by policy"),
            };
        }
        if self.allow.iter().any(|e| e.matches(server, tool)) {
            return PolicyVerdict::Allow;
        }
        match self.default {
            Some(Behavior::Deny) => PolicyVerdict::Deny {
                reason: format!("MCP server `{server}` is not on the allow list"),
            },
            Some(Behavior::Ask) => PolicyVerdict::Ask {
                reason: format!("MCP server `{server}` is not on the allow list"),
            },
            Some(Behavior::Allow) => PolicyVerdict::Allow,
            None => PolicyVerdict::Abstain,
        }
    }
}
