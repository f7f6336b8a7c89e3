//! The session of the control-protocol mode: wait for `initialize`, open
//! the session, then turn each queued prompt into `system/init` →
//! assistant / user frames → exactly one `result`, answering control
//! requests at any time. At the end of standard input the running and
//! queued turns finish, then the process exits 0 (1 when the last result
//! was an error).

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::process::ExitCode;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Value, json};
use tascer::{Client, Message, MessageStream, UserContent};
use tokio::sync::mpsc;

use crate::callbacks::{SdkElicitor, SdkMcpTunnel, can_use_tool};
use crate::channel::Control;
use crate::error::ControlError;
use crate::init;
use crate::input::{Line, read_stdin};
use crate::requests;
use crate::session::{ControlSession, OnSessionEnd};
use crate::tasks::Tasks;
use crate::wire::{self, CLAUDE_CODE_VERSION, Incoming, UserLine, startup_failure_result};

/// Runs a control-protocol session on standard input and output: waits
/// for `initialize`, opens the Tascer session, answers prompts and control
/// requests until standard input ends. Returns the process's exit code: 0,
/// or 1 when the last result was an error or a line on standard input
/// ended the session (the reason is on standard error). An `Err` is a
/// failure of the session itself, to report on standard error (exit 1).
pub async fn run(session: ControlSession) -> Result<ExitCode, ControlError> {
    let control = Control::start(tokio::io::stdout());
    let result = Driver::new(control.clone()).drive(session).await;
    control.flush().await;
    result
}

/// How frames are shaped on the way out.
#[derive(Debug, Clone, Copy, Default)]
struct Framing {
    /// `--include-hook-events`: keep `system/hook_response` frames.
    hook_events: bool,
    /// `--replay-user-messages`: echo prompts with `isReplay: true`.
    replay: bool,
}

/// The running turn.
struct Turn {
    stream: MessageStream,
    /// An assistant frame of the main agent went out: later text user
    /// frames are new messages (a Stop hook's, a fix request), not the
    /// echo of the prompt.
    answered: bool,
    /// Its result went out.
    finished: bool,
}

struct Driver {
    control: Control,
    input: mpsc::UnboundedReceiver<Line>,
    /// Lines read while something else was awaited, handled next.
    backlog: VecDeque<Line>,
    eof: bool,
    fatal: bool,
    prompts: VecDeque<UserLine>,
    seen_uuids: HashSet<String>,
    framing: Framing,
    last_result_error: bool,
    warned: HashSet<String>,
    /// The session's result judge, if any.
    judge: Option<Box<dyn crate::session::ResultJudge>>,
    /// The session's background tasks.
    tasks: Arc<Tasks>,
}

impl Driver {
    fn new(control: Control) -> Driver {
        Driver {
            input: read_stdin(),
            backlog: VecDeque::new(),
            eof: false,
            fatal: false,
            prompts: VecDeque::new(),
            seen_uuids: HashSet::new(),
            framing: Framing::default(),
            last_result_error: false,
            warned: HashSet::new(),
            judge: None,
            tasks: Tasks::new(control.clone()),
            control,
        }
    }

    async fn drive(mut self, session: ControlSession) -> Result<ExitCode, ControlError> {
        self.framing = Framing {
            hook_events: session.include_hook_events,
            replay: session.replay_user_messages,
        };
        self.judge = session.judge;
        let mut options = session.options;
        options.mcp_tunnel = Some(Arc::new(SdkMcpTunnel::new(self.control.clone())));
        options.task_listener = Some(self.tasks.clone());
        // The host answers the MCP servers' questions its hooks leave.
        if options.elicitor.is_none() {
            options.elicitor = Some(Arc::new(SdkElicitor::new(self.control.clone())));
        }
        match session.permission_prompt_tool.as_deref() {
            Some("stdio") => options.can_use_tool = Some(can_use_tool(self.control.clone())),
            Some(other) => eprintln!(
                "warning: ignoring --permission-prompt-tool {other}: Tascer asks only the SDK \
                 (stdio); calls that need approval are denied"
            ),
            None => {}
        }

        // `initialize` comes first; a prompt before it starts the session
        // with the command line's options alone.
        let initialize = loop {
            let Some(line) = self.next_line().await else {
                return Ok(ExitCode::SUCCESS);
            };
            match line {
                Line::Parsed(Incoming::ControlRequest {
                    request_id,
                    request,
                }) if requests::subtype(&request) == "initialize" => {
                    break Some((request_id, request));
                }
                Line::Parsed(Incoming::User(user)) => {
                    self.queue(user);
                    break None;
                }
                Line::Parsed(Incoming::ControlRequest { request_id, .. }) => {
                    self.control.send(&wire::error(
                        &request_id,
                        "Not initialized: send the initialize request first",
                    ));
                }
                Line::Eof => return Ok(ExitCode::SUCCESS),
                Line::Fatal(message) => {
                    eprintln!("{message}");
                    return Ok(ExitCode::FAILURE);
                }
                Line::Parsed(other) => self.misc(other),
            }
        };
        let mut warnings = Vec::new();
        let applied = match &initialize {
            Some((request_id, request)) => {
                match init::apply(request, &mut options, &self.control, &mut warnings) {
                    Ok(applied) => applied,
                    Err(error) => {
                        self.control.send(&wire::error(request_id, &error));
                        eprintln!("error: {error}");
                        return Ok(ExitCode::FAILURE);
                    }
                }
            }
            None => init::Applied::default(),
        };
        for warning in warnings {
            eprintln!("{warning}");
        }

        // Opening the session may already call back (SessionStart hooks,
        // the SDK's MCP servers): keep reading answers meanwhile.
        let client = match self.pumping(Client::connect(options)).await {
            Ok(client) => {
                self.tasks.set_session_id(client.session_id());
                client
            }
            Err(err) => {
                // Claude Code's startup failure: a zeroed error result, no
                // answer to initialize, exit 1.
                self.control.send(&startup_failure_result(&err.to_string()));
                return Ok(ExitCode::FAILURE);
            }
        };
        if let Some((request_id, _)) = &initialize {
            let body = init::response(&client, applied).await;
            self.control.send(&wire::success(request_id, body));
        }
        self.serve(client, session.on_end).await
    }

    /// The next line: from the backlog, else from standard input. `None`
    /// once input is over and the backlog is empty.
    async fn next_line(&mut self) -> Option<Line> {
        if let Some(line) = self.backlog.pop_front() {
            return Some(line);
        }
        if self.eof {
            return None;
        }
        Some(self.input.recv().await.unwrap_or(Line::Eof))
    }

    /// Awaits `work` while answers to our requests keep arriving; other
    /// lines wait in the backlog.
    async fn pumping<F: Future>(&mut self, work: F) -> F::Output {
        tokio::pin!(work);
        loop {
            tokio::select! {
                out = &mut work => return out,
                line = self.input.recv(), if !self.eof => match line.unwrap_or(Line::Eof) {
                    Line::Parsed(Incoming::ControlResponse { request_id, outcome }) => {
                        self.control.resolve(&request_id, outcome);
                    }
                    Line::Eof => {
                        self.eof = true;
                        self.control.close();
                        self.backlog.push_back(Line::Eof);
                    }
                    Line::Fatal(message) => {
                        self.eof = true;
                        self.control.close();
                        self.backlog.push_back(Line::Fatal(message));
                    }
                    other => self.backlog.push_back(other),
                },
            }
        }
    }

    /// Runs the session: turns from queued prompts, control requests, the
    /// end of input.
    async fn serve(
        mut self,
        mut client: Client,
        on_end: Option<OnSessionEnd>,
    ) -> Result<ExitCode, ControlError> {
        let mut turn: Option<Turn> = None;
        loop {
            if turn.is_none() && !self.fatal {
                if let Some(prompt) = self.prompts.pop_front() {
                    turn = self.start_turn(&mut client, prompt).await?;
                    continue;
                }
                if self.eof && self.backlog.is_empty() {
                    break;
                }
            }
            if turn.is_none() && self.fatal {
                break;
            }
            if let Some(line) = self.backlog.pop_front() {
                self.handle(line, &client);
                continue;
            }
            tokio::select! {
                message = next_message(&mut turn) => match message {
                    Some(message) => self.forward(message, &mut turn),
                    None => {
                        if turn.as_ref().is_some_and(|t| !t.finished) {
                            self.lost_result(&client);
                        }
                        turn = None;
                    }
                },
                line = self.input.recv(), if !self.eof => {
                    self.handle(line.unwrap_or(Line::Eof), &client);
                }
            }
        }
        let session_id = client.session_id().to_string();
        client.disconnect().await;
        if let Some(on_end) = on_end {
            on_end(session_id).await;
        }
        Ok(if self.fatal || self.last_result_error {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        })
    }

    /// Starts a turn for a prompt, or answers a prompt without text with
    /// an error result right away.
    async fn start_turn(
        &mut self,
        client: &mut Client,
        prompt: UserLine,
    ) -> Result<Option<Turn>, ControlError> {
        let (text, skipped) = wire::prompt_text(&prompt.content);
        if !skipped.is_empty() {
            eprintln!(
                "warning: ignoring {} block(s) of a prompt: Tascer takes the text of prompts only",
                skipped.join(", ")
            );
        }
        if text.trim().is_empty() {
            let mut result = startup_failure_result(
                "The prompt has no text: Tascer takes text prompts (image and document blocks are not supported)",
            );
            result["session_id"] = json!(client.session_id());
            self.control.send(&result);
            self.last_result_error = true;
            return Ok(None);
        }
        self.pumping(client.query(text)).await?;
        Ok(Some(Turn {
            stream: client.receive_response(),
            answered: false,
            finished: false,
        }))
    }

    /// A turn that ended without its result (it crashed) still owes the
    /// SDK one: `receive_response()` waits for it.
    fn lost_result(&mut self, client: &Client) {
        let mut result = startup_failure_result(
            "The turn ended without a result (an internal error; see the log on standard error)",
        );
        result["session_id"] = json!(client.session_id());
        self.control.send(&result);
        self.last_result_error = true;
    }

    /// Writes one message of the running turn, shaped as Claude Code
    /// shapes it.
    fn forward(&mut self, message: Message, turn: &mut Option<Turn>) {
        let mut message = message;
        if let Some(judge) = self.judge.as_mut() {
            judge.observe(&message);
            if let Message::Result(result) = &mut message {
                judge.judge(result);
            }
        }
        let answered = turn.as_ref().is_some_and(|t| t.answered);
        match &mut message {
            Message::System(system) if system.subtype == "init" => {
                system
                    .data
                    .insert("claude_code_version".into(), json!(CLAUDE_CODE_VERSION));
            }
            Message::System(system) if system.subtype == "hook_response" => {
                if !self.framing.hook_events {
                    return;
                }
                let event = system.data.get("event").cloned().unwrap_or(Value::Null);
                system.data.insert("hook_event".into(), event);
            }
            Message::User(user)
                if !answered
                    && user.parent_tool_use_id.is_none()
                    && matches!(user.message.content, UserContent::Text(_)) =>
            {
                // The prompt itself: Claude Code echoes it only on request.
                if self.framing.replay {
                    let mut frame = serde_json::to_value(&message).unwrap_or(Value::Null);
                    frame["isReplay"] = json!(true);
                    self.control.send(&frame);
                }
                return;
            }
            Message::Assistant(assistant) if assistant.parent_tool_use_id.is_none() => {
                if let Some(turn) = turn.as_mut() {
                    turn.answered = true;
                }
            }
            Message::Result(result) => {
                self.last_result_error = result.is_error;
                if let Some(turn) = turn.as_mut() {
                    turn.finished = true;
                }
            }
            _ => {}
        }
        self.control.send(&message);
    }

    /// Handles one line read while the session runs.
    fn handle(&mut self, line: Line, client: &Client) {
        match line {
            Line::Parsed(Incoming::ControlRequest {
                request_id,
                request,
            }) => requests::answer(&self.control, client, &self.tasks, &request_id, &request),
            Line::Parsed(Incoming::User(user)) => self.queue(user),
            Line::Parsed(other) => self.misc(other),
            Line::Eof => {
                self.eof = true;
                self.control.close();
            }
            Line::Fatal(message) => {
                eprintln!("{message}");
                self.fatal = true;
                self.eof = true;
                self.prompts.clear();
                self.control.close();
                client.interrupt();
            }
        }
    }

    /// Queues a prompt, unless its `uuid` was seen before.
    fn queue(&mut self, user: UserLine) {
        if let Some(uuid) = &user.uuid
            && !self.seen_uuids.insert(uuid.clone())
        {
            tracing::debug!("skipping a repeated user message {uuid}");
            return;
        }
        self.prompts.push_back(user);
    }

    /// Lines that need no session.
    fn misc(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::ControlResponse {
                request_id,
                outcome,
            } => self.control.resolve(&request_id, outcome),
            Incoming::ControlCancel { request_id } => {
                // Every request of the SDK is answered at once: nothing to
                // withdraw.
                tracing::debug!("control_cancel_request {request_id}: already answered");
            }
            Incoming::KeepAlive => {}
            Incoming::UpdateEnvironment => self.warn_once(
                "update_environment_variables",
                "warning: ignoring update_environment_variables: a Tascer session's environment \
                 is fixed when it starts",
            ),
            Incoming::Seed(kind) => {
                let text = format!(
                    "warning: ignoring {kind} lines on standard input: Tascer does not seed the \
                     history from the SDK (resume a session instead)"
                );
                self.warn_once(&kind, &text);
            }
            Incoming::Unknown(kind) => eprintln!("warning: Ignoring unknown message type: {kind}"),
            Incoming::User(user) => self.queue(user),
            Incoming::ControlRequest { request_id, .. } => self.control.send(&wire::error(
                &request_id,
                "Not initialized: send the initialize request first",
            )),
        }
    }

    fn warn_once(&mut self, key: &str, text: &str) {
        if self.warned.insert(key.to_string()) {
            eprintln!("{text}");
        }
    }
}

/// The next message of the running turn; pending forever without one.
async fn next_message(turn: &mut Option<Turn>) -> Option<Message> {
    match turn.as_mut() {
        Some(turn) => turn.stream.next().await,
        None => std::future::pending().await,
    }
}
