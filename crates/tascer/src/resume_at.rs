//! `resume_session_at`: a resumed session continued from one of its
//! messages, as Claude Code does. The store keeps the whole session: the
//! continuation is a new session forked at that message (with the file
//! checkpoints of the prompts it keeps), so every ledger stays
//! append-only, and the new session's `session_start` names the point.

use serde_json::{Value, json};
use tascer_core::Message;
use tascer_store::SessionStore;

use crate::error::Error;
use crate::history::is_prompt;

/// Where a session was cut from, for its ledger.
pub(crate) struct ForkPoint {
    /// The resumed session.
    pub parent: String,
    /// The last message kept.
    pub message_uuid: String,
}

impl ForkPoint {
    /// The point as the ledger's `session_start` context records it.
    pub fn ledger_value(&self) -> Value {
        json!({"session_id": self.parent, "message_uuid": self.message_uuid})
    }
}

/// Forks `parent` into `new_id` through the message `at`; with
/// `drops_turn`, first checks that the cut drops only that prompt's turn.
pub(crate) fn fork_at(
    store: &SessionStore,
    parent: &str,
    new_id: &str,
    at: &str,
    drops_turn: Option<&str>,
) -> Result<ForkPoint, Error> {
    if let Some(turn) = drops_turn {
        check_drops_turn(&store.messages(parent)?, at, turn)?;
    }
    store.fork_at(parent, new_id, at)?;
    Ok(ForkPoint {
        parent: parent.to_string(),
        message_uuid: at.to_string(),
    })
}

/// `resume_drops_turn`: everything after the message `at` must belong to
/// the turn of the prompt `turn` (that prompt and what followed it, or the
/// rest of its turn when the cut is inside it); another prompt after the
/// cut refuses the resume.
fn check_drops_turn(messages: &[Message], at: &str, turn: &str) -> Result<(), Error> {
    let reject = Error::ResumeRejected;
    if turn.trim().is_empty() {
        return Err(reject("the prompt uuid is empty".into()));
    }
    // An unknown `at` is reported by the fork, with Claude Code's text.
    let Some(cut) = messages.iter().position(|m| m.uuid() == at) else {
        return Ok(());
    };
    let prompts_after: Vec<&str> = messages[cut + 1..]
        .iter()
        .filter(|m| is_prompt(m))
        .map(Message::uuid)
        .collect();
    let turn_of_cut = messages[..=cut]
        .iter()
        .rev()
        .find(|m| is_prompt(m))
        .map(Message::uuid);
    match prompts_after.as_slice() {
        [only] if *only == turn => Ok(()),
        [] if turn_of_cut == Some(turn) => Ok(()),
        [] => Err(reject(format!(
            "the messages after {at} belong to the turn of {}, not of {turn}",
            turn_of_cut.unwrap_or("no prompt")
        ))),
        more => Err(reject(format!(
            "the messages after {at} hold the prompt(s) {}, not only {turn}",
            more.join(", ")
        ))),
    }
}
