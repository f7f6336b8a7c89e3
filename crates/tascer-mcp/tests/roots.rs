//! `roots/list`: a server (rmcp, streamable HTTP on loopback) whose tool
//! asks the client for its roots gets the directories of
//! `McpOptions::roots` as `file://` URIs; a client without roots does not
//! declare the capability and answers an empty list.
#![allow(clippy::unwrap_used, clippy::expect_used, deprecated)]

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use tascer_core::ToolContext;
use tascer_mcp::{McpManager, McpOptions, McpServerConfig};
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
struct RootsServer;

impl ServerHandler for RootsServer {
    fn get_info(&self) -> ServerConfig {
        let caps: ServerCapabilities = serde_json::from_value(json!({"tools": {}})).unwrap();
        ServerConfig::new(caps).with_server_info(Implementation::new("roots", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(serde_json::from_value(json!({"tools": [{
            "name": "roots", "inputSchema": {"type": "object"}
        }]}))
        .unwrap())
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context
            .peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some());
        let text = match context.peer.list_roots().await {
            Ok(r) => format!(
                "declared={declared} {}",
                serde_json::to_string(&r.roots).unwrap()
            ),
            Err(e) => format!("declared={declared} error: {e}"),
        };
        let result: CallToolResult =
            serde_json::from_value(json!({"content": [{"type": "text", "text": text}]})).unwrap();
        Ok(result.into())
    }
}

async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let service = StreamableHttpService::new(
        || Ok(RootsServer),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

async fn call_roots(url: &str, roots: Vec<std::path::PathBuf>) -> String {
    let configs = BTreeMap::from([(
        "r".to_owned(),
        McpServerConfig::Http {
            url: url.to_owned(),
            headers: BTreeMap::new(),
            oauth: None,
            permissions: Default::default(),
        },
    )]);
    let options = McpOptions {
        startup_timeout: Duration::from_secs(20),
        roots,
        ..McpOptions::default()
    };
    let manager = McpManager::connect_with(configs, options).await;
    let tools = manager.tools().await;
    let tool = tools.iter().find(|t| t.name() == "mcp__r__roots").unwrap();
    let ctx = ToolContext {
        session_id: "s".into(),
        tool_use_id: "t".into(),
        cwd: ToolContext::shared_cwd(std::env::temp_dir()),
        env: Arc::new(HashMap::new()),
        cancel: CancellationToken::new(),
        file_access: None,
    };
    let out = tool.call(json!({}), &ctx).await;
    assert!(!out.is_error, "{:?}", out.content);
    serde_json::to_string(&out.raw).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_gets_the_workspace_and_added_directories() {
    let url = serve().await;
    let ws = tempfile::tempdir().unwrap();
    let extra = tempfile::tempdir().unwrap();
    let text = call_roots(
        &url,
        vec![ws.path().to_path_buf(), extra.path().to_path_buf()],
    )
    .await;
    assert!(text.contains("declared=true"), "{text}");
    for dir in [ws.path(), extra.path()] {
        let uri = format!("file://{}", dir.display());
        assert!(text.contains(&uri), "{uri} in {text}");
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(text.contains(&name), "{text}");
    }

    let text = call_roots(&url, Vec::new()).await;
    assert!(text.contains("declared=false []"), "no roots: {text}");
}
