//! The `check` section: the lint and test commands of a repository, for
//! the gatekeeper's `check` tool.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::FileError;
use crate::file::read_json;
use crate::loader::SettingsLoader;

/// The `check` section of a settings file (`check`, or `mcpServe.check`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckSettings {
    /// Lint commands (shell command lines), run first.
    pub lint: Vec<String>,
    /// Test commands, run after the lint commands.
    pub test: Vec<String>,
    /// Per-command timeout in seconds, when set.
    pub timeout_secs: Option<u64>,
}

impl CheckSettings {
    /// The section in a settings file's JSON: `check`, else
    /// `mcpServe.check`; `None` when there is neither. `Err` says what is
    /// malformed and how it should look.
    pub fn of(json: &Value) -> Result<Option<CheckSettings>, String> {
        let Some(check) = json
            .get("check")
            .or_else(|| json.pointer("/mcpServe/check"))
        else {
            return Ok(None);
        };
        let timeout_secs = match check.get("timeoutSecs") {
            None => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|s| *s > 0)
                    .ok_or("check.timeoutSecs must be a positive integer")?,
            ),
        };
        let settings = CheckSettings {
            lint: commands(check.get("lint"), "lint")?,
            test: commands(check.get("test"), "test")?,
            timeout_secs,
        };
        if settings.lint.is_empty() && settings.test.is_empty() {
            return Err(
                "the check section names no command (set \"lint\" and/or \"test\")".to_string(),
            );
        }
        Ok(Some(settings))
    }
}

/// A string or an array of strings.
fn commands(value: Option<&Value>, key: &str) -> Result<Vec<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("check.{key} must hold strings"))
            })
            .collect(),
        Some(_) => Err(format!(
            "check.{key} must be a command string or an array of them"
        )),
    }
}

/// The check commands configured for `repo`, with the file they come
/// from: the `check` section of `.tascer/settings.local.json`, else of
/// `.tascer/settings.json` (the first file with a section wins whole;
/// there is no merging). `None` when neither has one.
pub fn check_settings(repo: &Path) -> Result<Option<(PathBuf, CheckSettings)>, FileError> {
    let files = SettingsLoader::new(repo).sources(false, true, true).files();
    for file in files {
        let Some(json) = read_json(&file.path)? else {
            continue;
        };
        match CheckSettings::of(&json) {
            Ok(Some(check)) => return Ok(Some((file.path, check))),
            Ok(None) => {}
            Err(message) => {
                return Err(FileError::Invalid {
                    path: file.path,
                    message,
                });
            }
        }
    }
    Ok(None)
}
