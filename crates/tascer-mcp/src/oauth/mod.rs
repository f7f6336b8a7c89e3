//! OAuth 2.1 for HTTP MCP servers, on rmcp's `auth` module (which uses the
//! `oauth2` crate): protected-resource and authorization-server metadata
//! discovery, dynamic client registration (or a pre-registered client, or
//! a client ID metadata document), authorization code with PKCE through a
//! loopback redirect, refresh, step-up on `insufficient_scope`, and the
//! client-credentials grant.
//!
//! * [`OAuthConfig`]: the `oauth` object of an HTTP server's config.
//! * [`OAuthOptions`]: where tokens are kept and who opens the
//!   authorization URL ([`Browser`]); without a browser a run is
//!   unattended and a server that needs a login fails with a message
//!   naming `tascer mcp login SERVER`.
//! * [`login`] / [`logout`]: what `tascer mcp login|logout` do.
//!
//! Tokens live in one file per server under [`OAuthOptions::token_dir`]
//! (mode 0600); they never appear in errors, logs or `Debug` output.

mod browser;
mod config;
mod cross_app;
mod http;
mod loopback;
mod metadata;
mod session;
mod store;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use browser::{Browser, CommandBrowser, HeadlessBrowser};
pub use config::{OAuthConfig, OAuthGrant};
pub(crate) use http::AuthedHttp;
pub(crate) use session::ServerAuth;
pub use store::token_file;

use crate::error::McpError;

/// How long an interactive login waits for the browser to come back to
/// the loopback redirect.
pub const DEFAULT_CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);

/// How the MCP client logs in to OAuth-protected HTTP servers.
#[derive(Clone)]
pub struct OAuthOptions {
    /// Directory of the per-server token files (`<tascer home>/mcp-auth`
    /// in a session); `None` keeps tokens in memory only.
    pub token_dir: Option<PathBuf>,
    /// Opens the authorization URL; `None` means unattended: a server that
    /// needs a (new) login fails, naming `tascer mcp login SERVER`.
    pub browser: Option<Arc<dyn Browser>>,
    /// How long to wait for the redirect back to the loopback listener.
    pub callback_timeout: Duration,
    /// `client_name` sent in dynamic client registration.
    pub client_name: String,
}

impl Default for OAuthOptions {
    /// In-memory tokens, unattended, `client_name` "Tascer".
    fn default() -> Self {
        OAuthOptions {
            token_dir: None,
            browser: None,
            callback_timeout: DEFAULT_CALLBACK_TIMEOUT,
            client_name: "Tascer".to_owned(),
        }
    }
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("token_dir", &self.token_dir)
            .field("browser", &self.browser.is_some())
            .field("callback_timeout", &self.callback_timeout)
            .field("client_name", &self.client_name)
            .finish()
    }
}

/// Logs in to the HTTP server `server` at `url` now (discovery,
/// registration, the browser round trip, token exchange) and stores its
/// tokens; `options.browser` must be set. Returns the granted scopes.
pub async fn login(
    server: &str,
    url: &str,
    config: Option<&OAuthConfig>,
    options: &OAuthOptions,
) -> Result<Vec<String>, McpError> {
    let auth = ServerAuth::new(server, url, config.cloned(), options.clone());
    auth.login().await
}

/// Forgets the stored tokens (and client registration) of `server`;
/// `Ok(false)` when there were none.
pub fn logout(server: &str, options: &OAuthOptions) -> Result<bool, McpError> {
    let Some(dir) = &options.token_dir else {
        return Ok(false);
    };
    let path = token_file(dir, server);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(McpError::Auth {
            server: server.to_owned(),
            message: format!("cannot remove {}: {e}", path.display()),
        }),
    }
}
