//! Command-line arguments: every clap type of the `tascer` command line,
//! one file per command. Flags that Claude Code's print mode (`claude -p`)
//! also has keep its names and meanings. The command modules import these;
//! nothing here imports them.

mod archive;
mod audit;
mod contracts;
mod demo;
mod install;
mod ledger;
mod mcp;
mod policy;
mod replay;
mod run;
mod sandbox;
mod serve;
mod sessions;
mod webhook;

use clap::{Parser, Subcommand};

pub use archive::{ArchiveArgs, ArchiveCommand};
pub use audit::{AuditCommand, AuditQueryArgs};
pub use contracts::{
    ContractsArgs, ContractsCommand, ContractsInitArgs, ContractsMergeArgs, ContractsRunArgs,
    ContractsStatusArgs, EnqueueArgs, QueueArgs, WorkerArgs,
};
pub use demo::{DemoArgs, DemoTopic};
pub use install::InstallArgs;
pub use ledger::{ExportArgs, KeysCommand, ReportArgs, ReportFormat, VerifyArgs};
pub use mcp::{
    AddArgs, AddJsonArgs, AddTransport, GetArgs, ListArgs, LoginArgs, LogoutArgs, McpArgs,
    McpCommand, RemoveArgs, Scope, ServeArgs, Transport,
};
pub use policy::{PolicyCheckArgs, PolicyCommand};
pub use replay::ReplayArgs;
pub use run::{PrintFormat, RunArgs};
pub use sandbox::{SandboxArgs, SandboxCli};
pub use serve::ViewerArgs;
pub use sessions::{ExportFormat, SessionsCommand};
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

/// One-word prompts that read as a command of some CLI (Tascer's, Claude
/// Code's, the usual ones) though Tascer has no such subcommand.
const COMMAND_WORDS: &[&str] = &[
    "help",
    "version",
    "status",
    "init",
    "list",
    "ls",
    "config",
    "doctor",
    "update",
    "login",
    "logout",
    "setup-token",
    "start",
    "stop",
    "resume",
    "continue",
    "show",
    "check",
];

impl Cli {
    /// The prompt of `tascer WORD` (no subcommand, no `-p`) when it is one
    /// word that reads like a command: a subcommand's name mistyped (`tascer
    /// agnet`, `tascer verfy`) or a usual command word (`tascer status`).
    /// Taken as a prompt it would start a paid model call, so the command
    /// refuses it and says how to send it on purpose.
    pub fn command_like_prompt(&self) -> Option<&str> {
        if self.command.is_some() || self.run.print {
            return None;
        }
        let prompt = self.run.prompt.as_deref()?;
        let word = prompt.trim().to_ascii_lowercase();
        if word.is_empty() || word.contains(char::is_whitespace) {
            return None;
        }
        let close =
            |name: &str| word == name || (word.len() >= 4 && strsim::levenshtein(&word, name) <= 2);
        let command = <Cli as clap::CommandFactory>::command();
        let mut names = command
            .get_subcommands()
            .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()));
        (names.any(close) || COMMAND_WORDS.contains(&word.as_str())).then_some(prompt)
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a prompt as an agent session (streams the answer; ends with a summary line).
    #[command(visible_alias = "agent")]
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
    /// Query the audit tables: who allowed or denied which tool call, when, across sessions.
    Audit {
        /// What to ask.
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Policies: what new settings would have done to recorded sessions' tool calls.
    Policy {
        /// What to do.
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Re-run a recorded session offline: answers from the record, tools for real in a
    /// scratch copy of its starting tree; reports where it diverges (exit 1) or not (0).
    Replay(ReplayArgs),
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
    /// Serve a local, read-only web page and JSON API over the recorded sessions
    /// (loopback, token-protected).
    Serve(ViewerArgs),
    /// Run a command under the OS sandbox (Landlock, seccomp): writes only in the
    /// workspace, secrets unreadable, no network unless allowed.
    Sandbox(Box<SandboxArgs>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("tascer").chain(args.iter().copied())).expect("parses")
    }

    #[test]
    fn agent_is_the_run_command() {
        let cli = parse(&["agent", "fix the bug"]);
        match cli.command {
            Some(Command::Run(args)) => assert_eq!(args.prompt.as_deref(), Some("fix the bug")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_word_that_reads_like_a_command_is_not_taken_as_a_prompt() {
        assert_eq!(parse(&["agnet"]).command_like_prompt(), Some("agnet"));
        assert_eq!(parse(&["verfy"]).command_like_prompt(), Some("verfy"));
        assert_eq!(parse(&["status"]).command_like_prompt(), Some("status"));
        // What is clearly a prompt, or sent on purpose, goes through.
        assert_eq!(parse(&["fix the failing test"]).command_like_prompt(), None);
        assert_eq!(parse(&["hello"]).command_like_prompt(), None);
        assert_eq!(parse(&["go"]).command_like_prompt(), None);
        assert_eq!(parse(&["-p", "status"]).command_like_prompt(), None);
        assert_eq!(parse(&["run", "status"]).command_like_prompt(), None);
    }
}
