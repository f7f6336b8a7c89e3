//! What `tascer install claude-code` writes into Claude Code's settings
//! and `tascer uninstall claude-code` takes out again: `tascer hook` on
//! every hook event, `tascer mcp serve` among the MCP servers, and the
//! safe profile ([`SAFE_PROFILE`]) in Tascer's own settings.
//!
//! Install keeps everything else in the files, saves each file's original
//! bytes (under `$TASCER_HOME/installs/`) before its first change, and is
//! idempotent. Uninstall removes exactly what install added; when nothing
//! else changed since, the files get their original bytes back (or are
//! removed if install created them).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use tascer_core::{HookEvent, shell_quote};

/// The file name of the hook-only executable (the thin client of the
/// `tascer-hook` binary), installed next to `tascer`: when it is there,
/// install writes it as the hook command.
pub const HOOK_EXECUTABLE: &str = "tascer-hook";

/// Why install or uninstall failed (nothing of the file named was
/// changed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// No home directory for the user scope.
    #[error("cannot find the home directory")]
    NoHome,
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file is not JSON.
    #[error("{} is not JSON; fix it first", path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A file holds JSON that is not an object.
    #[error("{} must hold a JSON object", path.display())]
    NotAnObject {
        /// The file.
        path: PathBuf,
    },
    /// A key of Claude Code's configuration has a type install cannot
    /// add to (`"hooks"`, `"hooks.<event>"`, `"mcpServers"`).
    #[error("\"{key}\" must be {expected}")]
    WrongType {
        /// The key, dotted.
        key: String,
        /// What it must be: `an object` or `an array`.
        expected: &'static str,
    },
    /// A directory could not be created.
    #[error("cannot create {}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No temporary file could be made in a file's directory.
    #[error("cannot write in {}", dir.display())]
    TempFile {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be replaced by its new version.
    #[error("cannot replace {}", path.display())]
    Replace {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: tempfile::PersistError,
    },
    /// A file could not be removed.
    #[error("cannot remove {}", path.display())]
    Remove {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The new content could not be encoded.
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
}

/// The events `tascer hook` is installed for, in the order install writes
/// them (the ones it answers: not `PermissionRequest` or `PostCompact`).
/// Those that take a tool-name matcher get `"*"`.
const EVENTS: &[HookEvent] = &[
    HookEvent::PreToolUse,
    HookEvent::PostToolUse,
    HookEvent::PostToolUseFailure,
    HookEvent::UserPromptSubmit,
    HookEvent::SessionStart,
    HookEvent::SessionEnd,
    HookEvent::Stop,
    HookEvent::SubagentStop,
    HookEvent::PreCompact,
    HookEvent::Notification,
];

/// The MCP server's name in Claude Code's configuration.
pub const SERVER: &str = "tascer";

/// Where Claude Code reads hooks and MCP servers for one scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `project` or `user`.
    pub scope: &'static str,
    /// The settings file that holds `hooks`.
    pub settings: PathBuf,
    /// The file that holds `mcpServers`.
    pub mcp: PathBuf,
    /// Tascer's settings file that gets the safe profile
    /// ([`SAFE_PROFILE`]).
    pub profile: PathBuf,
    /// Claude Code's commands directory that gets `/commit` and `/push`
    /// ([`crate::commands`]).
    pub commands: PathBuf,
}

/// The safe profile install writes into Tascer's settings: the `auto`
/// permission mode (the floor when Claude Code's own mode is not accepted,
/// as `bypassPermissions` is not by default); the whole reviewer chain,
/// which runs when a model is configured (the provider of Claude Code's
/// environment) — `tool-approve` / `tool-appeal` answer for the user,
/// `error-acknowledge` refuses a call that carries on past a failure,
/// `intent-validate` blocks a stop when the work does not match the
/// request, and the validators `plan-validate`, `style-drift` and
/// `claude-md-validate` check plans, edits and `CLAUDE.md` changes that
/// would run; and Claude Code's own Bash commands run under Tascer's OS
/// sandbox (`sandbox.claudeCodeBash`). Keys the file already sets are left
/// as they are.
pub const SAFE_PROFILE: &[(&[&str], &str)] = &[
    (&["permissions", "defaultMode"], "\"auto\""),
    (&["sandbox", "claudeCodeBash"], "true"),
    (&["safety", "reviewers", "toolApprove"], "{}"),
    (&["safety", "reviewers", "toolAppeal"], "{}"),
    (&["safety", "reviewers", "errorAcknowledge"], "{}"),
    (&["safety", "reviewers", "intentValidate"], "{}"),
    (&["safety", "reviewers", "planValidate"], "{}"),
    (&["safety", "reviewers", "styleDrift"], "{}"),
    (&["safety", "reviewers", "claudeMdValidate"], "{}"),
];

impl Target {
    /// The user scope (`user`: `$CLAUDE_CONFIG_DIR/settings.json`, else
    /// `~/.claude/settings.json`, and `~/.claude.json`; the profile in
    /// `<tascer_home>/settings.json`; the commands in `commands/` next to
    /// that settings file) or the project in `cwd` (`.claude/settings.json`,
    /// `.mcp.json`, `.tascer/settings.json` and `.claude/commands/`).
    pub fn new(user: bool, cwd: &Path, tascer_home: &Path) -> Result<Self, InstallError> {
        if user {
            let home = std::env::home_dir().ok_or(InstallError::NoHome)?;
            let config = std::env::var_os("CLAUDE_CONFIG_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".claude"));
            Ok(Target {
                scope: "user",
                settings: config.join("settings.json"),
                mcp: home.join(".claude.json"),
                profile: tascer_home.join("settings.json"),
                commands: config.join("commands"),
            })
        } else {
            Ok(Target {
                scope: "project",
                settings: cwd.join(".claude/settings.json"),
                mcp: cwd.join(".mcp.json"),
                profile: cwd.join(".tascer/settings.json"),
                commands: cwd.join(".claude/commands"),
            })
        }
    }
}

/// Where install keeps what it needs to undo its change of `file`.
fn record_path(home: &Path, file: &Path) -> PathBuf {
    let digest = tascer_ledger::sha256_hex(file.display().to_string().as_bytes());
    home.join("installs")
        .join(format!("claude-code-{}.json", &digest[..16]))
}

/// What [`install`] changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Installed {
    /// The hooks were added to the settings file (false: already there).
    pub settings_changed: bool,
    /// The MCP server was added (false: one named [`SERVER`] was there).
    pub mcp_changed: bool,
    /// The safe profile was written (false: the file set all of it).
    pub profile_changed: bool,
}

/// Puts `exe hook` (or the [`HOOK_EXECUTABLE`] next to `exe`) on every
/// hook event and `exe mcp serve` among the MCP servers of `target`,
/// keeping what install needs to undo it under `home` (Tascer's home).
pub fn install(target: &Target, home: &Path, exe: &Path) -> Result<Installed, InstallError> {
    let program = exe.display().to_string();
    let hook_command = hook_command(exe);
    let settings_changed = edit(home, &target.settings, |root| {
        add_hooks(root, &hook_command)
    })?;
    let mcp_changed = edit(home, &target.mcp, |root| add_server(root, &program))?;
    let profile_changed = edit(home, &target.profile, add_profile)?;
    Ok(Installed {
        settings_changed,
        mcp_changed,
        profile_changed,
    })
}

/// What [`uninstall`] did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uninstalled {
    /// Install had added nothing there (any record of it is removed).
    NothingThere,
    /// Nothing else changed since install: the original bytes are back
    /// (or the file is gone, if install created it).
    Restored,
    /// Tascer's entries were removed; other changes since install stay.
    EntriesRemoved,
}

impl std::fmt::Display for Uninstalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Uninstalled::NothingThere => "nothing of Tascer's there",
            Uninstalled::Restored => "restored as it was before install",
            Uninstalled::EntriesRemoved => {
                "Tascer's entries removed (other changes since install kept)"
            }
        })
    }
}

/// A JSON object file as read: its bytes (`None` when it does not exist)
/// and its object.
type ObjectFile = (Option<Vec<u8>>, Map<String, Value>);

/// Reads a JSON object file.
fn read_object(file: &Path) -> Result<ObjectFile, InstallError> {
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, Map::new())),
        Err(source) => {
            return Err(InstallError::Read {
                path: file.to_path_buf(),
                source,
            });
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok((Some(bytes), Map::new()));
    }
    match serde_json::from_slice::<Value>(&bytes).map_err(|source| InstallError::NotJson {
        path: file.to_path_buf(),
        source,
    })? {
        Value::Object(map) => Ok((Some(bytes), map)),
        _ => Err(InstallError::NotAnObject {
            path: file.to_path_buf(),
        }),
    }
}

/// Applies `change` to the JSON object in `file` (created if missing),
/// saving the original first. Returns false when nothing changed.
fn edit(
    home: &Path,
    file: &Path,
    change: impl Fn(&mut Map<String, Value>) -> Result<bool, InstallError>,
) -> Result<bool, InstallError> {
    let (original, mut root) = read_object(file)?;
    if !change(&mut root)? {
        return Ok(false);
    }
    let record = record_path(home, file);
    if !record.exists() {
        let saved = json!({
            "file": file.display().to_string(),
            "existed": original.is_some(),
            "original": original.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()),
        });
        write_atomic(&record, saved.to_string().as_bytes())?;
    }
    let text = serde_json::to_string_pretty(&Value::Object(root))?;
    write_atomic(file, format!("{text}\n").as_bytes())?;
    Ok(true)
}

/// Undoes [`install`] for one file (`target`'s settings or MCP file),
/// with what install kept under `home`.
pub fn uninstall(home: &Path, file: &Path) -> Result<Uninstalled, InstallError> {
    let record_file = record_path(home, file);
    let (_, mut root) = read_object(file)?;
    let saved: Option<Value> = std::fs::read(&record_file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let original = saved
        .as_ref()
        .and_then(|s| s["original"].as_str())
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    let removed = remove_ours(&mut root) | remove_profile(&mut root, original.as_ref());
    if !removed {
        let _ = std::fs::remove_file(&record_file);
        return Ok(Uninstalled::NothingThere);
    }
    // When nothing else changed since install, give the original back.
    if let Some(saved) = &saved {
        let original = saved["original"].as_str();
        let original_value = match original {
            Some(text) if !text.trim().is_empty() => {
                serde_json::from_str::<Value>(text).unwrap_or(Value::Null)
            }
            _ => Value::Object(Map::new()),
        };
        if original_value == Value::Object(root.clone()) {
            match original {
                Some(text) if saved["existed"] == true => write_atomic(file, text.as_bytes())?,
                _ => std::fs::remove_file(file).map_err(|source| InstallError::Remove {
                    path: file.to_path_buf(),
                    source,
                })?,
            }
            let _ = std::fs::remove_file(&record_file);
            return Ok(Uninstalled::Restored);
        }
    }
    let text = serde_json::to_string_pretty(&Value::Object(root))?;
    write_atomic(file, format!("{text}\n").as_bytes())?;
    let _ = std::fs::remove_file(&record_file);
    Ok(Uninstalled::EntriesRemoved)
}

/// Adds a `tascer hook` handler to every event that lacks one.
fn add_hooks(root: &mut Map<String, Value>, command: &str) -> Result<bool, InstallError> {
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(InstallError::WrongType {
            key: "hooks".into(),
            expected: "an object",
        });
    };
    let mut changed = false;
    for event in EVENTS {
        let groups = hooks
            .entry(event.as_str())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(groups) = groups else {
            return Err(InstallError::WrongType {
                key: format!("hooks.{event}"),
                expected: "an array",
            });
        };
        if groups.iter().any(is_ours) {
            continue;
        }
        let mut group = json!({"hooks": [{"type": "command", "command": command, "timeout": 30}]});
        if event.takes_tool_matcher() {
            group["matcher"] = json!("*");
        }
        groups.push(group);
        changed = true;
    }
    Ok(changed)
}

/// Writes each key of [`SAFE_PROFILE`] the file does not set yet.
fn add_profile(root: &mut Map<String, Value>) -> Result<bool, InstallError> {
    let mut changed = false;
    for (path, value) in SAFE_PROFILE {
        let (last, parents) = path.split_last().ok_or(InstallError::WrongType {
            key: String::new(),
            expected: "a key",
        })?;
        let mut object = &mut *root;
        for (depth, key) in parents.iter().enumerate() {
            let entry = object
                .entry(*key)
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(inner) = entry else {
                return Err(InstallError::WrongType {
                    key: path[..=depth].join("."),
                    expected: "an object",
                });
            };
            object = inner;
        }
        if !object.contains_key(*last) {
            object.insert((*last).to_string(), serde_json::from_str(value)?);
            changed = true;
        }
    }
    Ok(changed)
}

/// Removes the [`SAFE_PROFILE`] keys that still hold the profile's value
/// and were not in the file before install (`original`), and the objects
/// that leaves empty; true when something was removed.
fn remove_profile(root: &mut Map<String, Value>, original: Option<&Value>) -> bool {
    let mut removed = false;
    let mut current = Value::Object(std::mem::take(root));
    for (path, value) in SAFE_PROFILE {
        let Ok(value) = serde_json::from_str::<Value>(value) else {
            continue;
        };
        let pointer = format!("/{}", path.join("/"));
        let was_there = original.is_some_and(|o| o.pointer(&pointer).is_some());
        if !was_there && current.pointer(&pointer) == Some(&value) {
            remove_path(&mut current, path);
            removed = true;
        }
    }
    if let Value::Object(map) = current {
        *root = map;
    }
    removed
}

/// Removes the key at `path` and every object on the way it leaves empty.
fn remove_path(value: &mut Value, path: &[&str]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let Value::Object(map) = value else {
        return;
    };
    if rest.is_empty() {
        map.remove(*first);
        return;
    }
    if let Some(inner) = map.get_mut(*first) {
        remove_path(inner, rest);
        if inner.as_object().is_some_and(Map::is_empty) {
            map.remove(*first);
        }
    }
}

/// Adds the `tascer mcp serve` server unless one named `tascer` exists.
fn add_server(root: &mut Map<String, Value>, program: &str) -> Result<bool, InstallError> {
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(InstallError::WrongType {
            key: "mcpServers".into(),
            expected: "an object",
        });
    };
    if servers.contains_key(SERVER) {
        return Ok(false);
    }
    servers.insert(
        SERVER.into(),
        json!({"type": "stdio", "command": program, "args": ["mcp", "serve"]}),
    );
    Ok(true)
}

/// The command Claude Code runs for every event: the `tascer-hook`
/// executable next to `exe` when there is one (it starts faster), else
/// `exe hook`.
fn hook_command(exe: &Path) -> String {
    let hook_only = exe.with_file_name(format!(
        "{}{}",
        HOOK_EXECUTABLE,
        std::env::consts::EXE_SUFFIX
    ));
    if hook_only.is_file() {
        shell_quote(&hook_only.display().to_string())
    } else {
        format!("{} hook", shell_quote(&exe.display().to_string()))
    }
}

/// A hook group install made: its only handler runs `… hook` of tascer or
/// `tascer-hook`.
fn is_ours(group: &Value) -> bool {
    group["hooks"].as_array().is_some_and(|handlers| {
        handlers.len() == 1
            && handlers[0]["command"].as_str().is_some_and(|c| {
                let c = c.trim_end_matches(['\'', '"']);
                (c.ends_with(" hook") && c.contains("tascer")) || c.ends_with(HOOK_EXECUTABLE)
            })
    })
}

/// The `tascer` server install added: runs `mcp serve` of a tascer binary.
fn is_our_server(server: &Value) -> bool {
    server["command"]
        .as_str()
        .is_some_and(|c| c.contains("tascer"))
        && server["args"] == json!(["mcp", "serve"])
}

/// Removes what install added; true when something was removed.
fn remove_ours(root: &mut Map<String, Value>) -> bool {
    let mut removed = false;
    if let Some(Value::Object(hooks)) = root.get_mut("hooks") {
        for event in EVENTS {
            if let Some(Value::Array(groups)) = hooks.get_mut(event.as_str()) {
                let before = groups.len();
                groups.retain(|g| !is_ours(g));
                removed |= groups.len() != before;
                if groups.is_empty() {
                    hooks.remove(event.as_str());
                }
            }
        }
        if hooks.is_empty() {
            root.remove("hooks");
        }
    }
    if let Some(Value::Object(servers)) = root.get_mut("mcpServers") {
        if servers.get(SERVER).is_some_and(is_our_server) {
            servers.remove(SERVER);
            removed = true;
        }
        if servers.is_empty() {
            root.remove("mcpServers");
        }
    }
    removed
}

/// Writes through a temporary file in the same directory, then renames.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), InstallError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|source| InstallError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|source| InstallError::TempFile {
        dir: dir.to_path_buf(),
        source,
    })?;
    std::fs::write(tmp.path(), bytes).map_err(|source| InstallError::Write {
        path: tmp.path().to_path_buf(),
        source,
    })?;
    tmp.persist(path).map_err(|source| InstallError::Replace {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(())
}
