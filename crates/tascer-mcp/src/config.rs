//! Server configuration in Claude Code's `.mcp.json` / `mcpServers` shape.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tascer_settings::{FileError, SettingsLoader, SettingsSource};

use crate::error::McpError;
use crate::tool_permissions::McpToolPermissions;

/// One entry of `mcpServers` (the key is the server name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum McpServerConfig {
    /// A subprocess speaking JSON-RPC over stdin/stdout (`"type"` may be
    /// omitted).
    Stdio {
        /// Program to run.
        command: String,
        /// Its arguments.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        /// Extra environment variables (added to the inherited ones).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
        /// Per-tool permissions (`allow`, `ask`, `deny` lists of tool
        /// names, see [`McpToolPermissions`]).
        #[serde(default, skip_serializing_if = "McpToolPermissions::is_empty")]
        permissions: McpToolPermissions,
    },
    /// Streamable HTTP.
    Http {
        /// Endpoint URL.
        url: String,
        /// Extra HTTP headers sent with every request.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
        /// OAuth settings (a pre-registered client, scopes, the loopback
        /// callback port, client credentials); without them a server that
        /// answers 401 is logged in to with discovery and dynamic client
        /// registration.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oauth: Option<Box<crate::oauth::OAuthConfig>>,
        /// Per-tool permissions (`allow`, `ask`, `deny` lists of tool
        /// names, see [`McpToolPermissions`]).
        #[serde(default, skip_serializing_if = "McpToolPermissions::is_empty")]
        permissions: McpToolPermissions,
    },
    /// Legacy HTTP+SSE transport (protocol 2024-11-05): a `GET` event
    /// stream plus `POST`s to the endpoint it announces (`sse.rs`).
    Sse {
        /// Endpoint URL.
        url: String,
        /// Extra HTTP headers.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
        /// Per-tool permissions (`allow`, `ask`, `deny` lists of tool
        /// names, see [`McpToolPermissions`]).
        #[serde(default, skip_serializing_if = "McpToolPermissions::is_empty")]
        permissions: McpToolPermissions,
    },
    /// In-process server registered with [`crate::SdkServer`].
    Sdk {
        /// Name of the registered in-process server.
        name: String,
    },
}

impl McpServerConfig {
    /// The per-tool permissions of the entry (`None` for an in-process
    /// server, which has none).
    pub fn tool_permissions(&self) -> Option<&McpToolPermissions> {
        match self {
            McpServerConfig::Stdio { permissions, .. }
            | McpServerConfig::Http { permissions, .. }
            | McpServerConfig::Sse { permissions, .. } => Some(permissions),
            McpServerConfig::Sdk { .. } => None,
        }
    }
}

/// True when the configuration of some server denies the tool the model
/// knows as `model_name`: it is kept out of the model's tool list.
pub fn denied_by_server_config(
    servers: &BTreeMap<String, McpServerConfig>,
    model_name: &str,
) -> bool {
    model_name.starts_with("mcp__")
        && servers.iter().any(|(name, config)| {
            config
                .tool_permissions()
                .is_some_and(|p| p.denies(name, model_name))
        })
}

/// The top-level `.mcp.json` shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpConfigFile {
    /// Servers by name.
    #[serde(rename = "mcpServers", default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
}

fn parse_entry(name: &str, mut value: serde_json::Value) -> Result<McpServerConfig, McpError> {
    let Some(obj) = value.as_object_mut() else {
        return Err(McpError::Config(format!(
            "server '{name}': expected an object"
        )));
    };
    if !obj.contains_key("type") {
        if obj.contains_key("command") {
            obj.insert("type".into(), "stdio".into());
        } else {
            return Err(McpError::Config(format!(
                "server '{name}': missing \"type\" (stdio, http, sse, sdk) and no \"command\""
            )));
        }
    }
    let config: McpServerConfig = serde_json::from_value(value)
        .map_err(|e| McpError::Config(format!("server '{name}': {e}")))?;
    if let Some(permissions) = config.tool_permissions() {
        permissions
            .validate()
            .map_err(|e| McpError::Config(format!("server '{name}': {e}")))?;
    }
    Ok(config)
}

/// Parses `{"mcpServers": {...}}` from inline JSON (when `file_or_json`
/// starts with `{`) or from the file at that path.
pub fn parse_mcp_config(file_or_json: &str) -> Result<BTreeMap<String, McpServerConfig>, McpError> {
    let trimmed = file_or_json.trim_start();
    let text = if trimmed.starts_with('{') {
        file_or_json.to_owned()
    } else {
        std::fs::read_to_string(Path::new(file_or_json))
            .map_err(|e| McpError::Config(format!("cannot read {file_or_json}: {e}")))?
    };
    parse_mcp_config_str(&text)
}

/// Parses `{"mcpServers": {...}}` JSON text.
pub fn parse_mcp_config_str(text: &str) -> Result<BTreeMap<String, McpServerConfig>, McpError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| McpError::Config(format!("not JSON: {e}")))?;
    let servers = value
        .get("mcpServers")
        .ok_or_else(|| McpError::Config("missing \"mcpServers\" object".into()))?
        .as_object()
        .ok_or_else(|| McpError::Config("\"mcpServers\" must be an object".into()))?;
    servers
        .iter()
        .map(|(name, entry)| Ok((name.clone(), parse_entry(name, entry.clone())?)))
        .collect()
}

/// Where a server's configuration came from (see [`load_mcp_servers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpServerSource {
    /// `mcpServers` of the user settings, `<tascer home>/settings.json`.
    User(PathBuf),
    /// The project's `.mcp.json`.
    McpJson(PathBuf),
    /// `mcpServers` of the project settings, `.tascer/settings.json`.
    Project(PathBuf),
    /// `mcpServers` of the local settings, `.tascer/settings.local.json`.
    Local(PathBuf),
    /// A `--mcp-config` value (a file path or `"inline JSON"`).
    Flag(String),
}

impl std::fmt::Display for McpServerSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpServerSource::User(p) => write!(f, "user settings {}", p.display()),
            McpServerSource::McpJson(p) => write!(f, "{}", p.display()),
            McpServerSource::Project(p) => write!(f, "project settings {}", p.display()),
            McpServerSource::Local(p) => write!(f, "local settings {}", p.display()),
            McpServerSource::Flag(v) if v.trim_start().starts_with('{') => {
                f.write_str("--mcp-config (inline JSON)")
            }
            McpServerSource::Flag(v) => write!(f, "--mcp-config {v}"),
        }
    }
}

/// Reads `path` as JSON through the settings reader; `Ok(None)` when
/// the file does not exist. Errors keep this module's wording.
pub(crate) fn read_json_file(path: &Path) -> Result<Option<serde_json::Value>, McpError> {
    tascer_settings::read_json(path).map_err(|e| {
        McpError::Config(match e {
            FileError::Read { path, source } => {
                format!("cannot read {}: {source}", path.display())
            }
            FileError::NotJson { path, source } => {
                format!("{}: not JSON: {source}", path.display())
            }
            other => other.to_string(),
        })
    })
}

/// The `mcpServers` of a settings file (none when the file or the key is
/// absent).
fn settings_servers(path: &Path) -> Result<BTreeMap<String, McpServerConfig>, McpError> {
    let Some(value) = read_json_file(path)? else {
        return Ok(BTreeMap::new());
    };
    let Some(servers) = value.get("mcpServers") else {
        return Ok(BTreeMap::new());
    };
    let servers = servers.as_object().ok_or_else(|| {
        McpError::Config(format!(
            "{}: \"mcpServers\" must be an object",
            path.display()
        ))
    })?;
    servers
        .iter()
        .map(|(name, entry)| {
            parse_entry(name, entry.clone())
                .map(|c| (name.clone(), c))
                .map_err(|e| McpError::Config(format!("{}: {e}", path.display())))
        })
        .collect()
}

/// Like [`load_mcp_servers`], also telling where each server came from.
pub fn load_mcp_servers_with_sources(
    cwd: &Path,
    tascer_home: &Path,
    flags: &[String],
    strict: bool,
) -> Result<BTreeMap<String, (McpServerConfig, McpServerSource)>, McpError> {
    let mut out = BTreeMap::new();
    if !strict {
        let files = SettingsLoader::for_home(cwd, tascer_home).files();
        let file = |source: SettingsSource| {
            files
                .iter()
                .find(|f| f.source == source)
                .map(|f| f.path.clone())
        };
        if let Some(user) = file(SettingsSource::User) {
            for (name, c) in settings_servers(&user)? {
                out.insert(name, (c, McpServerSource::User(user.clone())));
            }
        }
        let mcp_json = cwd.join(".mcp.json");
        if let Some(value) = read_json_file(&mcp_json)? {
            let parsed = parse_mcp_config_str(&value.to_string())
                .map_err(|e| McpError::Config(format!("{}: {e}", mcp_json.display())))?;
            for (name, c) in parsed {
                out.insert(name, (c, McpServerSource::McpJson(mcp_json.clone())));
            }
        }
        if let Some(project) = file(SettingsSource::Project) {
            for (name, c) in settings_servers(&project)? {
                out.insert(name, (c, McpServerSource::Project(project.clone())));
            }
        }
        if let Some(local) = file(SettingsSource::Local) {
            for (name, c) in settings_servers(&local)? {
                out.insert(name, (c, McpServerSource::Local(local.clone())));
            }
        }
    }
    for flag in flags {
        let value = if flag.trim_start().starts_with('{') || Path::new(flag).is_absolute() {
            flag.clone()
        } else {
            cwd.join(flag).to_string_lossy().into_owned()
        };
        let parsed = parse_mcp_config(&value).map_err(|e| match e {
            McpError::Config(m) => McpError::Config(format!("--mcp-config: {m}")),
            other => other,
        })?;
        for (name, c) in parsed {
            out.insert(name, (c, McpServerSource::Flag(flag.clone())));
        }
    }
    Ok(out)
}

/// The MCP servers of a run in `cwd`, merged from (later wins on a name
/// clash): the user settings' `mcpServers` (`<tascer_home>/settings.json`),
/// the project's `.mcp.json`, `.tascer/settings.json` and
/// `.tascer/settings.local.json` (their `mcpServers`), then each
/// `--mcp-config` value in order (inline JSON, or a file path relative to
/// `cwd`). With `strict` (`--strict-mcp-config`) only the flags count.
/// Missing files are skipped; unreadable or invalid ones are errors naming
/// the file.
pub fn load_mcp_servers(
    cwd: &Path,
    tascer_home: &Path,
    flags: &[String],
    strict: bool,
) -> Result<BTreeMap<String, McpServerConfig>, McpError> {
    Ok(
        load_mcp_servers_with_sources(cwd, tascer_home, flags, strict)?
            .into_iter()
            .map(|(name, (config, _))| (name, config))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn parses_all_shapes() {
        let cfg = parse_mcp_config(
            r#"{"mcpServers":{
                "a":{"command":"node","args":["x.js"],"env":{"K":"V"}},
                "b":{"type":"stdio","command":"srv"},
                "c":{"type":"http","url":"http://h/mcp","headers":{"Authorization":"Bearer t"}},
                "d":{"type":"sse","url":"http://h/sse"},
                "e":{"type":"sdk","name":"calc"}}}"#,
        )
        .unwrap();
        assert_eq!(cfg.len(), 5);
        assert!(
            matches!(&cfg["a"], McpServerConfig::Stdio { args, env, .. } if args.len() == 1 && env["K"] == "V")
        );
        assert!(matches!(&cfg["c"], McpServerConfig::Http { headers, .. } if headers.len() == 1));
        assert!(matches!(&cfg["d"], McpServerConfig::Sse { .. }));
        assert_eq!(
            cfg["e"],
            McpServerConfig::Sdk {
                name: "calc".into()
            }
        );
    }

    #[test]
    fn clear_errors() {
        let e = parse_mcp_config(r#"{"servers":{}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("mcpServers"), "{e}");
        let e = parse_mcp_config(r#"{"mcpServers":{"x":{"type":"ws","url":"u"}}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("server 'x'"), "{e}");
        let e = parse_mcp_config(r#"{"mcpServers":{"x":{"args":[]}}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing \"type\""), "{e}");
        let e = parse_mcp_config("/nonexistent/mcp.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read"), "{e}");
    }

    #[test]
    fn reads_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".mcp.json");
        std::fs::write(&p, r#"{"mcpServers":{"s":{"command":"true"}}}"#).unwrap();
        let cfg = parse_mcp_config(p.to_str().unwrap()).unwrap();
        assert!(matches!(&cfg["s"], McpServerConfig::Stdio { command, .. } if command == "true"));
    }

    #[test]
    fn loads_and_merges_sources() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("settings.json"),
            r#"{"permissions":{},"mcpServers":{"u":{"command":"user"},"shared":{"command":"from-user"}}}"#,
        )
        .unwrap();
        std::fs::write(
            cwd.path().join(".mcp.json"),
            r#"{"mcpServers":{"p":{"type":"http","url":"http://x/mcp"},"shared":{"command":"from-mcp-json"}}}"#,
        )
        .unwrap();
        std::fs::create_dir(cwd.path().join(".tascer")).unwrap();
        std::fs::write(
            cwd.path().join(".tascer/settings.local.json"),
            r#"{"mcpServers":{"shared":{"command":"from-local"}}}"#,
        )
        .unwrap();
        std::fs::write(cwd.path().join(".tascer/settings.json"), r#"{"model":"x"}"#).unwrap();
        let flags = vec![r#"{"mcpServers":{"f":{"command":"flag"}}}"#.to_owned()];
        let all = load_mcp_servers_with_sources(cwd.path(), home.path(), &flags, false).unwrap();
        assert_eq!(
            all.keys().map(String::as_str).collect::<Vec<_>>(),
            ["f", "p", "shared", "u"]
        );
        assert!(
            matches!(&all["shared"].0, McpServerConfig::Stdio { command, .. } if command == "from-local")
        );
        assert!(matches!(all["shared"].1, McpServerSource::Local(_)));
        assert!(matches!(all["p"].1, McpServerSource::McpJson(_)));
        assert_eq!(all["f"].1.to_string(), "--mcp-config (inline JSON)");
        let strict = load_mcp_servers(cwd.path(), home.path(), &flags, true).unwrap();
        assert_eq!(strict.keys().map(String::as_str).collect::<Vec<_>>(), ["f"]);
        // A relative flag path is resolved against cwd.
        std::fs::write(
            cwd.path().join("extra.json"),
            r#"{"mcpServers":{"e":{"command":"e"}}}"#,
        )
        .unwrap();
        let rel = load_mcp_servers(cwd.path(), home.path(), &["extra.json".into()], true).unwrap();
        assert!(rel.contains_key("e"));
    }

    #[test]
    fn load_errors_name_the_file() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        std::fs::write(cwd.path().join(".mcp.json"), "{not json").unwrap();
        let e = load_mcp_servers(cwd.path(), home.path(), &[], false)
            .unwrap_err()
            .to_string();
        assert!(e.contains(".mcp.json") && e.contains("not JSON"), "{e}");
        // strict ignores the broken file
        assert!(
            load_mcp_servers(cwd.path(), home.path(), &[], true)
                .unwrap()
                .is_empty()
        );
        std::fs::write(
            home.path().join("settings.json"),
            r#"{"mcpServers":{"bad":{"type":"ws"}}}"#,
        )
        .unwrap();
        std::fs::remove_file(cwd.path().join(".mcp.json")).unwrap();
        let e = load_mcp_servers(cwd.path(), home.path(), &[], false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("settings.json") && e.contains("server 'bad'"),
            "{e}"
        );
        let e = load_mcp_servers(cwd.path(), home.path(), &["missing.json".into()], true)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--mcp-config") && e.contains("cannot read"),
            "{e}"
        );
    }
}
