//! `tascer sessions`.

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};

/// `tascer sessions …`
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List recent sessions.
    List {
        /// How many to show.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one session's messages.
    Show {
        /// Session id.
        id: String,
        /// Print the stored frames as JSON lines.
        #[arg(long)]
        json: bool,
    },
    /// Give a session a title (shown by `list` and `show`).
    Rename {
        /// Session id.
        id: String,
        /// The title.
        title: String,
    },
    /// Delete a session: its messages, file checkpoints and ledger.
    Delete {
        /// Session id.
        id: String,
        /// Do not ask for confirmation (needed when stdin is not a terminal).
        #[arg(long)]
        yes: bool,
    },
    /// Write a session's conversation to a file or stdout.
    Export {
        /// Session id.
        id: String,
        /// `jsonl`: Claude Code's transcript lines; `json`: the stored
        /// messages; `markdown`: readable.
        #[arg(long, value_enum, default_value_t = ExportFormat::Jsonl)]
        format: ExportFormat,
        /// Write here instead of stdout.
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
    },
}

/// The format of `tascer sessions export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One Claude Code transcript line per user and assistant message.
    Jsonl,
    /// The stored messages, one JSON array.
    Json,
    /// A readable conversation.
    Markdown,
}
