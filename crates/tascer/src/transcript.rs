//! What the LLM reviewers see of a loop session's conversation: its
//! stored history ([`StoreTranscript`]), written out as `[role] text`
//! messages with tool calls and results in brackets
//! ([`TranscriptExcerpt::from_messages`]). Claude Code's transcript file
//! is read by the Claude Code host (`tascer-claude`).

use std::sync::Arc;

use serde_json::Value;
use tascer_core::Message;
use tascer_guard::reviewers::{Transcript, TranscriptExcerpt};
use tascer_store::SessionStore;

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
        TranscriptExcerpt::from_messages(&messages, max_messages)
    }
}
