//! `tascer webhook`.

use clap::{Args, Subcommand};

/// Arguments of `tascer webhook`.
#[derive(Debug, Args)]
pub struct WebhookArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: WebhookCommand,
}

/// `tascer webhook …`
#[derive(Debug, Subcommand)]
pub enum WebhookCommand {
    /// Deliver the waiting hook events (retrying failed ones as their
    /// backoff comes due) until none waits; does nothing while another
    /// flusher runs. `tascer hook` starts one in the background.
    Flush {
        /// Print nothing (as when started in the background).
        #[arg(long)]
        quiet: bool,
        /// Print the outcome as JSON.
        #[arg(long, conflicts_with = "quiet")]
        json: bool,
    },
    /// Show how many events wait, whether a flusher runs, and the drops.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}
