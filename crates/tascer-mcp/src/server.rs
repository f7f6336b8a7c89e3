//! One configured server: its connection, status, tool list and restarts.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Map, Value};
use tascer_core::ToolOutput;

use crate::client::{Answerers, Connection, RemoteTool, RequestError, UpdateQueue};
use crate::config::McpServerConfig;
use crate::error::McpError;
use crate::oauth::ServerAuth;
use crate::output::call_result_to_output;
use crate::status::{McpServerStatus, McpStatus};
use crate::tunnel::McpTunnel;

/// Connection attempts of one restart of a remote (HTTP, SSE) server: a
/// server that is briefly away (redeploy, network blip) is retried with
/// exponential backoff ([`RECONNECT_BASE_DELAY`], doubling) before the
/// restart counts as failed. A local (stdio) server is started once.
pub(crate) const RECONNECT_ATTEMPTS: u32 = 4;
/// The first backoff delay.
pub(crate) const RECONNECT_BASE_DELAY: Duration = Duration::from_millis(250);

/// What one round of the background health check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Health {
    /// The server answered.
    Alive,
    /// It was dead and is connected again.
    Revived,
    /// It is dead and could not be restarted (the reason).
    Down(String),
    /// It is turned off (`mcp_toggle`): not checked.
    Off,
}

/// Timeouts and limits for one server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    pub max_restarts: u32,
}

#[derive(Default)]
struct State {
    conn: Option<Arc<Connection>>,
    status: McpStatus,
    error: Option<String>,
    server_info: Option<Value>,
    tools: Vec<RemoteTool>,
    restarts: u32,
}

/// The configured (not in-process) servers of a session, in config order:
/// what the manager and the resource tools share.
#[derive(Clone)]
pub(crate) struct Servers(Arc<Vec<Arc<ServerEntry>>>);

impl Servers {
    pub fn new(servers: Vec<Arc<ServerEntry>>) -> Self {
        Servers(Arc::new(servers))
    }

    /// All of them.
    pub fn all(&self) -> &[Arc<ServerEntry>] {
        &self.0
    }

    /// The server named `name`.
    pub fn find(&self, name: &str) -> Option<Arc<ServerEntry>> {
        self.0.iter().find(|s| s.name() == name).cloned()
    }
}

/// A configured server (not an in-process one).
pub(crate) struct ServerEntry {
    name: String,
    config: McpServerConfig,
    limits: Limits,
    /// How `sdk` servers that live in an SDK host are reached.
    tunnel: Option<Arc<dyn McpTunnel>>,
    /// OAuth of an HTTP server (none when its config sends its own
    /// `Authorization` header).
    auth: Option<Arc<ServerAuth>>,
    /// Answers the server's elicitation requests.
    answerers: Answerers,
    state: Mutex<State>,
    reconnect: tokio::sync::Mutex<()>,
    /// Turned off by [`ServerEntry::set_enabled`].
    disabled: std::sync::atomic::AtomicBool,
    /// The latest `prompts/list` entries, wire-shaped.
    prompts: Mutex<Vec<Value>>,
    /// URIs of `notifications/resources/updated` not yet taken.
    updates: UpdateQueue,
}

impl ServerEntry {
    pub fn new(
        name: String,
        config: McpServerConfig,
        limits: Limits,
        tunnel: Option<Arc<dyn McpTunnel>>,
        auth: Option<Arc<ServerAuth>>,
        answerers: Answerers,
    ) -> Self {
        ServerEntry {
            name,
            config,
            limits,
            tunnel,
            auth,
            updates: answerers.updates.clone(),
            answerers,
            state: Mutex::new(State::default()),
            reconnect: tokio::sync::Mutex::new(()),
            disabled: std::sync::atomic::AtomicBool::new(false),
            prompts: Mutex::new(Vec::new()),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Connects, handshakes and lists tools within the startup timeout.
    async fn open(&self) -> Result<(Arc<Connection>, Vec<RemoteTool>), McpError> {
        let work = async {
            let conn = Connection::connect(
                &self.name,
                &self.config,
                self.tunnel.as_ref(),
                self.auth.as_ref(),
                self.answerers.clone(),
            )
            .await?;
            let tools = conn.list_tools().await.map_err(|e| McpError::Connect {
                server: self.name.clone(),
                message: format!("tools/list failed: {}", request_message(&e)),
            })?;
            Ok::<_, McpError>((Arc::new(conn), tools))
        };
        match tokio::time::timeout(self.limits.startup_timeout, work).await {
            Ok(r) => r,
            Err(_) => Err(McpError::StartupTimeout {
                server: self.name.clone(),
                timeout: self.limits.startup_timeout,
            }),
        }
    }

    fn record_open(
        &self,
        result: Result<(Arc<Connection>, Vec<RemoteTool>), McpError>,
    ) -> Result<Arc<Connection>, McpError> {
        let mut st = self.state.lock();
        match result {
            Ok((conn, tools)) => {
                st.status = McpStatus::Connected;
                st.error = None;
                st.server_info = conn.server_info();
                st.tools = tools;
                st.conn = Some(conn.clone());
                Ok(conn)
            }
            Err(e) => {
                tracing::warn!(server = %self.name, error = %e, "MCP server failed");
                st.status = McpStatus::Failed;
                st.error = Some(e.to_string());
                // Known tools stay exposed so that using one retries the
                // server (bounded by `max_restarts`).
                st.conn = None;
                Err(e)
            }
        }
    }

    /// First connection attempt (does not count as a restart).
    pub async fn start(&self) {
        let _guard = self.reconnect.lock().await;
        let result = self.open().await;
        let _ = self.record_open(result);
    }

    /// The live connection, restarting the server when it died (at most
    /// `max_restarts` times).
    async fn connection(&self) -> Result<Arc<Connection>, McpError> {
        if self.disabled.load(Ordering::SeqCst) {
            return Err(McpError::Disconnected {
                server: self.name.clone(),
                message: "the server is disabled (mcp_toggle)".into(),
            });
        }
        if let Some(conn) = self.live() {
            return Ok(conn);
        }
        let _guard = self.reconnect.lock().await;
        if let Some(conn) = self.live() {
            return Ok(conn);
        }
        {
            let mut st = self.state.lock();
            if st.restarts >= self.limits.max_restarts {
                return Err(McpError::Disconnected {
                    server: self.name.clone(),
                    message: format!(
                        "{} (gave up after {} restarts)",
                        st.error.clone().unwrap_or_else(|| "server is down".into()),
                        st.restarts
                    ),
                });
            }
            st.restarts += 1;
            st.status = McpStatus::Pending;
            tracing::info!(server = %self.name, restart = st.restarts, "restarting MCP server");
        }
        let result = self.reopen().await;
        self.record_open(result)
    }

    /// Reconnects now (`mcp_reconnect`): drops the connection, forgets
    /// earlier restarts and connects again (with backoff when remote).
    pub async fn reconnect_now(&self) -> Result<(), McpError> {
        if self.disabled.load(Ordering::SeqCst) {
            return Err(McpError::Disconnected {
                server: self.name.clone(),
                message: "the server is disabled (mcp_toggle)".into(),
            });
        }
        let _guard = self.reconnect.lock().await;
        {
            let mut st = self.state.lock();
            st.conn = None;
            st.restarts = 0;
            st.status = McpStatus::Pending;
        }
        let result = self.reopen().await;
        self.record_open(result).map(|_| ())
    }

    /// Turns the server off (closes its connection; its tools fail) or on
    /// again (connects now) (`mcp_toggle`).
    pub async fn set_enabled(&self, enabled: bool) -> Result<(), McpError> {
        if enabled {
            self.disabled.store(false, Ordering::SeqCst);
            return self.reconnect_now().await;
        }
        self.disabled.store(true, Ordering::SeqCst);
        let _guard = self.reconnect.lock().await;
        let mut st = self.state.lock();
        st.conn = None;
        st.status = McpStatus::Disabled;
        st.error = None;
        Ok(())
    }

    /// [`Self::open`], with backoff for remote servers.
    async fn reopen(&self) -> Result<(Arc<Connection>, Vec<RemoteTool>), McpError> {
        let remote = matches!(
            self.config,
            McpServerConfig::Http { .. } | McpServerConfig::Sse { .. }
        );
        let attempts = if remote { RECONNECT_ATTEMPTS } else { 1 };
        let mut result = self.open().await;
        let mut delay = RECONNECT_BASE_DELAY;
        for attempt in 1..attempts {
            let Err(e) = &result else { break };
            tracing::info!(
                server = %self.name,
                attempt,
                delay_ms = delay.as_millis() as u64,
                error = %e,
                "reconnecting MCP server failed; retrying"
            );
            tokio::time::sleep(delay).await;
            delay *= 2;
            result = self.open().await;
        }
        result
    }

    fn live(&self) -> Option<Arc<Connection>> {
        let st = self.state.lock();
        st.conn.clone().filter(|c| !c.is_closed())
    }

    fn mark_dead(&self, message: &str) {
        let mut st = self.state.lock();
        st.conn = None;
        st.status = McpStatus::Failed;
        st.error = Some(format!("connection lost: {message}"));
    }

    /// Runs one request with a timeout; a closed transport marks the
    /// server dead so the next use restarts it.
    async fn request<T, F, Fut>(&self, method: &str, timeout: Duration, f: F) -> Result<T, McpError>
    where
        F: FnOnce(Arc<Connection>) -> Fut,
        Fut: Future<Output = Result<T, RequestError>>,
    {
        let conn = self.connection().await?;
        match tokio::time::timeout(timeout, f(conn.clone())).await {
            Err(_) => Err(McpError::Timeout {
                server: self.name.clone(),
                method: method.into(),
                timeout,
            }),
            Ok(Ok(v)) => Ok(v),
            Ok(Err(RequestError::Remote(message))) if !conn.is_closed() => Err(McpError::Request {
                server: self.name.clone(),
                method: method.into(),
                message,
            }),
            Ok(Err(e)) => {
                let message = request_message(&e);
                self.mark_dead(&message);
                Err(McpError::Disconnected {
                    server: self.name.clone(),
                    message: format!("{message}; it will be restarted on next use"),
                })
            }
        }
    }

    /// `tools/call` mapped to a [`ToolOutput`]; failures become error
    /// results.
    pub async fn call_tool(&self, tool: &str, args: Option<Map<String, Value>>) -> ToolOutput {
        let timeout = self.limits.tool_timeout;
        let tool_owned = tool.to_owned();
        match self
            .request("tools/call", timeout, |c| async move {
                c.call_tool(&tool_owned, args).await
            })
            .await
        {
            Ok(result) => call_result_to_output(result),
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }

    /// `resources/list`.
    pub async fn list_resources(&self) -> Result<Vec<Value>, McpError> {
        self.request("resources/list", self.limits.tool_timeout, |c| async move {
            c.list_resources().await
        })
        .await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, McpError> {
        let uri = uri.to_owned();
        self.request("resources/read", self.limits.tool_timeout, |c| async move {
            c.read_resource(&uri).await
        })
        .await
    }

    /// `resources/templates/list`.
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, McpError> {
        let timeout = self.limits.tool_timeout;
        self.request("resources/templates/list", timeout, |c| async move {
            c.list_resource_templates().await
        })
        .await
    }

    /// `resources/subscribe` to `uri` when the server declares
    /// `resources.subscribe` (once per connection); `Ok(false)` when it
    /// does not or the URI is subscribed already.
    pub async fn subscribe(&self, uri: &str) -> Result<bool, McpError> {
        if !self
            .live()
            .is_some_and(|c| c.declares("/resources/subscribe"))
        {
            return Ok(false);
        }
        let uri = uri.to_owned();
        self.request(
            "resources/subscribe",
            self.limits.tool_timeout,
            |c| async move { c.subscribe(&uri).await },
        )
        .await
    }

    /// Takes the URIs the server said changed since the last call.
    pub fn take_updates(&self) -> Vec<String> {
        std::mem::take(&mut *self.updates.lock())
    }

    /// Re-lists prompts when the connection has not listed them yet or the
    /// server sent `prompts/list_changed`; a server without the `prompts`
    /// capability has none.
    pub async fn refresh_prompts_if_changed(&self) {
        let Some(conn) = self.live() else { return };
        if !conn.prompts_changed.swap(false, Ordering::SeqCst) {
            return;
        }
        if !conn.declares("/prompts") {
            self.prompts.lock().clear();
            return;
        }
        // Listed at startup too: no longer than a start may take.
        let timeout = self.limits.tool_timeout.min(self.limits.startup_timeout);
        match self
            .request("prompts/list", timeout, |c| async move {
                c.list_prompts().await
            })
            .await
        {
            Ok(prompts) => *self.prompts.lock() = prompts,
            Err(e) => tracing::warn!(server = %self.name, error = %e, "prompts/list failed"),
        }
    }

    /// The latest `prompts/list` entries.
    pub fn prompts(&self) -> Vec<Value> {
        self.prompts.lock().clone()
    }

    /// `prompts/get`; the wire-shaped `GetPromptResult`.
    pub async fn get_prompt(
        &self,
        name: &str,
        args: Map<String, Value>,
    ) -> Result<Value, McpError> {
        let name = name.to_owned();
        self.request("prompts/get", self.limits.tool_timeout, |c| async move {
            c.get_prompt(&name, args).await
        })
        .await
    }

    /// Re-lists tools if the server sent `tools/list_changed`.
    pub async fn refresh_if_changed(&self) {
        let Some(conn) = self.live() else { return };
        if !conn.tools_changed.swap(false, Ordering::SeqCst) {
            return;
        }
        self.refresh_tools().await;
    }

    /// Re-lists tools unconditionally.
    pub async fn refresh_tools(&self) {
        match self
            .request("tools/list", self.limits.tool_timeout, |c| async move {
                c.list_tools().await
            })
            .await
        {
            Ok(tools) => self.state.lock().tools = tools,
            Err(e) => tracing::warn!(server = %self.name, error = %e, "tools/list refresh failed"),
        }
    }

    /// Health check: connection open and `tools/list` answers.
    pub async fn health(&self) -> Result<(), McpError> {
        let Some(conn) = self.live() else {
            let st = self.state.lock();
            return Err(McpError::Disconnected {
                server: self.name.clone(),
                message: st.error.clone().unwrap_or_else(|| "not connected".into()),
            });
        };
        match tokio::time::timeout(self.limits.tool_timeout, conn.list_tools()).await {
            Err(_) => Err(McpError::Timeout {
                server: self.name.clone(),
                method: "tools/list".into(),
                timeout: self.limits.tool_timeout,
            }),
            Ok(Ok(_)) if !conn.is_closed() => Ok(()),
            Ok(Ok(_)) => Err(McpError::Disconnected {
                server: self.name.clone(),
                message: "transport closed".into(),
            }),
            Ok(Err(e)) => Err(McpError::Request {
                server: self.name.clone(),
                method: "tools/list".into(),
                message: request_message(&e),
            }),
        }
    }

    /// One round of the background health check: a live connection is
    /// pinged; a server found dead (transport closed, no answer within
    /// `ping_timeout`) is restarted now, within the restart limit and with
    /// backoff when remote, so that the next call does not meet it dead.
    pub async fn check_and_revive(&self, ping_timeout: Duration) -> Health {
        if self.disabled.load(Ordering::SeqCst) {
            return Health::Off;
        }
        if let Some(conn) = self.live() {
            let failure = match tokio::time::timeout(ping_timeout, conn.ping()).await {
                Ok(Ok(())) if !conn.is_closed() => return Health::Alive,
                Ok(Ok(())) => "transport closed".to_string(),
                Ok(Err(e)) => request_message(&e),
                Err(_) => format!("no answer to ping within {ping_timeout:?}"),
            };
            self.mark_dead(&format!("health check: {failure}"));
        }
        match self.connection().await {
            Ok(_) => Health::Revived,
            Err(e) => Health::Down(e.to_string()),
        }
    }

    /// The latest tool list (none while the server is turned off).
    pub fn remote_tools(&self) -> Vec<RemoteTool> {
        if self.disabled.load(Ordering::SeqCst) {
            return Vec::new();
        }
        self.state.lock().tools.clone()
    }

    /// Status entry for `system/init.mcp_servers`.
    pub fn status(&self) -> McpServerStatus {
        let st = self.state.lock();
        McpServerStatus {
            name: self.name.clone(),
            status: st.status,
            error: st.error.clone(),
            server_info: st.server_info.clone(),
            tools: if st.status == McpStatus::Connected {
                st.tools.iter().map(|t| t.name.clone()).collect()
            } else {
                Vec::new()
            },
        }
    }
}

fn request_message(e: &RequestError) -> String {
    match e {
        RequestError::Closed(m) | RequestError::Remote(m) => m.clone(),
    }
}
