//! Writing permission changes into Claude Code's settings files, where an
//! SDK's permission update names them (`localSettings`, `projectSettings`,
//! `userSettings`): [`ClaudeSettingsFiles`] says which file each is for a
//! session, [`edit_permissions`] changes that file's `permissions` object
//! and keeps every other key as it was.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::FileError;
use crate::file::read_json;

/// A settings file a permission update can be persisted to (Claude Code's
/// `PermissionUpdateDestination`, the session aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SettingsDestination {
    /// `<project>/.claude/settings.local.json`.
    LocalSettings,
    /// `<project>/.claude/settings.json`.
    ProjectSettings,
    /// `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`.
    UserSettings,
}

impl SettingsDestination {
    /// The destination's name in the SDKs (`localSettings`, …).
    pub fn sdk_name(self) -> &'static str {
        match self {
            SettingsDestination::LocalSettings => "localSettings",
            SettingsDestination::ProjectSettings => "projectSettings",
            SettingsDestination::UserSettings => "userSettings",
        }
    }
}

/// Claude Code's settings files of one session, by destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaudeSettingsFiles {
    /// `.claude/settings.local.json` of the project.
    pub local: PathBuf,
    /// `.claude/settings.json` of the project.
    pub project: PathBuf,
    /// The user's Claude Code settings file, when a home is known.
    pub user: Option<PathBuf>,
}

impl ClaudeSettingsFiles {
    /// The file of `destination`; `None` for the user's when no home is
    /// known.
    pub fn path(&self, destination: SettingsDestination) -> Option<&Path> {
        match destination {
            SettingsDestination::LocalSettings => Some(&self.local),
            SettingsDestination::ProjectSettings => Some(&self.project),
            SettingsDestination::UserSettings => self.user.as_deref(),
        }
    }
}

/// One change to a settings file's `permissions` object.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PermissionsEdit {
    /// Append these rules to the `list` (`allow`, `ask` or `deny`), each once.
    AddRules {
        /// `allow`, `ask` or `deny`.
        list: String,
        /// Rule strings (`Bash(npm test:*)`).
        rules: Vec<String>,
    },
    /// Make the `list` exactly these rules.
    ReplaceRules {
        /// `allow`, `ask` or `deny`.
        list: String,
        /// Rule strings.
        rules: Vec<String>,
    },
    /// Take these rules out of the `list`.
    RemoveRules {
        /// `allow`, `ask` or `deny`.
        list: String,
        /// Rule strings.
        rules: Vec<String>,
    },
    /// Set `defaultMode`.
    SetMode(String),
    /// Append to `additionalDirectories`, each once.
    AddDirectories(Vec<String>),
    /// Take out of `additionalDirectories`.
    RemoveDirectories(Vec<String>),
}

/// Applies `edit` to the settings file at `path` (created, with its
/// directory, when missing), keeping its other keys; the file is replaced
/// at once (written beside it, then renamed). A file that is not a JSON
/// object, or whose `permissions` (or the list edited) has another shape,
/// is left alone and is an error.
pub fn edit_permissions(path: &Path, edit: &PermissionsEdit) -> Result<(), FileError> {
    let invalid = |message: String| FileError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let mut root = match read_json(path)? {
        None => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => return Err(invalid(format!("the file is not a JSON object: {other}"))),
    };
    let permissions = root
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| invalid("permissions is not an object".to_string()))?;
    apply(permissions, edit).map_err(invalid)?;
    write_atomically(path, &Value::Object(root))
}

/// `edit` on a `permissions` object.
fn apply(permissions: &mut Map<String, Value>, edit: &PermissionsEdit) -> Result<(), String> {
    match edit {
        PermissionsEdit::AddRules { list, rules } => add(list_mut(permissions, list)?, rules),
        PermissionsEdit::ReplaceRules { list, rules } => {
            let items = list_mut(permissions, list)?;
            items.clear();
            add(items, rules);
        }
        PermissionsEdit::RemoveRules { list, rules } => {
            list_mut(permissions, list)?
                .retain(|v| !v.as_str().is_some_and(|s| rules.iter().any(|r| r == s)));
        }
        PermissionsEdit::SetMode(mode) => {
            permissions.insert("defaultMode".to_string(), Value::String(mode.clone()));
        }
        PermissionsEdit::AddDirectories(dirs) => {
            add(list_mut(permissions, "additionalDirectories")?, dirs);
        }
        PermissionsEdit::RemoveDirectories(dirs) => {
            list_mut(permissions, "additionalDirectories")?
                .retain(|v| !v.as_str().is_some_and(|s| dirs.iter().any(|d| d == s)));
        }
    }
    Ok(())
}

/// The list `name` of `permissions`, created empty when missing.
fn list_mut<'a>(
    permissions: &'a mut Map<String, Value>,
    name: &str,
) -> Result<&'a mut Vec<Value>, String> {
    permissions
        .entry(name)
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| format!("permissions.{name} is not a list"))
}

/// Appends each of `items` not already in `list`.
fn add(list: &mut Vec<Value>, items: &[String]) {
    for item in items {
        if !list.iter().any(|v| v.as_str() == Some(item)) {
            list.push(Value::String(item.clone()));
        }
    }
}

/// Writes `value` (pretty, with a final newline) beside `path`, then
/// renames it over `path`.
fn write_atomically(path: &Path, value: &Value) -> Result<(), FileError> {
    let write_error = |source| FileError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(write_error)?;
    }
    let mut text = serde_json::to_string_pretty(value).map_err(|e| FileError::Invalid {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    text.push('\n');
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.tascer-{}", std::process::id()));
    std::fs::write(&temp, text).map_err(write_error)?;
    std::fs::rename(&temp, path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        write_error(e)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn edits_keep_the_rest_of_the_file_and_add_each_rule_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude/settings.local.json");
        let add = PermissionsEdit::AddRules {
            list: "allow".into(),
            rules: vec!["Bash(touch:*)".into()],
        };
        edit_permissions(&path, &add).unwrap();
        edit_permissions(&path, &add).unwrap();
        assert_eq!(
            read(&path),
            json!({"permissions": {"allow": ["Bash(touch:*)"]}})
        );

        std::fs::write(
            &path,
            r#"{"model": "x", "permissions": {"allow": ["Read", "Bash(touch:*)"], "deny": ["WebFetch"]}}"#,
        )
        .unwrap();
        let remove = PermissionsEdit::RemoveRules {
            list: "allow".into(),
            rules: vec!["Read".into()],
        };
        edit_permissions(&path, &remove).unwrap();
        edit_permissions(&path, &PermissionsEdit::SetMode("acceptEdits".into())).unwrap();
        edit_permissions(
            &path,
            &PermissionsEdit::AddDirectories(vec!["/data".into()]),
        )
        .unwrap();
        let replace = PermissionsEdit::ReplaceRules {
            list: "deny".into(),
            rules: vec!["Bash(rm:*)".into()],
        };
        edit_permissions(&path, &replace).unwrap();
        assert_eq!(
            read(&path),
            json!({"model": "x", "permissions": {
                "allow": ["Bash(touch:*)"], "deny": ["Bash(rm:*)"],
                "defaultMode": "acceptEdits", "additionalDirectories": ["/data"]}})
        );
        let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }

    #[test]
    fn a_file_of_another_shape_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, r#"{"permissions": {"allow": "Read"}}"#).unwrap();
        let add = PermissionsEdit::AddRules {
            list: "allow".into(),
            rules: vec!["Write".into()],
        };
        let err = edit_permissions(&path, &add).unwrap_err().to_string();
        assert!(err.contains("permissions.allow is not a list"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            r#"{"permissions": {"allow": "Read"}}"#
        );
    }
}
