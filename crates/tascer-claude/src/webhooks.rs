//! Every hook event, as Claude Code sent it and with Tascer's answer and
//! each reviewer's verdict (`agents`), queued for the settings' webhooks
//! (`tascer-webhook`); the process that answered starts the flusher that
//! delivers them.

use serde_json::{Value, json};
use tascer_guard::hooks::HookEvent;
use tascer_hook_client::Reply as HookReply;
use tascer_webhook::{Source, Webhooks};

use crate::session::{HookSession, text};

impl HookSession {
    /// Queues the event (as Claude Code sent it) and Tascer's answer for
    /// the webhooks; true when anything was queued.
    pub(crate) fn webhook(&self, input: &Value, event: HookEvent, reply: &HookReply) -> bool {
        let hooks = match self.settings() {
            Ok(settings) => settings.webhooks(),
            Err(err) => {
                tracing::warn!("webhooks: {err}");
                return false;
            }
        };
        if hooks.is_empty() {
            return false;
        }
        let db = match self.local_db() {
            Ok(db) => db,
            Err(err) => {
                tracing::warn!("webhooks: {err}; the {} event is not sent", event.as_str());
                return false;
            }
        };
        let sink = match Webhooks::open(hooks, &db, Source::ClaudeCode) {
            Ok(Some(sink)) => sink,
            Ok(None) => return false,
            Err(err) => {
                tracing::warn!("webhooks: cannot open the outbox: {err}");
                return false;
            }
        };
        let answer = serde_json::from_str::<Value>(&reply.stdout).unwrap_or(Value::Null);
        let tascer = json!({
            "exit_code": reply.exit_code,
            "answer": answer,
            "message": Some(&reply.stderr).filter(|m| !m.is_empty()),
            "transcript_path": text(input, "transcript_path"),
            "agents": self.agents(),
        });
        sink.send(event, input.clone(), tascer)
    }
}
