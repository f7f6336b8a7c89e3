//! A Claude Code–format transcript of a session: one JSON line per user
//! and assistant message of the main thread, in
//! `<dir>/projects/<sanitized cwd>/<session id>.jsonl`, linked by
//! `parentUuid`, as Claude Code writes them. The official SDKs' session
//! helpers (`list_sessions`, `get_session_messages`, `rename_session`,
//! `tag_session`, `delete_session`) read and edit these files, and
//! command hooks get the file as `transcript_path`.
//!
//! The transcript mirrors the store; it is not the record (the store and
//! the ledger are). A mirror write that fails is logged once and the
//! mirror stops; the session goes on.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde_json::{Value, json};
use tascer_core::Message;
use tascer_guard::settings::claude_transcript_file;

struct State {
    /// The uuid of the last line written (the next line's parent).
    last_uuid: Option<String>,
    /// Set after a failed write: the mirror has stopped.
    stopped: bool,
}

/// Appends a session's messages to its transcript file.
pub(crate) struct Transcript {
    path: PathBuf,
    cwd: String,
    state: Mutex<State>,
}

impl Transcript {
    /// The transcript of `session_id` (run in `cwd`) under `dir`; a resumed
    /// session continues its file, linking to its last line.
    pub fn open(dir: &Path, cwd: &Path, session_id: &str) -> Transcript {
        let path = claude_transcript_file(dir, cwd, session_id);
        let last_uuid = last_uuid(&path);
        Transcript {
            path,
            cwd: cwd.display().to_string(),
            state: Mutex::new(State {
                last_uuid,
                stopped: false,
            }),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `message` when it is a user or assistant message of the
    /// main thread (a subagent's messages have a parent tool use).
    pub fn record(&self, message: &Message) {
        let mut state = self.state.lock();
        if state.stopped {
            return;
        }
        let Some(line) = claude_transcript_line(message, state.last_uuid.as_deref(), &self.cwd)
        else {
            return;
        };
        match self.append(&line) {
            Ok(()) => state.last_uuid = line["uuid"].as_str().map(str::to_owned),
            Err(e) => {
                state.stopped = true;
                tracing::warn!(
                    "cannot write the session transcript {} ({e}); it is not written further \
                     (the session itself is stored)",
                    self.path.display()
                );
            }
        }
    }

    fn append(&self, line: &Value) -> std::io::Result<()> {
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        let mut text = line.to_string();
        text.push('\n');
        file.write_all(text.as_bytes())
    }
}

/// The Claude Code transcript line of a user or assistant message of the
/// main thread (`None` for any other message), linked to `parent_uuid`;
/// `cwd` is the session's working directory, the time is now.
pub fn claude_transcript_line(
    message: &Message,
    parent_uuid: Option<&str>,
    cwd: &str,
) -> Option<Value> {
    let (kind, payload, uuid, session_id) = match message {
        Message::User(m) if m.parent_tool_use_id.is_none() => (
            "user",
            serde_json::to_value(&m.message),
            &m.uuid,
            &m.session_id,
        ),
        Message::Assistant(m) if m.parent_tool_use_id.is_none() => (
            "assistant",
            serde_json::to_value(&m.message),
            &m.uuid,
            &m.session_id,
        ),
        _ => return None,
    };
    Some(json!({
        "parentUuid": parent_uuid,
        "isSidechain": false,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session_id,
        "version": crate::VERSION,
        "type": kind,
        "message": payload.unwrap_or(Value::Null),
        "uuid": uuid,
        "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    }))
}

/// A session's messages as Claude Code transcript lines, each linked to
/// the one before (what `tascer sessions export --format jsonl` writes).
pub fn claude_transcript_lines(messages: &[Message], cwd: &str) -> Vec<Value> {
    let mut parent: Option<String> = None;
    let mut lines = Vec::new();
    for message in messages {
        if let Some(line) = claude_transcript_line(message, parent.as_deref(), cwd) {
            parent = line["uuid"].as_str().map(str::to_owned);
            lines.push(line);
        }
    }
    lines
}

/// The `uuid` of the last line of an existing transcript.
fn last_uuid(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
        .filter_map(|v| v.get("uuid")?.as_str().map(str::to_owned))
        .last()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tascer_core::{UserContent, UserMessage};

    #[test]
    fn messages_are_linked_and_a_resumed_file_continues_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = Path::new("/w");
        let t = Transcript::open(dir.path(), cwd, "sid");
        let first = UserMessage::new(UserContent::Text("hi".into()), "sid");
        t.record(&Message::User(first.clone()));
        let mut sub = UserMessage::new(UserContent::Text("sub".into()), "sid");
        sub.parent_tool_use_id = Some("toolu_1".into());
        t.record(&Message::User(sub));

        let again = Transcript::open(dir.path(), cwd, "sid");
        let second = UserMessage::new(UserContent::Text("more".into()), "sid");
        again.record(&Message::User(second.clone()));

        let text = std::fs::read_to_string(t.path()).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines.len(),
            2,
            "a subagent's message is not in the main transcript"
        );
        assert_eq!(lines[0]["parentUuid"], Value::Null);
        assert_eq!(lines[0]["uuid"], first.uuid.as_str());
        assert_eq!(lines[0]["message"]["content"], "hi");
        assert_eq!(lines[1]["parentUuid"], first.uuid.as_str());
        assert_eq!(lines[1]["uuid"], second.uuid.as_str());
        // The SDKs find the first prompt by scanning for compact JSON.
        assert!(text.lines().all(|l| l.contains("\"type\":\"user\"")));
    }
}
