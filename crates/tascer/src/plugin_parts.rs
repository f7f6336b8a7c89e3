//! A plugin's hooks and MCP servers, read from their default files
//! (`hooks/hooks.json`, `.mcp.json`) and the manifest (a path or the
//! value inline), with `${CLAUDE_PLUGIN_ROOT}` expanded to the plugin's
//! directory in every string.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use tascer_guard::hooks::HookRegistry;
use tascer_mcp::McpServerConfig;

/// The manifest's place in a plugin directory.
pub const MANIFEST: &str = ".claude-plugin/plugin.json";

/// The variable Claude Code expands in a plugin's hooks and servers.
pub const PLUGIN_ROOT_VAR: &str = "${CLAUDE_PLUGIN_ROOT}";

/// A part of a plugin that did not load: the message names its file.
#[derive(Debug)]
pub(crate) struct PartError(pub String);

/// The plugin's hooks: `hooks/hooks.json` and the manifest's `hooks`
/// (a path, a list of paths, or the value inline); each file holds
/// `{"hooks": {...}}` in the settings' shape. Commands run in `cwd` (the
/// project) with `CLAUDE_PLUGIN_ROOT` set.
pub(crate) fn hooks(
    root: &Path,
    plugin: &str,
    manifest: Option<&Value>,
    cwd: &Path,
    failed: &mut Vec<PartError>,
) -> HookRegistry {
    let mut registry = HookRegistry::new();
    for (label, value) in sources(root, "hooks/hooks.json", "hooks", manifest, failed) {
        let hooks = match value.get("hooks") {
            Some(hooks) => hooks,
            None => &value,
        };
        match HookRegistry::from_plugin(hooks, cwd, plugin, root) {
            Ok(parsed) => {
                for warning in parsed.warnings() {
                    tracing::warn!("plugin {plugin}: {label}: {warning}");
                }
                registry.extend(parsed);
            }
            Err(e) => failed.push(PartError(format!("{label}: {e}"))),
        }
    }
    registry
}

/// The plugin's MCP servers: `.mcp.json` and the manifest's `mcpServers`
/// (a path or the value inline), each `{"mcpServers": {...}}` or the
/// servers themselves, named `plugin_<plugin>_<server>`.
pub(crate) fn mcp_servers(
    root: &Path,
    plugin: &str,
    manifest: Option<&Value>,
    failed: &mut Vec<PartError>,
) -> BTreeMap<String, McpServerConfig> {
    let mut out = BTreeMap::new();
    for (label, value) in sources(root, ".mcp.json", "mcpServers", manifest, failed) {
        let servers = value.get("mcpServers").cloned().unwrap_or(value);
        let config = json!({ "mcpServers": servers }).to_string();
        match tascer_mcp::parse_mcp_config_str(&config) {
            Ok(servers) => out.extend(
                servers
                    .into_iter()
                    .map(|(name, c)| (format!("plugin_{plugin}_{name}"), c)),
            ),
            Err(e) => failed.push(PartError(format!("{label}: {e}"))),
        }
    }
    out
}

/// The values of a part, each with a label naming where it came from: the
/// default file (when it exists), then the manifest's key (a path, a list
/// of paths and values, or a value). `${CLAUDE_PLUGIN_ROOT}` is expanded.
fn sources(
    root: &Path,
    default: &str,
    key: &str,
    manifest: Option<&Value>,
    failed: &mut Vec<PartError>,
) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let file = root.join(default);
    if file.is_file() {
        out.extend(read(&file, failed));
    }
    let entries = match manifest {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().collect(),
        Some(one) => vec![one],
    };
    let manifest_file = root.join(MANIFEST);
    for entry in entries {
        match entry {
            Value::String(path) => out.extend(read(&root.join(path), failed)),
            Value::Object(_) => out.push((
                format!("{} (`{key}`)", manifest_file.display()),
                entry.clone(),
            )),
            other => failed.push(PartError(format!(
                "{}: `{key}` must be a path or an object, found {other}",
                manifest_file.display()
            ))),
        }
    }
    let root_text = root.display().to_string();
    for (_, value) in &mut out {
        expand_root(value, &root_text);
    }
    out
}

/// The JSON of `file`, labelled with its path; a missing or bad file is
/// pushed to `failed`.
fn read(file: &Path, failed: &mut Vec<PartError>) -> Option<(String, Value)> {
    match tascer_guard::settings::read_json(file) {
        Ok(Some(value)) => Some((file.display().to_string(), value)),
        Ok(None) => {
            failed.push(PartError(format!("{} does not exist", file.display())));
            None
        }
        Err(e) => {
            failed.push(PartError(e.to_string()));
            None
        }
    }
}

/// Replaces `${CLAUDE_PLUGIN_ROOT}` with `root` in every string of `value`.
fn expand_root(value: &mut Value, root: &str) {
    match value {
        Value::String(s) if s.contains(PLUGIN_ROOT_VAR) => {
            *s = s.replace(PLUGIN_ROOT_VAR, root);
        }
        Value::Array(items) => items.iter_mut().for_each(|v| expand_root(v, root)),
        Value::Object(map) => map.values_mut().for_each(|v| expand_root(v, root)),
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_root_is_expanded_everywhere_and_bad_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("hooks")).unwrap();
        std::fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/db", "args": ["--root=${CLAUDE_PLUGIN_ROOT}"]}}}"#,
        )
        .unwrap();
        std::fs::write(root.join("hooks/hooks.json"), "{not json").unwrap();
        let mut failed = Vec::new();
        let servers = mcp_servers(root, "kit", None, &mut failed);
        let db = serde_json::to_value(&servers["plugin_kit_db"]).unwrap();
        let root_text = root.display().to_string();
        assert_eq!(db["command"], format!("{root_text}/bin/db"));
        assert_eq!(db["args"][0], format!("--root={root_text}"));
        assert!(failed.is_empty(), "{failed:?}");

        let hooks = hooks(root, "kit", None, root, &mut failed);
        assert!(hooks.is_empty());
        assert_eq!(failed.len(), 1);
        assert!(failed[0].0.contains("hooks.json"), "{failed:?}");
    }
}
