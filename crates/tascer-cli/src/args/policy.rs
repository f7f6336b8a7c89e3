//! `tascer policy`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `tascer policy …`
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// What would these settings have done? Re-judges every recorded tool
    /// call of the sessions under new settings (rules, policies, mode,
    /// sandbox) without running anything, and lists the calls whose outcome
    /// changes. Exit 1 when a call that was allowed would be refused, 2 on
    /// an error.
    Check(PolicyCheckArgs),
}

/// Arguments of `tascer policy check`.
#[derive(Debug, Clone, Args)]
pub struct PolicyCheckArgs {
    /// The new settings: a JSON file path or inline JSON (as `tascer run
    /// --settings`), over the settings files the sessions' projects read.
    #[arg(long, value_name = "FILE_OR_JSON")]
    pub settings: String,
    /// The sessions to re-judge, by id.
    #[arg(value_name = "SESSION", required_unless_present = "all")]
    pub sessions: Vec<String>,
    /// Every session in the store.
    #[arg(long, conflicts_with = "sessions")]
    pub all: bool,
    /// Only calls made since this time: RFC 3339, a date (UTC), or a span
    /// back from now (30m, 12h, 7d).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Judge every call in this mode (default: the mode recorded with the
    /// call).
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,
    /// Settings files to read besides --settings, comma-separated: user,
    /// project, local (default: all, as `tascer run`; "" for none).
    #[arg(long, value_delimiter = ',', value_name = "SOURCES")]
    pub setting_sources: Option<Vec<String>>,
    /// Also read Claude Code's settings files (as `tascer run --claude-settings`).
    #[arg(long)]
    pub claude_settings: bool,
    /// Further directories the file tools may use (as `tascer run --add-dir`).
    #[arg(long = "add-dir", value_name = "DIR", num_args = 1..)]
    pub add_dir: Vec<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}
