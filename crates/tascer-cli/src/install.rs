//! `tascer install claude-code` / `tascer uninstall claude-code`: puts
//! `tascer hook` on every hook event and `tascer mcp serve` among the MCP
//! servers in Claude Code's settings, and takes them out again.
//!
//! Install keeps everything else in the files, saves each file's original
//! bytes (under `$TASCER_HOME/installs/`) before its first change, and is
//! idempotent. Uninstall removes exactly what install added; when nothing
//! else changed since, the files get their original bytes back (or are
//! removed if install created them).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

/// The events `tascer hook` is installed for, with whether they take a
/// tool-name matcher.
const EVENTS: &[(&str, bool)] = &[
    ("PreToolUse", true),
    ("PostToolUse", true),
    ("PostToolUseFailure", true),
    ("UserPromptSubmit", false),
    ("SessionStart", false),
    ("SessionEnd", false),
    ("Stop", false),
    ("SubagentStop", false),
    ("PreCompact", false),
    ("Notification", false),
];

/// The MCP server's name in Claude Code's configuration.
const SERVER: &str = "tascer";

/// Where Claude Code reads hooks and MCP servers for one scope.
struct Target {
    /// `project` or `user`.
    scope: &'static str,
    /// The settings file that holds `hooks`.
    settings: PathBuf,
    /// The file that holds `mcpServers`.
    mcp: PathBuf,
}

impl Target {
    fn new(user: bool, cwd: &Path) -> anyhow::Result<Self> {
        if user {
            let home = std::env::home_dir().context("cannot find the home directory")?;
            let config = std::env::var_os("CLAUDE_CONFIG_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".claude"));
            Ok(Target {
                scope: "user",
                settings: config.join("settings.json"),
                mcp: home.join(".claude.json"),
            })
        } else {
            Ok(Target {
                scope: "project",
                settings: cwd.join(".claude/settings.json"),
                mcp: cwd.join(".mcp.json"),
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

/// `tascer install claude-code [--project|--user]`.
pub fn install(user: bool) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let target = Target::new(user, &cwd)?;
    let home = tascer::tascer_home();
    let exe = std::env::current_exe().context("cannot find the tascer executable")?;
    let program = exe.display().to_string();
    let hook_command = hook_command(&exe);

    let settings_changed = edit(&home, &target.settings, |root| {
        add_hooks(root, &hook_command)
    })?;
    let mcp_changed = edit(&home, &target.mcp, |root| add_server(root, &program))?;
    let what = |changed: bool| if changed { "updated" } else { "already set up" };
    println!(
        "Claude Code ({} scope): hooks in {} {}; MCP server \"{SERVER}\" in {} {}.",
        target.scope,
        target.settings.display(),
        what(settings_changed),
        target.mcp.display(),
        what(mcp_changed)
    );
    println!(
        "Undo with: tascer uninstall claude-code{}",
        if user { " --user" } else { "" }
    );
    Ok(ExitCode::SUCCESS)
}

/// `tascer uninstall claude-code [--project|--user]`.
pub fn uninstall(user: bool) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let target = Target::new(user, &cwd)?;
    let home = tascer::tascer_home();
    for file in [&target.settings, &target.mcp] {
        let outcome = restore(&home, file)?;
        println!("{}: {outcome}", file.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// A JSON object file as read: its bytes (`None` when it does not exist)
/// and its object.
type ObjectFile = (Option<Vec<u8>>, Map<String, Value>);

/// Reads a JSON object file.
fn read_object(file: &Path) -> anyhow::Result<ObjectFile> {
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, Map::new())),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok((Some(bytes), Map::new()));
    }
    match serde_json::from_slice::<Value>(&bytes)
        .with_context(|| format!("{} is not JSON; fix it first", file.display()))?
    {
        Value::Object(map) => Ok((Some(bytes), map)),
        _ => bail!("{} must hold a JSON object", file.display()),
    }
}

/// Applies `change` to the JSON object in `file` (created if missing),
/// saving the original first. Returns false when nothing changed.
fn edit(
    home: &Path,
    file: &Path,
    change: impl Fn(&mut Map<String, Value>) -> anyhow::Result<bool>,
) -> anyhow::Result<bool> {
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

/// Undoes [`install`] for one file.
fn restore(home: &Path, file: &Path) -> anyhow::Result<&'static str> {
    let record_file = record_path(home, file);
    let (_, mut root) = read_object(file)?;
    let removed = remove_ours(&mut root);
    let saved: Option<Value> = std::fs::read(&record_file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if !removed {
        let _ = std::fs::remove_file(&record_file);
        return Ok("nothing of Tascer's there");
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
                _ => std::fs::remove_file(file)
                    .with_context(|| format!("cannot remove {}", file.display()))?,
            }
            let _ = std::fs::remove_file(&record_file);
            return Ok("restored as it was before install");
        }
    }
    let text = serde_json::to_string_pretty(&Value::Object(root))?;
    write_atomic(file, format!("{text}\n").as_bytes())?;
    let _ = std::fs::remove_file(&record_file);
    Ok("Tascer's entries removed (other changes since install kept)")
}

/// Adds a `tascer hook` handler to every event that lacks one.
fn add_hooks(root: &mut Map<String, Value>, command: &str) -> anyhow::Result<bool> {
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        bail!("\"hooks\" must be an object");
    };
    let mut changed = false;
    for (event, with_matcher) in EVENTS {
        let groups = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(groups) = groups else {
            bail!("\"hooks.{event}\" must be an array");
        };
        if groups.iter().any(is_ours) {
            continue;
        }
        let mut group = json!({"hooks": [{"type": "command", "command": command, "timeout": 30}]});
        if *with_matcher {
            group["matcher"] = json!("*");
        }
        groups.push(group);
        changed = true;
    }
    Ok(changed)
}

/// Adds the `tascer mcp serve` server unless one named `tascer` exists.
fn add_server(root: &mut Map<String, Value>, program: &str) -> anyhow::Result<bool> {
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        bail!("\"mcpServers\" must be an object");
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
        crate::hook::HOOK_EXECUTABLE,
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
                (c.ends_with(" hook") && c.contains("tascer"))
                    || c.ends_with(crate::hook::HOOK_EXECUTABLE)
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
        for (event, _) in EVENTS {
            if let Some(Value::Array(groups)) = hooks.get_mut(*event) {
                let before = groups.len();
                groups.retain(|g| !is_ours(g));
                removed |= groups.len() != before;
                if groups.is_empty() {
                    hooks.remove(*event);
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
fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    std::fs::write(tmp.path(), bytes)
        .with_context(|| format!("cannot write {}", tmp.path().display()))?;
    tmp.persist(path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// `s` quoted for a POSIX shell when it needs it.
pub(crate) fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
