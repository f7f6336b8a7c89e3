//! [`Client`]: a session kept open for many prompts.

use std::sync::{Arc, Mutex as StdMutex};

use tokio::sync::Mutex;
use tokio::sync::mpsc::unbounded_channel;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use tascer_guard::hooks::SessionEndReason;
use tascer_guard::permissions::{PermissionEngine, PermissionMode};

use crate::agent::lock;
use crate::error::Error;
use crate::options::Options;
use crate::query::MessageStream;
use crate::session::Session;
use crate::turn::run_turn;

/// A session kept open across prompts.
///
/// `connect` opens (or resumes) the session, `query` starts a turn,
/// `receive_response` streams its messages up to and including the result,
/// `interrupt` stops the running turn, `disconnect` ends the session.
pub struct Client {
    session: Arc<Mutex<Session>>,
    session_id: String,
    current: Option<MessageStream>,
    cancel: Arc<StdMutex<CancellationToken>>,
    task: Option<JoinHandle<()>>,
    permissions: Arc<PermissionEngine>,
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
            session: Arc::new(Mutex::new(session)),
            session_id,
            current: None,
            cancel: Arc::new(StdMutex::new(CancellationToken::new())),
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
    pub async fn query(&mut self, prompt: impl Into<String>) -> Result<(), Error> {
        if let Some(task) = self.task.take() {
            task.await
                .map_err(|_| Error::State("the previous turn crashed"))?;
        }
        let cancel = CancellationToken::new();
        *lock(&self.cancel) = cancel.clone();
        let (tx, rx) = unbounded_channel();
        let session = Arc::clone(&self.session);
        let prompt = prompt.into();
        self.task = Some(tokio::spawn(async move {
            let mut session = session.lock().await;
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
        *lock(&self.cancel) = cancel.clone();
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

/// Interrupts a [`Client`]'s running turn.
#[derive(Clone)]
pub struct Interrupter {
    cancel: Arc<StdMutex<CancellationToken>>,
}

impl Interrupter {
    /// Interrupts the running turn, if any.
    pub fn interrupt(&self) {
        lock(&self.cancel).cancel();
    }
}
