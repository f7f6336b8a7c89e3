//! Server configuration in Claude Code's `.mcp.json` / `mcpServers` shape.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::McpError;

/// One entry of `mcpServers` (the key is the server name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
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
    },
    /// Streamable HTTP.
    Http {
        /// Endpoint URL.
        url: String,
        /// Extra HTTP headers sent with every request.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
    },
    /// Legacy HTTP+SSE transport (not supported by the rmcp client; such
    /// servers get status `failed` with a clear error).
    Sse {
        /// Endpoint URL.
        url: String,
        /// Extra HTTP headers.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
    },
    /// In-process server registered with [`crate::SdkServer`].
    Sdk {
        /// Name of the registered in-process server.
        name: String,
    },
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
    serde_json::from_value(value).map_err(|e| McpError::Config(format!("server '{name}': {e}")))
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
}
