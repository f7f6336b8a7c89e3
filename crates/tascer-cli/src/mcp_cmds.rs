//! `tascer mcp serve` and `tascer mcp list`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};
use tascer::mcp::{
    HttpServer, McpManager, McpOptions, McpServerConfig, McpStatus, conformance_spec,
    load_mcp_servers_with_sources, serve_stdio,
};

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

/// The environment variable holding the HTTP server's bearer token.
pub const TOKEN_ENV: &str = "TASCER_MCP_TOKEN";

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

/// Runs `tascer mcp …`.
pub async fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        McpCommand::Serve(args) => serve(args).await,
        McpCommand::List(args) => list(args).await,
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let cwd = match args.cwd {
        Some(c) => c,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let spec = if args.conformance {
        conformance_spec(tascer::VERSION)
    } else {
        tascer_gatekeeper::server_spec(cwd, tascer::tascer_home())
    };
    match args.transport {
        Transport::Stdio => serve_stdio(spec).await?,
        Transport::Http => {
            let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty());
            if token.is_none() && !args.bind.is_loopback() {
                anyhow::bail!(
                    "refusing to serve on {} without authentication: anyone who can reach \
                     the port could commit and push. Set {TOKEN_ENV} to a secret; clients \
                     then send `Authorization: Bearer <token>`",
                    args.bind
                );
            }
            let authenticated = token.is_some();
            let addr = SocketAddr::new(args.bind, args.port);
            let server = HttpServer::bind_with_token(spec, addr, token).await?;
            eprintln!(
                "tascer mcp serve: listening on {}{}",
                server.url(),
                if authenticated {
                    " (bearer token required)"
                } else {
                    ""
                }
            );
            let _ = tokio::signal::ctrl_c().await;
            server.shutdown();
            server.wait().await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A short description of how a server is reached.
fn transport_text(config: &McpServerConfig) -> String {
    match config {
        McpServerConfig::Stdio { command, args, .. } => {
            let mut text = format!("stdio: {command}");
            for a in args {
                text.push(' ');
                text.push_str(a);
            }
            text
        }
        McpServerConfig::Http { url, .. } => format!("http: {url}"),
        McpServerConfig::Sse { url, .. } => format!("sse: {url}"),
        McpServerConfig::Sdk { name } => format!("sdk: {name}"),
    }
}

async fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let home = tascer::tascer_home();
    let servers =
        load_mcp_servers_with_sources(&cwd, &home, &args.mcp_config, args.strict_mcp_config)?;
    if servers.is_empty() {
        if args.json {
            println!("[]");
        } else {
            println!(
                "no MCP servers configured (looked at {}, {}/.mcp.json, .tascer/settings.json, \
                 .tascer/settings.local.json and --mcp-config)",
                home.join("settings.json").display(),
                cwd.display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    // In-process (sdk) servers exist only inside an SDK program.
    let configs = servers
        .iter()
        .filter(|(_, (c, _))| !matches!(c, McpServerConfig::Sdk { .. }))
        .map(|(name, (c, _))| (name.clone(), c.clone()))
        .collect();
    let manager = McpManager::connect_with(configs, McpOptions::default()).await;
    let statuses = manager.statuses();
    let mut failed = false;
    let mut rows = Vec::new();
    for (name, (config, source)) in &servers {
        let status = statuses.iter().find(|s| &s.name == name);
        let (state, error, tools, info) = match (config, status) {
            (McpServerConfig::Sdk { .. }, _) => (
                "skipped".to_owned(),
                Some("in-process (sdk) server: it exists only inside an SDK program".to_owned()),
                Vec::new(),
                None,
            ),
            (_, Some(s)) => {
                let state = match s.status {
                    McpStatus::Connected => "connected",
                    McpStatus::Failed => "failed",
                    McpStatus::Pending => "pending",
                };
                (
                    state.to_owned(),
                    s.error.clone(),
                    s.tools.clone(),
                    s.server_info.clone(),
                )
            }
            (_, None) => (
                "failed".to_owned(),
                Some("not started".to_owned()),
                Vec::new(),
                None,
            ),
        };
        failed |= state == "failed" || state == "pending";
        rows.push(json!({
            "name": name,
            "status": state,
            "error": error,
            "transport": transport_text(config),
            "source": source.to_string(),
            "server_info": info,
            "tools": tools,
        }));
    }
    drop(manager);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&Value::Array(rows))?);
    } else {
        for row in &rows {
            let status = row["status"].as_str().unwrap_or_default();
            let mark = match status {
                "connected" => "✓",
                "skipped" => "-",
                _ => "✗",
            };
            println!(
                "{mark} {}  {status}  ({}; from {})",
                row["name"].as_str().unwrap_or_default(),
                row["transport"].as_str().unwrap_or_default(),
                row["source"].as_str().unwrap_or_default()
            );
            if let Some(error) = row["error"].as_str() {
                println!("    error: {error}");
            }
            if status == "connected" {
                let tools: Vec<&str> = row["tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                if tools.is_empty() {
                    println!("    tools: none");
                } else {
                    println!("    tools ({}): {}", tools.len(), tools.join(", "));
                }
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
