//! Claude Code's session transcripts, for `validate_intent`: where they
//! are (`<config>/projects/<project>/<session_id>.jsonl`, `<config>` being
//! `$CLAUDE_CONFIG_DIR` or `~/.claude`, `<project>` the project's path
//! with every character but ASCII letters and digits replaced by `-`), and
//! their `user` / `assistant` entries as text for a reviewer.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tascer_settings::{claude_config_dir, claude_project_dir_name};

use crate::error::{GatekeeperError, Result};

/// How much of a tool result a transcript keeps.
pub(crate) const TOOL_RESULT_CHARS: usize = 1500;

/// True for a session id that can be a file name (Claude Code's are
/// UUIDs): letters, digits, `-` and `_` only.
fn plausible_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The transcript of Claude Code session `id`: in `project`'s directory
/// first, else in any project's. `None` when there is none.
pub(crate) fn find(id: &str, project: &Path) -> Option<PathBuf> {
    if !plausible_id(id) {
        return None;
    }
    let projects = claude_config_dir()?.join("projects");
    let file = format!("{id}.jsonl");
    let own = projects.join(claude_project_dir_name(project)).join(&file);
    if own.is_file() {
        return Some(own);
    }
    std::fs::read_dir(&projects)
        .ok()?
        .filter_map(std::result::Result::ok)
        .map(|entry| entry.path().join(&file))
        .find(|path| path.is_file())
}

/// The most recently written transcript of `project`, if any.
pub(crate) fn latest(project: &Path) -> Option<PathBuf> {
    let dir = claude_config_dir()?
        .join("projects")
        .join(claude_project_dir_name(project));
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(std::result::Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, path)| path)
}

/// The conversation of a Claude Code transcript as text (`USER:`,
/// `ASSISTANT:`, `TOOL CALL`, `TOOL RESULT` lines). Lines that are not
/// JSON, other entry types and meta entries are left out; a file with no
/// conversation at all is an error (it is not a transcript).
pub(crate) fn text(path: &Path) -> Result<String> {
    if path.extension().is_none_or(|x| x != "jsonl") {
        return Err(GatekeeperError::NotATranscript {
            path: path.to_path_buf(),
            problem: "a Claude Code transcript is a .jsonl file".into(),
        });
    }
    let content = std::fs::read_to_string(path).map_err(|e| GatekeeperError::NotATranscript {
        path: path.to_path_buf(),
        problem: e.to_string(),
    })?;
    let mut out = String::new();
    for entry in content
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
    {
        let role = match entry["type"].as_str() {
            Some("user") => "USER",
            Some("assistant") => "ASSISTANT",
            _ => continue,
        };
        if entry["isMeta"].as_bool().unwrap_or(false) {
            continue;
        }
        entry_text(role, &entry["message"]["content"], &mut out);
    }
    if out.is_empty() {
        return Err(GatekeeperError::NotATranscript {
            path: path.to_path_buf(),
            problem: "no user or assistant messages in it".into(),
        });
    }
    Ok(out)
}

/// Appends the lines of one message's content.
fn entry_text(role: &str, content: &Value, out: &mut String) {
    if let Some(text) = content.as_str() {
        out.push_str(&format!("{role}: {text}\n"));
        return;
    }
    for block in content.as_array().into_iter().flatten() {
        match block["type"].as_str() {
            Some("text") => {
                let text = block["text"].as_str().unwrap_or_default();
                out.push_str(&format!("{role}: {text}\n"));
            }
            Some("tool_use") => out.push_str(&format!(
                "TOOL CALL {}: {}\n",
                block["name"].as_str().unwrap_or("?"),
                block["input"]
            )),
            Some("tool_result") => {
                let result = match &block["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(parts) => parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    other => other.to_string(),
                };
                let result: String = result.chars().take(TOOL_RESULT_CHARS).collect();
                let mark = if block["is_error"].as_bool().unwrap_or(false) {
                    " (error)"
                } else {
                    ""
                };
                out.push_str(&format!("TOOL RESULT{mark}: {result}\n"));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_text() {
        assert_eq!(
            claude_project_dir_name(Path::new("/home/a.b/my_proj")),
            "-home-a-b-my-proj"
        );
        assert!(plausible_id("0b6c-AF_1") && !plausible_id("../x") && !plausible_id(""));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let lines = [
            json!({"type": "summary", "summary": "x"}),
            json!({"type": "user", "message": {"role": "user", "content": "Fix the typo"}}),
            json!({"type": "user", "isMeta": true, "message": {"content": "<meta>"}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "Removing tests."},
                {"type": "tool_use", "name": "Bash", "input": {"command": "rm -r tests"}}]}}),
            json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "content": [{"type": "text", "text": "done"}], "is_error": true}]}}),
        ];
        let text_lines: String = lines.iter().map(|l| format!("{l}\nnot json\n")).collect();
        std::fs::write(&path, text_lines).unwrap();
        assert_eq!(
            text(&path).unwrap(),
            "USER: Fix the typo\nASSISTANT: Removing tests.\n\
             TOOL CALL Bash: {\"command\":\"rm -r tests\"}\nTOOL RESULT (error): done\n"
        );
        std::fs::write(&path, "{}\n").unwrap();
        assert!(text(&path).unwrap_err().to_string().contains("no user"));
        let other = dir.path().join("shadow");
        std::fs::write(&other, "root:x").unwrap();
        assert!(text(&other).unwrap_err().to_string().contains(".jsonl"));
    }
}
