//! `tascer mcp login` and `tascer mcp logout`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use futures::future::BoxFuture;
use tascer::mcp::oauth::{Browser, CommandBrowser, OAuthOptions, login, logout, token_file};
use tascer::mcp::{McpManager, McpOptions, McpServerConfig, McpStatus, load_mcp_servers};

use crate::args::{LoginArgs, LogoutArgs};

/// Says where to log in, then runs the browser command.
struct Announce(CommandBrowser, String);

impl Browser for Announce {
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            eprintln!(
                "tascer mcp login: to log in to '{}', open this page (trying the browser):\n  {url}",
                self.1
            );
            if let Err(e) = self.0.open(url).await {
                eprintln!("tascer mcp login: {e}; open the page yourself");
            }
            Ok(())
        })
    }
}

fn token_options(home: &std::path::Path) -> OAuthOptions {
    OAuthOptions {
        token_dir: Some(tascer::mcp_token_dir(home)),
        ..OAuthOptions::default()
    }
}

/// `tascer mcp login SERVER`.
pub async fn run_login(args: LoginArgs) -> anyhow::Result<ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let home = tascer::tascer_home();
    let servers = load_mcp_servers(&cwd, &home, &args.mcp_config, args.strict_mcp_config)?;
    let Some(config) = servers.get(&args.server) else {
        anyhow::bail!(
            "no MCP server named '{}' (see `tascer mcp list`)",
            args.server
        );
    };
    let McpServerConfig::Http { url, oauth, .. } = config else {
        anyhow::bail!(
            "'{}' is not an HTTP server: OAuth login is for servers of type http",
            args.server
        );
    };
    let browser = Announce(
        CommandBrowser {
            command: args.browser.clone(),
        },
        args.server.clone(),
    );
    let options = OAuthOptions {
        browser: Some(Arc::new(browser)),
        callback_timeout: Duration::from_secs(args.timeout),
        ..token_options(&home)
    };
    let scopes = login(&args.server, url, oauth.as_deref(), &options).await?;
    // The stored tokens must now open a session on their own.
    let manager = McpManager::connect_with(
        [(args.server.clone(), config.clone())].into(),
        McpOptions {
            oauth: token_options(&home),
            ..McpOptions::default()
        },
    )
    .await;
    let status = manager.statuses().into_iter().next();
    let scopes = if scopes.is_empty() {
        "no scopes".to_owned()
    } else {
        format!("scopes: {}", scopes.join(" "))
    };
    match status {
        Some(s) if s.status == McpStatus::Connected => {
            println!(
                "logged in to '{}' ({scopes}); {} tools",
                args.server,
                s.tools.len()
            );
            Ok(ExitCode::SUCCESS)
        }
        other => {
            let error = other.and_then(|s| s.error).unwrap_or_default();
            eprintln!(
                "tascer mcp login: logged in to '{}' ({scopes}), but connecting failed: {error}",
                args.server
            );
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `tascer mcp logout SERVER`.
pub fn run_logout(args: LogoutArgs) -> anyhow::Result<ExitCode> {
    let home = tascer::tascer_home();
    let options = token_options(&home);
    let path = token_file(&tascer::mcp_token_dir(&home), &args.server);
    if logout(&args.server, &options)? {
        println!(
            "logged out of '{}' (removed {})",
            args.server,
            path.display()
        );
    } else {
        println!("no stored login for '{}'", args.server);
    }
    Ok(ExitCode::SUCCESS)
}
