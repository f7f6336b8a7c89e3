//! `tascer mcp serve|list|login|logout`.

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
    /// Log in to an OAuth-protected HTTP server: opens the authorization page ($BROWSER, else
    /// xdg-open/open), waits for the redirect to a loopback listener, stores the tokens
    /// (mode 0600 under <tascer home>/mcp-auth).
    Login(LoginArgs),
    /// Forget the stored OAuth tokens of a server.
    Logout(LogoutArgs),
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
