//! What the `session_start` entry of a Claude Code session records under
//! `tascer hook`: digests of what the hook can see of the session's set-up.
//!
//! - `options_digest`: the settings Tascer governs the session with — each
//!   layer it read (source, file, content), and Claude Code's permission
//!   mode at the first event;
//! - `system_prompt_digest`: Claude Code's own system prompt never reaches
//!   a hook, so this covers the memory files Claude Code adds to it
//!   (`CLAUDE.md`, `.claude/CLAUDE.md` and `CLAUDE.local.md` of the
//!   project, the user's `CLAUDE.md`), each by path and content digest.
//!
//! The start entry's context lists the files of both, so a reader knows
//! what the digests cover.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tascer_guard::settings::LoadedSettings;
use tascer_ledger::sha256_hex;

/// `sha256:<hex>` of the canonical JSON of `value` (RFC 8785, as the
/// ledger hashes entries).
fn digest_of(value: &Value) -> String {
    match tascer_ledger::jcs::canonicalize(value) {
        Ok(bytes) => format!("sha256:{}", sha256_hex(&bytes)),
        Err(_) => format!("sha256:{}", sha256_hex(value.to_string().as_bytes())),
    }
}

/// The settings in force and the caller's mode, as the options digest
/// covers them; `Err` (the reason the settings could not be read) is
/// covered as it is.
pub(crate) fn options_value(settings: Result<&LoadedSettings, String>, mode: &str) -> Value {
    let layers = match settings {
        Ok(settings) => Value::Array(
            settings
                .layers
                .iter()
                .map(|l| {
                    json!({
                        "source": l.source,
                        "path": l.path.as_ref().map(|p| p.display().to_string()),
                        "settings": serde_json::to_value(&l.settings).unwrap_or(Value::Null),
                    })
                })
                .collect(),
        ),
        Err(error) => json!({ "error": error }),
    };
    json!({"host": "claude-code", "permission_mode": mode, "settings": layers})
}

/// The options digest of [`options_value`].
pub(crate) fn options_digest(options: &Value) -> String {
    digest_of(options)
}

/// The memory files Claude Code reads into its system prompt for a
/// project at `root`, user ones in `claude_config` (`$CLAUDE_CONFIG_DIR`,
/// else `~/.claude`); those that exist.
pub(crate) fn memory_files(root: &Path, claude_config: Option<&Path>) -> Vec<PathBuf> {
    let mut files = vec![
        root.join("CLAUDE.md"),
        root.join(".claude/CLAUDE.md"),
        root.join("CLAUDE.local.md"),
    ];
    if let Some(dir) = claude_config {
        files.push(dir.join("CLAUDE.md"));
    }
    files.retain(|f| f.is_file());
    files
}

/// The system prompt digest: each memory file by path and content digest
/// (an empty list when there are none).
pub(crate) fn memory_digest(files: &[PathBuf]) -> String {
    let entries: Vec<Value> = files
        .iter()
        .map(|f| {
            let content = std::fs::read(f).unwrap_or_default();
            json!({"path": f.display().to_string(), "sha256": sha256_hex(&content)})
        })
        .collect();
    digest_of(&Value::Array(entries))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_digests_follow_the_settings_and_the_memory_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(memory_files(root, None).is_empty());
        let none = memory_digest(&[]);
        std::fs::write(root.join("CLAUDE.md"), "Use tabs.").unwrap();
        let files = memory_files(root, None);
        assert_eq!(files, [root.join("CLAUDE.md")]);
        let one = memory_digest(&files);
        assert_ne!(one, none);
        std::fs::write(root.join("CLAUDE.md"), "Use spaces.").unwrap();
        assert_ne!(memory_digest(&files), one, "the content counts");

        let empty = LoadedSettings::default();
        let a = options_digest(&options_value(Ok(&empty), "default"));
        let b = options_digest(&options_value(Ok(&empty), "bypassPermissions"));
        assert_ne!(a, b, "the mode counts");
        assert_ne!(a, format!("sha256:{}", sha256_hex(b"{}")));
    }
}
