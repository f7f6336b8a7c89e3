//! What the LLM reviewers see of a conversation: the loop's stored
//! history ([`StoreTranscript`]) or Claude Code's transcript file
//! ([`ClaudeTranscript`], `transcript_path` of a hook event), both written
//! out as `[role] text` messages with tool calls and results in brackets.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tascer_core::Message;
use tascer_guard::review::{Transcript, TranscriptExcerpt, TranscriptMessage};
use tascer_store::SessionStore;

/// Prefix of the course corrections `intent-validate` sends back as user
/// messages: they are not the user's request.
pub(crate) const CORRECTION_PREFIX: &str = "Tascer intent-validate:";

/// Longest tool input or result written out, in characters.
const PART_CHARS: usize = 600;

/// The session's messages in the store (it holds every message as it
/// happens, so the assistant message making a call is there when the call
/// is admitted).
pub(crate) struct StoreTranscript {
    pub store: Arc<SessionStore>,
    pub session_id: String,
}

impl Transcript for StoreTranscript {
    fn excerpt(&self, max_messages: usize) -> TranscriptExcerpt {
        let stored = match self.store.messages(&self.session_id) {
            Ok(m) => m,
            Err(err) => {
                tracing::warn!("reviewers cannot read the session's messages: {err}");
                return TranscriptExcerpt::default();
            }
        };
        // The main loop's user and assistant frames, as stored.
        let messages: Vec<(String, Value)> = stored
            .iter()
            .filter_map(|m| match m {
                Message::User(u) if u.parent_tool_use_id.is_none() => Some((
                    "user".to_string(),
                    serde_json::to_value(&u.message.content).ok()?,
                )),
                Message::Assistant(a) if a.parent_tool_use_id.is_none() => Some((
                    "assistant".to_string(),
                    serde_json::to_value(&a.message.content).ok()?,
                )),
                _ => None,
            })
            .collect();
        excerpt_of(&messages, max_messages)
    }
}

/// Claude Code's transcript (JSONL; claude-compat §10), read afresh each
/// time: `user` and `assistant` entries, meta entries left out.
pub(crate) struct ClaudeTranscript {
    pub path: PathBuf,
}

impl Transcript for ClaudeTranscript {
    fn excerpt(&self, max_messages: usize) -> TranscriptExcerpt {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(err) => {
                tracing::warn!(
                    "reviewers cannot read the transcript {}: {err}",
                    self.path.display()
                );
                return TranscriptExcerpt::default();
            }
        };
        let messages: Vec<(String, Value)> = text
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|entry| {
                matches!(entry["type"].as_str(), Some("user" | "assistant"))
                    && !entry["isMeta"].as_bool().unwrap_or(false)
            })
            .filter_map(|entry| {
                let message = entry.get("message")?;
                let role = message.get("role")?.as_str()?.to_string();
                Some((role, message.get("content").cloned().unwrap_or(Value::Null)))
            })
            .collect();
        excerpt_of(&messages, max_messages)
    }
}

/// The latest request and the last `max` messages of (role, content)
/// pairs in Anthropic's content shape.
fn excerpt_of(messages: &[(String, Value)], max: usize) -> TranscriptExcerpt {
    let request = messages
        .iter()
        .rev()
        .filter(|(role, _)| role == "user")
        .find_map(|(_, content)| prompt_text(content));
    let start = messages.len().saturating_sub(max);
    TranscriptExcerpt {
        request,
        messages: messages[start..]
            .iter()
            .map(|(role, content)| TranscriptMessage {
                role: role.clone(),
                text: written_out(content),
            })
            .collect(),
    }
}

/// The text of a user message that is a prompt (text, no tool results),
/// unless it is one of Tascer's own corrections.
fn prompt_text(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            if blocks.iter().any(|b| b["type"] == "tool_result") {
                return None;
            }
            blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        }
        _ => return None,
    };
    let trimmed = text.trim();
    (!trimmed.is_empty() && !trimmed.starts_with(CORRECTION_PREFIX)).then(|| trimmed.to_string())
}

/// A message's content as text: text blocks as they are, tool calls and
/// results in brackets (cut short), thinking and images left out.
fn written_out(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().map(str::to_string),
                Some("tool_use") => Some(format!(
                    "[tool_use {} {}]",
                    b["name"].as_str().unwrap_or("?"),
                    cut(&b["input"].to_string())
                )),
                Some("tool_result") => {
                    let error = if b["is_error"].as_bool().unwrap_or(false) {
                        " (error)"
                    } else {
                        ""
                    };
                    Some(format!(
                        "[tool_result{error} {}]",
                        cut(&result_text(&b["content"]))
                    ))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(PART_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_claude_code_transcript_gives_the_request_and_the_last_messages() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let lines = [
            json!({"type": "summary", "summary": "x"}),
            json!({"type": "user", "message": {"role": "user", "content": "Fix the failing test"}}),
            json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": "<meta>"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "Running the tests."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cargo test"}}
            ]}}),
            json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "1 failed", "is_error": true}
            ]}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\nnot json\n")).collect();
        std::fs::write(&path, text).unwrap();
        let excerpt = ClaudeTranscript { path }.excerpt(2);
        assert_eq!(excerpt.request.as_deref(), Some("Fix the failing test"));
        assert_eq!(excerpt.messages.len(), 2);
        assert_eq!(excerpt.messages[0].role, "assistant");
        assert!(
            excerpt.messages[0]
                .text
                .contains("[tool_use Bash {\"command\":\"cargo test\"}]")
        );
        assert_eq!(excerpt.messages[1].text, "[tool_result (error) 1 failed]");
        let missing = ClaudeTranscript {
            path: dir.path().join("none.jsonl"),
        };
        assert_eq!(missing.excerpt(5), TranscriptExcerpt::default());
    }
}
