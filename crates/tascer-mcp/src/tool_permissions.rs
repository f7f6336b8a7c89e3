//! Per-tool permissions in a server's configuration:
//! `"permissions": {"allow": [...], "ask": [...], "deny": [...]}` next to
//! `command` or `url`. Each entry is one of the server's tool names (as the
//! server lists it) or `*` for all of them. They become permission rules
//! (`mcp__<server>__<tool>`, `mcp__<server>`) that the guard's admission
//! weighs like any other rule, and a denied tool is also kept out of the
//! model's tool list.

use serde::{Deserialize, Serialize};
use tascer_core::Behavior;

use crate::names::{mcp_tool_name, sanitize_name};

/// The `permissions` object of one server entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpToolPermissions {
    /// Tools that run without asking (unless a deny rule, a policy or the
    /// mode says otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Tools that are always asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ask: Vec<String>,
    /// Tools that never run and are not offered to the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

impl McpToolPermissions {
    /// True when no list has an entry.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    /// The lists with their behaviour, deny first.
    fn lists(&self) -> [(Behavior, &'static str, &[String]); 3] {
        [
            (Behavior::Deny, "deny", &self.deny),
            (Behavior::Ask, "ask", &self.ask),
            (Behavior::Allow, "allow", &self.allow),
        ]
    }

    /// Checks every entry: a tool name or `*`, not empty, not a rule
    /// (`mcp__…`, `Tool(…)`). The error names the list and the entry.
    pub fn validate(&self) -> Result<(), String> {
        for (_, list, entries) in self.lists() {
            for entry in entries {
                let trimmed = entry.trim();
                if trimmed.is_empty() {
                    return Err(format!("permissions.{list}: an entry is empty"));
                }
                if trimmed.starts_with("mcp__") || trimmed.contains('(') {
                    return Err(format!(
                        "permissions.{list}: {entry:?} is not a tool name: name the server's \
                         tool as the server lists it (or \"*\" for all its tools); rules \
                         like mcp__server__tool belong in the settings' permissions"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The permission rules of server `server`: `(behaviour, rule)`, with
    /// `mcp__<server>__<tool>` per named tool and `mcp__<server>` for `*`.
    pub fn rules(&self, server: &str) -> Vec<(Behavior, String)> {
        self.lists()
            .into_iter()
            .flat_map(|(behavior, _, entries)| {
                entries
                    .iter()
                    .map(move |entry| (behavior, rule_for(server, entry.trim())))
            })
            .collect()
    }

    /// True when the tool the model knows as `model_name` is denied here
    /// (by name or by `*`).
    pub(crate) fn denies(&self, server: &str, model_name: &str) -> bool {
        self.deny.iter().any(|entry| match entry.trim() {
            "*" => model_name
                .strip_prefix(&format!("mcp__{}__", sanitize_name(server)))
                .is_some(),
            tool => mcp_tool_name(server, tool) == model_name,
        })
    }

    /// The entries (other than `*`) that name none of `offered`, with
    /// their list: a typo that would silently protect nothing.
    pub fn unknown_tools<'a>(&'a self, offered: &[String]) -> Vec<(&'static str, &'a str)> {
        self.lists()
            .into_iter()
            .flat_map(|(_, list, entries)| entries.iter().map(move |e| (list, e.trim())))
            .filter(|(_, entry)| *entry != "*" && !offered.iter().any(|t| t == entry))
            .collect()
    }
}

/// The rule for `entry` (a tool name or `*`) of `server`.
fn rule_for(server: &str, entry: &str) -> String {
    match entry {
        "*" => format!("mcp__{}", sanitize_name(server)),
        tool => mcp_tool_name(server, tool),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn permissions(allow: &[&str], ask: &[&str], deny: &[&str]) -> McpToolPermissions {
        let owned = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        McpToolPermissions {
            allow: owned(allow),
            ask: owned(ask),
            deny: owned(deny),
        }
    }

    #[test]
    fn entries_become_rules_of_the_server_deny_first() {
        let p = permissions(&["get issue"], &["*"], &["delete_repo"]);
        assert_eq!(
            p.rules("git hub"),
            vec![
                (Behavior::Deny, "mcp__git_hub__delete_repo".to_string()),
                (Behavior::Ask, "mcp__git_hub".to_string()),
                (Behavior::Allow, "mcp__git_hub__get_issue".to_string()),
            ]
        );
    }

    #[test]
    fn deny_matches_the_model_name_by_tool_or_star() {
        let p = permissions(&[], &[], &["drop"]);
        assert!(p.denies("db", "mcp__db__drop"));
        assert!(!p.denies("db", "mcp__db__dropped"));
        assert!(!p.denies("other", "mcp__db__drop"));
        let all = permissions(&[], &[], &["*"]);
        assert!(all.denies("db", "mcp__db__anything"));
        assert!(!all.denies("db", "mcp__dbx__anything"));
    }

    #[test]
    fn rules_and_empty_entries_are_refused_with_the_list_named() {
        let err = permissions(&["mcp__db__drop"], &[], &[])
            .validate()
            .unwrap_err();
        assert!(err.starts_with("permissions.allow:"), "{err}");
        let err = permissions(&[], &[], &[" "]).validate().unwrap_err();
        assert_eq!(err, "permissions.deny: an entry is empty");
        let err = permissions(&[], &["Bash(ls)"], &[]).validate().unwrap_err();
        assert!(err.starts_with("permissions.ask:"), "{err}");
        assert!(permissions(&["a"], &["*"], &["b"]).validate().is_ok());
    }

    #[test]
    fn unknown_tools_are_the_names_the_server_does_not_offer() {
        let p = permissions(&["read", "raed"], &["*"], &["drop"]);
        let offered = vec!["read".to_string(), "drop".to_string()];
        assert_eq!(p.unknown_tools(&offered), vec![("allow", "raed")]);
    }
}
