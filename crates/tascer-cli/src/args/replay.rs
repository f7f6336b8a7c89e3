//! `tascer replay`.

use std::path::PathBuf;

use clap::Args;

/// Arguments of `tascer replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// The recorded session, by id.
    #[arg(value_name = "SESSION")]
    pub session: String,
    /// Stop after this tool call (1 = the session's first tool call).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub until: Option<u64>,
    /// After --until N, continue live with a real model (the environment's
    /// provider, as `tascer run`; the recorded model unless --model).
    #[arg(long, requires = "until")]
    pub fork: bool,
    /// The live model of --fork.
    #[arg(long, requires = "fork", value_name = "MODEL")]
    pub model: Option<String>,
    /// The live provider of --fork by name (as `tascer run --provider`).
    #[arg(long, requires = "fork", value_name = "NAME")]
    pub provider: Option<String>,
    /// Start from a copy of this directory instead of the recorded commit
    /// (for a session that started in a dirty tree or outside git, or to
    /// try a changed tree).
    #[arg(long, value_name = "DIR")]
    pub tree: Option<PathBuf>,
    /// The settings the session was run with (`tascer run --settings`,
    /// which is not recorded): a JSON file path or inline JSON.
    #[arg(long, value_name = "FILE_OR_JSON")]
    pub settings: Option<String>,
    /// Keep the scratch tree (its path is printed).
    #[arg(long)]
    pub keep: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}
