//! `tascer sessions`.

use clap::Subcommand;

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
}
