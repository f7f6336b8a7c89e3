//! The server side: expose tools, resources and prompts to MCP clients over
//! stdio or streamable HTTP.
//!
//! Describe the server with an [`McpServerSpec`] (plain JSON in and out, no
//! `rmcp` types), then run it with [`serve_stdio`] or [`HttpServer::bind`].
//! All `rmcp` server usage lives in the private `handler` and `http`
//! modules, as the client side's lives in `client`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tascer_mcp::ServeError> {
//! use serde_json::json;
//! use tascer_mcp::{McpServerSpec, ServeToolResult, ServedTool, serve_stdio};
//!
//! let spec = McpServerSpec::new("demo", "1.0.0").tool(ServedTool::new(
//!     "echo",
//!     "Echoes its input",
//!     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
//!     |args, _ctx| async move {
//!         ServeToolResult::text(args.get("text").and_then(|t| t.as_str()).unwrap_or_default())
//!     },
//! ));
//! serve_stdio(spec).await
//! # }
//! ```

mod conformance;
mod handler;
mod http;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub use conformance::conformance_spec;
pub use http::HttpServer;

/// What can go wrong while serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The listening socket could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The transport failed (handshake or I/O).
    #[error("MCP server transport failed: {0}")]
    Transport(String),
    /// A request to the client (sampling, elicitation) or a notification
    /// failed.
    #[error("request to the MCP client failed: {0}")]
    Client(String),
    /// The client did not declare the capability a request needs.
    #[error("the MCP client does not support {0} (capability not declared at initialize)")]
    Unsupported(&'static str),
    /// A value could not be converted to or from the protocol's shape.
    #[error("invalid MCP message: {0}")]
    Invalid(String),
}

/// Boxed future returned by handlers.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

type ToolFn =
    dyn Fn(Map<String, Value>, ToolCallContext) -> BoxFuture<ServeToolResult> + Send + Sync;
type TemplateFn = dyn Fn(&str, &BTreeMap<String, String>) -> Option<Value> + Send + Sync;
type PromptFn = dyn Fn(&Map<String, Value>) -> Result<Value, String> + Send + Sync;
type CompleteFn = dyn Fn(&Value, &str, &str) -> Vec<String> + Send + Sync;

/// The result of a served tool call: a wire-shaped `CallToolResult`
/// (`{content: [...], isError?, structuredContent?}`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServeToolResult(pub Value);

impl ServeToolResult {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        ServeToolResult(json!({"content": [{"type": "text", "text": text.into()}]}))
    }

    /// One text block with `isError: true` (a tool failure the caller sees).
    pub fn error(text: impl Into<String>) -> Self {
        ServeToolResult(
            json!({"content": [{"type": "text", "text": text.into()}], "isError": true}),
        )
    }

    /// These content blocks (`[{"type": "text", ...}, {"type": "image", ...}]`).
    pub fn content(blocks: Vec<Value>) -> Self {
        ServeToolResult(json!({"content": blocks}))
    }

    /// Text plus `structuredContent` (the same data as JSON).
    pub fn structured(text: impl Into<String>, data: Value, is_error: bool) -> Self {
        let mut v = json!({
            "content": [{"type": "text", "text": text.into()}],
            "structuredContent": data,
        });
        if is_error {
            v["isError"] = Value::Bool(true);
        }
        ServeToolResult(v)
    }

    /// True when `isError` is set.
    pub fn is_error(&self) -> bool {
        self.0.get("isError").and_then(Value::as_bool) == Some(true)
    }
}

/// A tool offered to clients.
#[derive(Clone)]
pub struct ServedTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) annotations: Option<Value>,
    pub(crate) handler: Arc<ToolFn>,
}

impl std::fmt::Debug for ServedTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ServedTool {
    /// A tool named `name` with a JSON Schema for its input; `handler`
    /// gets the arguments (an empty map when the client sent none) after
    /// the schema's `required` fields were checked.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Map<String, Value>, ToolCallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ServeToolResult> + Send + 'static,
    {
        ServedTool {
            name: name.into(),
            description: description.into(),
            input_schema,
            annotations: None,
            handler: Arc::new(move |args, ctx| Box::pin(handler(args, ctx))),
        }
    }

    /// Sets `annotations` (`{"readOnlyHint": true, ...}`).
    pub fn annotations(mut self, annotations: Value) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `tools/list` entry of this tool.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        });
        if let Some(a) = &self.annotations {
            v["annotations"] = a.clone();
        }
        v
    }
}

/// A resource with fixed contents.
#[derive(Debug, Clone)]
pub struct ServedResource {
    /// `{uri, name, description?, mimeType?}` as listed.
    pub(crate) listing: Value,
    /// The `contents` array returned by `resources/read`.
    pub(crate) contents: Value,
}

impl ServedResource {
    /// A text resource.
    pub fn text(
        uri: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        let (uri, mime) = (uri.into(), mime_type.into());
        ServedResource {
            listing: json!({"uri": uri, "name": name.into(), "description": description.into(), "mimeType": mime}),
            contents: json!([{"uri": uri, "mimeType": mime, "text": text.into()}]),
        }
    }

    /// A binary resource (`blob_base64` is the base64 of the bytes).
    pub fn blob(
        uri: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        mime_type: impl Into<String>,
        blob_base64: impl Into<String>,
    ) -> Self {
        let (uri, mime) = (uri.into(), mime_type.into());
        ServedResource {
            listing: json!({"uri": uri, "name": name.into(), "description": description.into(), "mimeType": mime}),
            contents: json!([{"uri": uri, "mimeType": mime, "blob": blob_base64.into()}]),
        }
    }

    fn uri(&self) -> &str {
        self.listing
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// A resource template (`test://items/{id}`): `read` gets the URI and the
/// values of its `{variables}` and returns the `contents` array, or `None`
/// when there is no such resource.
#[derive(Clone)]
pub struct ServedResourceTemplate {
    pub(crate) listing: Value,
    pub(crate) read: Arc<TemplateFn>,
}

impl std::fmt::Debug for ServedResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedResourceTemplate")
            .field("listing", &self.listing)
            .finish_non_exhaustive()
    }
}

impl ServedResourceTemplate {
    /// A template; see the type's documentation.
    pub fn new(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        mime_type: impl Into<String>,
        read: impl Fn(&str, &BTreeMap<String, String>) -> Option<Value> + Send + Sync + 'static,
    ) -> Self {
        ServedResourceTemplate {
            listing: json!({
                "uriTemplate": uri_template.into(),
                "name": name.into(),
                "description": description.into(),
                "mimeType": mime_type.into(),
            }),
            read: Arc::new(read),
        }
    }

    fn template(&self) -> &str {
        self.listing
            .get("uriTemplate")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// Matches `uri` against a simple RFC 6570 level-1 template
/// (`prefix/{a}/mid/{b}`); returns the variables.
pub(crate) fn match_template(template: &str, uri: &str) -> Option<BTreeMap<String, String>> {
    let mut vars = BTreeMap::new();
    let mut rest = uri;
    let mut tpl = template;
    loop {
        match tpl.find('{') {
            None => return (tpl == rest).then_some(vars),
            Some(open) => {
                let literal = &tpl[..open];
                rest = rest.strip_prefix(literal)?;
                let close = tpl[open..].find('}')? + open;
                let name = &tpl[open + 1..close];
                tpl = &tpl[close + 1..];
                // The variable runs to the next literal (or the end).
                let next_literal = tpl.find('{').map_or(tpl, |i| &tpl[..i]);
                let end = if next_literal.is_empty() {
                    rest.len()
                } else {
                    rest.find(next_literal)?
                };
                let value = &rest[..end];
                if value.is_empty() || value.contains('/') && !next_literal.is_empty() {
                    return None;
                }
                vars.insert(name.to_owned(), value.to_owned());
                rest = &rest[end..];
            }
        }
    }
}

/// A prompt argument as listed.
#[derive(Debug, Clone)]
pub struct PromptArg {
    /// Argument name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Whether the client must send it.
    pub required: bool,
}

impl PromptArg {
    /// A required argument.
    pub fn required(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptArg {
            name: name.into(),
            description: description.into(),
            required: true,
        }
    }
}

/// A prompt: `get` gets the arguments and returns the `messages` array.
#[derive(Clone)]
pub struct ServedPrompt {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) arguments: Vec<PromptArg>,
    pub(crate) get: Arc<PromptFn>,
}

impl std::fmt::Debug for ServedPrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedPrompt")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ServedPrompt {
    /// A prompt; see the type's documentation. Missing required arguments
    /// are rejected before `get` runs.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        arguments: Vec<PromptArg>,
        get: impl Fn(&Map<String, Value>) -> Result<Value, String> + Send + Sync + 'static,
    ) -> Self {
        ServedPrompt {
            name: name.into(),
            description: description.into(),
            arguments,
            get: Arc::new(get),
        }
    }

    fn to_json(&self) -> Value {
        let args: Vec<Value> = self
            .arguments
            .iter()
            .map(|a| json!({"name": a.name, "description": a.description, "required": a.required}))
            .collect();
        json!({"name": self.name, "description": self.description, "arguments": args})
    }
}

/// Everything a server offers. Capabilities follow from what is set:
/// `tools` and `logging` always; `resources` (with `subscribe`) when a
/// resource or template is set; `prompts` when a prompt is; `completions`
/// when a completion function is.
#[derive(Clone, Default)]
pub struct McpServerSpec {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    pub(crate) tools: Vec<ServedTool>,
    pub(crate) resources: Vec<ServedResource>,
    pub(crate) templates: Vec<ServedResourceTemplate>,
    pub(crate) prompts: Vec<ServedPrompt>,
    pub(crate) complete: Option<Arc<CompleteFn>>,
}

impl std::fmt::Debug for McpServerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerSpec")
            .field("name", &self.name)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl McpServerSpec {
    /// An empty server reporting `serverInfo {name, version}`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        McpServerSpec {
            name: name.into(),
            version: version.into(),
            ..McpServerSpec::default()
        }
    }

    /// `instructions` sent with the initialize result.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: ServedTool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds a fixed resource.
    pub fn resource(mut self, resource: ServedResource) -> Self {
        self.resources.push(resource);
        self
    }

    /// Adds a resource template.
    pub fn resource_template(mut self, template: ServedResourceTemplate) -> Self {
        self.templates.push(template);
        self
    }

    /// Adds a prompt.
    pub fn prompt(mut self, prompt: ServedPrompt) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Sets the `completion/complete` handler: `(ref, argument name,
    /// partial value) -> values`.
    pub fn completion(
        mut self,
        complete: impl Fn(&Value, &str, &str) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        self.complete = Some(Arc::new(complete));
        self
    }

    /// The served tools.
    pub fn tools(&self) -> &[ServedTool] {
        &self.tools
    }

    /// The `capabilities` object of the initialize result.
    pub(crate) fn capabilities(&self) -> Value {
        let mut caps = json!({"tools": {"listChanged": false}, "logging": {}});
        if !self.resources.is_empty() || !self.templates.is_empty() {
            caps["resources"] = json!({"subscribe": true, "listChanged": false});
        }
        if !self.prompts.is_empty() {
            caps["prompts"] = json!({"listChanged": false});
        }
        if self.complete.is_some() {
            caps["completions"] = json!({});
        }
        caps
    }

    pub(crate) fn find_resource(&self, uri: &str) -> Option<Value> {
        if let Some(r) = self.resources.iter().find(|r| r.uri() == uri) {
            return Some(r.contents.clone());
        }
        self.templates.iter().find_map(|t| {
            let vars = match_template(t.template(), uri)?;
            (t.read)(uri, &vars)
        })
    }
}

/// Severity order of MCP log levels (RFC 5424 names).
pub(crate) const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

pub(crate) fn level_rank(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| *l == level)
}

/// What a tool handler can do besides returning a result: notify the
/// client (log, progress) and ask it things (sampling, elicitation).
#[derive(Clone)]
pub struct ToolCallContext {
    pub(crate) peer: Option<handler::PeerHandle>,
    pub(crate) progress_token: Option<Value>,
    pub(crate) cancel: CancellationToken,
}

impl std::fmt::Debug for ToolCallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCallContext")
            .field("progress_token", &self.progress_token)
            .finish_non_exhaustive()
    }
}

impl ToolCallContext {
    /// A context with no client behind it (notifications are dropped,
    /// requests fail): for calling handlers directly, e.g. in tests.
    pub fn detached() -> Self {
        ToolCallContext {
            peer: None,
            progress_token: None,
            cancel: CancellationToken::new(),
        }
    }

    /// Cancelled when the client cancels the request or disconnects.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the request carried `_meta.progressToken`.
    pub fn has_progress_token(&self) -> bool {
        self.progress_token.is_some()
    }

    /// Sends `notifications/message` at `level` (`debug` … `emergency`)
    /// unless the client set a higher level with `logging/setLevel`.
    pub async fn log(&self, level: &str, data: Value) -> Result<(), ServeError> {
        match &self.peer {
            Some(peer) => peer.log(level, data).await,
            None => Ok(()),
        }
    }

    /// Sends `notifications/progress` when the request carried a progress
    /// token (otherwise does nothing).
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ServeError> {
        let (Some(peer), Some(token)) = (&self.peer, &self.progress_token) else {
            return Ok(());
        };
        let mut params = json!({"progressToken": token, "progress": progress});
        if let Some(t) = total {
            params["total"] = json!(t);
        }
        if let Some(m) = message {
            params["message"] = json!(m);
        }
        peer.progress(params).await
    }

    /// `sampling/createMessage` with these wire-shaped params; returns the
    /// wire-shaped result.
    pub async fn create_message(&self, params: Value) -> Result<Value, ServeError> {
        match &self.peer {
            Some(peer) => peer.create_message(params).await,
            None => Err(ServeError::Unsupported("sampling")),
        }
    }

    /// `elicitation/create` with these wire-shaped params (`{message,
    /// requestedSchema}`); returns `{action, content?}`.
    pub async fn elicit(&self, params: Value) -> Result<Value, ServeError> {
        match &self.peer {
            Some(peer) => peer.elicit(params).await,
            None => Err(ServeError::Unsupported("elicitation")),
        }
    }

    /// Sends `notifications/resources/updated` for `uri` when the client
    /// subscribed to it; whether it was sent.
    pub async fn resource_updated(&self, uri: &str) -> Result<bool, ServeError> {
        match &self.peer {
            Some(peer) => peer.resource_updated(uri).await,
            None => Ok(false),
        }
    }
}

/// Serves `spec` over standard input/output until the client closes it.
pub async fn serve_stdio(spec: McpServerSpec) -> Result<(), ServeError> {
    handler::serve_stdio(spec).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn templates_match() {
        let v = match_template("test://template/{id}/data", "test://template/123/data").unwrap();
        assert_eq!(v["id"], "123");
        assert!(match_template("test://template/{id}/data", "test://template/123/x").is_none());
        assert!(match_template("test://template/{id}/data", "test://other/1/data").is_none());
        let v = match_template("file:///{path}", "file:///a").unwrap();
        assert_eq!(v["path"], "a");
        assert!(
            match_template("test://static", "test://static")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn results() {
        assert!(ServeToolResult::error("x").is_error());
        assert!(!ServeToolResult::text("x").is_error());
        let s = ServeToolResult::structured("t", json!({"a": 1}), true);
        assert!(s.is_error());
        assert_eq!(s.0["structuredContent"]["a"], 1);
    }
}
