//! Low-risk tools (settings `safety.autoApprove.lowRiskTools`): tools that
//! touch no file, such as `WebSearch` or `TodoWrite`, approved outright
//! instead of costing a reviewer's model call. A name may end in `*`
//! (`mcp__docs__*`). A call that names a path (one Tascer knows, or any
//! input field that reads like one) is left to the other policies.

use std::path::{Path, PathBuf};

use crate::permissions::{CallFacts, Policy, PolicyVerdict, ToolCall, wildcard_match};

/// The low-risk tools when the setting does not name them: they read
/// nothing local and change nothing. `WebFetch` and MCP tools are left out
/// on purpose (a URL can carry data out; an MCP tool can do anything its
/// server does): name them to approve them.
pub const DEFAULT_LOW_RISK_TOOLS: &[&str] = &["WebSearch", "TodoWrite", "Skill", "LSP"];

/// Approves the low-risk tools' calls that touch no path.
#[derive(Debug, Clone)]
pub struct LowRiskPolicy {
    tools: Vec<String>,
    home: Option<PathBuf>,
}

impl LowRiskPolicy {
    /// The name decisions carry (`DecisionSource::Policy { name }`).
    pub const NAME: &'static str = "low-risk";

    /// Approves `tools` (names, or patterns ending in `*`).
    pub fn new(tools: Vec<String>, home: Option<&Path>) -> Self {
        LowRiskPolicy {
            tools,
            home: home.map(Path::to_path_buf),
        }
    }

    fn covers(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| wildcard_match(t, tool))
    }
}

impl Policy for LowRiskPolicy {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn check(&self, call: &ToolCall) -> PolicyVerdict {
        let facts = CallFacts::of(call, self.home.as_deref());
        self.check_with_facts(call, &facts)
    }

    fn check_with_facts(&self, call: &ToolCall, facts: &CallFacts) -> PolicyVerdict {
        if self.covers(&call.tool_name) && facts.paths.is_empty() && !names_a_path(&call.input) {
            PolicyVerdict::Allow
        } else {
            PolicyVerdict::Abstain
        }
    }
}

/// True when `input` (an MCP tool's, whose schema Tascer does not know)
/// has a field that reads like a path (`file_path`, `path`, `dir`, …),
/// at any depth.
fn names_a_path(input: &serde_json::Value) -> bool {
    match input {
        serde_json::Value::Object(fields) => fields.iter().any(|(key, value)| {
            let key = key.to_ascii_lowercase();
            let pathy = ["path", "file", "dir", "directory", "folder", "cwd"]
                .iter()
                .any(|word| key.ends_with(word));
            (pathy && !value.is_null()) || names_a_path(value)
        }),
        serde_json::Value::Array(items) => items.iter().any(names_a_path),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(tool: &str, input: serde_json::Value) -> ToolCall {
        ToolCall {
            tool_name: tool.into(),
            input,
            tool_use_id: "t".into(),
            cwd: PathBuf::from("/work"),
            session_id: "s".into(),
        }
    }

    #[test]
    fn named_tools_that_touch_no_path_are_approved() {
        let tools = ["WebSearch", "mcp__docs__*"].map(String::from).to_vec();
        let policy = LowRiskPolicy::new(tools, None);
        let verdict =
            |tool: &str, input| matches!(policy.check(&call(tool, input)), PolicyVerdict::Allow);
        assert!(verdict("WebSearch", json!({"query": "rust landlock"})));
        assert!(verdict("mcp__docs__search", json!({"q": "x"})));
        assert!(!verdict("mcp__github__delete_repo", json!({"repo": "x"})));
        assert!(!verdict("WebFetch", json!({"url": "https://example.com"})));
        // A low-risk name that still names a file is not approved here.
        assert!(!verdict(
            "mcp__docs__read",
            json!({"file_path": "/etc/shadow"})
        ));
    }
}
