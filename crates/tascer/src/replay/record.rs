//! A recorded session as a replay reads it: the model's answers (the
//! store's assistant messages), the prompts, the tool records (the
//! ledger's) in the order the model asked for them, and what the session
//! recorded at its start.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tascer_core::{ApiAssistantMessage, ContentBlock, Message, UserContent};
use tascer_ledger::{ContextSnapshot, EntryKind, Ledger, SessionStart, ToolRecord};
use tascer_store::SessionStore;

use super::error::ReplayError;
use crate::run_record::GOVERNANCE_KEY;

/// A recorded session.
pub(crate) struct Recorded {
    /// Its id.
    pub id: String,
    /// The model it started with.
    pub model: String,
    /// The directory it ran in.
    pub cwd: PathBuf,
    /// The governance options it recorded (`Null` for a session recorded
    /// before they were).
    pub governance: Value,
    /// The prompts, in order.
    pub prompts: Vec<String>,
    /// Every model answer, in order (subagents' included).
    pub answers: Vec<ApiAssistantMessage>,
    /// The `tool_use` ids of the answers, in order: tool call #1, #2, …
    pub call_ids: Vec<String>,
    /// The closed tool records by `tool_use` id.
    pub records: HashMap<String, ToolRecord>,
}

impl Recorded {
    /// Reads session `id` from `store` and `ledger` (of `home`).
    pub fn load(
        ledger: &Ledger,
        store: &SessionStore,
        id: &str,
        home: &Path,
    ) -> Result<Recorded, ReplayError> {
        let entries = ledger.store().entries(id)?;
        let info = store.session(id)?;
        if entries.is_empty() && info.is_none() {
            return Err(ReplayError::UnknownSession {
                id: id.to_string(),
                home: home.display().to_string(),
            });
        }
        let messages = store.messages(id)?;
        let answers: Vec<ApiAssistantMessage> = messages
            .iter()
            .filter_map(|m| match m {
                Message::Assistant(a) => Some(a.message.clone()),
                _ => None,
            })
            .collect();
        if answers.is_empty() {
            return Err(ReplayError::NoModelRecord(id.to_string()));
        }
        let start: Option<SessionStart> = entries
            .iter()
            .find(|e| e.kind == EntryKind::SessionStart)
            .and_then(|e| serde_json::from_value(e.payload.clone()).ok());
        let context = start.as_ref().map_or(&Value::Null, |s| &s.context);
        let cwd = context
            .get("cwd")
            .and_then(Value::as_str)
            .map(String::from)
            .or_else(|| info.as_ref().map(|i| i.cwd.clone()))
            .unwrap_or_default();
        let model = start
            .as_ref()
            .map(|s| s.model.clone())
            .or_else(|| info.as_ref().map(|i| i.model.clone()))
            .unwrap_or_default();
        let records = ledger
            .store()
            .tool_calls(id)?
            .into_iter()
            .map(|r| (r.tool_use_id.clone(), r))
            .collect();
        Ok(Recorded {
            id: id.to_string(),
            model,
            cwd: PathBuf::from(cwd),
            governance: context.get(GOVERNANCE_KEY).cloned().unwrap_or(Value::Null),
            prompts: prompts(&messages),
            call_ids: tool_use_ids(&answers),
            answers,
            records,
        })
    }

    /// The context of the first tool call, captured before it ran: the
    /// tree the session started from (`None` without a tool call).
    pub fn first_context(&self) -> Option<ContextSnapshot> {
        let first = self.call_ids.first()?;
        let record = self.records.get(first)?;
        serde_json::from_value(record.context.clone()).ok()
    }
}

/// The `tool_use` ids of `answers`, in order.
pub(crate) fn tool_use_ids(answers: &[ApiAssistantMessage]) -> Vec<String> {
    answers
        .iter()
        .flat_map(|a| a.content.iter())
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

/// The prompts: the main thread's text messages that open a turn (the
/// first, and each after a result); a Stop hook's continuation inside a
/// turn is not one (the hook sends it again).
fn prompts(messages: &[Message]) -> Vec<String> {
    let mut opens_turn = true;
    let mut prompts = Vec::new();
    for message in messages {
        match message {
            Message::Result(_) => opens_turn = true,
            Message::User(u) if u.parent_tool_use_id.is_none() && opens_turn => {
                if let UserContent::Text(text) = &u.message.content {
                    prompts.push(text.clone());
                    opens_turn = false;
                }
            }
            _ => {}
        }
    }
    prompts
}
