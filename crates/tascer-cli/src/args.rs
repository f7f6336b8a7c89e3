//! Command-line arguments. Flags that Claude Code's print mode (`claude -p`)
//! also has keep its names and meanings.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    Mcp(crate::mcp_cmds::McpArgs),
    /// Answer one Claude Code hook event (JSON on standard input) with
    /// Tascer's governance, and record it in the session's ledger.
    Hook,
    /// Put `tascer hook` and `tascer mcp serve` into another tool's settings.
    Install(InstallArgs),
    /// Take out what `tascer install` put in.
    Uninstall(InstallArgs),
    /// Contracts: markdown task files run as governed agent sessions (run, status).
    Contracts(crate::contracts_cmds::ContractsArgs),
    /// Archive a session (working directory, ledger, evidence, attestation, signed
    /// manifest) to S3 or a directory; list, verify and fetch archives.
    Archive(crate::archive_cmds::ArchiveArgs),
    /// Webhooks (settings `webhooks`): deliver the waiting hook events, or show the outbox.
    Webhook(crate::webhook_cmds::WebhookArgs),
}

/// Arguments of `tascer install` / `tascer uninstall`.
#[derive(Debug, Clone, Args)]
pub struct InstallArgs {
    /// The tool: `claude-code`.
    #[arg(value_parser = ["claude-code"])]
    pub tool: String,
    /// This project's `.claude/settings.json` and `.mcp.json` (the default).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// The user's `~/.claude/settings.json` and `~/.claude.json`.
    #[arg(long)]
    pub user: bool,
}

/// `tascer keys …`
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Generate the signing key pair under the Tascer home (`keys/`).
    Generate {
        /// Replace an existing key pair (the old private key is lost).
        #[arg(long)]
        force: bool,
    },
}

/// Arguments of `tascer verify`.
#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// Session id to verify.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub session: Option<String>,
    /// Verify every session that has ledger entries.
    #[arg(long)]
    pub all: bool,
    /// Trusted public key (SPKI PEM or 64 hex digits); default: the home's public key.
    #[arg(long, value_name = "PUBKEY_PEM")]
    pub key: Option<PathBuf>,
    /// Print the verification reports as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Output formats of `tascer report`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// A summary for people.
    #[default]
    Text,
    /// The report data as JSON.
    Json,
}

/// Arguments of `tascer report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Session id.
    pub session: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
}

/// Arguments of `tascer export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// Session id.
    pub session: String,
    /// Export an in-toto attestation (Statement v1 in a DSSE envelope); the only format so far.
    #[arg(long, required = true)]
    pub attestation: bool,
    /// Output file (`-` for standard output); default `<session>.intoto.jsonl`.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

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

/// Output formats, as in `claude -p --output-format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Streaming text for people.
    #[default]
    Text,
    /// One JSON object: the result.
    Json,
    /// One JSON object per line for every message.
    StreamJson,
}

/// Arguments of `tascer run`.
#[derive(Debug, Clone, Default, Args)]
pub struct RunArgs {
    /// The prompt; read from standard input when absent.
    pub prompt: Option<String>,
    /// Print mode (accepted for `claude -p` compatibility; `tascer run` always prints).
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,
    /// Model id (default: claude-sonnet-4-5, or gpt-4o-mini for OpenAI-compatible servers; env TASCER_MODEL).
    #[arg(long)]
    pub model: Option<String>,
    /// Model to switch to after repeated overload errors.
    #[arg(long)]
    pub fallback_model: Option<String>,
    /// Stop after this many model calls.
    #[arg(long)]
    pub max_turns: Option<u32>,
    /// Stop once the session has cost this much (USD).
    #[arg(long)]
    pub max_budget_usd: Option<f64>,
    /// Compact the conversation (the model summarizes it) once a model
    /// call's input reaches this many tokens.
    #[arg(long, value_name = "TOKENS")]
    pub auto_compact_tokens: Option<u64>,
    /// Resume a session by id.
    #[arg(short = 'r', long)]
    pub resume: Option<String>,
    /// Continue the most recent session in the working directory.
    #[arg(short = 'c', long = "continue")]
    pub continue_: bool,
    /// With --resume/--continue, copy the session into a new one.
    #[arg(long)]
    pub fork_session: bool,
    /// Use this UUID for the new session.
    #[arg(long)]
    pub session_id: Option<String>,
    /// Working directory for the session.
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Replace the default system prompt.
    #[arg(long)]
    pub system_prompt: Option<String>,
    /// Append to the default system prompt.
    #[arg(long)]
    pub append_system_prompt: Option<String>,
    /// Tools auto-approved (Claude Code rule syntax; comma- or space-separated).
    #[arg(long = "allowedTools", alias = "allowed-tools", num_args = 1..)]
    pub allowed_tools: Vec<String>,
    /// Tools removed from the model's context (comma- or space-separated).
    #[arg(long = "disallowedTools", alias = "disallowed-tools", num_args = 1..)]
    pub disallowed_tools: Vec<String>,
    /// Only offer these built-in tools (comma-separated; "" for none).
    #[arg(long, value_delimiter = ',')]
    pub tools: Option<Vec<String>>,
    /// Emit stream_event messages (with --output-format stream-json).
    #[arg(long)]
    pub include_partial_messages: bool,
    /// Accepted for `claude -p` compatibility (stream-json is always complete).
    #[arg(long)]
    pub verbose: bool,
    /// Permission mode: default, acceptEdits, plan, bypassPermissions, dontAsk
    /// (default: the settings' permissions.defaultMode, else default).
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,
    /// Same as --permission-mode bypassPermissions (deny rules, policies and hooks still apply).
    #[arg(long)]
    pub dangerously_skip_permissions: bool,
    /// Extra settings, highest precedence: a JSON file path or inline JSON.
    #[arg(long, value_name = "FILE_OR_JSON")]
    pub settings: Option<String>,
    /// Settings files to read, comma-separated: user, project, local (default: all; "" for none).
    #[arg(long, value_delimiter = ',', value_name = "SOURCES")]
    pub setting_sources: Option<Vec<String>>,
    /// Also read Claude Code's .claude/settings.json, .claude/settings.local.json and ~/.claude/settings.json.
    #[arg(long)]
    pub claude_settings: bool,
    /// Further directories the file tools may use.
    #[arg(long = "add-dir", value_name = "DIR", num_args = 1..)]
    pub add_dir: Vec<PathBuf>,
    /// MCP servers: JSON files or inline JSON strings in .mcp.json shape ({"mcpServers": {...}}).
    #[arg(long = "mcp-config", value_name = "FILE_OR_JSON", num_args = 1..)]
    pub mcp_config: Vec<String>,
    /// Use only the servers of --mcp-config (ignore .mcp.json and settings files).
    #[arg(long)]
    pub strict_mcp_config: bool,
    /// Structured output: the final answer must be JSON valid against this
    /// JSON Schema (a file path or inline JSON); the result carries
    /// `structured_output`. Fix requests: env MAX_STRUCTURED_OUTPUT_RETRIES (default 3).
    #[arg(long, value_name = "FILE_OR_JSON")]
    pub json_schema: Option<String>,
    /// Subagents for the Task tool as JSON (Claude Code's --agents):
    /// {"name": {"description": …, "prompt": …, "tools": […], "model": …}}.
    #[arg(long, value_name = "JSON")]
    pub agents: Option<String>,
    /// Longest wait for the model provider: for the response to a request,
    /// and between two events of a streamed answer (default 600). A timeout
    /// is retried like a server error. Connecting waits at most 10 s.
    #[arg(long, value_name = "SECONDS", env = "TASCER_REQUEST_TIMEOUT", value_parser = parse_seconds)]
    pub request_timeout: Option<std::time::Duration>,
    /// Offer the ExecuteContracts tool (a manager session): it runs the pending
    /// contracts of DIR (default `contracts`) and returns their summary.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "contracts")]
    pub execute_contracts: Option<PathBuf>,
}

/// A positive number of seconds (fractions allowed), as a duration.
fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 || secs > 86_400.0 {
        return Err(format!(
            "{text:?} is out of range: give more than 0 and at most 86400 seconds"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

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
