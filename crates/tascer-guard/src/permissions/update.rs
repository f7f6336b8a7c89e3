//! Permission updates (the SDKs' `PermissionUpdate`, e.g. "always allow"
//! from a `can_use_tool` answer): applied to the engine for the rest of
//! the session and persisted, through `tascer-settings`, to the Claude
//! Code settings file their destination names, so the next session reads
//! them.

use serde::{Deserialize, Serialize};
use tascer_core::Behavior;
use tascer_settings::{PermissionsEdit, SettingsDestination};

use super::mode::PermissionMode;

/// A rule as the SDK's `PermissionUpdate` carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRuleValue {
    /// Tool name.
    pub tool_name: String,
    /// The specifier, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_content: Option<String>,
}

impl PermissionRuleValue {
    /// Splits a rule string (`Bash(npm test:*)`).
    pub fn from_rule(rule: &str) -> Self {
        match rule.split_once('(') {
            Some((tool, rest)) => PermissionRuleValue {
                tool_name: tool.to_string(),
                rule_content: Some(rest.strip_suffix(')').unwrap_or(rest).to_string()),
            },
            None => PermissionRuleValue {
                tool_name: rule.to_string(),
                rule_content: None,
            },
        }
    }

    /// The rule string.
    pub fn to_rule_string(&self) -> String {
        match &self.rule_content {
            Some(c) => format!("{}({c})", self.tool_name),
            None => self.tool_name.clone(),
        }
    }
}

/// Where an update applies: this session only, or a settings file too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum UpdateDestination {
    /// This session only (the SDKs' default).
    #[default]
    Session,
    /// This session only (the TypeScript SDK's `cliArg`).
    CliArg,
    /// `.claude/settings.local.json` of the project.
    LocalSettings,
    /// `.claude/settings.json` of the project.
    ProjectSettings,
    /// The user's Claude Code settings.
    UserSettings,
}

impl UpdateDestination {
    /// The settings file it names, if any.
    pub(crate) fn file(self) -> Option<SettingsDestination> {
        match self {
            UpdateDestination::Session | UpdateDestination::CliArg => None,
            UpdateDestination::LocalSettings => Some(SettingsDestination::LocalSettings),
            UpdateDestination::ProjectSettings => Some(SettingsDestination::ProjectSettings),
            UpdateDestination::UserSettings => Some(SettingsDestination::UserSettings),
        }
    }
}

/// One permission update, in the SDKs' wire shape
/// (`{"type": "addRules", "rules": [{"toolName", "ruleContent"}],
/// "behavior": "allow", "destination": "localSettings"}`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum PermissionUpdate {
    /// Add rules of one behavior.
    AddRules {
        /// The rules.
        rules: Vec<PermissionRuleValue>,
        /// `allow`, `ask` or `deny`.
        behavior: Behavior,
        /// Where.
        #[serde(default)]
        destination: UpdateDestination,
    },
    /// Make the rules of one behavior exactly these.
    ReplaceRules {
        /// The rules.
        rules: Vec<PermissionRuleValue>,
        /// `allow`, `ask` or `deny`.
        behavior: Behavior,
        /// Where.
        #[serde(default)]
        destination: UpdateDestination,
    },
    /// Remove rules of one behavior.
    RemoveRules {
        /// The rules.
        rules: Vec<PermissionRuleValue>,
        /// `allow`, `ask` or `deny`.
        behavior: Behavior,
        /// Where.
        #[serde(default)]
        destination: UpdateDestination,
    },
    /// Switch the permission mode.
    SetMode {
        /// The mode.
        mode: PermissionMode,
        /// Where.
        #[serde(default)]
        destination: UpdateDestination,
    },
    /// Add working directories.
    AddDirectories {
        /// The directories.
        directories: Vec<String>,
        /// Where.
        #[serde(default)]
        destination: UpdateDestination,
    },
    /// Remove working directories.
    RemoveDirectories {
        /// The directories.
        directories: Vec<String>,
        /// Where.
        #[serde(default)]
        destination: UpdateDestination,
    },
}

impl PermissionUpdate {
    /// The destination it names.
    pub fn destination(&self) -> UpdateDestination {
        match self {
            PermissionUpdate::AddRules { destination, .. }
            | PermissionUpdate::ReplaceRules { destination, .. }
            | PermissionUpdate::RemoveRules { destination, .. }
            | PermissionUpdate::SetMode { destination, .. }
            | PermissionUpdate::AddDirectories { destination, .. }
            | PermissionUpdate::RemoveDirectories { destination, .. } => *destination,
        }
    }

    /// The same change as an edit of a settings file's `permissions`.
    pub(crate) fn as_edit(&self) -> PermissionsEdit {
        let strings = |rules: &[PermissionRuleValue]| {
            rules
                .iter()
                .map(PermissionRuleValue::to_rule_string)
                .collect::<Vec<_>>()
        };
        match self {
            PermissionUpdate::AddRules {
                rules, behavior, ..
            } => PermissionsEdit::AddRules {
                list: behavior.as_str().to_string(),
                rules: strings(rules),
            },
            PermissionUpdate::ReplaceRules {
                rules, behavior, ..
            } => PermissionsEdit::ReplaceRules {
                list: behavior.as_str().to_string(),
                rules: strings(rules),
            },
            PermissionUpdate::RemoveRules {
                rules, behavior, ..
            } => PermissionsEdit::RemoveRules {
                list: behavior.as_str().to_string(),
                rules: strings(rules),
            },
            PermissionUpdate::SetMode { mode, .. } => {
                PermissionsEdit::SetMode(mode.as_str().to_string())
            }
            PermissionUpdate::AddDirectories { directories, .. } => {
                PermissionsEdit::AddDirectories(directories.clone())
            }
            PermissionUpdate::RemoveDirectories { directories, .. } => {
                PermissionsEdit::RemoveDirectories(directories.clone())
            }
        }
    }

    /// A short description for the decision's reason.
    pub fn describe(&self) -> String {
        let rules = |rules: &[PermissionRuleValue]| {
            rules
                .iter()
                .map(PermissionRuleValue::to_rule_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let what = match self {
            PermissionUpdate::AddRules {
                rules: r, behavior, ..
            } => format!("added {} rule(s) {}", behavior.as_str(), rules(r)),
            PermissionUpdate::ReplaceRules {
                rules: r, behavior, ..
            } => format!("replaced the {} rules with {}", behavior.as_str(), rules(r)),
            PermissionUpdate::RemoveRules {
                rules: r, behavior, ..
            } => format!("removed {} rule(s) {}", behavior.as_str(), rules(r)),
            PermissionUpdate::SetMode { mode, .. } => format!("set the mode to {}", mode.as_str()),
            PermissionUpdate::AddDirectories { directories, .. } => {
                format!("added directories {}", directories.join(", "))
            }
            PermissionUpdate::RemoveDirectories { directories, .. } => {
                format!("removed directories {}", directories.join(", "))
            }
        };
        let destination = match self.destination().file() {
            Some(file) => file.sdk_name(),
            None => "session",
        };
        format!("{what} ({destination})")
    }
}

/// The "always allow" suggestions of a call, in the SDKs' wire shape, as
/// Claude Code makes them: one `addRules` allow update per suggested rule,
/// for the project's local settings (`permission_suggestions` of a
/// `can_use_tool` request and of a `PermissionRequest` hook's input).
pub fn allow_suggestions<'a>(rules: impl IntoIterator<Item = &'a str>) -> Vec<serde_json::Value> {
    rules
        .into_iter()
        .map(|rule| {
            serde_json::json!({
                "type": "addRules",
                "rules": [PermissionRuleValue::from_rule(rule)],
                "behavior": Behavior::Allow,
                "destination": SettingsDestination::LocalSettings.sdk_name(),
            })
        })
        .collect()
}

/// Reads permission updates in the SDKs' wire shape (a `can_use_tool`
/// answer's or a `PermissionRequest` hook's `updatedPermissions`): the
/// updates read, and one warning per entry that could not be (left out,
/// never silently).
pub fn parse_updates(values: &[serde_json::Value]) -> (Vec<PermissionUpdate>, Vec<String>) {
    let mut updates = Vec::new();
    let mut warnings = Vec::new();
    for value in values {
        match serde_json::from_value::<PermissionUpdate>(value.clone()) {
            Ok(update) => updates.push(update),
            Err(e) => warnings.push(format!("ignoring the permission update {value}: {e}")),
        }
    }
    (updates, warnings)
}
