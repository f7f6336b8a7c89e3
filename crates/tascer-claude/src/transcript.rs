//! What the LLM reviewers see of a Claude Code session: its transcript
//! file (`transcript_path` of a hook event), written out as a loop
//! session's history is ([`TranscriptExcerpt::from_messages`]).

use std::path::PathBuf;

use serde_json::Value;
use tascer_guard::reviewers::{Transcript, TranscriptExcerpt};

/// Claude Code's transcript (JSONL; claude-compat §10), read afresh each
/// time: `user` and `assistant` entries, meta entries left out.
pub struct ClaudeTranscript {
    /// The file (`transcript_path` of a hook event).
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
        TranscriptExcerpt::from_messages(&messages, max_messages)
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
