//! One turn: a prompt, then model calls and tool calls until the model is
//! done, a limit is hit, or the user interrupts.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;

use tascer_core::{
    ApiAssistantMessage, AssistantMessage, ChatMessage, ContentBlock, Message, ResultMessage,
    ResultSubtype, Role, StopReason, StreamEvent, SystemMessage, ToolContext, ToolOutput, Usage,
    UserContent, UserMessage,
};
use tascer_model::{ModelError, ModelEvent, ModelRequest};

use crate::session::Session;

/// How long a tool gets to wind down after an interrupt before it is dropped.
const INTERRUPT_GRACE: Duration = Duration::from_secs(3);

/// Text of the result when the user interrupts.
pub(crate) const INTERRUPTED: &str = "Interrupted by user";

/// Sends messages to the consumer and records them in the store.
struct Emitter<'a> {
    session: &'a Session,
    tx: &'a UnboundedSender<Message>,
}

impl Emitter<'_> {
    fn emit(&self, message: Message) {
        self.session.record(&message);
        // A consumer that went away is not an error: the turn still finishes
        // and is stored.
        let _ = self.tx.send(message);
    }
}

/// The running totals of one turn.
struct TurnState {
    started: Instant,
    api_time: Duration,
    num_turns: u32,
    usage: Usage,
    last_text: String,
    stop_reason: Option<StopReason>,
}

/// Runs one prompt to its result. Always ends by sending exactly one
/// [`Message::Result`].
pub(crate) async fn run_turn(
    session: &mut Session,
    prompt: String,
    tx: UnboundedSender<Message>,
    cancel: CancellationToken,
) {
    let mut state = TurnState {
        started: Instant::now(),
        api_time: Duration::ZERO,
        num_turns: 0,
        usage: Usage::default(),
        last_text: String::new(),
        stop_reason: None,
    };
    let result = drive(session, prompt, &tx, &cancel, &mut state).await;
    let result = build_result(session, &state, result);
    session.total_turns += state.num_turns;
    let status = if result.is_error { "error" } else { "success" };
    if let Err(err) = session.store.update_totals(
        &session.id,
        session.total_turns,
        session.total_cost_usd,
        status,
    ) {
        tracing::error!(session = %session.id, "failed to store totals: {err}");
    }
    Emitter { session, tx: &tx }.emit(Message::Result(result));
}

/// How a turn ended, before it becomes a result frame.
enum Outcome {
    Completed,
    MaxTurns,
    Budget,
    Interrupted { during_tools: bool },
    ApiError(ModelError),
}

async fn drive(
    session: &mut Session,
    prompt: String,
    tx: &UnboundedSender<Message>,
    cancel: &CancellationToken,
    state: &mut TurnState,
) -> Outcome {
    Emitter { session, tx }.emit(init_message(session));
    let user = UserMessage::new(UserContent::Text(prompt.clone()), &session.id);
    Emitter { session, tx }.emit(Message::User(user));
    session.history.push(ChatMessage::user_text(prompt));

    loop {
        if cancel.is_cancelled() {
            return Outcome::Interrupted {
                during_tools: false,
            };
        }
        if let Some(max) = session.options.max_turns
            && state.num_turns >= max
        {
            return Outcome::MaxTurns;
        }
        if let Some(budget) = session.options.max_budget_usd
            && session.total_cost_usd >= budget
        {
            return Outcome::Budget;
        }

        let response = match call_model(session, tx, cancel).await {
            Ok(r) => r,
            Err(ModelError::Cancelled) => {
                return Outcome::Interrupted {
                    during_tools: false,
                };
            }
            Err(err) => return Outcome::ApiError(err),
        };
        state.num_turns += 1;
        state.api_time += response.api_duration;
        state.usage.add(&response.usage);
        state.stop_reason = response.stop_reason.clone();
        session.add_usage(&response.model, &response.usage);

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
            parent_tool_use_id: None,
            session_id: session.id.clone(),
            uuid: tascer_core::new_id(),
        };
        let text = assistant.text();
        if !text.is_empty() {
            state.last_text = text;
        }
        Emitter { session, tx }.emit(Message::Assistant(assistant));
        session.history.push(ChatMessage {
            role: Role::Assistant,
            content: response.content.clone(),
        });

        let calls: Vec<(String, String, Value)> = response
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, name, input } => {
                    Some((id.clone(), name.clone(), input.clone()))
                }
                _ => None,
            })
            .collect();
        if calls.is_empty() {
            return Outcome::Completed;
        }

        let outputs = run_tools(session, &calls, cancel).await;
        let mut blocks = Vec::with_capacity(outputs.len());
        let mut raws = Vec::with_capacity(outputs.len());
        for ((id, _, _), output) in calls.iter().zip(outputs) {
            blocks.push(ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: output.content,
                is_error: Some(output.is_error),
            });
            raws.push(output.raw.unwrap_or(Value::Null));
        }
        let mut user = UserMessage::new(UserContent::Blocks(blocks.clone()), &session.id);
        user.tool_use_result = Some(if raws.len() == 1 {
            raws.remove(0)
        } else {
            Value::Array(raws)
        });
        Emitter { session, tx }.emit(Message::User(user));
        session.history.push(ChatMessage {
            role: Role::User,
            content: blocks,
        });
        if cancel.is_cancelled() {
            return Outcome::Interrupted { during_tools: true };
        }
    }
}

/// Calls the model, forwarding streaming events and retries as messages.
async fn call_model(
    session: &Session,
    tx: &UnboundedSender<Message>,
    cancel: &CancellationToken,
) -> Result<tascer_model::ModelResponse, ModelError> {
    let request = ModelRequest {
        model: session.model.clone(),
        system: Some(session.system_prompt.clone()).filter(|s| !s.is_empty()),
        messages: session.history.clone(),
        tools: session.tool_specs.clone(),
        max_tokens: session.options.max_tokens,
        stream: true,
    };
    let (events_tx, mut events_rx) = unbounded_channel::<ModelEvent>();
    let forward_partial = session.options.include_partial_messages;
    let session_id = session.id.clone();
    let out = tx.clone();
    let forwarder = tokio::spawn(async move {
        let mut forwarded = Vec::new();
        while let Some(event) = events_rx.recv().await {
            let message = match event {
                ModelEvent::Stream(event) if forward_partial => Message::StreamEvent(StreamEvent {
                    uuid: tascer_core::new_id(),
                    session_id: session_id.clone(),
                    event,
                    parent_tool_use_id: None,
                }),
                ModelEvent::Stream(_) => continue,
                ModelEvent::Retry {
                    attempt,
                    max_retries,
                    delay_ms,
                    status,
                    error,
                } => system_message(
                    &session_id,
                    "api_retry",
                    json!({
                        "attempt": attempt,
                        "max_retries": max_retries,
                        "retry_delay_ms": delay_ms,
                        "error_status": status,
                        "error": error,
                    }),
                ),
                ModelEvent::Fallback { from, to } => system_message(
                    &session_id,
                    "model_fallback",
                    json!({ "from": from, "to": to }),
                ),
            };
            if !matches!(message, Message::StreamEvent(_)) {
                forwarded.push(message.clone());
            }
            let _ = out.send(message);
        }
        forwarded
    });
    let response = session
        .client
        .send(&request, Some(&events_tx), cancel)
        .await;
    drop(events_tx);
    if let Ok(system_frames) = forwarder.await {
        for frame in &system_frames {
            session.record(frame);
        }
    }
    response
}

/// Runs the calls of one model turn concurrently; results keep the order of
/// the calls.
async fn run_tools(
    session: &Session,
    calls: &[(String, String, Value)],
    cancel: &CancellationToken,
) -> Vec<ToolOutput> {
    let runs = calls.iter().map(|(id, name, input)| {
        let ctx = ToolContext {
            session_id: session.id.clone(),
            tool_use_id: id.clone(),
            cwd: Arc::clone(&session.shared_cwd),
            env: Arc::clone(&session.env),
            cancel: cancel.child_token(),
        };
        let tool = session.tool(name);
        let name = name.clone();
        let input = input.clone();
        async move {
            match tool {
                Some(tool) => run_one(tool.as_ref(), input, &ctx).await,
                None => ToolOutput::error(format!("Error: No such tool available: {name}")),
            }
        }
    });
    futures::future::join_all(runs).await
}

/// Runs one tool, honouring interrupts: the tool gets a grace period to stop
/// on its own (killing its processes), then it is dropped.
async fn run_one(tool: &dyn tascer_core::Tool, input: Value, ctx: &ToolContext) -> ToolOutput {
    let call = tool.call(input, ctx);
    tokio::pin!(call);
    tokio::select! {
        output = &mut call => output,
        _ = ctx.cancel.cancelled() => {
            match tokio::time::timeout(INTERRUPT_GRACE, &mut call).await {
                Ok(output) => output,
                Err(_) => ToolOutput::error(format!("{INTERRUPTED}: the {} call was stopped", tool.name())),
            }
        }
    }
}

fn system_message(session_id: &str, subtype: &str, data: Value) -> Message {
    let data = match data {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    Message::System(SystemMessage {
        subtype: subtype.to_string(),
        session_id: session_id.to_string(),
        uuid: tascer_core::new_id(),
        data,
    })
}

fn init_message(session: &Session) -> Message {
    let tools: Vec<&str> = session.tools.iter().map(|t| t.name()).collect();
    system_message(
        &session.id,
        "init",
        json!({
            "cwd": session.cwd.display().to_string(),
            "tools": tools,
            "mcp_servers": [],
            "model": session.model,
            "permissionMode": "bypassPermissions",
            "apiKeySource": session.api_key_source,
            "provider": session.client.provider_name(),
            "slash_commands": [],
            "output_style": "default",
            "agents": [],
            "skills": [],
            "plugins": [],
            "tascer_version": crate::VERSION,
        }),
    )
}

fn build_result(session: &Session, state: &TurnState, outcome: Outcome) -> ResultMessage {
    let mut result = ResultMessage {
        subtype: ResultSubtype::Success,
        is_error: false,
        duration_ms: millis(state.started.elapsed()),
        duration_api_ms: millis(state.api_time),
        num_turns: state.num_turns,
        result: Some(state.last_text.clone()),
        stop_reason: state.stop_reason.clone(),
        session_id: session.id.clone(),
        total_cost_usd: session.total_cost_usd,
        usage: state.usage,
        model_usage: Map::new(),
        permission_denials: Vec::new(),
        errors: Vec::new(),
        api_error_status: None,
        terminal_reason: "completed".into(),
        uuid: tascer_core::new_id(),
    };
    result.set_model_usage(&session.model_usage);
    match outcome {
        Outcome::Completed => {}
        Outcome::MaxTurns => {
            result.subtype = ResultSubtype::ErrorMaxTurns;
            result.is_error = true;
            result.terminal_reason = "max_turns".into();
            result.errors.push(format!(
                "Reached maximum number of turns ({})",
                session.options.max_turns.unwrap_or_default()
            ));
        }
        Outcome::Budget => {
            result.subtype = ResultSubtype::ErrorMaxBudgetUsd;
            result.is_error = true;
            result.terminal_reason = "budget_exhausted".into();
            result.errors.push(format!(
                "Reached maximum budget (${:.4} of ${:.4})",
                session.total_cost_usd,
                session.options.max_budget_usd.unwrap_or_default()
            ));
        }
        Outcome::Interrupted { during_tools } => {
            result.subtype = ResultSubtype::ErrorDuringExecution;
            result.is_error = true;
            result.result = Some(INTERRUPTED.into());
            result.errors.push(INTERRUPTED.into());
            result.terminal_reason = if during_tools {
                "aborted_tools".into()
            } else {
                "aborted_streaming".into()
            };
        }
        Outcome::ApiError(err) => {
            result.is_error = true;
            result.api_error_status = err.status();
            result.result = Some(format!("API Error: {err}"));
            result.errors.push(err.to_string());
            result.terminal_reason = "api_error".into();
        }
    }
    result
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
