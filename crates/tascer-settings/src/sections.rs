//! [`Settings`]: one settings file, typed section by section.
//!
//! The sections every Tascer session reads (`permissions`, `hooks`, `env`,
//! `safety`, `policies`, `webhooks`) are parsed and checked when the file is read: a
//! malformed one fails the read, naming the file, the line and the column.
//! The sections one part reads (`validation`, `archive`, `check`, `store`)
//! stay in [`Settings::other`], with every key Tascer does not know, and
//! are typed where they are read, with the errors that part has always
//! given: a bad value there fails only that part.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tascer_core::PermissionMode;

use crate::policies::PoliciesSettings;
use crate::safety::{SafetySettings, WebhookSettings};

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
    /// The permission modes Tascer accepts from a host that names its own
    /// (Claude Code's hook input `permission_mode`); another mode is
    /// replaced by the profile's (default: every mode but
    /// `bypassPermissions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller_modes: Option<Vec<PermissionMode>>,
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
    /// The file-access and MCP policies' roots and lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policies: Option<PoliciesSettings>,
    /// Where hook events are sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhooks: Option<Vec<WebhookSettings>>,
    /// Where OpenTelemetry data goes (docs/telemetry.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<crate::telemetry::TelemetrySettings>,
    /// The sections read where they are used (`validation`, `archive`,
    /// `check`, `store`, see the module docs) and every key Tascer does not
    /// use.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The key of the gates' settings (`tascer_guard::gates::ValidationConfig`).
pub const VALIDATION: &str = "validation";
/// The key of the archive settings (`tascer_archive::ArchiveSettings`).
pub const ARCHIVE: &str = "archive";
/// The `contracts` section: the providers and models of a contracts run's
/// roles (`tascer-contracts` interprets it).
pub const CONTRACTS: &str = "contracts";
/// The `webFetch` section: the model that answers WebFetch's prompt
/// (`model`; the `tascer` crate interprets it).
pub const WEB_FETCH: &str = "webFetch";

impl Settings {
    /// Checks what serde cannot: the `safety` object
    /// ([`SafetySettings::validate`]), the `policies` object
    /// ([`PoliciesSettings::validate`]), then each webhook
    /// ([`WebhookSettings::validate`]).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(safety) = &self.safety {
            safety.validate()?;
        }
        if let Some(policies) = &self.policies {
            policies.validate()?;
        }
        for webhook in self.webhooks.iter().flatten() {
            webhook.validate()?;
        }
        if let Some(telemetry) = &self.telemetry {
            telemetry.validate()?;
        }
        Ok(())
    }

    /// The `validation` value, as written (interpreted by the gates).
    pub fn validation(&self) -> Option<&Value> {
        self.other.get(VALIDATION)
    }

    /// The `archive` value, as written.
    pub fn archive(&self) -> Option<&Value> {
        self.other.get(ARCHIVE)
    }

    /// The `contracts` value, as written.
    pub fn contracts(&self) -> Option<&Value> {
        self.other.get(CONTRACTS)
    }

    /// The `webFetch` value, as written.
    pub fn web_fetch(&self) -> Option<&Value> {
        self.other.get(WEB_FETCH)
    }
}
