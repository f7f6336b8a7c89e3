//! The state one gatekeeper server shares between its tool calls, and what
//! every tool does the same way: find the repository, ask admission,
//! record the outcome.
//!
//! State: the last check and confirm per repository live in the server
//! process (keyed by the repo's top-level path) and carry the working-tree
//! digest they were made for; every check, confirm, commit and push is also
//! appended to the ledger as a `gate_result` entry of one ledger session per
//! server (`mcp-serve-<uuid>`, signed when the home has a key), so
//! `tascer report` / `tascer verify` cover them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde_json::{Map, Value, json};
use tascer::SessionStore;
use tascer_ledger::{EntryKind, Ledger, SessionStart, sha256_ref};
use tascer_mcp::ServeToolResult;

use crate::admit::{Admitter, Refused};
use crate::error::{GatekeeperError, Result, text};
use crate::events::{EventSink, ToolCallEvent};
use crate::git;

/// The last check of a repository.
#[derive(Debug, Clone)]
pub(crate) struct CheckRecord {
    /// The working-tree digest it ran on.
    pub digest: String,
    /// True when every command passed.
    pub passed: bool,
    /// The commands that failed (or the one admission refused).
    pub failed: Vec<String>,
}

/// The last confirm of a repository.
#[derive(Debug, Clone)]
pub(crate) struct ConfirmRecord {
    /// The working-tree digest it confirmed or declined.
    pub digest: String,
    /// True for CONFIRMED.
    pub confirmed: bool,
    /// Why, as `confirm` gave them.
    pub reasons: Vec<String>,
    /// True when a reviewer model gave the verdict (a decline for want of
    /// a passing check is not a review).
    pub reviewed: bool,
}

/// What the server remembers of one repository.
#[derive(Debug, Default)]
pub(crate) struct RepoState {
    /// The last check.
    pub check: Option<CheckRecord>,
    /// The last confirm (taken by the commit it allowed).
    pub confirm: Option<ConfirmRecord>,
}

/// Shared state of one gatekeeper server.
pub(crate) struct Server {
    /// The Tascer home (store, ledger, keys, user settings).
    pub home: PathBuf,
    /// The default repository.
    pub cwd: PathBuf,
    /// Per repository root: the last check and confirm.
    pub repos: Mutex<HashMap<PathBuf, RepoState>>,
    /// The ledger session this server records its gates in.
    pub ledger_session: String,
    /// The ledger, opened on the first record.
    ledger: Mutex<Option<Ledger>>,
    /// Where each call's `McpToolCall` event is queued for the webhooks.
    events: EventSink,
}

/// A string argument, trimmed; `None` when absent or blank.
pub(crate) fn str_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// An error as a tool error result (`isError: true`, the error chain as text).
pub(crate) fn tool_error(err: &GatekeeperError) -> ServeToolResult {
    ServeToolResult::error(text(err))
}

/// Milliseconds since `started`.
pub(crate) fn elapsed_ms(started: std::time::Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Server {
    /// A server over `cwd` (the default repository) and `home`, with a
    /// ledger session of its own.
    pub fn new(cwd: PathBuf, home: PathBuf) -> Server {
        Server {
            cwd,
            repos: Mutex::default(),
            ledger_session: format!("mcp-serve-{}", uuid::Uuid::new_v4()),
            ledger: Mutex::new(None),
            events: EventSink::new(home.clone()),
            home,
        }
    }

    /// Queues the `McpToolCall` event of a call of `tool` with `args`
    /// (its result and the agents' verdicts it obtained) for the webhooks
    /// of the directory it acted on (its `working_dir`, else the
    /// server's).
    pub fn tool_event(
        &self,
        tool: &str,
        args: &Map<String, Value>,
        result: &ServeToolResult,
        agents: Vec<Value>,
    ) {
        let dir = self.working_dir(args).unwrap_or_else(|_| self.cwd.clone());
        let call = ToolCallEvent {
            tool,
            args,
            dir: &dir,
            session: &self.ledger_session,
        };
        self.events.send(call, result, agents);
    }

    /// The directory a call names: `working_dir` (the framework's
    /// argument; absolute, or relative to the server's cwd), else the
    /// server's cwd; then `path` (the older argument), relative to that.
    /// It must be an existing directory.
    pub fn working_dir(&self, args: &Map<String, Value>) -> Result<PathBuf> {
        let base = match str_arg(args, "working_dir") {
            Some(dir) => self.cwd.join(dir),
            None => self.cwd.clone(),
        };
        let dir = match str_arg(args, "path") {
            Some(p) => base.join(p),
            None => base,
        };
        match std::fs::metadata(&dir) {
            Ok(meta) if meta.is_dir() => Ok(dir),
            Ok(_) => Err(GatekeeperError::BadWorkingDir {
                dir,
                problem: "not a directory".into(),
            }),
            Err(e) => Err(GatekeeperError::BadWorkingDir {
                dir,
                problem: e.to_string(),
            }),
        }
    }

    /// The repository a call works on: the top level of the git work tree
    /// holding [`Self::working_dir`].
    pub async fn repo(&self, args: &Map<String, Value>) -> Result<PathBuf> {
        git::repo_root(&self.working_dir(args)?).await
    }

    /// Appends a `gate_result` entry for `gate` to this server's ledger
    /// session (opened on first use). A failure is returned as the text to
    /// give the caller: a gate that is not on record must not look passed
    /// (see [`Self::recorded`]).
    pub fn record(
        &self,
        gate: &str,
        passed: bool,
        message: &str,
        duration_ms: u64,
        details: Value,
    ) -> std::result::Result<(), String> {
        let entry = json!({
            "gate": gate,
            "passed": passed,
            "message": message,
            "duration_ms": duration_ms,
            "details": details,
        });
        self.append(entry).map_err(|err| {
            let text = format!(
                "{gate} could not be recorded in the ledger in {}: {}",
                self.home.display(),
                text(&err)
            );
            tracing::error!("{text}");
            text
        })
    }

    /// Appends one `gate_result` payload, opening the ledger session first
    /// when this is the server's first record.
    fn append(&self, payload: Value) -> Result<()> {
        let mut guard = self.ledger.lock();
        if guard.is_none() {
            *guard = Some(self.open_ledger_session()?);
        }
        if let Some(ledger) = guard.as_ref() {
            ledger.append(&self.ledger_session, EntryKind::GateResult, payload)?;
        }
        Ok(())
    }

    /// Opens the home's ledger and starts this server's session in it.
    fn open_ledger_session(&self) -> Result<Ledger> {
        std::fs::create_dir_all(&self.home)?;
        // Signed by default, like every session (TASCER_SIGNING=off
        // turns it off).
        let key = if tascer::signing_from_env() {
            Some(tascer_ledger::load_or_create_home_signing_key(&self.home)?.0)
        } else {
            None
        };
        let ledger = Ledger::open_in_home(&self.home, key)?;
        ledger.start_session(
            &self.ledger_session,
            &SessionStart {
                model: "none".into(),
                options_digest: sha256_ref(b"{}"),
                system_prompt_digest: sha256_ref(b""),
                signing_key_id: None,
                context: json!({
                    "source": "tascer mcp serve",
                    "cwd": self.cwd.display().to_string(),
                    "version": tascer::VERSION,
                }),
            },
        )?;
        Ok(ledger)
    }

    /// `result`, or an error result saying the call is not on record when
    /// `recorded` failed.
    pub fn recorded(
        result: ServeToolResult,
        recorded: std::result::Result<(), String>,
    ) -> ServeToolResult {
        match recorded {
            Ok(()) => result,
            Err(text) => ServeToolResult::error(format!(
                "{text}. The call's outcome is not on record; treat it as not done."
            )),
        }
    }

    /// Admission of `tool`'s calls in `repo`. When Tascer's settings
    /// cannot be read, that is the refusal: nothing runs unadmitted.
    pub fn admitter(
        &self,
        repo: &Path,
        tool: &'static str,
    ) -> std::result::Result<Admitter, Refused> {
        Admitter::load(repo, &self.home, &self.ledger_session, tool).map_err(|e| Refused {
            call: tool.to_owned(),
            reason: format!("cannot read Tascer's settings: {}", text(&e)),
        })
    }

    /// `tool` (`commit`, `push`) not done because admission refused one
    /// of its calls: recorded, and a tool error naming the call and
    /// Tascer's reason.
    pub fn refused(&self, tool: &str, repo: &Path, refused: &Refused) -> ServeToolResult {
        let reason = format!("refused by Tascer: {refused}");
        // Already an error result; a recording failure is logged.
        let _ = self.record(
            &format!("mcp.{tool}"),
            false,
            &reason,
            0,
            json!({"repo": repo.display().to_string(), "refused": refused.call}),
        );
        ServeToolResult::error(format!("{tool} refused: {reason}"))
    }

    /// The session store, or `None` when the home has no database yet
    /// (the tools do not create one just to say it is empty).
    pub fn store(&self) -> Result<Option<SessionStore>> {
        if !tascer_store::StoreConfig::for_home(&self.home)?.exists() {
            return Ok(None);
        }
        Ok(Some(SessionStore::open_in_home(&self.home)?))
    }
}
