//! `tascer mcp serve|list|add|add-json|remove|get|login|logout`.

use std::net::{IpAddr, Ipv4Addr};

use clap::{Args, Subcommand, ValueEnum};

/// Arguments of `tascer mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: McpCommand,
}

/// `tascer mcp …`
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Serve Tascer's tools (check, confirm, commit, push, validate_intent, sessions) to MCP clients.
    Serve(ServeArgs),
    /// Connect every configured MCP server and list its status and tools (exit 1 if any failed).
    List(ListArgs),
    /// Add a server to the configuration (Claude Code's `claude mcp add`): `NAME COMMAND
    /// [ARGS…]` for stdio, `--transport http|sse NAME URL` for remote servers.
    Add(AddArgs),
    /// Add a server given as JSON in `.mcp.json` shape (`{"type": …}`).
    AddJson(AddJsonArgs),
    /// Remove a server from the configuration (from --scope, else from the one scope that has it).
    Remove(RemoveArgs),
    /// Show one server: where it is configured, how it is reached, and whether it connects.
    Get(GetArgs),
    /// Log in to an OAuth-protected HTTP server: opens the authorization page ($BROWSER, else
    /// xdg-open/open), waits for the redirect to a loopback listener, stores the tokens
    /// (mode 0600 under <tascer home>/mcp-auth).
    Login(LoginArgs),
    /// Forget the stored OAuth tokens of a server.
    Logout(LogoutArgs),
}

/// Where `tascer mcp add` writes (Claude Code's scopes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// Yours, in this project: .tascer/settings.local.json.
    #[default]
    Local,
    /// Shared with the project: .mcp.json.
    Project,
    /// Yours, in every project: <tascer home>/settings.json.
    User,
}

/// Transports of `tascer mcp add`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum AddTransport {
    /// A command speaking JSON-RPC on stdin/stdout.
    #[default]
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE.
    Sse,
}

/// Arguments of `tascer mcp add`.
#[derive(Debug, Clone, Args)]
pub struct AddArgs {
    /// Where to write it.
    #[arg(short = 's', long, value_enum, default_value_t = Scope::Local)]
    pub scope: Scope,
    /// How the server is reached.
    #[arg(short = 't', long, value_enum, default_value_t = AddTransport::Stdio)]
    pub transport: AddTransport,
    /// Environment variable for a stdio server (KEY=value; repeatable).
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// HTTP header for a remote server ("Name: value"; repeatable).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub header: Vec<String>,
    /// Pre-registered OAuth client ID (remote servers).
    #[arg(long)]
    pub client_id: Option<String>,
    /// Fixed port of the OAuth loopback redirect (remote servers).
    #[arg(long)]
    pub callback_port: Option<u16>,
    /// A tool of this server that runs without asking (its name as the
    /// server lists it, or `*`; repeatable): `permissions.allow`.
    #[arg(long = "allow-tool", value_name = "TOOL")]
    pub allow_tool: Vec<String>,
    /// A tool that is always asked for (repeatable): `permissions.ask`.
    #[arg(long = "ask-tool", value_name = "TOOL")]
    pub ask_tool: Vec<String>,
    /// A tool that never runs and is not offered to the model
    /// (repeatable): `permissions.deny`.
    #[arg(long = "deny-tool", value_name = "TOOL")]
    pub deny_tool: Vec<String>,
    /// The server's name.
    pub name: String,
    /// The command (stdio) or URL (http, sse).
    pub command_or_url: String,
    /// The command's arguments (after `--` when they start with `-`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Arguments of `tascer mcp add-json`.
#[derive(Debug, Clone, Args)]
pub struct AddJsonArgs {
    /// Where to write it.
    #[arg(short = 's', long, value_enum, default_value_t = Scope::Local)]
    pub scope: Scope,
    /// The server's name.
    pub name: String,
    /// The entry, e.g. '{"type":"http","url":"https://…/mcp"}'.
    pub json: String,
}

/// Arguments of `tascer mcp remove`.
#[derive(Debug, Clone, Args)]
pub struct RemoveArgs {
    /// The scope to remove it from (default: the one scope that has it).
    #[arg(short = 's', long, value_enum)]
    pub scope: Option<Scope>,
    /// The server's name.
    pub name: String,
}

/// Arguments of `tascer mcp get`.
#[derive(Debug, Clone, Args)]
pub struct GetArgs {
    /// The server's name.
    pub name: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tascer mcp login`.
#[derive(Debug, Clone, Args)]
pub struct LoginArgs {
    /// The server's name in the MCP configuration.
    pub server: String,
    /// More servers: JSON files or inline JSON strings in .mcp.json shape.
    #[arg(long = "mcp-config", value_name = "FILE_OR_JSON", num_args = 1..)]
    pub mcp_config: Vec<String>,
    /// Use only the servers of --mcp-config.
    #[arg(long)]
    pub strict_mcp_config: bool,
    /// Command that opens the authorization URL (the URL is appended); default $BROWSER,
    /// else xdg-open (open on macOS).
    #[arg(long, value_name = "COMMAND")]
    pub browser: Option<String>,
    /// Seconds to wait for the redirect back.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
}

/// Arguments of `tascer mcp logout`.
#[derive(Debug, Clone, Args)]
pub struct LogoutArgs {
    /// The server's name.
    pub server: String,
}

/// Transports of `tascer mcp serve`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// JSON-RPC over standard input/output (for a client that spawns the server).
    #[default]
    Stdio,
    /// Streamable HTTP at http://BIND:PORT/mcp.
    Http,
}

/// Arguments of `tascer mcp serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Transport.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    pub transport: Transport,
    /// Port for --transport http (0 picks a free one; the URL is printed on stderr).
    #[arg(long, default_value_t = 8750)]
    pub port: u16,
    /// Address for --transport http. An address other than loopback needs
    /// a bearer token in $TASCER_MCP_TOKEN.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind: IpAddr,
    /// Serve the MCP conformance suite's fixture tools, resources and prompts instead.
    #[arg(long)]
    pub conformance: bool,
    /// Default repository for the tools (default: the current directory).
    #[arg(long)]
    pub cwd: Option<std::path::PathBuf>,
}

/// Arguments of `tascer mcp list`.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// More servers: JSON files or inline JSON strings in .mcp.json shape ({"mcpServers": {...}}).
    #[arg(long = "mcp-config", value_name = "FILE_OR_JSON", num_args = 1..)]
    pub mcp_config: Vec<String>,
    /// Use only the servers of --mcp-config (ignore .mcp.json and settings files).
    #[arg(long)]
    pub strict_mcp_config: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}
