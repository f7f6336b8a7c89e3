//! Request recording, `/_mock/requests`, `/_mock/health`, and the
//! blocking server.

mod common;

use common::*;
use serde_json::json;
use tascer_mock::{MockServer, RecordedRequest, Scenario, Turn};

#[tokio::test]
async fn records_bodies_and_headers_in_order() {
    let server = MockServer::start(Scenario::new().turn(Turn::text("hi")))
        .await
        .unwrap();
    let a = anthropic_body(json!([{"role": "user", "content": "first"}]), false);
    let o = openai_body(json!([{"role": "user", "content": "second"}]), false);
    post(&server, "/v1/messages", &a).await;
    post(&server, "/v1/chat/completions", &o).await;

    let recorded = server.requests();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].path, "/v1/messages");
    assert_eq!(recorded[0].body, a);
    assert_eq!(recorded[0].headers["x-api-key"], "test-key");
    assert_eq!(recorded[0].headers["authorization"], "Bearer test-token");
    assert_eq!(recorded[0].headers["content-type"], "application/json");
    assert_eq!(recorded[1].path, "/v1/chat/completions");
    assert_eq!(recorded[1].body, o);

    let over_http: Vec<RecordedRequest> = reqwest::get(format!("{}/_mock/requests", server.url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(over_http, recorded);

    let health = reqwest::get(format!("{}/_mock/health", server.url()))
        .await
        .unwrap();
    assert_eq!(health.status().as_u16(), 200);
    assert_eq!(health.text().await.unwrap(), "ok");

    server.clear_requests();
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn invalid_json_is_recorded_as_text() {
    let server = MockServer::start(Scenario::new()).await.unwrap();
    let resp = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.openai_base_url()))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let recorded = server.requests();
    assert_eq!(recorded[0].body, json!("{not json"));
}

#[tokio::test]
async fn urls_and_shutdown() {
    let server = MockServer::start(Scenario::new()).await.unwrap();
    let addr = server.addr();
    assert!(addr.ip().is_loopback());
    assert_eq!(server.url(), format!("http://127.0.0.1:{}", addr.port()));
    assert_eq!(
        server.openai_base_url(),
        format!("http://127.0.0.1:{}/v1", addr.port())
    );
    let url = server.url();
    server.shutdown();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    assert!(
        client
            .get(format!("{url}/_mock/health"))
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn concurrent_conversations_get_their_own_turns() {
    let scenario = Scenario::new()
        .turn(Turn::text("first"))
        .turn(Turn::text("second"));
    let server = MockServer::start(scenario).await.unwrap();
    let fresh = anthropic_body(json!([{"role": "user", "content": "a"}]), false);
    let later = anthropic_body(
        json!([{"role": "user", "content": "b"}, {"role": "assistant", "content": "first"},
               {"role": "user", "content": "c"}]),
        false,
    );
    let (x, y) = tokio::join!(
        post(&server, "/v1/messages", &later),
        post(&server, "/v1/messages", &fresh)
    );
    assert!(x.2.contains("\"second\""));
    assert!(y.2.contains("\"first\""));
}

#[test]
fn blocking_server_serves_sync_callers() {
    let server = MockServer::start_blocking(Scenario::new().turn(Turn::text("sync"))).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let body = anthropic_body(json!([{"role": "user", "content": "x"}]), false);
    let (status, _, text) = runtime.block_on(post(&server, "/v1/messages", &body));
    assert_eq!(status, 200);
    assert!(text.contains("\"sync\""));
    assert_eq!(server.requests().len(), 1);
}

/// A request to any other path (Claude Code's `HEAD /api/hello`, say) is
/// recorded with its method and answered 404, so a test sees everything a
/// client sends.
#[tokio::test]
async fn other_requests_are_recorded_and_answered_404() {
    let server = MockServer::start(Scenario::new()).await.unwrap();
    let client = reqwest::Client::new();
    let head = client
        .head(format!("{}/api/hello", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status().as_u16(), 404);
    let post = client
        .post(format!("{}/v1/other?beta=true", server.url()))
        .body("{\"a\": 1}")
        .send()
        .await
        .unwrap();
    assert_eq!(post.status().as_u16(), 404);
    let body: serde_json::Value = post.json().await.unwrap();
    assert_eq!(body["error"]["type"], "not_found_error", "{body}");
    let recorded = server.requests();
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    assert_eq!(
        (recorded[0].method.as_str(), recorded[0].path.as_str()),
        ("HEAD", "/api/hello")
    );
    assert_eq!(
        (recorded[1].method.as_str(), recorded[1].path.as_str()),
        ("POST", "/v1/other")
    );
    assert_eq!(recorded[1].body, json!({"a": 1}));
}
