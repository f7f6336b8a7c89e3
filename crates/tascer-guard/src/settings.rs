//! Settings files (`settings.json`) and their precedence.
//!
//! Sources, highest precedence first (Claude Code §6.4, with Tascer's own
//! files ahead of Claude Code's at the same level):
//!
//! 1. flag settings (`--settings FILE_OR_JSON`)
//! 2. local: `<cwd>/.tascer/settings.local.json`, then `<cwd>/.claude/settings.local.json`
//! 3. project: `<cwd>/.tascer/settings.json`, then `<cwd>/.claude/settings.json`
//! 4. user: `<home>/.tascer/settings.json`, then `<home>/.claude/settings.json`
//!
//! Claude Code's files are read only with [`SettingsLoader::claude_compat`].
//! Permission rule lists merge across all sources; single values
//! (`defaultMode`, each `env` variable) come from the highest source that
//! sets them; `disableBypassPermissionsMode: "disable"` anywhere wins.
//! The `safety` object (docs/reviewers.md) merges part by part: each of
//! `autoApprove`, each reviewer and `reviewers.model` comes from the
//! highest layer that sets it; `pathClasses` takes its switch and
//! `sensitiveAction` from the highest layer and the union of every layer's
//! `trusted` and `sensitive` lists; `webhooks` are the union of every
//! layer's (one per URL, the highest layer's). Unknown keys at the top
//! level are kept in `other` and otherwise ignored; inside `safety` and
//! `webhooks` they are errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::permissions::{
    Behavior, PermissionEngineBuilder, PermissionMode, PermissionRules, RuleError, RuleOrigin,
};
use crate::review::ReviewersConfig;
use crate::safety::settings::{SafetySettings, SensitiveAction, WebhookSettings};
use crate::safety::{DEFAULT_AUTO_APPROVE_TOOLS, DEFAULT_TRUSTED, PathClasses};

/// The `permissions` object of a settings file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionsSettings {
    /// Allow rules.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Ask rules.
    #[serde(default)]
    pub ask: Vec<String>,
    /// Deny rules.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Mode used when none is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_mode: Option<PermissionMode>,
    /// Extra working directories.
    #[serde(default)]
    pub additional_directories: Vec<String>,
    /// `"disable"` forbids `bypassPermissions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_bypass_permissions_mode: Option<String>,
    /// Keys Tascer does not use.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One settings file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Permission rules and options.
    #[serde(default)]
    pub permissions: PermissionsSettings,
    /// Hook configuration, kept raw for the hooks module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Value>,
    /// Environment variables for tools and hooks.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Auto-approve, path classes and the LLM reviewers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety: Option<SafetySettings>,
    /// Where hook events are sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhooks: Option<Vec<WebhookSettings>>,
    /// Keys Tascer does not use.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The safety chain's static parts and reviewers, merged across layers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SafetyConfig {
    /// The tools low-risk auto-approve covers, when it is on.
    pub auto_approve: Option<Vec<String>>,
    /// The path classes, when they are on.
    pub path_classes: Option<PathClasses>,
    /// The reviewers that are on.
    pub reviewers: ReviewersConfig,
}

/// Where a settings layer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SettingsSource {
    /// `--settings`.
    Flag,
    /// `.tascer/settings.local.json`.
    Local,
    /// `.claude/settings.local.json`.
    ClaudeLocal,
    /// `.tascer/settings.json`.
    Project,
    /// `.claude/settings.json`.
    ClaudeProject,
    /// `~/.tascer/settings.json`.
    User,
    /// `~/.claude/settings.json`.
    ClaudeUser,
}

/// A settings-loading failure.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// The file exists but cannot be read (or a `--settings` file is missing).
    #[error("cannot read settings file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Malformed JSON or wrong value types.
    #[error("invalid settings in {path} at line {line}, column {column}: {message}")]
    Parse {
        /// The file (or `--settings` for inline JSON).
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Well-formed JSON whose values do not make sense together.
    #[error("invalid settings in {path}: {message}")]
    Invalid {
        /// The file (or `--settings`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A malformed permission rule.
    #[error("invalid settings in {path}: {source}")]
    Rule {
        /// The file.
        path: String,
        /// The rule error.
        source: RuleError,
    },
}

/// One loaded settings file.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsLayer {
    /// Which source.
    pub source: SettingsSource,
    /// The file (`None` for inline `--settings` JSON).
    pub path: Option<PathBuf>,
    /// The directory `/path` rules and relative directories are anchored at.
    pub project_root: PathBuf,
    /// The parsed file.
    pub settings: Settings,
}

/// All loaded layers, highest precedence first, with their rules parsed.
#[derive(Debug, Clone, Default)]
pub struct LoadedSettings {
    /// The layers, highest precedence first.
    pub layers: Vec<SettingsLayer>,
    /// Rules merged across every layer.
    pub rules: PermissionRules,
}

impl LoadedSettings {
    /// `defaultMode` from the highest layer that sets it.
    pub fn default_mode(&self) -> Option<PermissionMode> {
        self.layers
            .iter()
            .find_map(|l| l.settings.permissions.default_mode)
    }

    /// True when any layer sets `disableBypassPermissionsMode: "disable"`.
    pub fn bypass_disabled(&self) -> bool {
        self.layers.iter().any(|l| {
            l.settings
                .permissions
                .disable_bypass_permissions_mode
                .as_deref()
                == Some("disable")
        })
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

    /// Environment variables; a higher layer wins per variable.
    pub fn env(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for l in self.layers.iter().rev() {
            out.extend(l.settings.env.clone());
        }
        out
    }

    /// Raw `hooks` objects, highest precedence first.
    pub fn hooks(&self) -> Vec<(SettingsSource, &Value)> {
        self.layers
            .iter()
            .filter_map(|l| l.settings.hooks.as_ref().map(|h| (l.source, h)))
            .collect()
    }

    /// The `safety` objects of every layer, merged (see the module docs).
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
        }
        SafetyConfig {
            auto_approve,
            path_classes,
            reviewers: ReviewersConfig::from_settings(&merged),
        }
    }

    /// Every layer's webhooks, one per URL (the highest layer's).
    pub fn webhooks(&self) -> Vec<WebhookSettings> {
        let mut out: Vec<WebhookSettings> = Vec::new();
        for l in &self.layers {
            for w in l.settings.webhooks.iter().flatten() {
                if !out.iter().any(|o| o.url == w.url) {
                    out.push(w.clone());
                }
            }
        }
        out
    }

    /// Configures an engine builder: rules, default mode, additional
    /// directories and the bypass switch.
    pub fn apply(
        &self,
        builder: PermissionEngineBuilder,
        home: Option<&Path>,
    ) -> PermissionEngineBuilder {
        let mut b = builder
            .rules(self.rules.clone())
            .disable_bypass(self.bypass_disabled());
        if let Some(mode) = self.default_mode() {
            b = b.mode(mode);
        }
        for d in self.additional_directories(home) {
            b = b.additional_directory(d);
        }
        b
    }
}

/// Finds, reads and merges settings files.
#[derive(Debug, Clone)]
pub struct SettingsLoader {
    cwd: PathBuf,
    home: Option<PathBuf>,
    claude: bool,
    flag: Option<String>,
    user_file: Option<PathBuf>,
    user: bool,
    project: bool,
    local: bool,
}

impl SettingsLoader {
    /// A loader for a session in `cwd`; reads Tascer's user (when a home is
    /// given), project and local files.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        SettingsLoader {
            cwd: cwd.into(),
            home: None,
            claude: false,
            flag: None,
            user_file: None,
            user: true,
            project: true,
            local: true,
        }
    }

    /// The home directory holding the user files.
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Reads Tascer's user settings from this file instead of
    /// `<home>/.tascer/settings.json` (e.g. `$TASCER_HOME/settings.json`).
    pub fn user_settings_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.user_file = Some(path.into());
        self
    }

    /// Also read Claude Code's `.claude/settings*.json` files.
    pub fn claude_compat(mut self, yes: bool) -> Self {
        self.claude = yes;
        self
    }

    /// The `--settings` value: a file path (relative to cwd) or inline JSON.
    pub fn flag_settings(mut self, value: impl Into<String>) -> Self {
        self.flag = Some(value.into());
        self
    }

    /// Which filesystem layers to read (`--setting-sources`); flag settings
    /// are always read.
    pub fn sources(mut self, user: bool, project: bool, local: bool) -> Self {
        self.user = user;
        self.project = project;
        self.local = local;
        self
    }

    /// Loads every layer that exists, highest precedence first, and
    /// parses their rules.
    pub fn load(&self) -> Result<LoadedSettings, SettingsError> {
        let mut layers: Vec<SettingsLayer> = self.flag_layer()?.into_iter().collect();
        for (source, path, root) in self.files() {
            if let Some(layer) = read_layer(source, path, root)? {
                layers.push(layer);
            }
        }
        let rules = merged_rules(&layers)?;
        Ok(LoadedSettings { layers, rules })
    }

    /// The `--settings` layer: inline JSON, or a file that must exist.
    fn flag_layer(&self) -> Result<Option<SettingsLayer>, SettingsError> {
        let Some(flag) = &self.flag else {
            return Ok(None);
        };
        let trimmed = flag.trim_start();
        if trimmed.starts_with('{') {
            return Ok(Some(SettingsLayer {
                source: SettingsSource::Flag,
                path: None,
                project_root: self.cwd.clone(),
                settings: parse(trimmed, "--settings")?,
            }));
        }
        let path = self.cwd.join(flag);
        let text = std::fs::read_to_string(&path).map_err(|source| SettingsError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let settings = parse(&text, &path.display().to_string())?;
        Ok(Some(SettingsLayer {
            source: SettingsSource::Flag,
            project_root: self.cwd.clone(),
            path: Some(path),
            settings,
        }))
    }

    /// The settings files to read, highest precedence first: each with
    /// its source and the directory its rules are anchored at.
    fn files(&self) -> Vec<(SettingsSource, PathBuf, PathBuf)> {
        let mut files = Vec::new();
        let cwd = &self.cwd;
        if self.local {
            files.push((
                SettingsSource::Local,
                cwd.join(".tascer/settings.local.json"),
                cwd.clone(),
            ));
            if self.claude {
                files.push((
                    SettingsSource::ClaudeLocal,
                    cwd.join(".claude/settings.local.json"),
                    cwd.clone(),
                ));
            }
        }
        if self.project {
            files.push((
                SettingsSource::Project,
                cwd.join(".tascer/settings.json"),
                cwd.clone(),
            ));
            if self.claude {
                files.push((
                    SettingsSource::ClaudeProject,
                    cwd.join(".claude/settings.json"),
                    cwd.clone(),
                ));
            }
        }
        if self.user {
            let user_file = self
                .user_file
                .clone()
                .or_else(|| self.home.as_ref().map(|h| h.join(".tascer/settings.json")));
            if let Some(file) = user_file {
                let root = self.home.clone().unwrap_or_else(|| cwd.clone());
                files.push((SettingsSource::User, file, root));
            }
        }
        if self.user
            && self.claude
            && let Some(home) = &self.home
        {
            files.push((
                SettingsSource::ClaudeUser,
                home.join(".claude/settings.json"),
                home.clone(),
            ));
        }
        files
    }
}

/// One settings file as a layer; `None` when it does not exist.
fn read_layer(
    source: SettingsSource,
    path: PathBuf,
    root: PathBuf,
) -> Result<Option<SettingsLayer>, SettingsError> {
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(SettingsError::Io {
                path: path.display().to_string(),
                source,
            });
        }
    };
    let settings = parse(&text, &path.display().to_string())?;
    Ok(Some(SettingsLayer {
        source,
        path: Some(path),
        project_root: root,
        settings,
    }))
}

/// Every layer's permission rules, parsed with the file they came from.
fn merged_rules(layers: &[SettingsLayer]) -> Result<PermissionRules, SettingsError> {
    let mut rules = PermissionRules::new();
    for l in layers {
        let name = l
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "--settings".into());
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
                rules
                    .add(behavior, raw, &origin)
                    .map_err(|source| SettingsError::Rule {
                        path: name.clone(),
                        source,
                    })?;
            }
        }
    }
    Ok(rules)
}

fn parse(text: &str, path: &str) -> Result<Settings, SettingsError> {
    let settings: Settings = serde_json::from_str(text).map_err(|e| SettingsError::Parse {
        path: path.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let invalid = |message: String| SettingsError::Invalid {
        path: path.to_string(),
        message,
    };
    if let Some(safety) = &settings.safety {
        safety.validate().map_err(invalid)?;
    }
    for webhook in settings.webhooks.iter().flatten() {
        webhook.validate().map_err(invalid)?;
    }
    Ok(settings)
}
