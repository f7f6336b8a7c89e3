//! Plugins: directories in Claude Code's plugin layout
//! (`--plugin-dir`, the SDKs' `plugins` option). A plugin is
//! `.claude-plugin/plugin.json` (`name`, `version`, `description`, and
//! optional `commands`, `agents`, `skills`, `hooks`, `mcpServers`) plus the
//! default folders `commands/`, `agents/`, `skills/`, `hooks/hooks.json`
//! and `.mcp.json`. What a plugin brings joins the session's own and is
//! governed like it: commands and skills as `<plugin>:<name>`, agents as
//! `<plugin>:<name>` subagents, hooks through the session's hook runner
//! (named `plugin <plugin>: <command>`), MCP servers as
//! `plugin_<plugin>_<server>` (tools `mcp__plugin_<plugin>_<server>__<tool>`).
//!
//! A plugin that cannot load (no directory, no or an invalid manifest) is
//! a warning naming the file, and the others load; a part of a plugin that
//! cannot load (a bad `hooks.json`, a command without valid front matter)
//! is a warning naming its file, and the rest of the plugin loads.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::commands::SlashCommand;
use crate::options::{Options, PluginDir};
use crate::plugin_parts::{self, MANIFEST, PartError};
use crate::skills::Skill;

/// A loaded plugin, as `system/init` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginInfo {
    /// Its manifest's `name`.
    pub name: String,
    /// Its directory (absolute).
    pub path: String,
    /// Its manifest's `version`, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// Something of a plugin that did not load (`system/init`'s
/// `plugin_errors`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginLoadError {
    /// The plugin's name, or `inline[<index>]` when it has none yet.
    pub plugin: String,
    /// `path-not-found`, `manifest-parse-error`,
    /// `manifest-validation-error` or `component-load-error`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What went wrong, naming the file.
    pub message: String,
    /// The plugin directory, resolved against the working directory.
    pub path: String,
}

/// What the session's plugins add besides what [`apply`] put into the
/// options.
#[derive(Debug, Default)]
pub(crate) struct LoadedPlugins {
    pub info: Vec<PluginInfo>,
    pub errors: Vec<PluginLoadError>,
    pub commands: Vec<SlashCommand>,
    pub skills: Vec<Skill>,
}

/// Paths the manifest adds to a default folder: one or a list.
#[derive(Debug, Default, Deserialize)]
#[serde(untagged)]
enum Paths {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl Paths {
    fn list(&self) -> Vec<&str> {
        match self {
            Paths::None => Vec::new(),
            Paths::One(p) => vec![p.as_str()],
            Paths::Many(ps) => ps.iter().map(String::as_str).collect(),
        }
    }
}

/// `.claude-plugin/plugin.json`; other keys (`author`, `homepage`, …)
/// describe the plugin and change nothing.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    name: String,
    #[serde(default)]
    version: Option<Value>,
    #[serde(default)]
    commands: Paths,
    #[serde(default)]
    agents: Paths,
    #[serde(default)]
    skills: Paths,
    #[serde(default)]
    hooks: Option<Value>,
    #[serde(default)]
    mcp_servers: Option<Value>,
}

/// Loads the options' plugin directories into the session: hooks, agents
/// and MCP servers into `options` (the options' own agents and servers
/// win a name clash), commands and skills returned. Every problem is
/// logged as a warning and returned in `errors`.
pub(crate) fn apply(options: &mut Options, cwd: &Path) -> LoadedPlugins {
    let mut loaded = LoadedPlugins::default();
    let dirs = options.plugin_dirs.clone();
    for (index, dir) in dirs.iter().enumerate() {
        let root = cwd.join(&dir.path);
        let tag = format!("inline[{index}]");
        let manifest = match read_manifest(&root) {
            Ok(manifest) => manifest,
            Err((kind, message)) => {
                loaded.fail(&tag, kind, message, &root);
                continue;
            }
        };
        let root = root.canonicalize().unwrap_or(root);
        let name = manifest.name.clone();
        let mut parts_failed = Vec::new();
        load_parts(
            options,
            &manifest,
            &root,
            dir,
            cwd,
            &mut loaded,
            &mut parts_failed,
        );
        for failure in parts_failed {
            loaded.fail(&name, "component-load-error", failure.0, &root);
        }
        loaded.info.push(PluginInfo {
            name,
            path: root.display().to_string(),
            version: manifest.version.as_ref().map(version_text),
        });
    }
    loaded
}

impl LoadedPlugins {
    fn fail(&mut self, plugin: &str, kind: &str, message: String, root: &Path) {
        tracing::warn!("plugin {plugin}: {message}");
        self.errors.push(PluginLoadError {
            plugin: plugin.to_string(),
            kind: kind.to_string(),
            message,
            path: root.display().to_string(),
        });
    }
}

/// The plugin's manifest, or the error kind and message naming the file.
fn read_manifest(root: &Path) -> Result<Manifest, (&'static str, String)> {
    if !root.is_dir() {
        return Err((
            "path-not-found",
            format!("the plugin directory {} does not exist", root.display()),
        ));
    }
    let file = root.join(MANIFEST);
    let value = match tascer_guard::settings::read_json(&file) {
        Ok(Some(value)) => value,
        Ok(None) => {
            return Err((
                "manifest-parse-error",
                format!(
                    "{} is missing: a plugin needs a manifest with at least a `name`",
                    file.display()
                ),
            ));
        }
        Err(e) => return Err(("manifest-parse-error", e.to_string())),
    };
    let manifest: Manifest = serde_json::from_value(value).map_err(|e| {
        (
            "manifest-validation-error",
            format!("{}: {e}", file.display()),
        )
    })?;
    let name = manifest.name.trim();
    if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == ':' || c == '/') {
        return Err((
            "manifest-validation-error",
            format!(
                "{}: `name` must be a non-empty name without spaces, `:` or `/` (found {:?})",
                file.display(),
                manifest.name
            ),
        ));
    }
    Ok(manifest)
}

/// The manifest's `version` as written (a string, or a number's text).
fn version_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Loads a plugin's commands, skills, agents, hooks and MCP servers; each
/// part that fails is pushed to `failed` and the others load.
fn load_parts(
    options: &mut Options,
    manifest: &Manifest,
    root: &Path,
    dir: &PluginDir,
    cwd: &Path,
    loaded: &mut LoadedPlugins,
    failed: &mut Vec<PartError>,
) {
    let name = manifest.name.as_str();
    for path in folders(root, "commands", &manifest.commands, failed) {
        match crate::commands::load_plugin(&path, name) {
            Ok(commands) => loaded.commands.extend(commands),
            Err(e) => failed.push(PartError(e.to_string())),
        }
    }
    for path in folders(root, "skills", &manifest.skills, failed) {
        match crate::skills::load_plugin(&path, name) {
            Ok(skills) => loaded.skills.extend(skills),
            Err(e) => failed.push(PartError(e.to_string())),
        }
    }
    for path in folders(root, "agents", &manifest.agents, failed) {
        match crate::agents::load_plugin(&path, name) {
            Ok(agents) => {
                for (agent, definition) in agents {
                    options.agents.entry(agent).or_insert(definition);
                }
            }
            Err(e) => failed.push(PartError(e.to_string())),
        }
    }
    let hooks = plugin_parts::hooks(root, name, manifest.hooks.as_ref(), cwd, failed);
    if !hooks.is_empty() {
        let mut all = options.hooks.take().unwrap_or_default();
        all.extend(hooks);
        options.hooks = Some(all);
    }
    if !dir.skip_mcp {
        let servers = plugin_parts::mcp_servers(root, name, manifest.mcp_servers.as_ref(), failed);
        for (server, config) in servers {
            options.mcp_servers.entry(server).or_insert(config);
        }
    }
}

/// A part's default folder (when it exists) and the manifest's extra
/// paths for it (relative to the plugin directory; a missing one is
/// pushed to `failed`).
fn folders(root: &Path, default: &str, extra: &Paths, failed: &mut Vec<PartError>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let folder = root.join(default);
    if folder.is_dir() {
        out.push(folder);
    }
    for path in extra.list().into_iter().map(|p| root.join(p)) {
        match path.exists() {
            true => out.push(path),
            false => failed.push(PartError(format!(
                "{}: the manifest's `{default}` path {} does not exist",
                root.join(MANIFEST).display(),
                path.display()
            ))),
        }
    }
    out
}
