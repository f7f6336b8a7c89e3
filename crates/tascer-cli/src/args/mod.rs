//! Command-line arguments: every clap type of the `tascer` command line,
//! one file per command. Flags that Claude Code's print mode (`claude -p`)
//! also has keep its names and meanings. The command modules import these;
//! nothing here imports them.

mod archive;
mod contracts;
mod demo;
mod install;
mod ledger;
mod mcp;
mod run;
mod sessions;
mod webhook;

use clap::{Parser, Subcommand};

pub use archive::{ArchiveArgs, ArchiveCommand};
pub use contracts::{
    ContractsArgs, ContractsCommand, ContractsInitArgs, ContractsMergeArgs, ContractsRunArgs,
    ContractsStatusArgs, EnqueueArgs, QueueArgs, WorkerArgs,
};
pub use demo::{DemoArgs, DemoTopic};
pub use install::InstallArgs;
pub use ledger::{ExportArgs, KeysCommand, ReportArgs, ReportFormat, VerifyArgs};
pub use mcp::{ListArgs, McpArgs, McpCommand, ServeArgs, Transport};
pub use run::{PrintFormat, RunArgs};
pub use sessions::SessionsCommand;
pub use webhook::{WebhookArgs, WebhookCommand};

/// Tascer: a governed, provable agent runtime.
#[derive(Debug, Parser)]
#[command(
    name = "tascer",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do; without a subcommand, runs a prompt like `tascer run`.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `tascer -p "prompt"` works like `claude -p "prompt"`.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a prompt as an agent session (streams the answer; ends with a summary line).
    Run(Box<RunArgs>),
    /// Run a scripted session against a built-in mock model (no API key needed).
    Demo(DemoArgs),
    /// List and inspect stored sessions.
    Sessions {
        /// What to do with sessions.
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// Manage the Ed25519 key pair that signs session ledgers.
    Keys {
        /// What to do with keys.
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Verify sessions' ledgers: hashes, chain, evidence and head signature.
    Verify(VerifyArgs),
    /// Summarize a session from its ledger: tool calls, gates, proofs, head.
    Report(ReportArgs),
    /// Export a session as a signed attestation (in-toto Statement in a DSSE envelope).
    Export(ExportArgs),
    /// MCP: serve Tascer's tools to MCP clients, or list the configured MCP servers.
    Mcp(McpArgs),
    /// Answer one Claude Code hook event (JSON on standard input) with
    /// Tascer's governance, and record it in the session's ledger.
    Hook,
    /// Put `tascer hook` and `tascer mcp serve` into another tool's settings.
    Install(InstallArgs),
    /// Take out what `tascer install` put in.
    Uninstall(InstallArgs),
    /// Contracts: markdown task files run as governed agent sessions (run, status).
    Contracts(ContractsArgs),
    /// Archive a session (working directory, ledger, evidence, attestation, signed
    /// manifest) to S3 or a directory; list, verify and fetch archives.
    Archive(ArchiveArgs),
    /// Webhooks (settings `webhooks`): deliver the waiting hook events, or show the outbox.
    Webhook(WebhookArgs),
}
