//! `tascer demo`.

use clap::{Args, ValueEnum};

/// What `tascer demo` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DemoTopic {
    /// Markdown contracts run as governed sessions (`tascer contracts run`).
    Contracts,
}

/// Arguments of `tascer demo`.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Another demo instead of the default session (`contracts`).
    #[arg(value_enum)]
    pub topic: Option<DemoTopic>,
    /// Keep the demo's workspace and store instead of deleting them.
    #[arg(long)]
    pub keep: bool,
    /// Print every message as a JSON line instead of text.
    #[arg(long)]
    pub stream_json: bool,
}
