//! What one agent (the main loop or a subagent) needs to call the model and
//! run tools: shared handles, and the steps both loops are made of.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;

use tascer_core::{
    ApiAssistantMessage, AssistantMessage, ChatMessage, ContentBlock, Message, ModelUsage,
    StreamEvent, SystemMessage, Tool, ToolSpec, Usage,
};
use tascer_model::{ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse};
use tascer_store::{SessionStore, Totals};

use crate::governance::{Governance, Halt};
use crate::proof::Proof;
use crate::write_failure::WriteFailure;

/// Text of the result when the user interrupts.
pub(crate) const INTERRUPTED: &str = "Interrupted by user";

/// Running cost of a session, shared by the main loop and its subagents.
#[derive(Debug, Default)]
pub(crate) struct Costs {
    pub total_usd: f64,
    pub per_model: Vec<(String, ModelUsage)>,
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
}

impl LoopEnv {
    /// Sends a message to the running turn's consumer and stores it.
    /// Stream events are sent but not stored. A store failure is recorded
    /// in [`failure`](Self::failure) and stops the turn; after one, nothing
    /// more is stored, so the stored history is a prefix of the session
    /// with no hole in it.
    pub fn emit(&self, message: Message) {
        if !matches!(message, Message::StreamEvent(_)) && !self.failure.is_set() {
            let totals = self.pending_totals.lock().take();
            if let Err(err) =
                self.store
                    .append_message_with_totals(&self.session_id, &message, totals.as_ref())
            {
                self.failure.record(
                    &self.session_id,
                    &format!("a {} message", message_kind(&message)),
                    self.store.location(),
                    &err,
                );
            }
        }
        if let Some(sink) = self.sink.lock().as_ref() {
            // A consumer that went away is not an error: the turn still
            // finishes and is stored.
            let _ = sink.send(message);
        }
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

    /// Adds one model call's usage to the session's cost.
    pub fn add_usage(&self, model: &str, usage: &Usage) {
        let cost = self.client.cost_usd(model, usage);
        let mut costs = self.costs.lock();
        costs.total_usd += cost;
        match costs.per_model.iter_mut().find(|(m, _)| m == model) {
            Some((_, total)) => total.add(usage, cost),
            None => {
                let mut total = ModelUsage::default();
                total.add(usage, cost);
                costs.per_model.push((model.to_string(), total));
            }
        }
    }

    /// The session's cost so far, USD.
    pub fn total_cost_usd(&self) -> f64 {
        self.costs.lock().total_usd
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

/// One agent: a model, a system prompt and a tool set over a [`LoopEnv`].
pub(crate) struct Agent {
    pub env: LoopEnv,
    pub model: String,
    pub system_prompt: String,
    pub tools: Vec<Arc<dyn Tool>>,
    pub tool_specs: Vec<ToolSpec>,
    /// Set for subagents: the `tool_use` id of the Task call that runs them.
    pub parent_tool_use_id: Option<String>,
    /// Hooks and permissions around every tool call.
    pub governance: Arc<Governance>,
}

/// True for tools served by MCP servers (their list can change).
fn is_mcp_tool(tool: &dyn Tool) -> bool {
    tool.name().starts_with("mcp__")
        || tool.name() == "ListMcpResourcesTool"
        || tool.name() == "ReadMcpResourceTool"
}

/// A tool call the model asked for.
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    pub input: Value,
}

impl Agent {
    /// An agent with these tools.
    pub fn new(
        env: LoopEnv,
        model: String,
        system_prompt: String,
        tools: Vec<Arc<dyn Tool>>,
        parent_tool_use_id: Option<String>,
        governance: Arc<Governance>,
    ) -> Self {
        let tool_specs = specs_of(&tools);
        Agent {
            env,
            model,
            system_prompt,
            tools,
            tool_specs,
            parent_tool_use_id,
            governance,
        }
    }

    /// Replaces the MCP tools (after a server's tool list changed); the
    /// other tools stay as they are. `keep` filters the new tools.
    pub fn set_mcp_tools(&mut self, fresh: Vec<Arc<dyn Tool>>, keep: impl Fn(&str) -> bool) {
        let current: Vec<&str> = self
            .tools
            .iter()
            .filter(|t| is_mcp_tool(t.as_ref()))
            .map(|t| t.name())
            .collect();
        let fresh: Vec<Arc<dyn Tool>> = fresh.into_iter().filter(|t| keep(t.name())).collect();
        let names: Vec<&str> = fresh.iter().map(|t| t.name()).collect();
        if names == current {
            return;
        }
        self.tools.retain(|t| !is_mcp_tool(t.as_ref()));
        self.tools.extend(fresh);
        self.tool_specs = specs_of(&self.tools);
    }

    /// Calls the model with `history`, forwarding streaming events (when
    /// asked) and retries as messages, and adds the usage to the cost.
    pub async fn call_model(
        &self,
        history: &[ChatMessage],
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        let request = ModelRequest {
            model: self.model.clone(),
            system: Some(self.system_prompt.clone()).filter(|s| !s.is_empty()),
            messages: history.to_vec(),
            tools: self.tool_specs.clone(),
            max_tokens: self.env.max_tokens,
            stream: true,
        };
        let (events_tx, mut events_rx) = unbounded_channel::<ModelEvent>();
        let env = self.env.clone();
        let parent = self.parent_tool_use_id.clone();
        let forwarder = tokio::spawn(async move {
            while let Some(event) = events_rx.recv().await {
                let message = match event {
                    ModelEvent::Stream(event) if env.include_partial_messages => {
                        Message::StreamEvent(StreamEvent {
                            uuid: tascer_core::new_id(),
                            session_id: env.session_id.clone(),
                            event,
                            parent_tool_use_id: parent.clone(),
                        })
                    }
                    ModelEvent::Stream(_) => continue,
                    ModelEvent::Retry {
                        attempt,
                        max_retries,
                        delay_ms,
                        status,
                        error,
                    } => env.system_message(
                        "api_retry",
                        json!({
                            "attempt": attempt,
                            "max_retries": max_retries,
                            "retry_delay_ms": delay_ms,
                            "error_status": status,
                            "error": error,
                        }),
                    ),
                    ModelEvent::Fallback { from, to } => {
                        env.system_message("model_fallback", json!({ "from": from, "to": to }))
                    }
                };
                env.emit(message);
            }
        });
        let response = self
            .env
            .client
            .send(&request, Some(&events_tx), cancel)
            .await;
        drop(events_tx);
        let _ = forwarder.await;
        if let Ok(r) = &response {
            self.env.add_usage(&r.model, &r.usage);
            self.env.proof.model_response(
                &r.model,
                &r.content,
                &r.usage,
                self.parent_tool_use_id.as_deref(),
            );
        }
        response
    }

    /// Emits the assistant message for a response; returns its text and the
    /// tool calls it asks for.
    pub fn emit_response(&self, response: &ModelResponse) -> (String, Vec<Call>) {
        let assistant = AssistantMessage {
            message: ApiAssistantMessage {
                id: response.id.clone(),
                kind: "message".into(),
                role: "assistant".into(),
                model: response.model.clone(),
                content: response.content.clone(),
                stop_reason: response.stop_reason.clone(),
                stop_sequence: None,
                usage: response.usage,
            },
            parent_tool_use_id: self.parent_tool_use_id.clone(),
            session_id: self.env.session_id.clone(),
            uuid: tascer_core::new_id(),
        };
        let text = assistant.text();
        self.env.emit(Message::Assistant(assistant));
        let calls = response
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, name, input } => Some(Call {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                }),
                _ => None,
            })
            .collect();
        (text, calls)
    }

    /// Runs the calls of one model turn concurrently, each through the
    /// governance pipeline, emits one user message with their results (in
    /// call order) and returns its content blocks, plus a stop reason when a
    /// hook asked to stop the run.
    pub async fn run_tools(
        &self,
        calls: &[Call],
        cancel: &CancellationToken,
    ) -> (Vec<ContentBlock>, Option<Halt>) {
        let runs = calls.iter().map(|call| self.run_governed(call, cancel));
        let outputs = futures::future::join_all(runs).await;
        let mut blocks = Vec::with_capacity(outputs.len());
        let mut raws = Vec::with_capacity(outputs.len());
        let mut stop = None;
        for (call, (output, stop_reason)) in calls.iter().zip(outputs) {
            blocks.push(ContentBlock::ToolResult {
                tool_use_id: call.id.clone(),
                content: output.content,
                is_error: Some(output.is_error),
            });
            raws.push(output.raw.unwrap_or(Value::Null));
            if stop.is_none() {
                stop = stop_reason;
            }
        }
        let mut user = tascer_core::UserMessage::new(
            tascer_core::UserContent::Blocks(blocks.clone()),
            &self.env.session_id,
        );
        user.parent_tool_use_id = self.parent_tool_use_id.clone();
        user.tool_use_result = Some(if raws.len() == 1 {
            raws.remove(0)
        } else {
            Value::Array(raws)
        });
        self.env.emit(Message::User(user));
        (blocks, stop)
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

/// The model-facing specs of tools.
fn specs_of(tools: &[Arc<dyn Tool>]) -> Vec<ToolSpec> {
    tools
        .iter()
        .map(|t| ToolSpec {
            name: t.name().to_string(),
            description: t.description().to_string(),
            input_schema: t.input_schema(),
        })
        .collect()
}
