//! Permission rules in Claude Code's syntax (`Tool` or `Tool(specifier)`).

use std::fmt;
use std::path::{Path, PathBuf};

use tascer_core::Behavior;

use super::command_pattern::CommandPattern;
use super::error::RuleError;
use super::mode::{EDIT_TOOLS, READ_TOOLS};
use super::path_pattern::PathPattern;
use super::wildcard::wildcard_match;

/// Where a rule came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleOrigin {
    /// The settings file (or `session`), if any.
    pub source_file: Option<String>,
    /// The project root that `/path` specifiers are relative to.
    pub project_root: Option<PathBuf>,
}

impl RuleOrigin {
    /// An origin for rules read from `file`, anchoring `/path` at `root`.
    pub fn file(file: &Path, root: Option<&Path>) -> Self {
        RuleOrigin {
            source_file: Some(file.display().to_string()),
            project_root: root.map(Path::to_path_buf),
        }
    }

    /// The origin of rules added during the session.
    pub fn session() -> Self {
        RuleOrigin {
            source_file: Some("session".into()),
            project_root: None,
        }
    }
}

/// What a rule's parentheses hold.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RuleSpecifier {
    /// Nothing (`Tool`, `Tool()`, `Tool(*)`): every call of the tool.
    Any,
    /// A `Bash(…)` command pattern.
    Command(CommandPattern),
    /// A `Read(…)`/`Edit(…)` path pattern.
    Path(PathPattern),
    /// `WebFetch(domain:host)`; a leading `*.` matches subdomains.
    Domain(String),
    /// Any other tool's specifier (`Agent(Explore)`, `Skill(name)`),
    /// compared with the tool's main input field.
    Content(String),
}

/// One parsed rule.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionRule {
    /// The rule as written.
    pub raw: String,
    /// The tool name part.
    pub tool: String,
    /// The specifier.
    pub specifier: RuleSpecifier,
    /// Where the rule came from.
    pub origin: RuleOrigin,
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

impl PermissionRule {
    /// Parses a rule with no file origin.
    pub fn parse(raw: &str) -> Result<Self, RuleError> {
        Self::parse_with(raw, &RuleOrigin::default())
    }

    /// Parses a rule read from `origin`.
    pub fn parse_with(raw: &str, origin: &RuleOrigin) -> Result<Self, RuleError> {
        let text = raw.trim();
        if text.is_empty() {
            return Err(RuleError::new(raw, "empty rule"));
        }
        let (tool, spec) = match text.find('(') {
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(RuleError::new(raw, "missing closing `)` at the end"));
                };
                (&text[..open], Some(inner))
            }
            None => {
                if text.contains(')') {
                    return Err(RuleError::new(raw, "`)` without `(`"));
                }
                (text, None)
            }
        };
        let tool = tool.trim();
        if tool.is_empty() {
            return Err(RuleError::new(raw, "missing tool name"));
        }
        if let Some(bad) = tool
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '.')))
        {
            return Err(RuleError::new(
                raw,
                format!("invalid character `{bad}` in tool name"),
            ));
        }
        if tool.starts_with("mcp__") && tool.len() == 5 {
            return Err(RuleError::new(raw, "missing MCP server name after `mcp__`"));
        }
        let spec = spec.map(str::trim).filter(|s| !s.is_empty() && *s != "*");
        let specifier = match spec {
            None => RuleSpecifier::Any,
            Some(s) if tool.starts_with("mcp__") => {
                return Err(RuleError::new(
                    raw,
                    format!("MCP rules take no specifier (got `{s}`)"),
                ));
            }
            Some(s) if tool == "Bash" => RuleSpecifier::Command(
                CommandPattern::parse(s).map_err(|e| RuleError::new(raw, e))?,
            ),
            Some(s) if READ_TOOLS.contains(&tool) || EDIT_TOOLS.contains(&tool) => {
                RuleSpecifier::Path(
                    PathPattern::parse(s, origin.project_root.as_deref())
                        .map_err(|e| RuleError::new(raw, e))?,
                )
            }
            Some(s) if tool == "WebFetch" => {
                let Some(domain) = s.strip_prefix("domain:") else {
                    return Err(RuleError::new(
                        raw,
                        "WebFetch rules must be written `WebFetch(domain:example.com)`",
                    ));
                };
                let domain = domain.trim().to_ascii_lowercase();
                if domain.is_empty() || domain.contains('/') {
                    return Err(RuleError::new(raw, "invalid domain"));
                }
                RuleSpecifier::Domain(domain)
            }
            Some(s) => RuleSpecifier::Content(s.to_string()),
        };
        Ok(PermissionRule {
            raw: text.to_string(),
            tool: tool.to_string(),
            specifier,
            origin: origin.clone(),
        })
    }

    /// True when the rule concerns calls of `tool_name` (before looking at
    /// the specifier). `Read`/`Edit` rules cover their whole tool family;
    /// `mcp__server` and `mcp__server__*` cover every tool of the server.
    pub fn applies_to(&self, tool_name: &str) -> bool {
        let rule = self.tool.as_str();
        if rule == tool_name {
            return true;
        }
        if rule == "Read" && READ_TOOLS.contains(&tool_name) {
            return true;
        }
        if rule == "Edit" && EDIT_TOOLS.contains(&tool_name) {
            return true;
        }
        if matches!((rule, tool_name), ("Task", "Agent") | ("Agent", "Task")) {
            return true;
        }
        if let Some(server) = rule.strip_prefix("mcp__") {
            let server = server.trim_end_matches("__*");
            if !server.contains("__")
                && tool_name
                    .strip_prefix("mcp__")
                    .and_then(|t| t.strip_prefix(server))
                    .is_some_and(|rest| rest.starts_with("__"))
            {
                return true;
            }
        }
        rule.contains('*') && wildcard_match(rule, tool_name)
    }

    /// True for a rule covering every call of its tool.
    pub fn is_whole_tool(&self) -> bool {
        self.specifier == RuleSpecifier::Any
    }
}

/// Allow, ask and deny rule lists.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionRules {
    /// Rules that approve calls.
    pub allow: Vec<PermissionRule>,
    /// Rules that always ask.
    pub ask: Vec<PermissionRule>,
    /// Rules that refuse calls (they win over everything).
    pub deny: Vec<PermissionRule>,
}

impl PermissionRules {
    /// No rules.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses three lists of rule strings.
    pub fn parse<S: AsRef<str>>(allow: &[S], ask: &[S], deny: &[S]) -> Result<Self, RuleError> {
        let mut rules = Self::new();
        let origin = RuleOrigin::default();
        for (behavior, list) in [
            (Behavior::Allow, allow),
            (Behavior::Ask, ask),
            (Behavior::Deny, deny),
        ] {
            for raw in list {
                rules.add(behavior, raw.as_ref(), &origin)?;
            }
        }
        Ok(rules)
    }

    /// Parses and adds one rule.
    pub fn add(
        &mut self,
        behavior: Behavior,
        raw: &str,
        origin: &RuleOrigin,
    ) -> Result<(), RuleError> {
        let rule = PermissionRule::parse_with(raw, origin)?;
        self.push(behavior, rule);
        Ok(())
    }

    /// Adds a parsed rule.
    pub fn push(&mut self, behavior: Behavior, rule: PermissionRule) {
        self.list_mut(behavior).push(rule);
    }

    /// Appends all of `other`'s rules.
    pub fn extend(&mut self, other: PermissionRules) {
        self.allow.extend(other.allow);
        self.ask.extend(other.ask);
        self.deny.extend(other.deny);
    }

    /// The list for one behavior.
    pub fn list(&self, behavior: Behavior) -> &[PermissionRule] {
        match behavior {
            Behavior::Allow => &self.allow,
            Behavior::Ask => &self.ask,
            Behavior::Deny => &self.deny,
        }
    }

    fn list_mut(&mut self, behavior: Behavior) -> &mut Vec<PermissionRule> {
        match behavior {
            Behavior::Allow => &mut self.allow,
            Behavior::Ask => &mut self.ask,
            Behavior::Deny => &mut self.deny,
        }
    }

    /// True when there are no rules at all.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }
}
