//! The only module that talks to `rmcp` (with `sse`, our legacy SSE
//! transport, and `tunnel`, the transport through an SDK host): connect over a transport and run requests, returning plain
//! JSON so the rest of the crate never sees rmcp types. An rmcp upgrade
//! should only touch these two files.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, ErrorData, FormElicitationCapability,
    GetPromptRequestParams, Implementation, ProtocolVersion, ReadResourceRequestParams,
    ResourceUpdatedNotificationParam, UrlElicitationCapability,
};
// Roots are deprecated in rmcp (the 2026-07-28 protocol drops them) but are
// part of the 2025 revisions this client speaks.
#[allow(deprecated)]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, ListRootsResult};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value};

use crate::config::McpServerConfig;
use crate::elicit::{ElicitationRequest, ElicitationResponse, Elicitor, apply_defaults};
use crate::error::McpError;
use crate::oauth::{AuthedHttp, ServerAuth};
use crate::sampling::Sampler;
use crate::sse::SseTransport;
use crate::tunnel::{McpTunnel, TunnelTransport};

/// A tool as listed by a server (`tools/list` entry).
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteTool {
    /// The server's own tool name.
    pub name: String,
    /// Description (empty when the server gave none).
    pub description: String,
    /// JSON Schema of the input.
    pub input_schema: Value,
    /// `annotations.readOnlyHint`.
    pub read_only: bool,
}

/// Why a request failed, as far as the manager cares.
#[derive(Debug)]
pub(crate) enum RequestError {
    /// The transport is gone; the server must be restarted.
    Closed(String),
    /// The server answered with an error (connection still fine).
    Remote(String),
}

fn classify(err: ServiceError) -> RequestError {
    match err {
        ServiceError::McpError(e) => RequestError::Remote(e.message.to_string()),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            RequestError::Closed(err.to_string())
        }
        other => RequestError::Remote(other.to_string()),
    }
}

/// What the client answers servers' requests with (elicitation, roots,
/// sampling); shared by every connection of a server.
#[derive(Clone, Default)]
pub(crate) struct Answerers {
    /// Answers `elicitation/create`.
    pub elicitor: Option<Arc<dyn Elicitor>>,
    /// Answered to `roots/list`.
    pub roots: Arc<Vec<std::path::PathBuf>>,
    /// Answers `sampling/createMessage`.
    pub sampler: Option<Arc<dyn Sampler>>,
    /// Where the URIs of `notifications/resources/updated` are queued
    /// (kept across reconnects; drained by the session).
    pub updates: UpdateQueue,
}

/// URIs the server said changed, oldest first.
pub(crate) type UpdateQueue = Arc<parking_lot::Mutex<Vec<String>>>;

/// Receives server notifications (flags `tools/list_changed`) and
/// answers server requests (elicitation).
struct Handler {
    server: String,
    tools_changed: Arc<AtomicBool>,
    prompts_changed: Arc<AtomicBool>,
    elicitor: Option<Arc<dyn Elicitor>>,
    roots: Arc<Vec<std::path::PathBuf>>,
    sampler: Option<Arc<dyn Sampler>>,
    updates: UpdateQueue,
}

impl ClientHandler for Handler {
    /// Asks for the newest protocol revision that still has an
    /// `initialize` handshake (2025-11-25; rmcp's default would name
    /// 2026-07-28, which servers of the 2025 revisions do not know) and
    /// names the client `tascer`.
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.sampler.is_some() {
            capabilities.sampling = serde_json::from_value(serde_json::json!({})).ok();
        }
        if !self.roots.is_empty() {
            capabilities.roots =
                serde_json::from_value(serde_json::json!({"listChanged": false})).ok();
        }
        if self.elicitor.is_some() {
            // Every answerer (hooks, the SDK host, the terminal) handles
            // both modes: a `url` question shows the page to open.
            capabilities.elicitation = Some(
                ElicitationCapability::new()
                    .with_form(FormElicitationCapability::new())
                    .with_url(UrlElicitationCapability::new()),
            );
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("tascer", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.prompts_changed.store(true, Ordering::SeqCst);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(server = %self.server, uri = %params.uri, "MCP resource updated");
        self.updates.lock().push(params.uri);
    }

    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(sampler) = &self.sampler else {
            return Err(ErrorData::invalid_request(
                "this Tascer session does not answer sampling requests",
                None,
            ));
        };
        let wire = serde_json::to_value(&params).unwrap_or(Value::Null);
        let request = crate::sampling::request_from_wire(&self.server, &wire);
        match sampler.create_message(request).await {
            Ok(response) => serde_json::from_value(crate::sampling::response_to_wire(&response))
                .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
            Err(reason) => Err(ErrorData::invalid_request(reason, None)),
        }
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots: Vec<Value> = self
            .roots
            .iter()
            .map(|dir| {
                let name = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| dir.display().to_string());
                serde_json::json!({"uri": file_uri(dir), "name": name})
            })
            .collect();
        serde_json::from_value(serde_json::json!({ "roots": roots }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(elicitor) = &self.elicitor else {
            tracing::warn!(
                server = %self.server,
                "declined an elicitation request: no one can answer it in this run \
                 (headless; an SDK host's elicitation callback or a terminal can)"
            );
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let (message, requested_schema, url, elicitation_id) = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => (
                message,
                serde_json::to_value(&requested_schema).unwrap_or(Value::Null),
                None,
                None,
            ),
            ElicitRequestParams::UrlElicitationParams {
                message,
                url,
                elicitation_id,
                ..
            } => (message, Value::Null, Some(url), Some(elicitation_id)),
            // A mode this client does not know.
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        let question = ElicitationRequest {
            server: self.server.clone(),
            message,
            requested_schema,
            url,
            elicitation_id,
        };
        let schema = question.requested_schema.clone();
        Ok(match elicitor.elicit(question).await {
            ElicitationResponse::Accept(mut content) => {
                apply_defaults(&schema, &mut content);
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
            }
            ElicitationResponse::Decline(reason) => {
                tracing::info!(server = %self.server, %reason, "elicitation declined");
                ElicitResult::new(ElicitationAction::Decline)
            }
            _ => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}

/// The last lines a stdio server wrote to stderr (also logged at debug).
#[derive(Clone, Default)]
struct StderrTail(Arc<parking_lot::Mutex<std::collections::VecDeque<String>>>);

impl StderrTail {
    const LINES: usize = 10;

    fn follow(
        &self,
        server: String,
        stderr: tokio::process::ChildStderr,
    ) -> tokio::task::JoinHandle<()> {
        use tokio::io::AsyncBufReadExt;
        let tail = self.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(server = %server, "mcp stderr: {line}");
                let mut buf = tail.0.lock();
                if buf.len() == Self::LINES {
                    buf.pop_front();
                }
                buf.push_back(line);
            }
        })
    }

    fn render(&self) -> String {
        let buf = self.0.lock();
        if buf.is_empty() {
            String::new()
        } else {
            format!(
                "; server stderr: {}",
                buf.iter().cloned().collect::<Vec<_>>().join(" | ")
            )
        }
    }
}

/// A live MCP client connection.
pub(crate) struct Connection {
    service: RunningService<RoleClient, Handler>,
    /// Set when the server sent `notifications/tools/list_changed`.
    pub tools_changed: Arc<AtomicBool>,
    /// Set when the server sent `notifications/prompts/list_changed`, and
    /// at first (nothing listed yet).
    pub prompts_changed: Arc<AtomicBool>,
    /// URIs subscribed on this connection (`resources/subscribe`).
    subscribed: parking_lot::Mutex<std::collections::HashSet<String>>,
}

/// `file://` URI of a directory (absolute paths; each segment
/// percent-encoded where needed).
fn file_uri(dir: &std::path::Path) -> String {
    match reqwest::Url::from_directory_path(dir) {
        Ok(url) => url.as_str().trim_end_matches('/').to_owned(),
        Err(()) => format!("file://{}", dir.display()),
    }
}

/// An error and its sources, `: `-joined (the transport's reason, such as
/// a needed login, is a source of the handshake error).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

fn header_map(
    server: &str,
    headers: &BTreeMap<String, String>,
) -> Result<std::collections::HashMap<HeaderName, HeaderValue>, McpError> {
    headers
        .iter()
        .map(|(k, v)| {
            let name = HeaderName::try_from(k.as_str()).map_err(|e| McpError::Connect {
                server: server.into(),
                message: format!("bad header name {k:?}: {e}"),
            })?;
            let value = HeaderValue::try_from(v.as_str()).map_err(|e| McpError::Connect {
                server: server.into(),
                message: format!("bad header value for {k}: {e}"),
            })?;
            Ok((name, value))
        })
        .collect()
}

impl Connection {
    /// Connects and performs the MCP handshake. `sdk` servers go through
    /// `tunnel` (without one they cannot be reached).
    ///
    /// Boxed: the state machine of the whole connection (rmcp's service,
    /// its transports, OAuth) is compiled once, here, instead of in every
    /// crate that awaits it.
    pub fn connect<'a>(
        server: &'a str,
        config: &'a McpServerConfig,
        tunnel: Option<&'a Arc<dyn McpTunnel>>,
        auth: Option<&'a Arc<ServerAuth>>,
        answerers: Answerers,
    ) -> BoxFuture<'a, Result<Self, McpError>> {
        Box::pin(Self::connect_now(server, config, tunnel, auth, answerers))
    }

    async fn connect_now(
        server: &str,
        config: &McpServerConfig,
        tunnel: Option<&Arc<dyn McpTunnel>>,
        auth: Option<&Arc<ServerAuth>>,
        answerers: Answerers,
    ) -> Result<Self, McpError> {
        let tools_changed = Arc::new(AtomicBool::new(false));
        let prompts_changed = Arc::new(AtomicBool::new(true));
        let handler = Handler {
            server: server.to_owned(),
            tools_changed: tools_changed.clone(),
            prompts_changed: prompts_changed.clone(),
            elicitor: answerers.elicitor,
            roots: answerers.roots,
            sampler: answerers.sampler,
            updates: answerers.updates,
        };
        let connect_err = |message: String| McpError::Connect {
            server: server.into(),
            message,
        };
        let service = match config {
            McpServerConfig::Stdio {
                command, args, env, ..
            } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).envs(env).kill_on_drop(true);
                let (transport, stderr) = TokioChildProcess::builder(cmd)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| connect_err(format!("cannot spawn {command:?}: {e}")))?;
                let tail = StderrTail::default();
                let reader = stderr.map(|e| tail.follow(server.to_owned(), e));
                match handler.serve(transport).await {
                    Ok(service) => service,
                    Err(e) => {
                        // Let the reader collect the last lines (EOF once the
                        // process is gone), but do not wait on a live one.
                        if let Some(reader) = reader {
                            let wait = std::time::Duration::from_millis(500);
                            let _ = tokio::time::timeout(wait, reader).await;
                        }
                        return Err(connect_err(format!("{e}{}", tail.render())));
                    }
                }
            }
            McpServerConfig::Http { url, headers, .. } => {
                let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                cfg.custom_headers = header_map(server, headers)?;
                let served = match auth {
                    Some(auth) => {
                        let http = AuthedHttp::new(reqwest::Client::new(), Arc::clone(auth));
                        handler
                            .serve(StreamableHttpClientTransport::with_client(http, cfg))
                            .await
                    }
                    None => {
                        handler
                            .serve(StreamableHttpClientTransport::from_config(cfg))
                            .await
                    }
                };
                served.map_err(|e| {
                    // The transport's error chain names rmcp's types; a
                    // failed login says it better.
                    match auth.and_then(|a| a.take_failure()) {
                        Some(reason) => connect_err(reason),
                        None => connect_err(error_chain(&e)),
                    }
                })?
            }
            McpServerConfig::Sse { url, headers, .. } => {
                let headers: HeaderMap = header_map(server, headers)?.into_iter().collect();
                let transport = SseTransport::connect(url, headers)
                    .await
                    .map_err(|e| connect_err(e.to_string()))?;
                handler
                    .serve(transport)
                    .await
                    .map_err(|e| connect_err(format!("{url}: {e}")))?
            }
            McpServerConfig::Sdk { name } => match tunnel {
                Some(tunnel) => handler
                    .serve(TunnelTransport::new(name, Arc::clone(tunnel)))
                    .await
                    .map_err(|e| connect_err(e.to_string()))?,
                None => {
                    return Err(McpError::Unsupported {
                        server: server.into(),
                        message: format!("in-process server '{name}' is not registered"),
                    });
                }
            },
        };
        Ok(Connection {
            service,
            tools_changed,
            prompts_changed,
            subscribed: Default::default(),
        })
    }

    /// `serverInfo` from the initialize result.
    pub fn server_info(&self) -> Option<Value> {
        let info = self.service.peer_info()?;
        serde_json::to_value(&*info)
            .ok()
            .and_then(|v| v.get("serverInfo").cloned())
    }

    /// Whether the server declared the capability at `pointer` in its
    /// initialize result (`/prompts`, `/resources/subscribe`).
    pub fn declares(&self, pointer: &str) -> bool {
        let Some(info) = self.service.peer_info() else {
            return false;
        };
        serde_json::to_value(&*info)
            .ok()
            .and_then(|v| v.pointer(&format!("/capabilities{pointer}")).cloned())
            .is_some_and(|c| !c.is_null() && c != Value::Bool(false))
    }

    /// True once the transport has closed.
    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    /// `ping`: the server answers (an error answer counts: it is alive).
    pub async fn ping(&self) -> Result<(), RequestError> {
        let request = rmcp::model::ClientRequest::PingRequest(Default::default());
        match self.service.send_request(request).await.map_err(classify) {
            Ok(_) | Err(RequestError::Remote(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `tools/list` (all pages).
    pub async fn list_tools(&self) -> Result<Vec<RemoteTool>, RequestError> {
        let tools = self.service.list_all_tools().await.map_err(classify)?;
        Ok(tools
            .into_iter()
            .map(|t| {
                let v = serde_json::to_value(&t).unwrap_or(Value::Null);
                RemoteTool {
                    name: t.name.to_string(),
                    description: t.description.as_deref().unwrap_or_default().to_owned(),
                    input_schema: v
                        .get("inputSchema")
                        .cloned()
                        .unwrap_or_else(|| serde_json::json!({"type": "object"})),
                    read_only: v
                        .pointer("/annotations/readOnlyHint")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                }
            })
            .collect())
    }

    /// `tools/call`; returns the wire-shaped `CallToolResult`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<Value, RequestError> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let result = self.service.call_tool(params).await.map_err(classify)?;
        serde_json::to_value(&result).map_err(|e| RequestError::Remote(e.to_string()))
    }

    /// `resources/list` (all pages), wire-shaped.
    pub async fn list_resources(&self) -> Result<Vec<Value>, RequestError> {
        let resources = self.service.list_all_resources().await.map_err(classify)?;
        Ok(resources
            .iter()
            .filter_map(|r| serde_json::to_value(r).ok())
            .collect())
    }

    /// `resources/read`; returns the wire-shaped `ReadResourceResult`.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, RequestError> {
        let result = self
            .service
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(classify)?;
        serde_json::to_value(&result).map_err(|e| RequestError::Remote(e.to_string()))
    }

    /// `resources/templates/list` (all pages), wire-shaped.
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, RequestError> {
        let templates = self
            .service
            .list_all_resource_templates()
            .await
            .map_err(classify)?;
        Ok(templates
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect())
    }

    /// `resources/subscribe` for `uri`, once per connection; `false` when
    /// it was subscribed already.
    #[allow(deprecated)] // legacy-only in rmcp, but the 2025 revisions' way
    pub async fn subscribe(&self, uri: &str) -> Result<bool, RequestError> {
        if !self.subscribed.lock().insert(uri.to_owned()) {
            return Ok(false);
        }
        let params = rmcp::model::SubscribeRequestParams::new(uri);
        if let Err(e) = self.service.subscribe(params).await {
            self.subscribed.lock().remove(uri);
            return Err(classify(e));
        }
        Ok(true)
    }

    /// `prompts/list` (all pages), wire-shaped.
    pub async fn list_prompts(&self) -> Result<Vec<Value>, RequestError> {
        let prompts = self.service.list_all_prompts().await.map_err(classify)?;
        Ok(prompts
            .iter()
            .filter_map(|p| serde_json::to_value(p).ok())
            .collect())
    }

    /// `prompts/get`; returns the wire-shaped `GetPromptResult`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, RequestError> {
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params.arguments = Some(arguments);
        }
        let result = self.service.get_prompt(params).await.map_err(classify)?;
        serde_json::to_value(&result).map_err(|e| RequestError::Remote(e.to_string()))
    }
}
