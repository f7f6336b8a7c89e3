//! Errors of the agent loop.

/// Why a session could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The model provider is misconfigured or failed.
    #[error(transparent)]
    Model(#[from] tascer_model::ModelError),
    /// The session store failed.
    #[error(transparent)]
    Store(#[from] tascer_store::StoreError),
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] tascer_ledger::LedgerError),
    /// A settings file could not be read or parsed.
    #[error(transparent)]
    Settings(#[from] tascer_guard::settings::SettingsError),
    /// The permission configuration is invalid.
    #[error(transparent)]
    Permissions(#[from] tascer_guard::permissions::PermissionError),
    /// The validation (gates) configuration is invalid.
    #[error("validation config: {0}")]
    Gates(#[from] tascer_guard::gates::GateError),
    /// The working directory does not exist.
    #[error("Working directory does not exist: {0}")]
    Cwd(String),
    /// Options that contradict each other or are invalid.
    #[error("invalid options: {0}")]
    InvalidOptions(String),
    /// A skill, slash command or agent file is invalid.
    #[error("{0}")]
    Definition(String),
    /// `resume_drops_turn`: the cut would drop more than that turn.
    #[error("Resume rejected by --resume-drops-turn: {0}")]
    ResumeRejected(String),
    /// There is no session to continue in this directory.
    #[error("No conversation found to continue in {0}")]
    NothingToContinue(String),
    /// A compaction did not happen: a PreCompact hook refused, or the
    /// summary could not be made.
    #[error("not compacted: {0}")]
    NotCompacted(String),
    /// The client is not connected or a turn is already running.
    #[error("{0}")]
    State(&'static str),
}
