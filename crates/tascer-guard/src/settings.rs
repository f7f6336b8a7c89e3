//! Settings, as governance reads them: the files are found, read and
//! layered by `tascer-settings` (the one settings reader, whose types
//! are re-exported here); this module parses the layers' permission rules
//! ([`LoadedSettings`], through [`LoadSettings::load`]) and turns their
//! `safety` objects into the safety chain ([`LoadedSettings::safety`]).
//! How each section layers is described in `tascer_settings`.

use std::ops::Deref;
use std::path::{Path, PathBuf};

pub use tascer_settings::{
    CLAUDE_PROJECT_DIR, FileError, LayeredSettings, PermissionsSettings, SandboxSettings, Settings,
    SettingsError, SettingsLayer, SettingsLoader, SettingsSource, TelemetrySettings,
    claude_config_dir, claude_transcript_file, project_root, read_json,
};

use crate::permissions::{
    Behavior, FileAccessConfig, McpPolicy, PermissionEngineBuilder, PermissionMode,
    PermissionRules, RuleOrigin,
};
use crate::reviewers::ReviewersConfig;
use crate::safety::settings::SensitiveAction;
use crate::safety::{
    DEFAULT_AUTO_APPROVE_TOOLS, DEFAULT_LOW_RISK_TOOLS, DEFAULT_TRUSTED, PathClasses,
};

/// The safety chain's static parts and reviewers, merged across layers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SafetyConfig {
    /// The tools low-risk auto-approve covers, when it is on.
    pub auto_approve: Option<Vec<String>>,
    /// The path-less tools it approves outright, when it is on.
    pub low_risk: Option<Vec<String>>,
    /// The path classes, when they are on.
    pub path_classes: Option<PathClasses>,
    /// The reviewers that are on.
    pub reviewers: ReviewersConfig,
    /// `hookDeadlineMs` of the highest layer that sets it: how long a
    /// host's answer may take (the host has its default).
    pub hook_deadline: Option<std::time::Duration>,
}

/// The modes Tascer accepts from a caller when `permissions.callerModes`
/// does not say: every mode but `bypassPermissions`.
pub const DEFAULT_CALLER_MODES: &[PermissionMode] = &[
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Plan,
    PermissionMode::DontAsk,
    PermissionMode::Auto,
];

/// The permission mode Tascer decides a host's call in, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallerMode {
    /// The mode in force.
    pub mode: PermissionMode,
    /// Set when the caller's own mode was not accepted: what it was and
    /// what replaced it (for the record and the logs).
    pub replaced: Option<String>,
}

/// The settings layers, highest precedence first, with their permission
/// rules parsed. It reads as the [`LayeredSettings`] it holds (`layers`,
/// `env()`, `hooks()`, `webhooks()`, …) and adds what governance makes of
/// them.
#[derive(Debug, Clone, Default)]
pub struct LoadedSettings {
    settings: LayeredSettings,
    /// Rules merged across every layer.
    pub rules: PermissionRules,
    /// What Tascer read but cannot honour in Claude Code's own settings
    /// files: a rule it cannot parse, a `permissions` key it does not
    /// know. Each a warning naming the file, for the host to show. (The
    /// other keys no part of Tascer reads are
    /// [`LayeredSettings::unhonoured`]: a session warns about them, a host
    /// under Claude Code does not, since Claude Code applies them.)
    pub warnings: Vec<String>,
}

impl Deref for LoadedSettings {
    type Target = LayeredSettings;

    fn deref(&self) -> &LayeredSettings {
        &self.settings
    }
}

/// Reading settings the way governance uses them: [`SettingsLoader::read`],
/// then every layer's permission rules parsed.
pub trait LoadSettings {
    /// Loads every layer that exists, highest precedence first, and
    /// parses their rules.
    fn load(&self) -> Result<LoadedSettings, SettingsError>;
}

impl LoadSettings for SettingsLoader {
    fn load(&self) -> Result<LoadedSettings, SettingsError> {
        LoadedSettings::from_layers(self.read()?)
    }
}

impl LoadedSettings {
    /// The layers read, with their rules parsed.
    pub fn from_layers(settings: LayeredSettings) -> Result<Self, SettingsError> {
        let mut warnings = Vec::new();
        let rules = merged_rules(&settings.layers, &mut warnings)?;
        Ok(LoadedSettings {
            settings,
            rules,
            warnings,
        })
    }

    /// Drops the `hooks` of Claude Code's own settings files: under Claude
    /// Code (`tascer hook`) they are Claude Code's to run, not Tascer's.
    pub fn without_claude_code_hooks(&mut self) {
        for layer in &mut self.settings.layers {
            if is_claude_code(layer.source) {
                layer.settings.hooks = None;
            }
        }
    }

    /// Every layer's `additionalDirectories`, resolved against its
    /// project root (`~/` against `home`), without duplicates.
    pub fn additional_directories(&self, home: Option<&Path>) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        for l in &self.layers {
            for d in &l.settings.permissions.additional_directories {
                let p = crate::permissions::paths::expand_home(d, home);
                let p = if p.is_absolute() {
                    p
                } else {
                    l.project_root.join(p)
                };
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        out
    }

    /// The `safety` objects of every layer, merged part by part (see
    /// `tascer_settings`).
    pub fn safety(&self, home: Option<&Path>) -> SafetyConfig {
        let safety = || {
            self.layers
                .iter()
                .filter_map(|l| l.settings.safety.as_ref().map(|s| (l, s)))
        };
        let auto_approve = safety()
            .find_map(|(_, s)| s.auto_approve.as_ref())
            .filter(|a| a.enabled != Some(false))
            .map(|a| {
                a.tools.clone().unwrap_or_else(|| {
                    DEFAULT_AUTO_APPROVE_TOOLS
                        .iter()
                        .map(|t| (*t).to_string())
                        .collect()
                })
            });
        let low_risk = safety()
            .find_map(|(_, s)| s.auto_approve.as_ref())
            .filter(|a| a.enabled != Some(false))
            .map(|a| {
                a.low_risk_tools.clone().unwrap_or_else(|| {
                    DEFAULT_LOW_RISK_TOOLS
                        .iter()
                        .map(|t| (*t).to_string())
                        .collect()
                })
            });
        let path_classes = safety()
            .find_map(|(_, s)| s.path_classes.as_ref())
            .filter(|p| p.enabled != Some(false))
            .map(|top| {
                let mut trusted: Vec<String> = Vec::new();
                let mut sensitive: Vec<String> = Vec::new();
                let mut any_trusted = false;
                for (layer, s) in safety() {
                    let Some(p) = &s.path_classes else { continue };
                    for t in p.trusted.iter().flatten() {
                        any_trusted = true;
                        let path = crate::permissions::paths::expand_home(t, home);
                        let path = if path.is_absolute() {
                            path
                        } else {
                            layer.project_root.join(path)
                        };
                        let text = path.display().to_string();
                        if !trusted.contains(&text) {
                            trusted.push(text);
                        }
                    }
                    for pattern in &p.sensitive {
                        if !sensitive.contains(pattern) {
                            sensitive.push(pattern.clone());
                        }
                    }
                }
                if !any_trusted {
                    trusted = DEFAULT_TRUSTED.iter().map(|t| (*t).to_string()).collect();
                }
                let action = top.sensitive_action.unwrap_or(SensitiveAction::Deny);
                PathClasses::new(trusted, sensitive, action.behavior())
            });
        let reviewers = safety().filter_map(|(_, s)| s.reviewers.as_ref());
        let mut merged = crate::safety::settings::ReviewersSettings::default();
        for r in reviewers {
            merged.model = merged.model.or_else(|| r.model.clone());
            merged.tool_approve = merged.tool_approve.or_else(|| r.tool_approve.clone());
            merged.tool_appeal = merged.tool_appeal.or_else(|| r.tool_appeal.clone());
            merged.error_acknowledge = merged
                .error_acknowledge
                .or_else(|| r.error_acknowledge.clone());
            merged.intent_validate = merged.intent_validate.or_else(|| r.intent_validate.clone());
            merged.plan_validate = merged.plan_validate.or_else(|| r.plan_validate.clone());
            merged.style_drift = merged.style_drift.or_else(|| r.style_drift.clone());
            merged.claude_md_validate = merged
                .claude_md_validate
                .or_else(|| r.claude_md_validate.clone());
        }
        SafetyConfig {
            auto_approve,
            low_risk,
            path_classes,
            reviewers: ReviewersConfig::from_settings(&merged),
            hook_deadline: safety()
                .find_map(|(_, s)| s.hook_deadline_ms)
                .map(std::time::Duration::from_millis),
        }
    }

    /// The mode a host's call is decided in when the host runs in
    /// `caller` (Claude Code's `permission_mode`): the caller's own mode
    /// when `permissions.callerModes` accepts it (default: all but
    /// `bypassPermissions`; never `bypassPermissions` while
    /// `disableBypassPermissionsMode` is set); else the profile's floor,
    /// the settings' `defaultMode` (when it is not a refused
    /// `bypassPermissions`), else `auto`. With no caller mode, the
    /// settings' `defaultMode`, else `default`.
    pub fn mode_for_caller(&self, caller: Option<&str>) -> CallerMode {
        let accepted = |mode: PermissionMode| {
            let listed = match self.caller_modes() {
                Some(modes) => modes.contains(&mode),
                None => DEFAULT_CALLER_MODES.contains(&mode),
            };
            listed && !(mode == PermissionMode::BypassPermissions && self.bypass_disabled())
        };
        let Some(caller) = caller else {
            return CallerMode {
                mode: self.default_mode().unwrap_or_default(),
                replaced: None,
            };
        };
        if let Ok(mode) = caller.parse::<PermissionMode>()
            && accepted(mode)
        {
            return CallerMode {
                mode,
                replaced: None,
            };
        }
        let floor = self
            .default_mode()
            .filter(|m| *m != PermissionMode::BypassPermissions || accepted(*m))
            .unwrap_or(PermissionMode::Auto);
        CallerMode {
            mode: floor,
            replaced: Some(format!(
                "the caller's permission mode `{caller}` is not accepted (permissions.callerModes); Tascer decides in `{floor}`"
            )),
        }
    }

    /// The mode for a host whose caller names no mode of its own and whose
    /// calls the user asked for through a tool call the caller already
    /// approved (`tascer mcp serve`: Claude Code approved the MCP tool
    /// call that runs them): the settings' `defaultMode`, else `default` —
    /// and `default` for `auto` too, since that approval is the answer
    /// `auto` would otherwise refuse for want of someone to ask. Rules and
    /// policies refuse such calls as in every mode.
    pub fn mode_for_requested_calls(&self) -> PermissionMode {
        match self.default_mode() {
            Some(PermissionMode::Auto) | None => PermissionMode::Default,
            Some(mode) => mode,
        }
    }

    /// Configures an engine builder: rules, default mode, additional
    /// directories, the bypass switch, the file-access policy's
    /// configuration (used with the default policies) and the MCP policy
    /// (added when `policies.mcp` is set).
    pub fn apply(
        &self,
        builder: PermissionEngineBuilder,
        home: Option<&Path>,
    ) -> PermissionEngineBuilder {
        let mut b = builder
            .rules(self.rules.clone())
            .disable_bypass(self.bypass_disabled())
            .file_access(self.file_access(home));
        if let Some(mode) = self.default_mode() {
            b = b.mode(mode);
        }
        for d in self.additional_directories(home) {
            b = b.additional_directory(d);
        }
        if let Some(mcp) = self.mcp_policy() {
            b = b.policy(std::sync::Arc::new(mcp));
        }
        b
    }

    /// Every layer's `policies.fileAccess`, merged: the root lists'
    /// union (resolved against each layer's project root, `~/` against
    /// `home`), each switch from the highest layer that sets it.
    pub fn file_access(&self, home: Option<&Path>) -> FileAccessConfig {
        let mut config = FileAccessConfig::default();
        for layer in &self.layers {
            let Some(f) = layer
                .settings
                .policies
                .as_ref()
                .and_then(|p| p.file_access.as_ref())
            else {
                continue;
            };
            let resolve = |d: &String| {
                let p = crate::permissions::paths::expand_home(d, home);
                if p.is_absolute() {
                    p
                } else {
                    layer.project_root.join(p)
                }
            };
            for (list, into) in [
                (&f.allowed_roots, &mut config.allowed_roots),
                (&f.restricted_roots, &mut config.restricted_roots),
            ] {
                for root in list.iter().map(resolve) {
                    if !into.contains(&root) {
                        into.push(root);
                    }
                }
            }
            config.block_outside = config.block_outside.or(f.block_outside);
            config.sensitive_write = config
                .sensitive_write
                .or(f.sensitive_write.map(|a| a.behavior()));
            config.check_shell_args = config.check_shell_args.or(f.check_shell_args);
        }
        config
    }

    /// The MCP policy every layer's `policies.mcp` makes (the lists'
    /// union, the default from the highest layer that sets it); `None`
    /// when no layer has one.
    pub fn mcp_policy(&self) -> Option<McpPolicy> {
        let mut layers = self
            .layers
            .iter()
            .filter_map(|l| l.settings.policies.as_ref()?.mcp.as_ref())
            .peekable();
        layers.peek()?;
        let mut policy = McpPolicy::new();
        let mut default = None;
        for m in layers {
            for name in &m.allow {
                policy = policy.allow(name);
            }
            for name in &m.deny {
                policy = policy.deny(name);
            }
            default = default.or(m.default);
        }
        if let Some(behavior) = default {
            policy = policy.default_behavior(behavior);
        }
        Some(policy)
    }
}

/// True for Claude Code's own settings files.
fn is_claude_code(source: SettingsSource) -> bool {
    matches!(
        source,
        SettingsSource::ClaudeLocal | SettingsSource::ClaudeProject | SettingsSource::ClaudeUser
    )
}

/// Every layer's permission rules, parsed with the file they came from. A
/// rule of Claude Code's own files that Tascer cannot parse, and a
/// `permissions` key there it does not know, are `warnings`; in Tascer's
/// files a bad rule is an error.
fn merged_rules(
    layers: &[SettingsLayer],
    warnings: &mut Vec<String>,
) -> Result<PermissionRules, SettingsError> {
    let mut rules = PermissionRules::new();
    for l in layers {
        let name = l.name();
        let claude = is_claude_code(l.source);
        if claude {
            for key in l.settings.permissions.other.keys() {
                warnings.push(format!(
                    "{name}: permissions.{key} is not honoured by Tascer"
                ));
            }
        }
        let origin = RuleOrigin {
            source_file: Some(name.clone()),
            project_root: Some(l.project_root.clone()),
        };
        let p = &l.settings.permissions;
        for (behavior, list) in [
            (Behavior::Allow, &p.allow),
            (Behavior::Ask, &p.ask),
            (Behavior::Deny, &p.deny),
        ] {
            for raw in list {
                match rules.add(behavior, raw, &origin) {
                    Ok(_) => {}
                    Err(e) if claude => warnings.push(format!(
                        "{name}: the rule {raw:?} is not honoured by Tascer ({e})"
                    )),
                    Err(source) => {
                        return Err(SettingsError::Rule {
                            path: name.clone(),
                            source: Box::new(source),
                        });
                    }
                }
            }
        }
    }
    Ok(rules)
}
