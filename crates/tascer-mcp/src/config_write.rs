//! Writes server entries into the files [`crate::load_mcp_servers`] reads,
//! in Claude Code's shapes and scopes (`tascer mcp add|remove`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::{McpServerConfig, read_json_file};
use crate::error::McpError;

/// Where a server entry is written (Claude Code's `--scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpScope {
    /// Yours, in this project: `mcpServers` of `.tascer/settings.local.json`.
    Local,
    /// Shared with the project: its `.mcp.json`.
    Project,
    /// Yours, in every project: `mcpServers` of `<tascer home>/settings.json`.
    User,
}

impl McpScope {
    /// Every scope, in the order `remove` looks for a server.
    pub const ALL: [McpScope; 3] = [McpScope::Local, McpScope::Project, McpScope::User];

    /// The file of this scope for a project in `cwd`.
    pub fn path(self, cwd: &Path, tascer_home: &Path) -> PathBuf {
        match self {
            McpScope::Local => cwd.join(".tascer").join("settings.local.json"),
            McpScope::Project => cwd.join(".mcp.json"),
            McpScope::User => tascer_home.join("settings.json"),
        }
    }

    /// `local`, `project` or `user`.
    pub fn as_str(self) -> &'static str {
        match self {
            McpScope::Local => "local",
            McpScope::Project => "project",
            McpScope::User => "user",
        }
    }
}

fn load(path: &Path) -> Result<Map<String, Value>, McpError> {
    match read_json_file(path)? {
        None => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(_) => Err(McpError::Config(format!(
            "{}: not a JSON object",
            path.display()
        ))),
    }
}

fn servers<'a>(
    path: &Path,
    file: &'a mut Map<String, Value>,
) -> Result<&'a mut Map<String, Value>, McpError> {
    file.entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| {
            McpError::Config(format!(
                "{}: \"mcpServers\" must be an object",
                path.display()
            ))
        })
}

fn save(path: &Path, file: &Map<String, Value>) -> Result<(), McpError> {
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut text = serde_json::to_string_pretty(file).map_err(std::io::Error::other)?;
        text.push('\n');
        std::fs::write(path, text)
    };
    write().map_err(|e| McpError::Config(format!("cannot write {}: {e}", path.display())))
}

/// Adds server `name` to the file of `scope` (created when missing; its
/// other keys are kept). Fails when the scope already has that name.
/// Returns the file.
pub fn add_mcp_server(
    scope: McpScope,
    cwd: &Path,
    tascer_home: &Path,
    name: &str,
    config: &McpServerConfig,
) -> Result<PathBuf, McpError> {
    let path = scope.path(cwd, tascer_home);
    let mut file = load(&path)?;
    let entries = servers(&path, &mut file)?;
    if entries.contains_key(name) {
        return Err(McpError::Config(format!(
            "MCP server '{name}' already exists in {} ({} scope); remove it first",
            path.display(),
            scope.as_str()
        )));
    }
    let value = serde_json::to_value(config).map_err(|e| McpError::Config(e.to_string()))?;
    entries.insert(name.to_owned(), value);
    save(&path, &file)?;
    Ok(path)
}

/// Removes server `name` from the file of `scope`; `Ok(None)` when it is
/// not there.
pub fn remove_mcp_server(
    scope: McpScope,
    cwd: &Path,
    tascer_home: &Path,
    name: &str,
) -> Result<Option<PathBuf>, McpError> {
    let path = scope.path(cwd, tascer_home);
    if !path.exists() {
        return Ok(None);
    }
    let mut file = load(&path)?;
    let removed = servers(&path, &mut file)?.remove(name).is_some();
    if !removed {
        return Ok(None);
    }
    save(&path, &file)?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::collections::BTreeMap;

    use super::*;
    use crate::config::load_mcp_servers_with_sources;

    #[test]
    fn add_keeps_other_keys_and_the_loader_reads_it_back() {
        let cwd = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("settings.json"), r#"{"model":"m"}"#).unwrap();
        let stdio = McpServerConfig::Stdio {
            command: "srv".into(),
            args: vec!["--x".into()],
            env: BTreeMap::from([("K".into(), "V".into())]),
            permissions: Default::default(),
        };
        add_mcp_server(McpScope::User, cwd.path(), home.path(), "u", &stdio).unwrap();
        let user: Value = serde_json::from_str(
            &std::fs::read_to_string(home.path().join("settings.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(user["model"], "m");
        assert_eq!(
            user["mcpServers"]["u"],
            serde_json::json!({"type": "stdio", "command": "srv", "args": ["--x"], "env": {"K": "V"}})
        );
        let e = add_mcp_server(McpScope::User, cwd.path(), home.path(), "u", &stdio)
            .unwrap_err()
            .to_string();
        assert!(e.contains("already exists"), "{e}");
        add_mcp_server(McpScope::Project, cwd.path(), home.path(), "p", &stdio).unwrap();
        add_mcp_server(McpScope::Local, cwd.path(), home.path(), "l", &stdio).unwrap();
        let all = load_mcp_servers_with_sources(cwd.path(), home.path(), &[], false).unwrap();
        assert_eq!(all.keys().collect::<Vec<_>>(), ["l", "p", "u"]);
        assert!(
            remove_mcp_server(McpScope::Project, cwd.path(), home.path(), "p")
                .unwrap()
                .is_some()
        );
        assert!(
            remove_mcp_server(McpScope::Project, cwd.path(), home.path(), "p")
                .unwrap()
                .is_none()
        );
    }
}
