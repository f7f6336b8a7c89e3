//! [`McpManager`]: connects all configured servers and hands out their
//! tools and statuses.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tascer_core::Tool;

use crate::client::Answerers;
use crate::config::McpServerConfig;
use crate::elicit::Elicitor;
use crate::error::McpError;
use crate::oauth::{OAuthOptions, ServerAuth};
use crate::resources::{ListMcpResourcesTool, ReadMcpResourceTool, ResourceUpdate};
use crate::sdk::SdkServer;
use crate::server::{Health, Limits, ServerEntry, Servers};
use crate::status::{McpServerStatus, McpStatus};
use crate::tool::McpTool;
use crate::tunnel::McpTunnel;

/// Default per-call timeout for `tools/call`; `MCP_TOOL_TIMEOUT` (ms)
/// overrides it, as in Claude Code.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// Default startup timeout (`MCP_TIMEOUT` in ms overrides it).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Default bound on restarts of a dead server.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;
/// Default interval of the background health check;
/// `TASCER_MCP_HEALTH_INTERVAL` (ms, `0` turns it off) overrides it.
pub const DEFAULT_HEALTH_INTERVAL: Duration = Duration::from_secs(30);
/// Longest wait for a `ping` answer in a health check.
const MAX_PING_TIMEOUT: Duration = Duration::from_secs(10);

/// The health-check interval from `TASCER_MCP_HEALTH_INTERVAL` (ms;
/// `0`: off), else the default.
fn health_interval_from_env() -> Option<Duration> {
    match std::env::var("TASCER_MCP_HEALTH_INTERVAL")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        Some(0) => None,
        Some(ms) => Some(Duration::from_millis(ms)),
        None => Some(DEFAULT_HEALTH_INTERVAL),
    }
}

fn env_ms(var: &str) -> Option<Duration> {
    std::env::var(var)
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
}

/// Knobs for [`McpManager::connect_with`].
#[derive(Clone)]
pub struct McpOptions {
    /// Time allowed for spawn + handshake + first `tools/list`.
    pub startup_timeout: Duration,
    /// Time allowed for each `tools/call` (and resources requests).
    pub tool_timeout: Duration,
    /// How many times a dead server is restarted before giving up.
    pub max_restarts: u32,
    /// In-process servers; `{"type":"sdk","name":…}` configs refer to them.
    pub sdk_servers: Vec<SdkServer>,
    /// Reaches the `{"type":"sdk","name":…}` servers that are not in
    /// `sdk_servers`: they live in an SDK host and their messages go
    /// through this tunnel.
    pub tunnel: Option<Arc<dyn McpTunnel>>,
    /// How HTTP servers that answer 401 are logged in to (default:
    /// unattended, tokens in memory).
    pub oauth: OAuthOptions,
    /// Answers servers' elicitation requests; `None`: elicitation is not
    /// offered (a headless run) and requests are declined.
    pub elicitor: Option<Arc<dyn Elicitor>>,
    /// Directories servers may work in, answered to `roots/list` (a
    /// session: its workspace and `--add-dir` directories); empty: the
    /// roots capability is not declared.
    pub roots: Vec<std::path::PathBuf>,
    /// Answers servers' sampling requests with a model; `None`: sampling
    /// is not offered and requests are refused.
    pub sampler: Option<Arc<dyn crate::sampling::Sampler>>,
    /// How often every server is pinged in the background, a dead one
    /// being restarted before the next call needs it; `None`: no
    /// background check (a dead server is found by the next request).
    pub health_interval: Option<Duration>,
}

impl std::fmt::Debug for McpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpOptions")
            .field("startup_timeout", &self.startup_timeout)
            .field("tool_timeout", &self.tool_timeout)
            .field("max_restarts", &self.max_restarts)
            .field("sdk_servers", &self.sdk_servers)
            .field("tunnel", &self.tunnel.is_some())
            .field("oauth", &self.oauth)
            .field("elicitor", &self.elicitor.is_some())
            .field("roots", &self.roots)
            .field("sampler", &self.sampler.is_some())
            .field("health_interval", &self.health_interval)
            .finish()
    }
}

impl Default for McpOptions {
    /// Defaults, with `MCP_TIMEOUT` / `MCP_TOOL_TIMEOUT` (ms) from the
    /// environment as in Claude Code.
    fn default() -> Self {
        McpOptions {
            startup_timeout: env_ms("MCP_TIMEOUT").unwrap_or(DEFAULT_STARTUP_TIMEOUT),
            tool_timeout: env_ms("MCP_TOOL_TIMEOUT").unwrap_or(DEFAULT_TOOL_TIMEOUT),
            max_restarts: DEFAULT_MAX_RESTARTS,
            sdk_servers: Vec::new(),
            tunnel: None,
            oauth: OAuthOptions::default(),
            elicitor: None,
            roots: Vec::new(),
            sampler: None,
            health_interval: health_interval_from_env(),
        }
    }
}

struct Inner {
    servers: Servers,
    sdk: Vec<SdkServer>,
    /// Sdk configs naming no registered server: `(key, error)`.
    missing_sdk: Vec<(String, String)>,
    /// The background health check, stopped with the manager.
    health: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(task) = &self.health {
            task.abort();
        }
    }
}

/// Pings every server each `interval`, restarting dead ones; logs when a
/// server's health changes.
async fn watch_health(servers: Servers, interval: Duration) {
    let ping_timeout = interval.min(MAX_PING_TIMEOUT);
    let mut last: Vec<Health> = vec![Health::Alive; servers.all().len()];
    loop {
        tokio::time::sleep(interval).await;
        let now = futures::future::join_all(
            servers
                .all()
                .iter()
                .map(|s| s.check_and_revive(ping_timeout)),
        )
        .await;
        for ((server, before), health) in servers.all().iter().zip(&last).zip(&now) {
            match health {
                Health::Revived => {
                    tracing::warn!(server = %server.name(), "MCP server was down; restarted it")
                }
                Health::Down(e) if before != health => {
                    tracing::warn!(server = %server.name(), "MCP server is down: {e}")
                }
                _ => {}
            }
        }
        last = now;
    }
}

/// All MCP servers of a session.
#[derive(Clone)]
pub struct McpManager {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager")
            .field("servers", &self.statuses())
            .finish()
    }
}

impl McpManager {
    /// Connects every server concurrently with default options and the
    /// given startup timeout. Failures are recorded in [`Self::statuses`],
    /// never returned or swallowed.
    pub async fn connect_all(
        configs: BTreeMap<String, McpServerConfig>,
        startup_timeout: Duration,
    ) -> McpManager {
        let options = McpOptions {
            startup_timeout,
            ..McpOptions::default()
        };
        Self::connect_with(configs, options).await
    }

    /// Connects every server concurrently.
    pub async fn connect_with(
        configs: BTreeMap<String, McpServerConfig>,
        options: McpOptions,
    ) -> McpManager {
        let limits = Limits {
            startup_timeout: options.startup_timeout,
            tool_timeout: options.tool_timeout,
            max_restarts: options.max_restarts,
        };
        let mut servers = Vec::new();
        let mut missing_sdk = Vec::new();
        for (key, config) in configs {
            if let McpServerConfig::Sdk { name } = &config {
                if options.sdk_servers.iter().any(|s| s.name() == name) {
                    continue;
                }
                if options.tunnel.is_none() {
                    missing_sdk.push((
                        key,
                        format!("in-process (sdk) server '{name}' is not registered"),
                    ));
                    continue;
                }
            }
            let auth = match &config {
                McpServerConfig::Http {
                    url,
                    headers,
                    oauth,
                    ..
                } if !headers
                    .keys()
                    .any(|h| h.eq_ignore_ascii_case("authorization")) =>
                {
                    Some(ServerAuth::new(
                        &key,
                        url,
                        oauth.as_deref().cloned(),
                        options.oauth.clone(),
                    ))
                }
                _ => None,
            };
            servers.push(Arc::new(ServerEntry::new(
                key,
                config,
                limits,
                options.tunnel.clone(),
                auth,
                Answerers {
                    elicitor: options.elicitor.clone(),
                    roots: Arc::new(options.roots.clone()),
                    sampler: options.sampler.clone(),
                    updates: Default::default(),
                },
            )));
        }
        futures::future::join_all(servers.iter().map(|s| s.start())).await;
        futures::future::join_all(servers.iter().map(|s| s.refresh_prompts_if_changed())).await;
        let servers = Servers::new(servers);
        let health = options
            .health_interval
            .filter(|_| !servers.all().is_empty())
            .map(|interval| tokio::spawn(watch_health(servers.clone(), interval)));
        McpManager {
            inner: Arc::new(Inner {
                servers,
                sdk: options.sdk_servers,
                missing_sdk,
                health,
            }),
        }
    }

    /// The configured (not in-process) servers.
    pub(crate) fn servers(&self) -> &Servers {
        &self.inner.servers
    }

    /// `[{name, status, error?, server_info?, tools}]` for
    /// `system/init.mcp_servers`, in config order (remote, then sdk).
    pub fn statuses(&self) -> Vec<McpServerStatus> {
        let mut out: Vec<McpServerStatus> = self
            .inner
            .servers
            .all()
            .iter()
            .map(|s| s.status())
            .collect();
        out.extend(self.inner.sdk.iter().map(|s| McpServerStatus {
            name: s.name().to_owned(),
            status: McpStatus::Connected,
            error: None,
            server_info: Some(s.server_info()),
            tools: s.tool_names(),
        }));
        out.extend(self.inner.missing_sdk.iter().map(|(k, e)| McpServerStatus {
            name: k.clone(),
            status: McpStatus::Failed,
            error: Some(e.clone()),
            server_info: None,
            tools: Vec::new(),
        }));
        out
    }

    /// All tools: each server tool as `mcp__<server>__<tool>`, the sdk
    /// tools, and (when a remote server is configured) the two resource
    /// tools. Servers that sent `tools/list_changed` are re-listed first.
    pub async fn tools(&self) -> Vec<Arc<dyn Tool>> {
        futures::future::join_all(
            self.inner
                .servers
                .all()
                .iter()
                .map(|s| s.refresh_if_changed()),
        )
        .await;
        self.tools_snapshot()
    }

    /// Like [`Self::tools`] without re-listing changed servers.
    pub fn tools_snapshot(&self) -> Vec<Arc<dyn Tool>> {
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        for server in self.inner.servers.all() {
            for remote in server.remote_tools() {
                out.push(Arc::new(McpTool::new(server.clone(), remote)));
            }
        }
        for sdk in &self.inner.sdk {
            out.extend(sdk.tools());
        }
        if !self.inner.servers.all().is_empty() {
            out.push(Arc::new(ListMcpResourcesTool {
                servers: self.inner.servers.clone(),
            }));
            out.push(Arc::new(ReadMcpResourceTool {
                servers: self.inner.servers.clone(),
            }));
        }
        out
    }

    /// Re-lists the tools of one server now.
    pub async fn refresh_tools(&self, server: &str) -> Result<(), McpError> {
        let s = self
            .inner
            .servers
            .find(server)
            .ok_or_else(|| McpError::UnknownServer(server.into()))?;
        s.refresh_tools().await;
        Ok(())
    }

    /// Reconnects `server` now (the SDKs' `mcp_reconnect`); an in-process
    /// server has nothing to reconnect.
    pub async fn reconnect(&self, server: &str) -> Result<(), McpError> {
        if self.inner.sdk.iter().any(|s| s.name() == server) {
            return Ok(());
        }
        let s = self
            .inner
            .servers
            .find(server)
            .ok_or_else(|| McpError::UnknownServer(server.into()))?;
        s.reconnect_now().await
    }

    /// Turns `server` off or on (the SDKs' `mcp_toggle`): off closes its
    /// connection, its status is `disabled` and its tools fail; on
    /// connects it again.
    pub async fn set_enabled(&self, server: &str, enabled: bool) -> Result<(), McpError> {
        if self.inner.sdk.iter().any(|s| s.name() == server) {
            return Err(McpError::Unsupported {
                server: server.into(),
                message: "an in-process (sdk) server cannot be turned off".into(),
            });
        }
        let s = self
            .inner
            .servers
            .find(server)
            .ok_or_else(|| McpError::UnknownServer(server.into()))?;
        s.set_enabled(enabled).await
    }

    /// Takes the `notifications/resources/updated` received since the
    /// last call (resources read with `ReadMcpResourceTool` are subscribed
    /// to when the server allows it): one entry per server and URI, sorted.
    pub fn take_resource_updates(&self) -> Vec<ResourceUpdate> {
        let mut out: Vec<ResourceUpdate> = self
            .inner
            .servers
            .all()
            .iter()
            .flat_map(|s| {
                s.take_updates().into_iter().map(|uri| ResourceUpdate {
                    server: s.name().to_owned(),
                    uri,
                })
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Per-server health: connection open and `tools/list` answers
    /// (in-process servers are always healthy).
    pub async fn health(&self) -> Vec<(String, Result<(), McpError>)> {
        let mut out: Vec<(String, Result<(), McpError>)> = futures::future::join_all(
            self.inner
                .servers
                .all()
                .iter()
                .map(|s| async move { (s.name().to_owned(), s.health().await) }),
        )
        .await;
        out.extend(self.inner.sdk.iter().map(|s| (s.name().to_owned(), Ok(()))));
        out
    }
}
