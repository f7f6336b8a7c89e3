//! What `tascer hook` tells the process's [`Observer`] (telemetry,
//! docs/telemetry.md): each tool call as its record closes (refused at
//! `PreToolUse`, or closed at `PostToolUse`), the session when its first
//! event opens it and when `SessionEnd` ends it. The facts carry Claude
//! Code's `session_id` and `tool_use_id`, so the spans join Claude Code's
//! own telemetry.

use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use serde_json::Value;
use tascer::observe::{AgentEndFacts, Observer, SessionFacts, tool_facts};
use tascer_guard::reviewers::ReviewRecord;
use tascer_ledger::ToolRecord;

use crate::session::{HookSession, text};

/// The host name the facts carry.
const HOST: &str = "claude-code";

static OBSERVER: OnceLock<Arc<dyn Observer>> = OnceLock::new();

/// Sets the observer of every event this process answers (once; false
/// when one was set already).
pub fn set_observer(observer: Arc<dyn Observer>) -> bool {
    OBSERVER.set(observer).is_ok()
}

fn observer() -> Option<&'static Arc<dyn Observer>> {
    OBSERVER.get()
}

impl HookSession {
    /// Tells the observer a call's record was closed by the entry `hash`.
    pub(crate) fn observe_tool(
        &self,
        input: &Value,
        record: &ToolRecord,
        hash: Option<String>,
        reviews: &[ReviewRecord],
    ) {
        let Some(observer) = observer() else {
            return;
        };
        let mut facts = tool_facts(&self.session_id, record, hash, reviews);
        facts.policy_digest = Some(self.policy_digest(input));
        observer.tool_call(&facts);
    }

    /// Tells the observer the session's ledger session was just started.
    pub(crate) fn observe_opened(&self, input: &Value) {
        if let Some(observer) = observer() {
            observer.session_opened(&SessionFacts {
                session_id: self.session_id.clone(),
                host: HOST.into(),
                model: text(input, "model"),
                provider: String::new(),
            });
        }
    }

    /// Tells the observer Claude Code ended the session: the
    /// `invoke_agent` span, from the session's first ledger entry.
    pub(crate) fn observe_end(&self, input: &Value) {
        let Some(observer) = observer() else {
            return;
        };
        let start = self
            .ledger
            .store()
            .entries(&self.session_id)
            .ok()
            .and_then(|entries| entries.into_iter().next())
            .and_then(|first| chrono::DateTime::parse_from_rfc3339(&first.ts).ok())
            .map(SystemTime::from);
        observer.agent_ended(&AgentEndFacts {
            session_id: self.session_id.clone(),
            status: "success".into(),
            subtype: text(input, "reason"),
            start,
            end: Some(SystemTime::now()),
            ..AgentEndFacts::default()
        });
    }

    /// The digest of what governs the session's calls, as its
    /// `session_start` records it (the settings layers and the mode).
    fn policy_digest(&self, input: &Value) -> String {
        let options = crate::start::options_value(self.settings(), &text(input, "permission_mode"));
        crate::start::options_digest(&options)
    }
}
