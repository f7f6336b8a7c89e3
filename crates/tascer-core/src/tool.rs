//! The [`Tool`] trait: what every tool (built-in, custom, MCP) implements.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::content::ToolResultContent;

/// Whether a tool may open a file it found on its own — a file inside a
/// searched directory, a Glob result — and not only the path it was
/// called with (which the permission engine already decided). The loop
/// fills it from the permission engine (`tascer-guard` stays the one place
/// that decides); tools skip the files it refuses and say how many.
pub trait FileAccess: Send + Sync + std::fmt::Debug {
    /// `Err(reason)` when `path` must not be opened or listed.
    fn may_read(&self, path: &Path) -> Result<(), String>;
}

/// The session's working directory, shared by the loop and the tools of
/// a session so that `cd` in Bash sticks between calls. Its lock cannot be
/// poisoned. Make one with [`ToolContext::shared_cwd`].
pub type SharedCwd = Arc<Mutex<PathBuf>>;

/// What a tool gets besides its input.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Session id.
    pub session_id: String,
    /// The `tool_use` id of this call.
    pub tool_use_id: String,
    /// The session's working directory. Shared and mutable so that `cd` in
    /// Bash sticks between calls.
    pub cwd: SharedCwd,
    /// Extra environment variables for subprocesses.
    pub env: Arc<HashMap<String, String>>,
    /// Cancelled on interrupt; long-running tools must stop when it fires.
    pub cancel: CancellationToken,
    /// The per-file check for files a tool finds itself (`None`: every
    /// file may be opened).
    pub file_access: Option<Arc<dyn FileAccess>>,
}

impl ToolContext {
    /// A working directory to share between the calls of a session.
    pub fn shared_cwd(dir: impl Into<PathBuf>) -> SharedCwd {
        Arc::new(Mutex::new(dir.into()))
    }

    /// The current working directory.
    pub fn cwd(&self) -> PathBuf {
        self.cwd.lock().clone()
    }

    /// Changes the working directory for later calls.
    pub fn set_cwd(&self, dir: PathBuf) {
        *self.cwd.lock() = dir;
    }

    /// Whether a file the tool found itself may be opened (see
    /// [`FileAccess`]).
    pub fn may_read(&self, path: &Path) -> Result<(), String> {
        match &self.file_access {
            Some(check) => check.may_read(path),
            None => Ok(()),
        }
    }

    /// Resolves a path against the working directory.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let p = PathBuf::from(path);
        if p.is_absolute() {
            p
        } else {
            self.cwd().join(p)
        }
    }
}

/// A session a tool call ran as a child of the calling session (a
/// contract's session run by `ExecuteContracts`, say). The loop records
/// each one in the caller's ledger as a `checkpoint` naming the child and
/// its head, right after the tool returns and before the call's record is
/// closed, so verifying the caller covers the whole tree.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildSession {
    /// The child's session id.
    pub session_id: String,
    /// Hash of the child's last ledger entry.
    pub head: String,
    /// The child's entry count (seq of that head).
    pub seq: u64,
    /// Context added to the checkpoint (an object, e.g. the contract's
    /// name and status); its fields never replace the link's own.
    pub detail: Value,
    /// What the child cost, USD: the loop adds it to the caller's
    /// `total_cost_usd` (and its budget).
    pub cost_usd: f64,
    /// The child's model calls: the loop adds them to the caller's result's
    /// `num_turns`.
    pub num_turns: u32,
    /// Models the child called whose cost is unknown (its cost leaves them
    /// out); the caller's result names them too.
    pub unpriced_models: Vec<String>,
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// Content for the model's `tool_result`.
    pub content: ToolResultContent,
    /// True when the call failed; the model sees `is_error: true`.
    pub is_error: bool,
    /// Structured raw output (the frame's `tool_use_result`).
    pub raw: Option<Value>,
    /// Sessions the call ran as children of the calling session, in the
    /// order they are recorded (see [`ChildSession`]); empty for most
    /// tools.
    pub child_sessions: Vec<ChildSession>,
}

impl ToolOutput {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: ToolResultContent::Text(text.into()),
            is_error: false,
            raw: None,
            child_sessions: Vec::new(),
        }
    }

    /// A failed result with a message for the model.
    pub fn error(message: impl Into<String>) -> Self {
        ToolOutput {
            content: ToolResultContent::Text(message.into()),
            is_error: true,
            raw: None,
            child_sessions: Vec::new(),
        }
    }

    /// Adds the structured raw output.
    pub fn with_raw(mut self, raw: Value) -> Self {
        self.raw = Some(raw);
        self
    }

    /// Adds a child session to record in the caller's ledger (see
    /// [`ChildSession`]).
    pub fn with_child_session(mut self, child: ChildSession) -> Self {
        self.child_sessions.push(child);
        self
    }
}

/// A tool the model can call.
///
/// Implementations validate their own input and report bad input as
/// [`ToolOutput::error`], never by panicking.
pub trait Tool: Send + Sync {
    /// Name the model calls it by.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of its input.
    fn input_schema(&self) -> Value;
    /// True when the tool never changes anything (used for plan mode and
    /// for running calls concurrently).
    fn is_read_only(&self) -> bool {
        false
    }
    /// False when subagents (the Task tool's) must not get this tool, only
    /// the session's main agent (`ExecuteContracts`, which starts sessions
    /// of its own, is one). Default true.
    fn offered_to_subagents(&self) -> bool {
        true
    }
    /// Runs the tool.
    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput>;
}
