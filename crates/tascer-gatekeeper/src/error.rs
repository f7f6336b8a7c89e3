//! What can go wrong in the gatekeeper. Each message says what failed
//! (and, where there is one, what to do); the cause is its
//! [`source`](std::error::Error::source). A tool call that fails returns
//! the message and its causes as an error result (`isError: true`).

use std::path::PathBuf;

/// An error of the gatekeeper's tools.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatekeeperError {
    /// `git` could not be started.
    #[error("cannot run git {args} in {}", repo.display())]
    GitSpawn {
        /// The arguments, space-separated.
        args: String,
        /// The repository.
        repo: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `git` exited non-zero.
    #[error("git {args} failed: {stderr}")]
    GitFailed {
        /// The arguments, space-separated.
        args: String,
        /// What git wrote on standard error (trimmed).
        stderr: String,
    },
    /// The path is not inside a git work tree.
    #[error("{} is not inside a git work tree ({stderr})", path.display())]
    NotARepository {
        /// The path asked about.
        path: PathBuf,
        /// What git said (trimmed).
        stderr: String,
    },
    /// The directory a call names (`working_dir`, `path`) is unusable.
    #[error("working_dir {}: {problem}", dir.display())]
    BadWorkingDir {
        /// The directory, resolved against the server's working directory.
        dir: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// A settings file holding a `check` section could not be read.
    #[error("cannot read {}", path.display())]
    ReadSettings {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A settings file is not JSON.
    #[error("{}: not JSON", path.display())]
    SettingsNotJson {
        /// The file.
        path: PathBuf,
        /// The parser's complaint.
        source: serde_json::Error,
    },
    /// The `check` section of a settings file is malformed.
    #[error("{}: {problem}", path.display())]
    BadCheckSection {
        /// The file.
        path: PathBuf,
        /// What is wrong and how it should look.
        problem: String,
    },
    /// No check commands are configured and none can be detected.
    #[error(
        "no check commands for {}: add {{\"check\": {{\"lint\": [\"…\"], \"test\": [\"…\"]}}}} \
         to .tascer/settings.json (no Makefile with a `check` target, Cargo.toml, package.json, \
         go.mod or pyproject.toml to detect them from)",
        repo.display()
    )]
    NoCheckCommands {
        /// The repository.
        repo: PathBuf,
    },
    /// Tascer's settings (rules, policies, hooks) could not be loaded.
    #[error(transparent)]
    Settings(Box<tascer::Error>),
    /// A settings file's `mcpServe` section is malformed (`models`).
    #[error(transparent)]
    McpServeSettings(#[from] tascer_settings::FileError),
    /// The reviewer model's call failed.
    #[error("the reviewer model {model} failed")]
    GateModel {
        /// `provider/model`.
        model: String,
        /// Why.
        source: Box<tascer::ModelError>,
    },
    /// Neither Tascer's store nor Claude Code's projects have a session
    /// with this id.
    #[error(
        "No conversation found with session ID: {id} (neither a Tascer session nor a Claude \
         Code transcript <id>.jsonl under $CLAUDE_CONFIG_DIR or ~/.claude, in projects/)"
    )]
    NoSession {
        /// The id asked for.
        id: String,
    },
    /// `validate_intent` was given no transcript and the working
    /// directory's Claude Code project has none.
    #[error(
        "validate_intent needs `transcript` (text), `transcript_path` (a Claude Code .jsonl) or \
         `session_id`; there is no Claude Code session of {} to take instead",
        dir.display()
    )]
    NoTranscript {
        /// The working directory.
        dir: PathBuf,
    },
    /// A file given as a Claude Code transcript is not one.
    #[error("{} is not a Claude Code transcript: {problem}", path.display())]
    NotATranscript {
        /// The file.
        path: PathBuf,
        /// Why not.
        problem: String,
    },
    /// The session store failed.
    #[error(transparent)]
    Store(#[from] tascer_store::StoreError),
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] tascer_ledger::LedgerError),
    /// A report or verification could not be made.
    #[error(transparent)]
    Audit(#[from] tascer_ledger::AuditError),
    /// A file or directory could not be written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<tascer::Error> for GatekeeperError {
    fn from(err: tascer::Error) -> Self {
        GatekeeperError::Settings(Box::new(err))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = GatekeeperError> = std::result::Result<T, E>;

/// `err` and its causes as one line (see [`tascer_core::error_chain`]).
pub(crate) fn text(err: &GatekeeperError) -> String {
    tascer_core::error_chain(err)
}
