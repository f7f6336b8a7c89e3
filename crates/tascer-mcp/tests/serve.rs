//! The server side over streamable HTTP, exercised with this crate's own
//! client (McpManager) and raw HTTP: the conformance fixture server, tool
//! results, resources, argument checks, Host validation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tascer_mcp::{
    HttpServer, McpManager, McpServerConfig, McpServerSpec, McpStatus, ServeToolResult, ServedTool,
    conformance_spec,
};

async fn start(spec: McpServerSpec) -> HttpServer {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    HttpServer::bind(spec, addr).await.unwrap()
}

async fn client(url: String) -> McpManager {
    let configs = BTreeMap::from([(
        "srv".to_owned(),
        McpServerConfig::Http {
            url,
            headers: BTreeMap::new(),
            oauth: None,
            permissions: Default::default(),
        },
    )]);
    McpManager::connect_all(configs, Duration::from_secs(10)).await
}

#[tokio::test]
async fn conformance_fixture_over_http() {
    let server = start(conformance_spec("0.0.0-test")).await;
    let mcp = client(server.url()).await;
    let status = &mcp.statuses()[0];
    assert_eq!(status.status, McpStatus::Connected, "{status:?}");
    assert_eq!(
        status.server_info.as_ref().unwrap()["name"],
        "tascer-conformance"
    );
    assert!(status.tools.iter().any(|t| t == "json_schema_2020_12_tool"));

    let tools = mcp.tools().await;
    let find = |name: &str| {
        tools
            .iter()
            .find(|t| t.name() == format!("mcp__srv__{name}"))
            .unwrap()
            .clone()
    };
    let ctx = common::ctx();
    let out = find("test_simple_text").call(json!({}), &ctx).await;
    assert!(!out.is_error);
    assert_eq!(
        out.content.to_text(),
        "This is a simple text response for testing."
    );
    let out = find("test_error_handling").call(json!({}), &ctx).await;
    assert!(out.is_error);
    // Progress and logging need no client support to succeed.
    let out = find("test_tool_with_logging").call(json!({}), &ctx).await;
    assert!(!out.is_error, "{out:?}");
    // Sampling: our client declares no sampling capability.
    let out = find("test_sampling")
        .call(json!({"prompt": "hi"}), &ctx)
        .await;
    assert!(
        out.is_error && out.content.to_text().contains("sampling"),
        "{out:?}"
    );
    // Required arguments are checked before the handler runs.
    let out = find("test_sampling").call(json!({}), &ctx).await;
    assert!(
        out.is_error
            && out
                .content
                .to_text()
                .contains("missing required argument(s): prompt"),
        "{out:?}"
    );
    // The 2020-12 schema keywords survive tools/list.
    let schema = find("json_schema_2020_12_tool").input_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert!(schema["$defs"]["address"].is_object());

    // Resources, fixed and templated.
    let read = tools
        .iter()
        .find(|t| t.name() == "ReadMcpResourceTool")
        .unwrap();
    let out = read
        .call(
            json!({"server": "srv", "uri": "test://template/42/data"}),
            &ctx,
        )
        .await;
    assert!(!out.is_error, "{out:?}");
    let body: Value = serde_json::from_str(&out.content.to_text()).unwrap();
    let text: Value = serde_json::from_str(body["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["id"], "42");
    let out = read
        .call(json!({"server": "srv", "uri": "test://nope"}), &ctx)
        .await;
    assert!(out.is_error, "{out:?}");
    let list = tools
        .iter()
        .find(|t| t.name() == "ListMcpResourcesTool")
        .unwrap();
    let out = list.call(json!({}), &ctx).await;
    assert!(
        out.content.to_text().contains("test://static-binary"),
        "{out:?}"
    );

    drop(mcp);
    server.shutdown();
    server.wait().await.unwrap();
}

#[tokio::test]
async fn rejects_foreign_host_headers() {
    let server = start(McpServerSpec::new("t", "1")).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let http = reqwest::Client::new();
    let post = |host: Option<&str>| {
        let mut req = http
            .post(server.url())
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(init.to_string());
        if let Some(h) = host {
            req = req
                .header("Host", h)
                .header("Origin", format!("http://{h}"));
        }
        req.send()
    };
    let evil = post(Some("evil.example.com")).await.unwrap();
    assert!(evil.status().is_client_error(), "{}", evil.status());
    let local = post(None).await.unwrap();
    assert!(local.status().is_success(), "{}", local.status());
    server.shutdown();
}

#[tokio::test]
async fn custom_tools_get_arguments_and_context() {
    let spec = McpServerSpec::new("custom", "1.2.3").tool(ServedTool::new(
        "echo",
        "Echoes",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        |args, ctx| async move {
            let _ = ctx.progress(1.0, Some(1.0), None).await;
            ServeToolResult::structured(
                args["text"].as_str().unwrap_or_default(),
                json!({"echo": args["text"]}),
                false,
            )
        },
    ));
    assert_eq!(spec.tools().len(), 1);
    let server = start(spec).await;
    let mcp = client(server.url()).await;
    assert_eq!(
        mcp.statuses()[0].server_info.as_ref().unwrap()["version"],
        "1.2.3"
    );
    let tools = mcp.tools().await;
    let echo = tools.iter().find(|t| t.name() == "mcp__srv__echo").unwrap();
    let out = echo.call(json!({"text": "hi"}), &common::ctx()).await;
    assert_eq!(out.content.to_text(), "hi");
    assert_eq!(out.raw.unwrap()["structuredContent"]["echo"], "hi");
    server.shutdown();
}

/// With a bearer token, a client that sends it connects and one that does
/// not is refused with 401 and a JSON-RPC error body.
#[tokio::test]
async fn bearer_token_is_required_when_configured() {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let token = "s3cret-token-for-the-test";
    let server =
        HttpServer::bind_with_token(conformance_spec("0.0.0-test"), addr, Some(token.to_owned()))
            .await
            .unwrap();

    let with = |headers: BTreeMap<String, String>| {
        let url = server.url();
        async move {
            let configs = BTreeMap::from([(
                "srv".to_owned(),
                McpServerConfig::Http {
                    url,
                    headers,
                    oauth: None,
                    permissions: Default::default(),
                },
            )]);
            McpManager::connect_all(configs, Duration::from_secs(10)).await
        }
    };
    let good = with(BTreeMap::from([(
        "Authorization".to_owned(),
        format!("Bearer {token}"),
    )]))
    .await;
    assert_eq!(
        good.statuses()[0].status,
        McpStatus::Connected,
        "{:?}",
        good.statuses()
    );
    // Without a header the client would log in with OAuth, which an
    // unattended manager cannot do; with a wrong one the 401 is reported.
    for (bad, reason) in [
        (
            BTreeMap::new(),
            "needs an OAuth login: run `tascer mcp login srv`",
        ),
        (
            BTreeMap::from([("Authorization".to_owned(), "Bearer wrong".to_owned())]),
            "Auth required",
        ),
    ] {
        let refused = with(bad).await;
        let status = &refused.statuses()[0];
        assert_eq!(status.status, McpStatus::Failed, "{status:?}");
        let error = status.error.as_deref().unwrap_or_default();
        assert!(error.contains(reason), "{error}");
    }

    let response = reqwest::Client::new()
        .post(server.url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32001, "{body}");

    assert!(
        HttpServer::bind_with_token(conformance_spec("x"), addr, Some(String::new()))
            .await
            .is_err(),
        "an empty token is refused"
    );
    server.shutdown();
}
