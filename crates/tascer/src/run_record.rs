//! What a session records at its start so that it can be replayed
//! (`tascer replay`, docs/replay.md): the options that decide its
//! permissions, and — for a replay — the session it replays.
//!
//! They go into the ledger's `session_start` entry (its `context`, under
//! [`GOVERNANCE_KEY`] and [`REPLAY_OF_KEY`]), so they are hash-chained and
//! signed with the rest. `--settings` is not recorded (inline settings can
//! hold secrets): a replay is given it again.

use std::path::PathBuf;

use serde_json::{Value, json};
use tascer_guard::permissions::PermissionMode;
use tascer_guard::settings::SettingsSource;

use crate::options::Options;

/// The key of the governance options in `session_start`'s context.
pub const GOVERNANCE_KEY: &str = "governance";
/// The key of the replayed session in a replay's `session_start` context.
pub const REPLAY_OF_KEY: &str = "replay_of";

/// The governance options of `options`, as recorded.
pub fn governance(options: &Options) -> Value {
    json!({
        "permission_mode": options.permission_mode.map(PermissionMode::as_str),
        "allowed_tools": options.allowed_tools,
        "disallowed_tools": options.disallowed_tools,
        "tools": options.tools,
        "setting_sources": options.setting_sources,
        "claude_settings": options.claude_settings,
        "additional_directories": options.additional_directories,
        "settings_given": options.settings.is_some(),
    })
}

/// Sets the governance options recorded in `recorded` (see
/// [`governance`]) on `options`. A field that is missing is left as it
/// is; what is recorded but cannot be applied (an unknown mode or setting
/// source) is returned, one line each, for the caller to warn about.
pub fn apply_governance(recorded: &Value, options: &mut Options) -> Vec<String> {
    let mut not_applied = Vec::new();
    let strings = |key: &str| -> Option<Vec<String>> {
        recorded.get(key).and_then(Value::as_array).map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
    };
    if let Some(mode) = recorded.get("permission_mode").and_then(Value::as_str) {
        match mode.parse() {
            Ok(mode) => options.permission_mode = Some(mode),
            Err(_) => not_applied.push(format!("the recorded permission mode {mode:?} is unknown")),
        }
    }
    if let Some(rules) = strings("allowed_tools") {
        options.allowed_tools = rules;
    }
    if let Some(rules) = strings("disallowed_tools") {
        options.disallowed_tools = rules;
    }
    if let Some(tools) = strings("tools") {
        options.tools = Some(tools);
    }
    if let Some(sources) = strings("setting_sources") {
        options.setting_sources = Vec::new();
        for name in sources {
            match SettingsSource::from_sdk_name(&name) {
                Some(source) => options.setting_sources.push(source),
                None => {
                    not_applied.push(format!("the recorded setting source {name:?} is unknown"))
                }
            }
        }
    }
    if let Some(on) = recorded.get("claude_settings").and_then(Value::as_bool) {
        options.claude_settings = on;
    }
    if let Some(dirs) = strings("additional_directories") {
        options.additional_directories = dirs.into_iter().map(PathBuf::from).collect();
    }
    not_applied
}

/// Whether the recorded session was given `--settings` (which is not
/// recorded, see the module documentation).
pub fn settings_given(recorded: &Value) -> bool {
    recorded
        .get("settings_given")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_governance_comes_back_as_it_was() {
        let mut options = Options::new();
        options.permission_mode = Some(PermissionMode::AcceptEdits);
        options.allowed_tools = vec!["Bash(ls:*)".into()];
        options.disallowed_tools = vec!["Bash(rm:*)".into()];
        options.setting_sources = vec![SettingsSource::Project, SettingsSource::Local];
        options.additional_directories = vec![PathBuf::from("/data")];
        let recorded = governance(&options);
        let mut back = Options::new();
        assert_eq!(apply_governance(&recorded, &mut back), Vec::<String>::new());
        assert_eq!(back.permission_mode, Some(PermissionMode::AcceptEdits));
        assert_eq!(back.allowed_tools, options.allowed_tools);
        assert_eq!(back.disallowed_tools, options.disallowed_tools);
        assert_eq!(back.setting_sources, options.setting_sources);
        assert_eq!(back.additional_directories, options.additional_directories);
        assert_eq!(back.tools, None);
        assert!(!settings_given(&recorded));
    }

    #[test]
    fn what_cannot_be_applied_is_said() {
        let recorded = serde_json::json!({"permission_mode": "sometimes", "setting_sources": ["project", "elsewhere"]});
        let mut options = Options::new();
        let not_applied = apply_governance(&recorded, &mut options);
        assert_eq!(
            not_applied,
            [
                "the recorded permission mode \"sometimes\" is unknown",
                "the recorded setting source \"elsewhere\" is unknown"
            ]
        );
        assert_eq!(options.setting_sources, [SettingsSource::Project]);
        assert_eq!(options.permission_mode, None);
    }
}
