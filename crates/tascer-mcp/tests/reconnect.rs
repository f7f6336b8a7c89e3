//! A remote server that goes away mid-session and comes back a moment
//! later on the same address: the call that finds it dead fails (and says
//! it will be restarted), the next one reconnects with backoff instead of
//! failing at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tascer_core::ToolContext;
use tascer_mcp::{HttpServer, McpManager, McpOptions, McpServerConfig, conformance_spec};
use tokio_util::sync::CancellationToken;

fn ctx() -> ToolContext {
    ToolContext {
        session_id: "s".into(),
        tool_use_id: "t".into(),
        cwd: ToolContext::shared_cwd(std::env::temp_dir()),
        env: Arc::new(HashMap::new()),
        cancel: CancellationToken::new(),
        file_access: None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_comes_back_is_reconnected_with_backoff() {
    let server = HttpServer::bind(
        conformance_spec("0.0.0-test"),
        SocketAddr::from(([127, 0, 0, 1], 0)),
    )
    .await
    .unwrap();
    let addr = server.local_addr();
    let configs = BTreeMap::from([(
        "web".to_owned(),
        McpServerConfig::Http {
            url: server.url(),
            headers: BTreeMap::new(),
            oauth: None,
            permissions: Default::default(),
        },
    )]);
    let options = McpOptions {
        startup_timeout: Duration::from_secs(10),
        tool_timeout: Duration::from_secs(10),
        ..McpOptions::default()
    };
    let manager = McpManager::connect_with(configs, options).await;
    let tools = manager.tools().await;
    let tool = tools
        .iter()
        .find(|t| t.name() == "mcp__web__test_simple_text")
        .unwrap()
        .clone();
    assert!(!tool.call(json!({}), &ctx()).await.is_error);

    server.shutdown();
    server.wait().await.unwrap();
    let down = tool.call(json!({}), &ctx()).await;
    assert!(down.is_error, "the server is gone");

    // It comes back 600 ms later on the same address.
    let back = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(600)).await;
        HttpServer::bind(conformance_spec("0.0.0-test"), addr)
            .await
            .unwrap()
    });
    let started = Instant::now();
    let again = tool.call(json!({}), &ctx()).await;
    assert!(!again.is_error, "reconnected: {:?}", again.content);
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "it waited for the server ({:?})",
        started.elapsed()
    );
    back.await.unwrap().shutdown();
}
