//! The rmcp `ServerHandler` behind [`McpServerSpec`]: converts between the
//! spec's plain JSON and rmcp's typed model. With `http`, the only place
//! the server side touches rmcp.
//!
//! Logging, sampling and `resources/subscribe` are deprecated in rmcp (the
//! 2026-07-28 protocol drops them) but are part of the 2025 revisions that
//! clients and the conformance suite speak, hence the `allow`.
#![allow(deprecated)]

use std::collections::BTreeSet;
use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
    ServerConfig, SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::{McpServerSpec, ServeError, ToolCallContext, level_rank};

fn from_json<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// State of one client connection.
#[derive(Default)]
struct ConnState {
    /// Minimum log level rank set by `logging/setLevel` (none: everything).
    min_level: Option<usize>,
    /// URIs subscribed with `resources/subscribe`.
    subscriptions: BTreeSet<String>,
}

/// The peer plus connection state, handed to tool handlers.
#[derive(Clone)]
pub(crate) struct PeerHandle {
    peer: Peer<RoleServer>,
    state: Arc<Mutex<ConnState>>,
}

impl PeerHandle {
    fn client_has(&self, capability: &str) -> bool {
        self.peer
            .peer_info()
            .map(|info| to_json(&*info))
            .and_then(|v| {
                v.get("capabilities")
                    .and_then(|c| c.get(capability))
                    .cloned()
            })
            .is_some_and(|c| !c.is_null())
    }

    pub async fn log(&self, level: &str, data: Value) -> Result<(), ServeError> {
        let rank = level_rank(level)
            .ok_or_else(|| ServeError::Invalid(format!("unknown log level {level:?}")))?;
        if self.state.lock().min_level.is_some_and(|min| rank < min) {
            return Ok(());
        }
        let params = serde_json::from_value(json!({"level": level, "data": data}))
            .map_err(|e| ServeError::Invalid(e.to_string()))?;
        self.peer
            .notify_logging_message(params)
            .await
            .map_err(|e| ServeError::Client(e.to_string()))
    }

    pub async fn progress(&self, params: Value) -> Result<(), ServeError> {
        let params =
            serde_json::from_value(params).map_err(|e| ServeError::Invalid(e.to_string()))?;
        self.peer
            .notify_progress(params)
            .await
            .map_err(|e| ServeError::Client(e.to_string()))
    }

    pub async fn create_message(&self, params: Value) -> Result<Value, ServeError> {
        if !self.client_has("sampling") {
            return Err(ServeError::Unsupported("sampling"));
        }
        let params =
            serde_json::from_value(params).map_err(|e| ServeError::Invalid(e.to_string()))?;
        let result = self
            .peer
            .create_message(params)
            .await
            .map_err(|e| ServeError::Client(e.to_string()))?;
        Ok(to_json(&result))
    }

    pub async fn resource_updated(&self, uri: &str) -> Result<bool, ServeError> {
        if !self.state.lock().subscriptions.contains(uri) {
            return Ok(false);
        }
        self.peer
            .notify_resource_updated(rmcp::model::ResourceUpdatedNotificationParam::new(uri))
            .await
            .map_err(|e| ServeError::Client(e.to_string()))?;
        Ok(true)
    }

    pub async fn elicit(&self, mut params: Value) -> Result<Value, ServeError> {
        if !self.client_has("elicitation") {
            return Err(ServeError::Unsupported("elicitation"));
        }
        if let Some(obj) = params.as_object_mut() {
            obj.entry("mode").or_insert_with(|| json!("form"));
        }
        let params =
            serde_json::from_value(params).map_err(|e| ServeError::Invalid(e.to_string()))?;
        let result = self
            .peer
            .create_elicitation(params)
            .await
            .map_err(|e| ServeError::Client(e.to_string()))?;
        Ok(to_json(&result))
    }
}

/// One connection's handler.
#[derive(Clone)]
pub(crate) struct Handler {
    spec: Arc<McpServerSpec>,
    state: Arc<Mutex<ConnState>>,
}

impl Handler {
    pub fn new(spec: Arc<McpServerSpec>) -> Self {
        Handler {
            spec,
            state: Arc::default(),
        }
    }
}

/// Names of `required` properties missing from `args`.
fn missing_required(schema: &Value, args: &Map<String, Value>) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|req| {
            req.iter()
                .filter_map(Value::as_str)
                .filter(|k| !args.contains_key(*k))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let caps: ServerCapabilities =
            serde_json::from_value(self.spec.capabilities()).unwrap_or_default();
        let mut info = ServerConfig::new(caps).with_server_info(Implementation::new(
            self.spec.name.clone(),
            self.spec.version.clone(),
        ));
        if let Some(text) = &self.spec.instructions {
            info = info.with_instructions(text.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Value> = self.spec.tools.iter().map(|t| t.to_json()).collect();
        from_json(json!({ "tools": tools }))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.spec.tools.iter().find(|t| t.name == request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                None,
            ));
        };
        let args = request.arguments.clone().unwrap_or_default();
        let missing = missing_required(&tool.input_schema, &args);
        if !missing.is_empty() {
            let result = super::ServeToolResult::error(format!(
                "missing required argument(s): {}",
                missing.join(", ")
            ));
            return Ok(from_json::<CallToolResult>(result.0)?.into());
        }
        let progress_token = context
            .meta
            .get_progress_token()
            .map(|t| to_json(&t))
            .or_else(|| {
                request
                    .meta
                    .as_ref()
                    .and_then(|m| m.get_progress_token())
                    .map(|t| to_json(&t))
            });
        let ctx = ToolCallContext {
            peer: Some(PeerHandle {
                peer: context.peer.clone(),
                state: self.state.clone(),
            }),
            progress_token,
            cancel: context.ct.clone(),
        };
        let result = (tool.handler)(args, ctx).await;
        Ok(from_json::<CallToolResult>(result.0)?.into())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = to_json(&request);
        let level = level
            .get("level")
            .and_then(Value::as_str)
            .unwrap_or("debug");
        let rank = level_rank(level)
            .ok_or_else(|| ErrorData::invalid_params(format!("unknown level {level}"), None))?;
        self.state.lock().min_level = Some(rank);
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources: Vec<Value> = self
            .spec
            .resources
            .iter()
            .map(|r| r.listing.clone())
            .collect();
        from_json(json!({ "resources": resources }))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates: Vec<Value> = self
            .spec
            .templates
            .iter()
            .map(|t| t.listing.clone())
            .collect();
        from_json(json!({ "resourceTemplates": templates }))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match self.spec.find_resource(&request.uri) {
            Some(contents) => {
                Ok(from_json::<ReadResourceResult>(json!({ "contents": contents }))?.into())
            }
            None => Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                Some(json!({ "uri": request.uri })),
            )),
        }
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = to_json(&request)
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        self.state.lock().subscriptions.insert(uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = to_json(&request);
        if let Some(uri) = uri.get("uri").and_then(Value::as_str) {
            self.state.lock().subscriptions.remove(uri);
        }
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts: Vec<Value> = self.spec.prompts.iter().map(|p| p.to_json()).collect();
        from_json(json!({ "prompts": prompts }))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some(prompt) = self.spec.prompts.iter().find(|p| p.name == request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown prompt: {}", request.name),
                None,
            ));
        };
        let args = request.arguments.clone().unwrap_or_default();
        let missing: Vec<&str> = prompt
            .arguments
            .iter()
            .filter(|a| a.required && !args.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(ErrorData::invalid_params(
                format!("missing required argument(s): {}", missing.join(", ")),
                None,
            ));
        }
        let messages = (prompt.get)(&args).map_err(|e| ErrorData::invalid_params(e, None))?;
        Ok(from_json::<GetPromptResult>(json!({
            "description": prompt.description,
            "messages": messages,
        }))?
        .into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let req = to_json(&request);
        let values = match &self.spec.complete {
            Some(f) => f(
                req.get("ref").unwrap_or(&Value::Null),
                req.pointer("/argument/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                req.pointer("/argument/value")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            ),
            None => Vec::new(),
        };
        let total = values.len();
        from_json(json!({"completion": {"values": values, "total": total, "hasMore": false}}))
    }
}

/// Serves `spec` on stdin/stdout until the client disconnects.
pub(crate) async fn serve_stdio(spec: McpServerSpec) -> Result<(), ServeError> {
    let handler = Handler::new(Arc::new(spec));
    let running = handler
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Transport(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServeError::Transport(e.to_string()))?;
    Ok(())
}
