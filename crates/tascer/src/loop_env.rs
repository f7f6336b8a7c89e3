//! The handles every agent of a session shares ([`LoopEnv`]): the model
//! client, the store and the ledger, where the running turn's messages go,
//! the session's running cost, and the first write that failed.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;

use tascer_core::{Message, ModelUsage, SystemMessage, Usage};
use tascer_model::ModelClient;
use tascer_store::{AttachedMessage, SessionStore, Totals};

pub(crate) use crate::observed::Observed;
use crate::proof::Proof;
use crate::write_failure::WriteFailure;

/// Running cost of a session, shared by the main loop and its subagents:
/// its own model calls and its child sessions (contracts a manager ran).
#[derive(Debug, Default)]
pub(crate) struct Costs {
    /// Everything known so far, USD, children included.
    pub total_usd: f64,
    pub per_model: Vec<(String, ModelUsage)>,
    /// Models (the session's or its children's) whose cost is unknown.
    pub unpriced_models: Vec<String>,
    /// Model calls of the child sessions.
    pub child_turns: u32,
}

impl Costs {
    fn unpriced(&mut self, model: &str) {
        if !self.unpriced_models.iter().any(|m| m == model) {
            self.unpriced_models.push(model.to_string());
        }
    }
}

/// Handles shared by every agent of a session. Cheap to clone.
#[derive(Clone)]
pub(crate) struct LoopEnv {
    pub session_id: String,
    pub client: ModelClient,
    pub store: Arc<SessionStore>,
    pub shared_cwd: tascer_core::SharedCwd,
    pub env: Arc<HashMap<String, String>>,
    pub include_partial_messages: bool,
    pub max_tokens: Option<u32>,
    pub costs: Arc<Mutex<Costs>>,
    /// Where the running turn's messages go (set at the start of each turn),
    /// so subagents can stream into their parent's turn.
    pub sink: Arc<Mutex<Option<UnboundedSender<Message>>>>,
    /// Running totals to store with the next stored message
    /// ([`defer_totals`](Self::defer_totals)).
    pub pending_totals: Arc<Mutex<Option<Totals>>>,
    /// The session's ledger.
    pub proof: Proof,
    /// The first store or ledger write that failed: once set, nothing more
    /// is stored and the turn stops.
    pub failure: WriteFailure,
    /// The Claude Code–format transcript stored messages are mirrored to.
    pub transcript: Option<Arc<crate::claude_transcript::Transcript>>,
    /// The session's file checkpoints, when file checkpointing is on.
    pub checkpoints: Option<Arc<crate::file_checkpoint::FileCheckpoints>>,
    /// The session's observer (telemetry) and what it is told.
    pub observed: Observed,
}

impl LoopEnv {
    /// Tells the observer this session is open.
    pub fn observe_session_opened(&self, model: &str) {
        self.observed.session_opened(&self.session_id, model);
    }

    /// Sends a message to the running turn's consumer and stores it.
    /// Stream events are sent but not stored. A store failure is recorded
    /// in [`failure`](Self::failure) and stops the turn; after one, nothing
    /// more is stored, so the stored history is a prefix of the session
    /// with no hole in it.
    ///
    /// An assistant message is stored in the same transaction as what the
    /// ledger has staged (its model response's entry): a process killed at
    /// any point leaves both or neither, so the stored turns never run
    /// ahead of the ledger.
    pub fn emit(&self, message: Message) {
        if !matches!(message, Message::StreamEvent(_))
            && !self.failure.is_set()
            && self.store_message(&message)
            && let Some(transcript) = &self.transcript
        {
            transcript.record(&message);
        }
        if let Some(sink) = self.sink.lock().as_ref() {
            // A consumer that went away is not an error: the turn still
            // finishes and is stored.
            let _ = sink.send(message);
        }
    }

    /// Stores `message` with the running totals deferred for it; false
    /// when the write failed (the failure is recorded).
    fn store_message(&self, message: &Message) -> bool {
        let totals = self.pending_totals.lock().take();
        let written = SessionStore::message_row(message).and_then(|row| {
            if matches!(message, Message::Assistant(_)) {
                // The session's ledger shares the store's backend (see
                // `session::open_ledger`): one transaction writes both,
                // and the ledger records a failure itself.
                let attached = AttachedMessage {
                    row: &row,
                    totals: totals.as_ref(),
                };
                Ok(self.proof.flush_with_message(attached))
            } else {
                let backend = self.store.backend();
                backend
                    .append_message(&self.session_id, &row, totals.as_ref())
                    .map(|()| true)
            }
        });
        written.unwrap_or_else(|err| {
            self.failure.record(
                &self.session_id,
                &format!("a {} message", message_kind(message)),
                self.store.location(),
                &err,
            );
            false
        })
    }

    /// Stores the session's running totals with the next stored message
    /// (the same transaction), as after a model call whose response is
    /// emitted next.
    pub fn defer_totals(&self, num_turns: u32, status: &str) {
        *self.pending_totals.lock() = Some(Totals {
            num_turns,
            total_cost_usd: self.total_cost_usd(),
            status: status.to_string(),
        });
    }

    /// Sets where the running turn's messages go.
    pub fn set_sink(&self, sink: Option<UnboundedSender<Message>>) {
        *self.sink.lock() = sink;
    }

    /// Adds one model call's usage to the session's cost: the cost the
    /// provider `reported`, else the usage at the model's price; a model
    /// with neither is remembered as unpriced. Returns the call's cost when
    /// known.
    pub fn add_usage(&self, model: &str, usage: &Usage, reported: Option<f64>) -> Option<f64> {
        let known = self.client.cost(model, usage, reported);
        let cost = known.unwrap_or(0.0);
        let mut costs = self.costs.lock();
        if known.is_none() {
            costs.unpriced(model);
        }
        costs.total_usd += cost;
        match costs.per_model.iter_mut().find(|(m, _)| m == model) {
            Some((_, total)) => total.add(usage, cost),
            None => {
                let mut total = ModelUsage::default();
                total.add(usage, cost);
                costs.per_model.push((model.to_string(), total));
            }
        }
        known
    }

    /// Adds a child session's cost, model calls and unpriced models
    /// (a contract a manager's `ExecuteContracts` ran).
    pub fn add_child(&self, child: &tascer_core::ChildSession) {
        let mut costs = self.costs.lock();
        costs.total_usd += child.cost_usd;
        costs.child_turns += child.num_turns;
        for model in &child.unpriced_models {
            costs.unpriced(model);
        }
    }

    /// The session's cost so far, USD, its children's included.
    pub fn total_cost_usd(&self) -> f64 {
        self.costs.lock().total_usd
    }

    /// Models whose cost is unknown, so far.
    pub fn unpriced_models(&self) -> Vec<String> {
        self.costs.lock().unpriced_models.clone()
    }

    /// Model calls of the child sessions so far.
    pub fn child_turns(&self) -> u32 {
        self.costs.lock().child_turns
    }

    /// Cumulative usage per model.
    pub fn model_usage(&self) -> Vec<(String, ModelUsage)> {
        self.costs.lock().per_model.clone()
    }

    /// A system message of this session.
    pub fn system_message(&self, subtype: &str, data: Value) -> Message {
        let data = match data {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Message::System(SystemMessage {
            subtype: subtype.to_string(),
            session_id: self.session_id.clone(),
            uuid: tascer_core::new_id(),
            data,
        })
    }
}

/// The frame type of a message, for error messages.
fn message_kind(message: &Message) -> &'static str {
    match message {
        Message::User(_) => "user",
        Message::Assistant(_) => "assistant",
        Message::System(_) => "system",
        Message::Result(_) => "result",
        Message::StreamEvent(_) => "stream event",
    }
}
