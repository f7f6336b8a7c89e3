//! [`LayeredSettings`]: every settings file read, highest precedence
//! first, and the sections that layering decides.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};
use tascer_core::PermissionMode;

use crate::error::SettingsError;
use crate::safety::WebhookSettings;
use crate::sections::Settings;
use crate::telemetry::TelemetrySettings;

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

impl SettingsSource {
    /// The source an SDK's `setting_sources` entry names (`user`,
    /// `project`, `local`: the Agent SDKs' names), if any.
    pub fn from_sdk_name(name: &str) -> Option<Self> {
        match name {
            "user" => Some(SettingsSource::User),
            "project" => Some(SettingsSource::Project),
            "local" => Some(SettingsSource::Local),
            _ => None,
        }
    }
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

impl SettingsLayer {
    /// How errors name the layer: its file, or `--settings` for inline
    /// JSON.
    pub fn name(&self) -> String {
        self.path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "--settings".into())
    }
}

/// Every settings file read, highest precedence first (see the crate
/// docs for the order and how each section merges).
#[derive(Debug, Clone, Default)]
pub struct LayeredSettings {
    /// The layers, highest precedence first.
    pub layers: Vec<SettingsLayer>,
}

impl LayeredSettings {
    /// `defaultMode` from the highest layer that sets it.
    pub fn default_mode(&self) -> Option<PermissionMode> {
        self.layers
            .iter()
            .find_map(|l| l.settings.permissions.default_mode)
    }

    /// `callerModes` from the highest layer that sets it.
    pub fn caller_modes(&self) -> Option<&[PermissionMode]> {
        self.layers
            .iter()
            .find_map(|l| l.settings.permissions.caller_modes.as_deref())
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

    /// The `telemetry` sections of every layer, each key from the highest
    /// layer that sets it (`headers` and `resourceAttributes` merged key by
    /// key).
    pub fn telemetry(&self) -> TelemetrySettings {
        self.layers
            .iter()
            .filter_map(|l| l.settings.telemetry.as_ref())
            .fold(TelemetrySettings::default(), |high, low| high.over(low))
    }

    /// The `validation` value of the highest layer that has one, as
    /// written (the gates interpret it).
    pub fn validation(&self) -> Option<&Value> {
        self.layers.iter().find_map(|l| l.settings.validation())
    }

    /// The `archive` objects of every layer merged key by key, a higher
    /// layer's keys over a lower one's (`tascer-archive` interprets them).
    /// A layer whose `archive` is neither an object nor null is an error.
    pub fn archive(&self) -> Result<Map<String, Value>, SettingsError> {
        self.merged_object(crate::sections::ARCHIVE, Settings::archive)
    }

    /// The `contracts` objects of every layer merged key by key, as
    /// [`archive`](Self::archive) (`tascer-contracts` interprets them).
    pub fn contracts(&self) -> Result<Map<String, Value>, SettingsError> {
        self.merged_object(crate::sections::CONTRACTS, Settings::contracts)
    }

    /// The `webFetch` objects of every layer merged key by key, as
    /// [`archive`](Self::archive) (the `tascer` crate interprets them).
    pub fn web_fetch(&self) -> Result<Map<String, Value>, SettingsError> {
        self.merged_object(crate::sections::WEB_FETCH, Settings::web_fetch)
    }

    /// The object section `get` reads, merged over the layers.
    fn merged_object(
        &self,
        name: &str,
        get: fn(&Settings) -> Option<&Value>,
    ) -> Result<Map<String, Value>, SettingsError> {
        let mut merged = Map::new();
        for layer in self.layers.iter().rev() {
            match get(&layer.settings) {
                Some(Value::Object(obj)) => merged.extend(obj.clone()),
                None | Some(Value::Null) => {}
                Some(other) => {
                    return Err(SettingsError::Invalid {
                        path: layer.name(),
                        message: format!("{name} must be an object, not {other}"),
                    });
                }
            }
        }
        Ok(merged)
    }
}
