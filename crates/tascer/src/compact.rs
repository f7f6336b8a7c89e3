//! Compaction: when the conversation has grown too large, the model
//! summarizes it and the summary replaces it.
//!
//! PreCompact hooks run first and can refuse; PostCompact hooks get the
//! summary at the end. The summary request is the conversation plus an
//! instruction to answer in text only. The tools stay defined: the
//! Anthropic API (and Bedrock) refuse a request whose history holds tool
//! calls but defines no tools. Tool calls in the answer are ignored; its
//! text becomes the first (and only) user message of the new history. The
//! session store gets a `compact_boundary` system message carrying the
//! summary (so a resumed session starts from it), and the ledger a
//! `checkpoint` entry with the summary as evidence.

use serde_json::json;
use tascer_core::{ChatMessage, ContentBlock};
use tascer_guard::hooks::CompactTrigger;
use tascer_store::compacted_history_start;
use tokio_util::sync::CancellationToken;

use crate::history::push_user;
use crate::session::Session;

/// What the model is asked for.
pub(crate) const SUMMARY_REQUEST: &str = "Your context is about to be compacted. Write a \
     summary of the conversation so far that lets you continue the work without it: the \
     user's requests and intent, what was done (files read or changed, commands run and \
     their outcomes), decisions and their reasons, errors and how they were fixed, and what \
     remains to do next. Do not call any tool: answer with the summary only, in text.";

/// Why a compaction did not happen.
#[derive(Debug)]
pub(crate) enum NotCompacted {
    /// A PreCompact hook refused.
    Blocked(String),
    /// The summary could not be made (the model call failed or was empty).
    Failed(String),
}

impl std::fmt::Display for NotCompacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotCompacted::Blocked(reason) => write!(f, "a PreCompact hook refused: {reason}"),
            NotCompacted::Failed(reason) => write!(f, "compaction failed: {reason}"),
        }
    }
}

/// The name a trigger has in messages and the ledger.
pub(crate) fn trigger_name(trigger: CompactTrigger) -> &'static str {
    match trigger {
        CompactTrigger::Manual => "manual",
        CompactTrigger::Auto => "auto",
    }
}

/// Compacts the session's history and returns the summary. `pre_tokens`
/// is the size of the last model input (reported in the boundary message).
pub(crate) async fn compact(
    session: &mut Session,
    trigger: CompactTrigger,
    instructions: Option<&str>,
    pre_tokens: u64,
    cancel: &CancellationToken,
) -> Result<String, NotCompacted> {
    if session.history.is_empty() {
        return Err(NotCompacted::Failed("the conversation is empty".into()));
    }
    let env = session.agent.env.clone();
    let governance = session.agent.governance.clone();
    governance
        .on_pre_compact(&env, trigger, instructions)
        .await
        .map_err(NotCompacted::Blocked)?;
    env.emit(env.system_message("status", json!({"status": "compacting"})));

    let mut ask = SUMMARY_REQUEST.to_string();
    if let Some(extra) = instructions.filter(|i| !i.trim().is_empty()) {
        ask.push_str("\n\nAlso follow these instructions: ");
        ask.push_str(extra);
    }
    let mut request = session.history.clone();
    push_user(&mut request, ChatMessage::user_text(ask));
    let response = session
        .agent
        .call_model(&request, cancel)
        .await
        .map_err(|e| NotCompacted::Failed(e.to_string()))?;
    let summary: String = response
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n");
    if summary.trim().is_empty() {
        return Err(NotCompacted::Failed(
            "the model answered the summary request without text".into(),
        ));
    }

    let name = trigger_name(trigger);
    session.history = vec![compacted_history_start(&summary)];
    env.proof.compaction(name, pre_tokens, &summary);
    env.emit(env.system_message(
        "compact_boundary",
        json!({
            "compact_metadata": {"trigger": name, "pre_tokens": pre_tokens},
            "summary": summary,
        }),
    ));
    governance.on_post_compact(&env, trigger, &summary).await;
    Ok(summary)
}
