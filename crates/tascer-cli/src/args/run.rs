//! `tascer run` (and `tascer` without a subcommand): Claude Code's print-mode
//! flags.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// How a run is printed: `--output-format`, as in `claude -p`. (Not the
/// SDK's structured `output_format`, which is `tascer::OutputFormat`.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum PrintFormat {
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
    #[arg(long, value_enum, default_value_t = PrintFormat::Text)]
    pub output_format: PrintFormat,
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
    /// With --resume/--continue: continue from the conversation up to and
    /// including this message (its uuid), in a new session forked there.
    #[arg(long, value_name = "UUID")]
    pub resume_session_at: Option<String>,
    /// With --resume-session-at: the prompt whose turn the cut drops; the
    /// resume is refused when it would drop anything else.
    #[arg(long, value_name = "UUID")]
    pub resume_drops_turn: Option<String>,
    /// Load a plugin directory (repeatable): its commands, skills, agents,
    /// hooks and MCP servers (docs/plugins.md).
    #[arg(long, value_name = "DIR")]
    pub plugin_dir: Vec<PathBuf>,
    /// Load a plugin directory without its MCP servers (repeatable).
    #[arg(long, value_name = "DIR")]
    pub plugin_dir_no_mcp: Vec<PathBuf>,
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
    /// Permission mode: default, acceptEdits, plan, bypassPermissions, dontAsk,
    /// auto (the safe profile: nobody is asked; the reviewers answer or the
    /// call is refused) (default: the settings' permissions.defaultMode, else
    /// default).
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
    /// Refuse MCP servers' sampling requests (by default the session's model answers them,
    /// recorded in the ledger as model calls).
    #[arg(long)]
    pub refuse_mcp_sampling: bool,
    /// Environment variables each tool call's context records (never any
    /// other), comma-separated; default: the settings' `validation.env_allowlist`,
    /// else Tascer's list.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub env_allowlist: Option<Vec<String>>,
    /// Record the git state in each tool call's context (default: the
    /// settings' `validation.capture_git_state`, else true).
    #[arg(long, value_name = "BOOL")]
    pub capture_git_state: Option<bool>,
    /// Seal each tool record with its proof hash (default: the settings'
    /// `validation.generate_proofs`, else true).
    #[arg(long, value_name = "BOOL")]
    pub generate_proofs: Option<bool>,
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
    /// The session's provider: anthropic, anthropic-oauth, openrouter or
    /// openai (default: from the environment; with --execute-contracts an
    /// OpenAI-compatible one such as OpenRouter is preferred for the manager).
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// With --execute-contracts: the contractors' provider (default: from
    /// the environment, Anthropic preferred).
    #[arg(long, value_name = "NAME", env = "TASCER_CONTRACTOR_PROVIDER")]
    pub contractor_provider: Option<String>,
    /// With --execute-contracts: the contractors' model for contracts that
    /// name none (aliases sonnet, opus, haiku).
    #[arg(long, value_name = "MODEL", env = "TASCER_CONTRACTOR_MODEL")]
    pub contractor_model: Option<String>,
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
