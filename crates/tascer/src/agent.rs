//! One agent (the main loop or a subagent): its model, system prompt and
//! tools over the session's [`LoopEnv`], and the steps both loops are made
//! of (call the model, emit its answer, run the tools it asks for).

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;

use tascer_core::{
    ApiAssistantMessage, AssistantMessage, ChatMessage, ContentBlock, Message, StreamEvent, Tool,
    ToolSpec,
};
use tascer_guard::admission::StopRun;
use tascer_model::{ModelError, ModelEvent, ModelRequest, ModelResponse};

use crate::governance::Governance;
use crate::loop_env::LoopEnv;

/// Text of the result when the user interrupts.
pub(crate) const INTERRUPTED: &str = "Interrupted by user";

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
            server_tools: Vec::new(),
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
        let started = std::time::SystemTime::now();
        let response = self
            .env
            .client
            .send(&request, Some(&events_tx), cancel)
            .await;
        drop(events_tx);
        let _ = forwarder.await;
        let mut cost = None;
        if let Ok(r) = &response {
            cost = self.env.add_usage(&r.model, &r.usage, r.cost_usd);
            self.env.proof.model_response(
                &r.model,
                &r.content,
                &r.usage,
                self.parent_tool_use_id.as_deref(),
                (r.api_duration, cost),
            );
        }
        self.env
            .observed
            .model_call(&self.env.session_id, &self.model, started, &response, cost);
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
    ) -> (Vec<ContentBlock>, Option<StopRun>) {
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
