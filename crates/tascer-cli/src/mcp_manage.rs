//! `tascer mcp add|add-json|remove|get`: the server configuration in
//! Claude Code's shapes and scopes (`.tascer/settings.local.json`,
//! `.mcp.json`, `<tascer home>/settings.json`).

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::{Value, json};
use tascer::mcp::oauth::OAuthConfig;
use tascer::mcp::{
    McpManager, McpOptions, McpScope, McpServerConfig, McpStatus, McpToolPermissions,
    add_mcp_server, load_mcp_servers_with_sources, parse_mcp_config_str, remove_mcp_server,
};

use crate::args::{AddArgs, AddJsonArgs, AddTransport, GetArgs, RemoveArgs, Scope};

fn scope(s: Scope) -> McpScope {
    match s {
        Scope::Local => McpScope::Local,
        Scope::Project => McpScope::Project,
        Scope::User => McpScope::User,
    }
}

fn cwd() -> anyhow::Result<std::path::PathBuf> {
    std::env::current_dir().context("cannot read the current directory")
}

fn pairs(
    items: &[String],
    separator: char,
    what: &str,
) -> anyhow::Result<BTreeMap<String, String>> {
    items
        .iter()
        .map(|item| {
            let (k, v) = item
                .split_once(separator)
                .with_context(|| format!("{what} {item:?}: expected NAME{separator}VALUE"))?;
            Ok((k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect()
}

fn config_of(args: &AddArgs) -> anyhow::Result<McpServerConfig> {
    let remote = args.transport != AddTransport::Stdio;
    if remote && !args.env.is_empty() {
        anyhow::bail!("--env is for stdio servers; remote servers take --header");
    }
    if !remote && (!args.header.is_empty() || args.client_id.is_some()) {
        anyhow::bail!("--header and --client-id are for http and sse servers");
    }
    if remote && !args.args.is_empty() {
        anyhow::bail!(
            "a {} server takes a URL, not arguments",
            transport_name(args)
        );
    }
    let headers = pairs(&args.header, ':', "header")?;
    let permissions = McpToolPermissions {
        allow: args.allow_tool.clone(),
        ask: args.ask_tool.clone(),
        deny: args.deny_tool.clone(),
    };
    permissions.validate().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(match args.transport {
        AddTransport::Stdio => McpServerConfig::Stdio {
            command: args.command_or_url.clone(),
            args: args.args.clone(),
            env: pairs(&args.env, '=', "--env")?,
            permissions,
        },
        AddTransport::Http => {
            let oauth = (args.client_id.is_some() || args.callback_port.is_some()).then(|| {
                let mut oauth = OAuthConfig::default();
                oauth.client_id = args.client_id.clone();
                oauth.callback_port = args.callback_port;
                Box::new(oauth)
            });
            McpServerConfig::Http {
                url: args.command_or_url.clone(),
                headers,
                oauth,
                permissions,
            }
        }
        AddTransport::Sse => McpServerConfig::Sse {
            url: args.command_or_url.clone(),
            headers,
            permissions,
        },
    })
}

fn transport_name(args: &AddArgs) -> &'static str {
    match args.transport {
        AddTransport::Stdio => "stdio",
        AddTransport::Http => "http",
        AddTransport::Sse => "sse",
    }
}

fn added(name: &str, s: McpScope, path: &std::path::Path) -> ExitCode {
    println!(
        "added MCP server '{name}' to {} ({} scope)",
        path.display(),
        s.as_str()
    );
    ExitCode::SUCCESS
}

/// `tascer mcp add`.
pub fn add(args: AddArgs) -> anyhow::Result<ExitCode> {
    let config = config_of(&args)?;
    let s = scope(args.scope);
    let path = add_mcp_server(s, &cwd()?, &tascer::tascer_home(), &args.name, &config)?;
    Ok(added(&args.name, s, &path))
}

/// `tascer mcp add-json`.
pub fn add_json(args: AddJsonArgs) -> anyhow::Result<ExitCode> {
    let wrapped = json!({"mcpServers": {&args.name: serde_json::from_str::<Value>(&args.json)
        .context("the server entry is not JSON")?}});
    let mut parsed = parse_mcp_config_str(&wrapped.to_string())?;
    let config = parsed
        .remove(&args.name)
        .context("the server entry was not read")?;
    let s = scope(args.scope);
    let path = add_mcp_server(s, &cwd()?, &tascer::tascer_home(), &args.name, &config)?;
    Ok(added(&args.name, s, &path))
}

/// `tascer mcp remove`.
pub fn remove(args: RemoveArgs) -> anyhow::Result<ExitCode> {
    let (cwd, home) = (cwd()?, tascer::tascer_home());
    let scopes: Vec<McpScope> = match args.scope {
        Some(s) => vec![scope(s)],
        None => {
            let found: Vec<McpScope> = McpScope::ALL
                .into_iter()
                .filter(|s| {
                    tascer::mcp::parse_mcp_config(&s.path(&cwd, &home).display().to_string())
                        .is_ok_and(|servers| servers.contains_key(&args.name))
                })
                .collect();
            if found.len() > 1 {
                let names: Vec<&str> = found.iter().map(|s| s.as_str()).collect();
                anyhow::bail!(
                    "MCP server '{}' is in several scopes ({}): choose one with --scope",
                    args.name,
                    names.join(", ")
                );
            }
            found
        }
    };
    for s in scopes {
        if let Some(path) = remove_mcp_server(s, &cwd, &home, &args.name)? {
            println!(
                "removed MCP server '{}' from {} ({} scope)",
                args.name,
                path.display(),
                s.as_str()
            );
            return Ok(ExitCode::SUCCESS);
        }
    }
    eprintln!("tascer mcp remove: no MCP server named '{}'", args.name);
    Ok(ExitCode::FAILURE)
}

/// The entry as shown by `get`: header values hidden (they often hold
/// credentials).
fn shown(config: &McpServerConfig) -> Value {
    let mut value = serde_json::to_value(config).unwrap_or(Value::Null);
    if let Some(headers) = value.get_mut("headers").and_then(Value::as_object_mut) {
        for v in headers.values_mut() {
            *v = json!("<hidden>");
        }
    }
    if let Some(oauth) = value.get_mut("oauth").and_then(Value::as_object_mut) {
        for key in [
            "clientSecret",
            "privateKeyPem",
            "idToken",
            "idpClientSecret",
        ] {
            if oauth.contains_key(key) {
                oauth.insert(key.into(), json!("<hidden>"));
            }
        }
    }
    value
}

/// `tascer mcp get`.
pub async fn get(args: GetArgs) -> anyhow::Result<ExitCode> {
    let (cwd, home) = (cwd()?, tascer::tascer_home());
    let servers = load_mcp_servers_with_sources(&cwd, &home, &[], false)?;
    let Some((config, source)) = servers.get(&args.name) else {
        eprintln!("tascer mcp get: no MCP server named '{}'", args.name);
        return Ok(ExitCode::FAILURE);
    };
    let (status, error, tools) = if matches!(config, McpServerConfig::Sdk { .. }) {
        ("skipped".to_owned(), None, Vec::new())
    } else {
        let manager = McpManager::connect_with(
            [(args.name.clone(), config.clone())].into(),
            McpOptions {
                oauth: tascer::mcp::oauth::OAuthOptions {
                    token_dir: Some(tascer::mcp_token_dir(&home)),
                    ..Default::default()
                },
                ..McpOptions::default()
            },
        )
        .await;
        let s = manager.statuses().into_iter().next();
        match s {
            Some(s) => (s.status.as_str().to_owned(), s.error, s.tools),
            None => (
                "failed".to_owned(),
                Some("not started".to_owned()),
                Vec::new(),
            ),
        }
    };
    let row = json!({
        "name": args.name,
        "source": source.to_string(),
        "transport": transport_text(config),
        "config": shown(config),
        "status": status,
        "error": error,
        "tools": tools,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&row)?);
    } else {
        println!("{}:", args.name);
        println!("  source: {source}");
        println!("  {}", transport_text(config));
        println!("  config: {}", row["config"]);
        println!("  status: {status}");
        if let Some(error) = &error {
            println!("  error: {error}");
        }
        if !tools.is_empty() {
            println!("  tools ({}): {}", tools.len(), tools.join(", "));
        }
        if let Some(p) = config.tool_permissions() {
            for (list, entries) in [("allow", &p.allow), ("ask", &p.ask), ("deny", &p.deny)] {
                if !entries.is_empty() {
                    println!("  {list}: {}", entries.join(", "));
                }
            }
        }
    }
    Ok(
        if status == McpStatus::Connected.as_str() || status == "skipped" {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}

/// A short description of how a server is reached.
pub(crate) fn transport_text(config: &McpServerConfig) -> String {
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
        // A transport this command does not know yet.
        _ => "other".to_string(),
    }
}
