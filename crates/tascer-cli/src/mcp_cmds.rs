//! `tascer mcp serve` and `tascer mcp list` (login/logout: `mcp_login`).

use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::{Value, json};
use tascer::mcp::{
    HttpServer, McpManager, McpOptions, McpServerConfig, conformance_spec,
    load_mcp_servers_with_sources, serve_stdio,
};

use crate::args::{ListArgs, McpArgs, McpCommand, ServeArgs, Transport};

/// The environment variable holding the HTTP server's bearer token.
pub const TOKEN_ENV: &str = "TASCER_MCP_TOKEN";

/// Runs `tascer mcp …`.
pub async fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        McpCommand::Serve(args) => serve(args).await,
        McpCommand::List(args) => list(args).await,
        McpCommand::Add(args) => crate::mcp_manage::add(args),
        McpCommand::AddJson(args) => crate::mcp_manage::add_json(args),
        McpCommand::Remove(args) => crate::mcp_manage::remove(args),
        McpCommand::Get(args) => crate::mcp_manage::get(args).await,
        McpCommand::Login(args) => crate::mcp_login::run_login(args).await,
        McpCommand::Logout(args) => crate::mcp_login::run_logout(args),
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
            (_, Some(s)) => (
                s.status.as_str().to_owned(),
                s.error.clone(),
                s.tools.clone(),
                s.server_info.clone(),
            ),
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
            "transport": crate::mcp_manage::transport_text(config),
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
