//! [`PermissionEngine::apply_updates`]: permission updates (an "always
//! allow" from `can_use_tool` or a PermissionRequest hook) applied for the
//! rest of the session and persisted to the settings file they name.

use tascer_core::Behavior;
use tascer_settings::{SettingsDestination, edit_permissions};

use super::PermissionEngine;
use crate::permissions::rule::RuleOrigin;
use crate::permissions::update::{PermissionRuleValue, PermissionUpdate};

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
    pub(in crate::permissions) fn remove_session_rules(
        &self,
        behavior: Behavior,
        matches: impl Fn(&str) -> bool,
    ) {
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
