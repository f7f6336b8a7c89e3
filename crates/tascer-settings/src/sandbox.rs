//! The `sandbox` section: the OS sandbox under the Bash tool's commands
//! (`tascer-sandbox` applies it; docs/sandbox.md describes it).
//!
//! ```json
//! { "sandbox": { "enabled": true, "network": false,
//!                "allowWrite": ["../shared", "~/.cache/pip"],
//!                "denyRead": ["~/secrets"], "failIfUnavailable": false,
//!                "excludedCommands": ["docker:*"], "allowUnsandboxedCommands": true,
//!                "claudeCodeBash": true } }
//! ```
//!
//! Each switch comes from the highest layer that sets it; `allowWrite`,
//! `denyRead` and `excludedCommands` are the union of every layer's, a
//! relative path anchored at its layer's project root and `~/` at the
//! user's home. Claude Code's `network` object (per-host allow-lists) is
//! not honoured: the network stays off, with a warning
//! ([`LayeredSettings::unhonoured`]).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::SettingsError;
use crate::layers::{LayeredSettings, SettingsLayer};

/// The key of the sandbox settings.
pub const SANDBOX: &str = "sandbox";

/// The `sandbox` section, layered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxSettings {
    /// Run commands sandboxed (default true).
    pub enabled: bool,
    /// Let sandboxed commands use the network (default false).
    pub network: bool,
    /// Extra writable paths, absolute.
    pub allow_write: Vec<PathBuf>,
    /// Extra unreadable paths, absolute.
    pub deny_read: Vec<PathBuf>,
    /// Refuse to run when the kernel cannot sandbox (default false: a
    /// warning at start).
    pub fail_if_unavailable: bool,
    /// Commands (`Bash(…)` specifiers: `docker:*`) that may run outside the
    /// sandbox when the call asks to (`dangerouslyDisableSandbox`) without
    /// a person's approval.
    pub excluded_commands: Vec<String>,
    /// Whether a call may ask to run outside the sandbox at all (default
    /// true; Claude Code's `allowUnsandboxedCommands`).
    pub allow_unsandboxed_commands: bool,
    /// Under `tascer hook`, answer Claude Code's permitted Bash calls with
    /// the command rewritten to run through `tascer sandbox` (default
    /// false; on in the profile `tascer install claude-code` writes).
    pub claude_code_bash: bool,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            enabled: true,
            network: false,
            allow_write: Vec::new(),
            deny_read: Vec::new(),
            fail_if_unavailable: false,
            excluded_commands: Vec::new(),
            allow_unsandboxed_commands: true,
            claude_code_bash: false,
        }
    }
}

impl LayeredSettings {
    /// The `sandbox` section of every layer, layered (see the module
    /// docs); the defaults when no layer has one. A malformed value is an
    /// error naming its file.
    pub fn sandbox(&self) -> Result<SandboxSettings, SettingsError> {
        let mut out = SandboxSettings::default();
        let (mut enabled, mut network, mut fail, mut unsandboxed) = (None, None, None, None);
        let mut claude_code_bash = None;
        for layer in &self.layers {
            let Some(section) = layer.settings.other.get(SANDBOX) else {
                continue;
            };
            let invalid = |message: String| SettingsError::Invalid {
                path: layer.name(),
                message,
            };
            let Value::Object(obj) = section else {
                return Err(invalid(format!("sandbox must be an object, not {section}")));
            };
            let flag = |key: &str| match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Bool(b)) => Ok(Some(*b)),
                Some(other) => Err(invalid(format!(
                    "sandbox.{key} must be true or false, not {other}"
                ))),
            };
            enabled = enabled.or(flag("enabled")?);
            // Claude Code's `network` object (domains, ports, sockets) has
            // no counterpart: it is a warning (`unhonoured`) and, failing
            // closed, this layer's network is off.
            if obj.get("network").is_some_and(Value::is_object) {
                network = network.or(Some(false));
            } else {
                network = network.or(flag("network")?);
            }
            fail = fail.or(flag("failIfUnavailable")?);
            unsandboxed = unsandboxed.or(flag("allowUnsandboxedCommands")?);
            claude_code_bash = claude_code_bash.or(flag("claudeCodeBash")?);
            for command in
                strings(obj.get("excludedCommands"), "excludedCommands").map_err(invalid)?
            {
                if !out.excluded_commands.contains(&command) {
                    out.excluded_commands.push(command);
                }
            }
            for (key, list) in [
                ("allowWrite", &mut out.allow_write),
                ("denyRead", &mut out.deny_read),
            ] {
                for path in paths(obj.get(key), key, layer).map_err(invalid)? {
                    if !list.contains(&path) {
                        list.push(path);
                    }
                }
            }
        }
        out.enabled = enabled.unwrap_or(true);
        out.network = network.unwrap_or(false);
        out.fail_if_unavailable = fail.unwrap_or(false);
        out.allow_unsandboxed_commands = unsandboxed.unwrap_or(true);
        out.claude_code_bash = claude_code_bash.unwrap_or(false);
        Ok(out)
    }
}

/// A list of paths, made absolute against the layer.
fn paths(value: Option<&Value>, key: &str, layer: &SettingsLayer) -> Result<Vec<PathBuf>, String> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(format!(
                "sandbox.{key} must be a list of paths, not {other}"
            ));
        }
    };
    items
        .iter()
        .map(|item| match item.as_str() {
            Some(text) if !text.is_empty() => Ok(anchor(text, &layer.project_root)),
            _ => Err(format!("sandbox.{key} entries must be paths, not {item}")),
        })
        .collect()
}

/// A list of non-empty strings.
fn strings(value: Option<&Value>, key: &str) -> Result<Vec<String>, String> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(format!(
                "sandbox.{key} must be a list of strings, not {other}"
            ));
        }
    };
    items
        .iter()
        .map(|item| match item.as_str() {
            Some(text) if !text.trim().is_empty() => Ok(text.trim().to_string()),
            _ => Err(format!(
                "sandbox.{key} entries must be non-empty strings, not {item}"
            )),
        })
        .collect()
}

/// `~/…` under the home, a relative path under `root`.
fn anchor(text: &str, root: &Path) -> PathBuf {
    if let Some(rest) = text.strip_prefix("~/")
        && let Some(home) = std::env::home_dir()
    {
        return home.join(rest);
    }
    let path = Path::new(text);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::layers::SettingsSource;
    use crate::sections::Settings;

    fn layer(source: SettingsSource, root: &str, value: Value) -> SettingsLayer {
        let settings: Settings = serde_json::from_value(value).unwrap();
        SettingsLayer {
            source,
            path: Some(PathBuf::from(format!("{root}/settings.json"))),
            project_root: PathBuf::from(root),
            settings,
        }
    }

    #[test]
    fn defaults_without_a_section() {
        let s = LayeredSettings::default().sandbox().unwrap();
        assert!(s.enabled && !s.network && !s.fail_if_unavailable);
        assert!(s.allow_write.is_empty());
    }

    #[test]
    fn switches_from_the_highest_layer_and_lists_merged() {
        let layered = LayeredSettings {
            layers: vec![
                layer(
                    SettingsSource::Local,
                    "/p",
                    json!({"sandbox": {"network": true, "allowWrite": ["out"]}}),
                ),
                layer(
                    SettingsSource::User,
                    "/u",
                    json!({"sandbox": {"network": false, "enabled": false,
                                       "allowWrite": ["/abs"], "denyRead": ["s"]}}),
                ),
            ],
        };
        let s = layered.sandbox().unwrap();
        assert!(s.network);
        assert!(!s.enabled);
        assert_eq!(
            s.allow_write,
            vec![PathBuf::from("/p/out"), PathBuf::from("/abs")]
        );
        assert_eq!(s.deny_read, vec![PathBuf::from("/u/s")]);
    }

    #[test]
    fn a_bad_value_names_its_file() {
        let layered = LayeredSettings {
            layers: vec![layer(
                SettingsSource::Project,
                "/p",
                json!({"sandbox": {"network": "yes"}}),
            )],
        };
        let err = layered.sandbox().unwrap_err().to_string();
        assert!(
            err.contains("/p/settings.json") && err.contains("sandbox.network"),
            "{err}"
        );
    }

    #[test]
    fn escape_settings_and_claude_codes_network_object() {
        let layered = LayeredSettings {
            layers: vec![
                layer(
                    SettingsSource::Project,
                    "/p",
                    json!({"sandbox": {"excludedCommands": ["docker:*"],
                                       "network": {"allowedDomains": ["github.com"]}}}),
                ),
                layer(
                    SettingsSource::User,
                    "/u",
                    json!({"sandbox": {"excludedCommands": ["npm publish", "docker:*"],
                                       "allowUnsandboxedCommands": false, "network": true}}),
                ),
            ],
        };
        let s = layered.sandbox().unwrap();
        assert_eq!(s.excluded_commands, vec!["docker:*", "npm publish"]);
        assert!(!s.allow_unsandboxed_commands);
        // The per-host object cannot be honoured: no network, and a
        // warning (`unhonoured`).
        assert!(!s.network);
        let warnings = layered.unhonoured();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("sandbox.network's settings")),
            "{warnings:?}"
        );
        assert!(
            !warnings.iter().any(|w| w.contains("excludedCommands")),
            "{warnings:?}"
        );
        assert!(
            LayeredSettings::default()
                .sandbox()
                .unwrap()
                .allow_unsandboxed_commands
        );
    }
}
