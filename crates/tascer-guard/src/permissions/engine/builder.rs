//! [`PermissionEngineBuilder`]: what a [`PermissionEngine`] is built from
//! (rules, mode, directories, policies, the callback, the safety chain's
//! parts), and the policies it adds.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::PermissionEngine;
use crate::permissions::cache::DecisionCache;
use crate::permissions::callback::CanUseTool;
use crate::permissions::error::PermissionError;
use crate::permissions::file_policy::{FileAccessConfig, FileAccessPolicy};
use crate::permissions::mode::PermissionMode;
use crate::permissions::policy::Policy;
use crate::permissions::rule::PermissionRules;
use crate::permissions::shell_policy::ShellCommandPolicy;
use crate::permissions::workaround::{DenialHistory, WorkaroundConfig};
use tascer_settings::ClaudeSettingsFiles;

/// Builds a [`PermissionEngine`].
pub struct PermissionEngineBuilder {
    pub(super) rules: PermissionRules,
    pub(super) mode: PermissionMode,
    pub(super) bypass_disabled: bool,
    pub(super) policies: Vec<Arc<dyn Policy>>,
    pub(super) can_use_tool: Option<CanUseTool>,
    pub(super) settings_files: Option<ClaudeSettingsFiles>,
    pub(super) additional_dirs: Vec<PathBuf>,
    pub(super) home: Option<PathBuf>,
    pub(super) cache: bool,
    pub(super) cache_callback: bool,
    pub(super) workaround: WorkaroundConfig,
    pub(super) default_policies: bool,
    pub(super) path_classes: Option<crate::safety::PathClasses>,
    pub(super) auto_approve: Option<Vec<String>>,
    pub(super) low_risk: Option<Vec<String>>,
    pub(super) file_access: FileAccessConfig,
}

impl PermissionEngineBuilder {
    /// Adds rules (they merge with rules already given).
    pub fn rules(mut self, rules: PermissionRules) -> Self {
        self.rules.extend(rules);
        self
    }

    /// The starting mode (default `default`).
    pub fn mode(mut self, mode: PermissionMode) -> Self {
        self.mode = mode;
        self
    }

    /// Refuse `bypassPermissions` (settings `disableBypassPermissionsMode`).
    pub fn disable_bypass(mut self, yes: bool) -> Self {
        self.bypass_disabled = yes;
        self
    }

    /// Adds a policy.
    pub fn policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policies.push(policy);
        self
    }

    /// Adds the built-in [`FileAccessPolicy`] (cwd plus the additional
    /// directories) and [`ShellCommandPolicy`] (dangerous defaults).
    pub fn default_policies(mut self) -> Self {
        self.default_policies = true;
        self
    }

    /// Configures the built-in file-access policy (settings
    /// `policies.fileAccess`; with [`default_policies`](Self::default_policies)).
    pub fn file_access(mut self, config: FileAccessConfig) -> Self {
        self.file_access = config;
        self
    }

    /// Where permission updates naming a settings file (`localSettings`,
    /// …) are persisted ([`PermissionEngine::apply_updates`]).
    pub fn settings_files(mut self, files: ClaudeSettingsFiles) -> Self {
        self.settings_files = Some(files);
        self
    }

    /// Sets the `can_use_tool` callback.
    pub fn can_use_tool(mut self, callback: CanUseTool) -> Self {
        self.can_use_tool = Some(callback);
        self
    }

    /// Adds a working directory besides the call's cwd.
    pub fn additional_directory(mut self, dir: impl Into<PathBuf>) -> Self {
        self.additional_dirs.push(dir.into());
        self
    }

    /// The home directory for `~` (default `$HOME`).
    pub fn home_dir(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Path classes (settings `safety.pathClasses`): their sensitive
    /// patterns and what reading a sensitive file gets replace the default
    /// file-access policy's (with [`default_policies`](Self::default_policies)).
    pub fn path_classes(mut self, classes: crate::safety::PathClasses) -> Self {
        self.path_classes = Some(classes);
        self
    }

    /// Low-risk auto-approve (settings `safety.autoApprove`): these
    /// read-only tools on trusted paths (the path classes', or the default
    /// ones) are allowed like an allow rule.
    pub fn auto_approve(mut self, tools: Vec<String>) -> Self {
        self.auto_approve = Some(tools);
        self
    }

    /// Low-risk tools (settings `safety.autoApprove.lowRiskTools`): these
    /// tools' calls that touch no path are allowed like an allow rule.
    pub fn low_risk_tools(mut self, tools: Vec<String>) -> Self {
        self.low_risk = Some(tools);
        self
    }

    /// Turns the identical-input decision cache on or off (default on).
    pub fn cache(mut self, on: bool) -> Self {
        self.cache = on;
        self
    }

    /// Also cache `can_use_tool` answers (default off; answers that rewrite
    /// the input are never cached).
    pub fn cache_callback_decisions(mut self, on: bool) -> Self {
        self.cache_callback = on;
        self
    }

    /// Workaround detection settings.
    pub fn workaround(mut self, config: WorkaroundConfig) -> Self {
        self.workaround = config;
        self
    }

    /// Builds the engine. Fails when the starting mode is
    /// `bypassPermissions` but bypass is disabled.
    pub fn build(self) -> Result<PermissionEngine, PermissionError> {
        if self.bypass_disabled && self.mode == PermissionMode::BypassPermissions {
            return Err(PermissionError::BypassDisabled);
        }
        let mut policies = self.policies;
        let custom_policies = !policies.is_empty();
        let home = self
            .home
            .clone()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
        if self.default_policies {
            let mut file = FileAccessPolicy::new();
            if let Some(h) = &self.home {
                file = file.home(h.clone());
            }
            if let Some(classes) = &self.path_classes {
                file = file
                    .sensitive_patterns(classes.sensitive().clone())
                    .sensitive_read(classes.sensitive_read());
            }
            for d in &self.additional_dirs {
                file = file.allowed_root(d.clone());
            }
            file = self.file_access.apply(file);
            policies.insert(0, Arc::new(ShellCommandPolicy::new()));
            policies.insert(0, Arc::new(file));
        }
        if let Some(tools) = self.low_risk {
            policies.push(Arc::new(crate::safety::LowRiskPolicy::new(
                tools,
                home.as_deref(),
            )));
        }
        if let Some(tools) = self.auto_approve {
            policies.push(Arc::new(crate::safety::AutoApprovePolicy::new(
                self.path_classes.clone().unwrap_or_default(),
                tools,
                self.additional_dirs.clone(),
                home.clone(),
            )));
        }
        let sensitive = self
            .path_classes
            .as_ref()
            .map(|c| c.sensitive().clone())
            .unwrap_or_default();
        Ok(PermissionEngine {
            sensitive,
            rules: self.rules,
            session_rules: RwLock::new(PermissionRules::new()),
            mode: RwLock::new(self.mode),
            bypass_disabled: self.bypass_disabled,
            policies,
            can_use_tool: self.can_use_tool,
            settings_files: self.settings_files,
            additional_dirs: self.additional_dirs,
            home,
            cache: self.cache.then(DecisionCache::default),
            cache_callback: self.cache_callback,
            workaround: self.workaround,
            tracker: Mutex::new(DenialHistory::default()),
            custom_policies,
        })
    }
}
