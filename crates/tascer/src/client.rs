//! [`Client`]: a session kept open for many prompts.

use futures::future::BoxFuture;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Mutex as AsyncMutex;
use tokio::sync::mpsc::unbounded_channel;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use tascer_guard::hooks::SessionEndReason;
use tascer_guard::permissions::{PermissionEngine, PermissionMode};
use tascer_mcp::{McpManager, McpServerStatus};

use crate::error::Error;
use crate::options::Options;
use crate::rewind::{RewindError, RewindSummary};
use crate::session::Session;
use crate::stream::MessageStream;
use crate::turn::run_turn;

/// A session kept open across prompts.
///
/// `connect` opens (or resumes) the session, `query` starts a turn,
/// `receive_response` streams its messages up to and including the result,
/// `interrupt` stops the running turn, `disconnect` ends the session.
pub struct Client {
    session: Arc<AsyncMutex<Session>>,
    session_id: String,
    current: Option<MessageStream>,
    cancel: Arc<Mutex<CancellationToken>>,
    task: Option<JoinHandle<()>>,
    permissions: Arc<PermissionEngine>,
    mcp: Option<McpManager>,
    /// The model the session started with (what `set_model(None)` restores).
    default_model: String,
    /// A model switch to apply before the next turn.
    next_model: Arc<Mutex<Option<String>>>,
    /// The model of the last `set_model` (else the default model).
    chosen_model: Mutex<String>,
}

/// A slash command a session knows (built-in or from a command file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandInfo {
    /// Its name, without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
    /// How to pass arguments, when the command says.
    pub argument_hint: Option<String>,
}

/// A subagent the session's `Task` tool can start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    /// Its name (`subagent_type`).
    pub name: String,
    /// When to use it.
    pub description: String,
    /// Its model, when it has its own.
    pub model: Option<String>,
}

impl Client {
    /// Opens a session with these options (a new one, or the one `resume` /
    /// `continue_conversation` names).
    pub async fn connect(options: Options) -> Result<Client, Error> {
        let session = Session::start(options).await?;
        let session_id = session.id.clone();
        let permissions = Arc::clone(session.agent.governance.admission.permissions());
        Ok(Client {
            permissions,
            mcp: session.mcp.clone(),
            default_model: session.agent.model.clone(),
            next_model: Arc::default(),
            chosen_model: Mutex::new(session.agent.model.clone()),
            session: Arc::new(AsyncMutex::new(session)),
            session_id,
            current: None,
            cancel: Arc::new(Mutex::new(CancellationToken::new())),
            task: None,
        })
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Starts a turn with this prompt. Read its messages with
    /// [`Client::receive_response`]. If the previous turn is still running,
    /// this waits for it to end first (its messages stay readable).
    pub fn query(&mut self, prompt: impl Into<String>) -> BoxFuture<'_, Result<(), Error>> {
        self.query_text(prompt.into())
    }

    /// [`query`](Self::query), boxed in a function of its own: the turn's
    /// whole state machine is compiled once, here, not in every crate that
    /// sends a prompt.
    fn query_text(&mut self, prompt: String) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(self.query_now(prompt))
    }

    async fn query_now(&mut self, prompt: String) -> Result<(), Error> {
        if let Some(task) = self.task.take() {
            task.await
                .map_err(|_| Error::State("the previous turn crashed"))?;
        }
        let cancel = CancellationToken::new();
        *self.cancel.lock() = cancel.clone();
        let (tx, rx) = unbounded_channel();
        let session = Arc::clone(&self.session);
        let next_model = Arc::clone(&self.next_model);
        self.task = Some(tokio::spawn(async move {
            let mut session = session.lock().await;
            if let Some(model) = next_model.lock().take() {
                session.agent.model = model;
            }
            run_turn(&mut session, prompt, tx, cancel).await;
        }));
        self.current = Some(MessageStream::new(rx));
        Ok(())
    }

    /// Compacts the conversation now (`trigger: "manual"`): PreCompact
    /// hooks run (and may refuse), the model summarizes the conversation
    /// with `instructions` added to the request, and the summary replaces
    /// it (see docs/sessions.md). Waits for a running turn to end first.
    /// Returns the summary.
    pub async fn compact(&mut self, instructions: Option<&str>) -> Result<String, Error> {
        if let Some(task) = self.task.take() {
            task.await
                .map_err(|_| Error::State("the previous turn crashed"))?;
        }
        let cancel = CancellationToken::new();
        *self.cancel.lock() = cancel.clone();
        let mut session = self.session.lock().await;
        let pre_tokens = session.last_input_tokens;
        crate::compact::compact(
            &mut session,
            tascer_guard::hooks::CompactTrigger::Manual,
            instructions,
            pre_tokens,
            &cancel,
        )
        .await
        .map_err(|e| Error::NotCompacted(e.to_string()))
    }

    /// The messages of the current turn, ending with its result. Taking it
    /// leaves the client free for [`Client::interrupt`] while it is read.
    pub fn receive_response(&mut self) -> MessageStream {
        self.current.take().unwrap_or_else(MessageStream::empty)
    }

    /// Verifies the session's ledger: every hash, the chain, every evidence
    /// file and the head signature. Waits for a running turn to finish.
    pub async fn verify_proofs(&self) -> Result<tascer_ledger::VerifyReport, Error> {
        let session = self.session.lock().await;
        Ok(session.agent.env.proof.ledger().verify(&session.id, None)?)
    }

    /// The session's validation report: each tool call with its status,
    /// gates and proof hash, and the ledger head.
    pub async fn validation_report(&self) -> Result<tascer_ledger::ReportData, Error> {
        let session = self.session.lock().await;
        Ok(session.agent.env.proof.ledger().report(&session.id)?)
    }

    /// The current permission mode.
    pub fn permission_mode(&self) -> PermissionMode {
        self.permissions.mode()
    }

    /// Switches the permission mode, also in the middle of a turn: calls
    /// decided after this use the new mode. Fails for `bypassPermissions`
    /// when settings disable it.
    pub fn set_permission_mode(&self, mode: PermissionMode) -> Result<(), Error> {
        Ok(self.permissions.set_mode(mode)?)
    }

    /// Switches the model from the next turn on; `None` goes back to the
    /// model the session started with. A running turn keeps its model.
    pub fn set_model(&self, model: Option<&str>) {
        let model = model.map_or_else(|| self.default_model.clone(), str::to_string);
        *self.chosen_model.lock() = model.clone();
        *self.next_model.lock() = Some(model);
    }

    /// The session's model: the one it started with, or the last one
    /// [`set_model`](Self::set_model) chose.
    pub fn model(&self) -> String {
        self.chosen_model.lock().clone()
    }

    /// The session's MCP servers (for `mcp_reconnect` / `mcp_toggle`).
    pub fn mcp_manager(&self) -> Option<McpManager> {
        self.mcp.clone()
    }

    /// The state of the session's MCP servers (empty without any).
    pub fn mcp_status(&self) -> Vec<McpServerStatus> {
        self.mcp
            .as_ref()
            .map(McpManager::statuses)
            .unwrap_or_default()
    }

    /// The slash commands the session knows: the built-in ones, then those
    /// of its command files, then its MCP servers' prompts
    /// (`mcp__<server>__<prompt>`). Waits for a running turn to end.
    pub async fn slash_commands(&self) -> Vec<CommandInfo> {
        let session = self.session.lock().await;
        let builtin = crate::commands::BUILTIN_COMMANDS
            .iter()
            .map(|(name, description)| CommandInfo {
                name: (*name).to_string(),
                description: (*description).to_string(),
                argument_hint: None,
            });
        let custom = session.commands.iter().map(|c| CommandInfo {
            name: c.name.clone(),
            description: c.description.clone(),
            argument_hint: c.argument_hint.clone(),
        });
        let prompts = session.mcp.iter().flat_map(|m| m.prompts_snapshot());
        let mcp = prompts.map(|p| CommandInfo {
            argument_hint: (!p.arguments.is_empty()).then(|| {
                let hint = p.arguments.iter().map(|a| match a.required {
                    true => format!("<{}>", a.name),
                    false => format!("[{}]", a.name),
                });
                hint.collect::<Vec<_>>().join(" ")
            }),
            description: format!("{} (MCP)", p.description).trim_start().to_string(),
            name: p.command,
        });
        builtin.chain(custom).chain(mcp).collect()
    }

    /// The subagents the `Task` tool can start: `general-purpose`, then
    /// those of agent files and the options. Waits for a running turn to
    /// end.
    pub async fn agents(&self) -> Vec<AgentInfo> {
        let session = self.session.lock().await;
        let general = AgentInfo {
            name: crate::task_tool::GENERAL_PURPOSE.to_string(),
            description: "A general agent with all tools".to_string(),
            model: None,
        };
        let defined = session.options.agents.iter().map(|(name, a)| AgentInfo {
            name: name.clone(),
            description: a.description.clone(),
            model: a.model.clone(),
        });
        std::iter::once(general).chain(defined).collect()
    }

    /// Interrupts the running turn: the model stream and running tools are
    /// cancelled and the turn ends with a result saying so.
    pub fn interrupt(&self) {
        self.interrupter().interrupt();
    }

    /// A handle that interrupts whichever turn is running, usable from
    /// another task.
    pub fn interrupter(&self) -> Interrupter {
        Interrupter {
            cancel: Arc::clone(&self.cancel),
        }
    }

    /// Restores the files the session's tools changed since the prompt
    /// `user_message_id` to their content when it was sent, removing files
    /// created since (the SDKs' `rewind_files`; needs
    /// [`Options::file_checkpointing`]). With `dry_run` nothing changes and
    /// the summary says what would. Waits for a running turn to end.
    pub async fn rewind_files(
        &self,
        user_message_id: &str,
        dry_run: bool,
    ) -> Result<RewindSummary, RewindError> {
        self.rewinder().rewind(user_message_id, dry_run).await
    }

    /// A handle that rewinds files (see [`Client::rewind_files`]), usable
    /// from another task.
    pub fn rewinder(&self) -> Rewinder {
        Rewinder {
            session: Arc::clone(&self.session),
        }
    }

    /// True when the session sends hook events to webhooks (settings
    /// `webhooks`): events may still wait in the outbox after
    /// [`disconnect`](Self::disconnect) (see [`crate::webhook`]).
    pub async fn has_webhooks(&self) -> bool {
        self.session.lock().await.agent.governance.has_webhooks()
    }

    /// Ends the session: interrupts a running turn, waits for it to end,
    /// then runs the SessionEnd hooks and stops the webhooks' delivery
    /// (what it did not deliver waits in the outbox).
    pub async fn disconnect(mut self) {
        self.interrupt();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        let session = self.session.lock().await;
        session
            .agent
            .governance
            .on_session_end(&session.agent.env, SessionEndReason::Other)
            .await;
        session.agent.governance.stop_webhooks().await;
    }
}

/// Rewinds a [`Client`]'s files from another task.
#[derive(Clone)]
pub struct Rewinder {
    session: Arc<AsyncMutex<Session>>,
}

impl Rewinder {
    /// See [`Client::rewind_files`].
    pub async fn rewind(
        &self,
        user_message_id: &str,
        dry_run: bool,
    ) -> Result<RewindSummary, RewindError> {
        let session = self.session.lock().await;
        crate::rewind::rewind(&session.agent.env, user_message_id, dry_run)
    }
}

/// Interrupts a [`Client`]'s running turn.
#[derive(Clone)]
pub struct Interrupter {
    cancel: Arc<Mutex<CancellationToken>>,
}

impl Interrupter {
    /// Interrupts the running turn, if any.
    pub fn interrupt(&self) {
        self.cancel.lock().cancel();
    }
}
