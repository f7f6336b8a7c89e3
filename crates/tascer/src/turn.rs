//! One turn: a prompt, then model calls and tool calls until the model is
//! done, a limit is hit, or the user interrupts.

use std::time::{Duration, Instant};

use serde_json::{Map, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use tascer_core::{
    ChatMessage, ContentBlock, Message, ResultMessage, ResultSubtype, Role, StopReason, Usage,
    UserContent, UserMessage,
};
use tascer_guard::admission::StopRun;
use tascer_guard::hooks::CompactTrigger;
use tascer_model::{ModelError, ModelResponse};

use crate::agent::{Call, INTERRUPTED};
use crate::compact::compact;
use crate::duration::millis;
use crate::governance::StopVerdict;
use crate::history::push_user;
use crate::observed::TurnEnd;
use crate::session::Session;

/// The running totals of one turn.
struct TurnState {
    started: Instant,
    /// The child sessions' model calls when the turn started.
    child_turns_before: u32,
    api_time: Duration,
    num_turns: u32,
    usage: Usage,
    last_text: String,
    stop_reason: Option<StopReason>,
    /// The validated final answer, with structured output.
    structured_output: Option<serde_json::Value>,
    /// Fix requests sent for invalid structured output.
    structured_retries: u32,
}

/// How a turn ended, before it becomes a result frame.
enum Outcome {
    Completed,
    PromptBlocked(String),
    Stopped(StopRun),
    MaxTurns,
    Budget,
    Interrupted {
        during_tools: bool,
    },
    ApiError(ModelError),
    /// A store or ledger write failed: the session stopped (the message
    /// names the database).
    WriteFailed(String),
    /// A slash command could not run (unknown, invalid, or it failed).
    CommandFailed(String),
    /// The answer never matched the output schema; the last problem.
    StructuredOutputRetries(String),
}

/// Runs one prompt to its result. Always ends by sending exactly one
/// [`Message::Result`].
pub(crate) async fn run_turn(
    session: &mut Session,
    prompt: String,
    tx: UnboundedSender<Message>,
    cancel: CancellationToken,
) {
    session.agent.env.set_sink(Some(tx));
    session
        .agent
        .env
        .observed
        .agent_started(&session.id, &session.agent.model);
    let mut state = TurnState {
        started: Instant::now(),
        child_turns_before: session.agent.env.child_turns(),
        api_time: Duration::ZERO,
        num_turns: 0,
        usage: Usage::default(),
        last_text: String::new(),
        stop_reason: None,
        structured_output: None,
        structured_retries: 0,
    };
    let outcome = match crate::slash::resolve_async(session, prompt).await {
        crate::slash::Resolved::Prompt(expanded) => match crate::slash::begin(session, &expanded) {
            Ok(scope) => {
                let outcome = drive(session, expanded.text, &cancel, &mut state).await;
                crate::slash::end(session, scope);
                outcome
            }
            Err(error) => {
                session.agent.env.emit(init_message(session));
                Outcome::CommandFailed(error)
            }
        },
        crate::slash::Resolved::Builtin { name, args } => {
            session.agent.env.emit(init_message(session));
            match crate::slash::run_builtin(session, &name, &args, &cancel).await {
                Ok(text) => {
                    state.last_text = text;
                    Outcome::Completed
                }
                Err(error) => Outcome::CommandFailed(error),
            }
        }
        crate::slash::Resolved::Unknown(error) | crate::slash::Resolved::Failed(error) => {
            session.agent.env.emit(init_message(session));
            Outcome::CommandFailed(error)
        }
        // `resolve_async` expands these.
        crate::slash::Resolved::McpPrompt { name, .. } => {
            session.agent.env.emit(init_message(session));
            Outcome::CommandFailed(format!("/{name} was not expanded"))
        }
    };
    // A failed write outranks how the turn otherwise ended: the caller
    // must learn that the stored session is incomplete.
    let outcome = match session.agent.env.failure.get() {
        Some(failure) => Outcome::WriteFailed(failure),
        None => outcome,
    };
    let result = build_result(session, &state, outcome);
    session.total_turns += state.num_turns;
    let status = if result.is_error { "error" } else { "success" };
    let env = &session.agent.env;
    if let Err(err) = env.store.update_totals(
        &session.id,
        session.total_turns,
        env.total_cost_usd(),
        status,
    ) {
        // The result frame below says so when this turn went well so far.
        env.failure.record(
            &session.id,
            "the session totals",
            env.store.location(),
            &err,
        );
    }
    env.proof.turn_end(
        &result.usage,
        result.total_cost_usd,
        status,
        result.num_turns,
    );
    let subtype = serde_json::to_value(result.subtype).unwrap_or_default();
    env.observed.agent_ended(
        &session.id,
        TurnEnd {
            status,
            subtype: subtype.as_str().unwrap_or_default(),
            num_turns: result.num_turns,
            usage: result.usage,
            cost_usd: result.total_cost_usd,
        },
    );
    env.emit(Message::Result(result));
    env.set_sink(None);
}

/// The turn after its prompt was resolved: the prompt goes in, then model
/// calls and tool calls alternate until one of them ends the turn.
async fn drive(
    session: &mut Session,
    prompt: String,
    cancel: &CancellationToken,
    state: &mut TurnState,
) -> Outcome {
    if let Err(outcome) = submit_prompt(session, prompt).await {
        return outcome;
    }
    let mut stop_hook_active = false;
    loop {
        if let Some(outcome) = limit_reached(session, state, cancel) {
            return outcome;
        }
        refresh_mcp_tools(session).await;
        compact_if_due(session, cancel).await;
        remind_resource_updates(session);
        let response = match session.agent.call_model(&session.history, cancel).await {
            Ok(r) => r,
            Err(ModelError::Cancelled) => {
                return Outcome::Interrupted {
                    during_tools: false,
                };
            }
            Err(err) => return Outcome::ApiError(err),
        };
        let (answer, calls) = take_response(session, state, response);
        if calls.is_empty() {
            match model_stopped(session, state, &answer, &mut stop_hook_active).await {
                Some(outcome) => return outcome,
                None => continue,
            }
        }
        if let Some(outcome) = run_calls(session, &calls, cancel).await {
            return outcome;
        }
    }
}

/// `system/init`, then the prompt through the UserPromptSubmit hooks (which
/// may block it) into the history, with the context they and the
/// SessionStart hooks add.
async fn submit_prompt(session: &mut Session, prompt: String) -> Result<(), Outcome> {
    let env = session.agent.env.clone();
    let governance = session.agent.governance.clone();
    env.emit(init_message(session));
    let context = governance
        .on_prompt(&env, &prompt)
        .await
        .map_err(Outcome::PromptBlocked)?;
    let message = UserMessage::new(UserContent::Text(prompt.clone()), &session.id);
    if let Some(checkpoints) = &env.checkpoints {
        checkpoints.set_prompt(&message.uuid);
    }
    env.emit(Message::User(message));
    env.proof.prompt(&prompt, None);
    let mut user = ChatMessage::user_text(prompt);
    let session_context = std::mem::take(&mut session.pending_context);
    for text in session_context.into_iter().chain(context) {
        user.content.push(ContentBlock::text(text));
    }
    push_user(&mut session.history, user);
    Ok(())
}

/// Why the turn must end before the next model call, if it must: a failed
/// write, an interrupt, the turn limit, the budget.
fn limit_reached(
    session: &Session,
    state: &TurnState,
    cancel: &CancellationToken,
) -> Option<Outcome> {
    let env = &session.agent.env;
    if let Some(failure) = env.failure.get() {
        return Some(Outcome::WriteFailed(failure));
    }
    if cancel.is_cancelled() {
        return Some(Outcome::Interrupted {
            during_tools: false,
        });
    }
    if let Some(max) = session.options.max_turns
        && state.num_turns >= max
    {
        return Some(Outcome::MaxTurns);
    }
    if let Some(budget) = session.options.max_budget_usd
        && env.total_cost_usd() >= budget
    {
        return Some(Outcome::Budget);
    }
    None
}

/// Takes the MCP servers' current tool lists into the main agent's tools.
async fn refresh_mcp_tools(session: &mut Session) {
    if let Some(mcp) = &session.mcp {
        let fresh = mcp.tools().await;
        let options = &session.options;
        session
            .agent
            .set_mcp_tools(fresh, |name| !crate::toolset::removed(options, name));
    }
}

/// Tells the model, once per update, which MCP resources it read changed
/// since (`notifications/resources/updated` of a subscribed resource): a
/// `<system-reminder>` added to the user or tool-result message the next
/// model call ends with.
fn remind_resource_updates(session: &mut Session) {
    let Some(mcp) = &session.mcp else { return };
    let updates = mcp.take_resource_updates();
    if updates.is_empty() {
        return;
    }
    let text = updates
        .iter()
        .map(|u| u.reminder())
        .collect::<Vec<_>>()
        .join("\n");
    push_user(
        &mut session.history,
        ChatMessage::user_text(format!("<system-reminder>\n{text}\n</system-reminder>")),
    );
}

/// Compacts the conversation when the last model call's input reached the
/// options' limit; a compaction that did not happen is reported and the
/// turn goes on.
async fn compact_if_due(session: &mut Session, cancel: &CancellationToken) {
    // Once compacted, the next call is not compacted again even if its
    // input is still over the limit (the system prompt and tools alone
    // can be): that would summarize a summary at every call.
    let just_compacted = std::mem::take(&mut session.just_compacted);
    let Some(limit) = session.options.auto_compact_tokens else {
        return;
    };
    if session.last_input_tokens < limit || just_compacted {
        return;
    }
    let pre_tokens = session.last_input_tokens;
    session.last_input_tokens = 0;
    let outcome = compact(session, CompactTrigger::Auto, None, pre_tokens, cancel).await;
    session.just_compacted = outcome.is_ok();
    if let Err(err) = outcome {
        tracing::warn!(session = %session.id, "{err}");
        let env = &session.agent.env;
        env.emit(env.system_message(
            "informational",
            json!({"content": format!("Not compacted: {err}")}),
        ));
    }
}

/// Counts a model response in the turn's totals, emits it and adds it to
/// the history; returns its text and the tool calls it asks for.
fn take_response(
    session: &mut Session,
    state: &mut TurnState,
    response: ModelResponse,
) -> (String, Vec<Call>) {
    state.num_turns += 1;
    let usage = &response.usage;
    session.last_input_tokens =
        usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
    state.api_time += response.api_duration;
    state.usage.add(&response.usage);
    state.stop_reason = response.stop_reason.clone();
    // Keep the stored totals current, so a crash mid-turn loses no
    // turns or cost: they are stored with the response, just below.
    session
        .agent
        .env
        .defer_totals(session.total_turns + state.num_turns, "running");

    let (text, calls) = session.agent.emit_response(&response);
    let answer = text.clone();
    if !text.is_empty() {
        state.last_text = text;
    }
    session.history.push(ChatMessage {
        role: Role::Assistant,
        content: response.content,
    });
    (answer, calls)
}

/// The model answered without tool calls: the Stop hooks and
/// `intent-validate` decide whether the turn ends, then the answer is
/// checked against the output schema. `None` means go on: a hook's or a
/// schema fix's text was sent as the next user message.
async fn model_stopped(
    session: &mut Session,
    state: &mut TurnState,
    answer: &str,
    stop_hook_active: &mut bool,
) -> Option<Outcome> {
    let env = session.agent.env.clone();
    let verdict = session
        .agent
        .governance
        .on_stop(&env, None, *stop_hook_active, &state.last_text)
        .await;
    match verdict {
        StopVerdict::Finish => match check_structured(session, state, answer) {
            None => Some(Outcome::Completed),
            Some(Err(problem)) => Some(Outcome::StructuredOutputRetries(problem)),
            Some(Ok(fix)) => {
                send_user_text(session, fix);
                None
            }
        },
        StopVerdict::Stop(reason) => Some(Outcome::Stopped(StopRun::Hook(reason))),
        StopVerdict::Continue(text) => {
            *stop_hook_active = true;
            send_user_text(session, text);
            None
        }
    }
}

/// Sends `text` as the next user message: to the consumer, the ledger and
/// the history.
fn send_user_text(session: &mut Session, text: String) {
    let env = &session.agent.env;
    let message = UserMessage::new(UserContent::Text(text.clone()), &session.id);
    if let Some(checkpoints) = &env.checkpoints {
        checkpoints.set_prompt(&message.uuid);
    }
    env.emit(Message::User(message));
    env.proof.prompt(&text, None);
    push_user(&mut session.history, ChatMessage::user_text(text));
}

/// Runs the tool calls of a response and adds their results to the
/// history. `Some` when the turn ends there: a write failed before, a
/// hook or permission decision stopped the run, or the user interrupted.
async fn run_calls(
    session: &mut Session,
    calls: &[Call],
    cancel: &CancellationToken,
) -> Option<Outcome> {
    // A response that could not be stored is not acted on.
    if let Some(failure) = session.agent.env.failure.get() {
        return Some(Outcome::WriteFailed(failure));
    }
    let (blocks, stop) = session.agent.run_tools(calls, cancel).await;
    session.history.push(ChatMessage {
        role: Role::User,
        content: blocks,
    });
    if let Some(stop) = stop {
        return Some(Outcome::Stopped(stop));
    }
    if cancel.is_cancelled() {
        return Some(Outcome::Interrupted { during_tools: true });
    }
    None
}

/// Checks the final answer against the output schema. `None`: done (no
/// schema, or the answer is valid and kept in `state`); `Some(Ok(text))`:
/// ask the model to fix it with `text`; `Some(Err(problem))`: no fix
/// requests left.
fn check_structured(
    session: &Session,
    state: &mut TurnState,
    answer: &str,
) -> Option<Result<String, String>> {
    let structured = session.structured.as_ref()?;
    match structured.check(answer) {
        Ok(value) => {
            state.structured_output = Some(value);
            None
        }
        Err(problem) if state.structured_retries >= structured.max_retries => Some(Err(problem)),
        Err(problem) => {
            state.structured_retries += 1;
            Some(Ok(
                structured.fix_request(&problem, state.structured_retries)
            ))
        }
    }
}

fn init_message(session: &Session) -> Message {
    let tools: Vec<&str> = session.agent.tools.iter().map(|t| t.name()).collect();
    let agents: Vec<&str> = std::iter::once(crate::task_tool::GENERAL_PURPOSE)
        .chain(session.options.agents.keys().map(String::as_str))
        .collect();
    let mut data = json!({
            "cwd": session.cwd.display().to_string(),
            "tools": tools,
            "mcp_servers": session.mcp.as_ref().map(|m| m.statuses()).unwrap_or_default(),
            "model": session.agent.model,
            "permissionMode": session.agent.governance.admission.mode().as_str(),
            "apiKeySource": session.api_key_source,
            "provider": session.agent.env.client.provider_name(),
            "slash_commands": crate::slash::command_names(session),
            "output_style": "default",
            "agents": agents,
            "skills": session.skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            "plugins": session.plugins,
            "memory_files": session.memory,
            "tascer_version": crate::VERSION,
    });
    if !session.plugin_errors.is_empty() {
        data["plugin_errors"] = json!(session.plugin_errors);
    }
    session.agent.env.system_message("init", data)
}

fn build_result(session: &Session, state: &TurnState, outcome: Outcome) -> ResultMessage {
    let env = &session.agent.env;
    let mut result = ResultMessage {
        subtype: ResultSubtype::Success,
        is_error: false,
        duration_ms: millis(state.started.elapsed()),
        duration_api_ms: millis(state.api_time),
        // The turn's model calls and those of the child sessions it ran.
        num_turns: state.num_turns + env.child_turns().saturating_sub(state.child_turns_before),
        result: Some(state.last_text.clone()),
        stop_reason: state.stop_reason.clone(),
        session_id: session.id.clone(),
        total_cost_usd: env.total_cost_usd(),
        unpriced_models: env.unpriced_models(),
        usage: state.usage,
        model_usage: Map::new(),
        permission_denials: session.agent.governance.take_denials(),
        errors: Vec::new(),
        api_error_status: None,
        terminal_reason: "completed".into(),
        structured_output: state.structured_output.clone(),
        uuid: tascer_core::new_id(),
    };
    result.set_model_usage(&env.model_usage());
    match outcome {
        Outcome::Completed => {}
        Outcome::PromptBlocked(reason) => {
            result.is_error = true;
            result.result = Some(format!(
                "Prompt blocked by a UserPromptSubmit hook: {reason}"
            ));
            result.errors.push(reason);
            result.terminal_reason = "hook_stopped".into();
        }
        Outcome::Stopped(stop) => {
            result.is_error = true;
            result.result = Some(stop.to_string());
            result.terminal_reason = match &stop {
                StopRun::Hook(_) => "hook_stopped".into(),
                StopRun::Permission(_) => "permission_denied".into(),
            };
            result.errors.push(match stop {
                StopRun::Hook(reason) | StopRun::Permission(reason) => reason,
            });
        }
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
                env.total_cost_usd(),
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
        Outcome::CommandFailed(error) => {
            result.subtype = ResultSubtype::ErrorDuringExecution;
            result.is_error = true;
            result.result = Some(error.clone());
            result.errors.push(error);
            result.terminal_reason = "turn_setup_failed".into();
        }
        Outcome::StructuredOutputRetries(problem) => {
            result.subtype = ResultSubtype::ErrorMaxStructuredOutputRetries;
            result.is_error = true;
            result.terminal_reason = "structured_output_retry_exhausted".into();
            let message = format!(
                "Failed to provide valid structured output after {} fix request{}: {problem}",
                state.structured_retries,
                if state.structured_retries == 1 {
                    ""
                } else {
                    "s"
                }
            );
            result.result = Some(message.clone());
            result.errors.push(message);
        }
        Outcome::ApiError(err) => {
            result.is_error = true;
            result.api_error_status = err.status();
            result.result = Some(format!("API Error: {err}"));
            // What failed and what to try, in one sentence.
            result.errors.push(match err.advice() {
                Some(advice) => format!("{err}; {advice}"),
                None => err.to_string(),
            });
            result.terminal_reason = "api_error".into();
        }
        Outcome::WriteFailed(message) => {
            result.subtype = ResultSubtype::ErrorDuringExecution;
            result.is_error = true;
            result.result = Some(message.clone());
            result.errors.push(message);
            result.terminal_reason = "store_error".into();
        }
    }
    result
}
