//! Permission updates (the SDKs' `PermissionUpdate`, e.g. "always allow"
//! from a `can_use_tool` answer): applied to the engine for the rest of
//! the session and persisted, through `tascer-settings`, to the Claude
//! Code settings file their destination names, so the next session reads
//! them.

use serde::Deserialize;
use tascer_core::Behavior;
use tascer_settings::{PermissionsEdit, SettingsDestination, edit_permissions};

use super::callback::PermissionRuleValue;
use super::engine::PermissionEngine;
use super::mode::PermissionMode;
use super::rule::RuleOrigin;

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
    fn file(self) -> Option<SettingsDestination> {
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
    fn as_edit(&self) -> PermissionsEdit {
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

impl PermissionEngine {
    /// Applies `updates` for the rest of the session and persists those
    /// naming a settings file to it. Returns one warning per part that
    /// could not be applied or persisted (never silently dropped): a rule
    /// Tascer cannot parse, a mode the settings forbid, a file that cannot
    /// be written, a change that takes effect only from the next session.
    pub fn apply_updates(&self, updates: &[PermissionUpdate]) -> Vec<String> {
        let mut warnings = Vec::new();
        for update in updates {
            // What the session refuses (a forbidden mode, a rule Tascer
            // cannot parse) is not written for the next one either.
            if !self.apply_in_session(update, &mut warnings) {
                continue;
            }
            let Some(file) = update.destination().file() else {
                continue;
            };
            let Some(path) = self.settings_files.as_ref().and_then(|f| f.path(file)) else {
                warnings.push(format!(
                    "cannot persist the permission update ({}): this session has no {} file",
                    update.describe(),
                    file.sdk_name()
                ));
                continue;
            };
            if let Err(e) = edit_permissions(path, &update.as_edit()) {
                warnings.push(format!(
                    "cannot persist the permission update ({}): {e}",
                    update.describe()
                ));
            }
        }
        warnings
    }

    /// Removes the session rules of `behavior` whose text `matches`.
    pub(super) fn remove_session_rules(&self, behavior: Behavior, matches: impl Fn(&str) -> bool) {
        let mut guard = self.session_rules.write();
        let rules = &mut *guard;
        let list = match behavior {
            Behavior::Allow => &mut rules.allow,
            Behavior::Ask => &mut rules.ask,
            Behavior::Deny => &mut rules.deny,
        };
        list.retain(|r| !matches(&r.raw));
        drop(guard);
        self.clear_cache();
    }

    /// The session part of one update; false when it was refused (the
    /// warning says why).
    fn apply_in_session(&self, update: &PermissionUpdate, warnings: &mut Vec<String>) -> bool {
        let origin = match update.destination().file() {
            Some(file) => match self.settings_files.as_ref().and_then(|s| s.path(file)) {
                // A project file's `/path` rules are anchored at the project
                // (the directory holding `.claude`), the user's at the home.
                Some(path) => {
                    let root = match file {
                        SettingsDestination::UserSettings => self.home.clone(),
                        _ => path
                            .parent()
                            .and_then(|d| d.parent())
                            .map(|d| d.to_path_buf()),
                    };
                    RuleOrigin::file(path, root.as_deref())
                }
                None => RuleOrigin::session(),
            },
            None => RuleOrigin::session(),
        };
        let add = |rules: &[PermissionRuleValue], behavior: Behavior, w: &mut Vec<String>| {
            let mut ok = true;
            for rule in rules {
                let text = rule.to_rule_string();
                if let Err(e) = self.add_scoped_rule(behavior, &text, &origin) {
                    w.push(format!(
                        "cannot apply the rule {text:?} of a permission update: {e}"
                    ));
                    ok = false;
                }
            }
            ok
        };
        match update {
            PermissionUpdate::AddRules {
                rules, behavior, ..
            } => add(rules, *behavior, warnings),
            PermissionUpdate::ReplaceRules {
                rules, behavior, ..
            } => {
                self.remove_session_rules(*behavior, |_| true);
                if update.destination().file().is_some() {
                    warnings.push(format!(
                        "the {} rules read from the settings files at the start still hold in \
                         this session; the replacement holds from the next session",
                        behavior.as_str()
                    ));
                }
                add(rules, *behavior, warnings)
            }
            PermissionUpdate::RemoveRules {
                rules, behavior, ..
            } => {
                let texts: Vec<String> = rules.iter().map(|r| r.to_rule_string()).collect();
                self.remove_session_rules(*behavior, |raw| texts.iter().any(|t| t == raw));
                if update.destination().file().is_some() {
                    warnings.push(format!(
                        "rules read from the settings files at the start still hold in this \
                         session; {} are gone from the next session",
                        texts.join(", ")
                    ));
                }
                true
            }
            PermissionUpdate::SetMode { mode, .. } => match self.set_mode(*mode) {
                Ok(()) => true,
                Err(e) => {
                    warnings.push(format!("cannot set the mode to {}: {e}", mode.as_str()));
                    false
                }
            },
            PermissionUpdate::AddDirectories { directories, .. }
            | PermissionUpdate::RemoveDirectories { directories, .. } => {
                warnings.push(format!(
                    "the working directories of a running session do not change ({} takes \
                     effect from the next session when persisted)",
                    directories.join(", ")
                ));
                true
            }
        }
    }
}
