//! Which keys of a settings file Tascer reads. Every other key — a Claude
//! Code setting Tascer has no counterpart for (`model`, `statusLine`,
//! `enabledPlugins`, …), or a typo — is named in a warning, never
//! silently dropped ([`LayeredSettings::unhonoured`]). The `permissions`
//! keys are `tascer-guard`'s to judge (it parses the rules).

use serde_json::Value;

use crate::layers::LayeredSettings;

/// The top-level keys some part of Tascer reads (`$schema` is metadata).
pub const HONOURED_KEYS: &[&str] = &[
    "$schema",
    "permissions",
    "hooks",
    "env",
    "safety",
    "webhooks",
    "telemetry",
    crate::sections::VALIDATION,
    crate::sections::ARCHIVE,
    crate::sections::CONTRACTS,
    crate::sections::WEB_FETCH,
    crate::sandbox::SANDBOX,
    "check",
    "mcpServe",
    crate::home::STORE,
    "mcpServers",
];

/// The keys of the `sandbox` section Tascer reads.
const SANDBOX_KEYS: &[&str] = &[
    "enabled",
    "network",
    "allowWrite",
    "denyRead",
    "failIfUnavailable",
    "excludedCommands",
    "allowUnsandboxedCommands",
    "claudeCodeBash",
];

impl LayeredSettings {
    /// One warning per key of a layer that Tascer does not honour, naming
    /// the file: top-level keys outside [`HONOURED_KEYS`], and `sandbox`
    /// keys (or a `network` object, Claude Code's shape) it does not read.
    pub fn unhonoured(&self) -> Vec<String> {
        let mut out = Vec::new();
        for layer in &self.layers {
            let name = layer.name();
            for key in layer.settings.other.keys() {
                if !HONOURED_KEYS.contains(&key.as_str()) {
                    out.push(format!("{name}: {key} is not honoured by Tascer"));
                }
            }
            let Some(Value::Object(sandbox)) = layer.settings.other.get(crate::sandbox::SANDBOX)
            else {
                continue;
            };
            for (key, value) in sandbox {
                if !SANDBOX_KEYS.contains(&key.as_str()) {
                    out.push(format!("{name}: sandbox.{key} is not honoured by Tascer"));
                } else if key == "network" && value.is_object() {
                    out.push(format!(
                        "{name}: sandbox.network's settings are not honoured by Tascer (its sandbox \
                         takes sandbox.network true or false: the network stays off)"
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::layers::{SettingsLayer, SettingsSource};

    #[test]
    fn names_every_key_tascer_does_not_read() {
        let settings = serde_json::from_value(json!({
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "permissions": {"allow": ["Read"]},
            "model": "opus",
            "statusLine": {"type": "command"},
            "sandbox": {"enabled": true, "excludedCommands": ["docker"],
                        "autoAllowBashIfSandboxed": true,
                        "network": {"allowLocalBinding": true}},
            "check": {}
        }))
        .unwrap();
        let layered = LayeredSettings {
            layers: vec![SettingsLayer {
                source: SettingsSource::ClaudeProject,
                path: Some(PathBuf::from("/p/.claude/settings.json")),
                project_root: PathBuf::from("/p"),
                settings,
            }],
        };
        let warnings = layered.unhonoured();
        assert_eq!(warnings.len(), 4, "{warnings:#?}");
        for part in [
            "/p/.claude/settings.json: model is not honoured",
            "statusLine is not honoured",
            "sandbox.autoAllowBashIfSandboxed is not honoured",
            "sandbox.network's settings are not honoured",
        ] {
            assert!(
                warnings.iter().any(|w| w.contains(part)),
                "{part}: {warnings:#?}"
            );
        }
    }
}
