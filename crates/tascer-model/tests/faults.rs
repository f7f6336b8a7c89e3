//! Retries, fallback, stream faults, errors and cancellation over loopback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use serde_json::json;
use tascer_model::{ModelClient, ModelError, ModelEvent};
use tokio_util::sync::CancellationToken;

fn retries(events: &[ModelEvent]) -> Vec<(u32, Option<u16>, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::Retry {
                attempt,
                status,
                delay_ms,
                ..
            } => Some((*attempt, *status, *delay_ms)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn rate_limit_honours_retry_after() {
    let server = common::mock(json!({"turns": [{
        "text": "ok", "faults": [{"kind": "rate_limit", "retry_after_s": 1}]
    }]}))
    .await;
    let started = Instant::now();
    let (result, events) = common::send(
        common::anthropic(&server.url()),
        &common::request("m", true),
    )
    .await;
    let response = result.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(response.attempts, 2);
    assert_eq!(server.requests().len(), 2);
    assert_eq!(retries(&events), vec![(1, Some(429), 1000)]);
}

#[tokio::test]
async fn server_errors_are_retried_both_wires() {
    let scenario = json!({"turns": [{
        "text": "ok", "faults": [{"kind": "server_error", "status": 500}, {"kind": "server_error", "status": 503}]
    }]});
    let server = common::mock(scenario.clone()).await;
    let (result, events) = common::send(
        common::anthropic(&server.url()),
        &common::request("m", false),
    )
    .await;
    assert_eq!(result.unwrap().attempts, 3);
    assert_eq!(server.requests().len(), 3);
    let statuses: Vec<_> = retries(&events).iter().map(|r| r.1).collect();
    assert_eq!(statuses, vec![Some(500), Some(503)]);

    let server = common::mock(scenario).await;
    let (result, _) = common::send(
        common::openai(&server.openai_base_url()),
        &common::request("m", true),
    )
    .await;
    assert_eq!(result.unwrap().attempts, 3);
}

#[tokio::test]
async fn retries_are_bounded() {
    let server = common::mock(json!({"turns": [{
        "text": "ok", "faults": [{"kind": "server_error", "status": 502, "times": 10}]
    }]}))
    .await;
    let mut config = common::anthropic(&server.url());
    config.max_retries = 2;
    let (result, events) = common::send(config, &common::request("m", true)).await;
    let err = result.unwrap_err();
    assert!(
        matches!(err, ModelError::Api { status: 502, .. }),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 3);
    assert_eq!(retries(&events).len(), 2);
}

#[tokio::test]
async fn repeated_overloads_switch_to_fallback_model() {
    let server = common::mock(json!({"turns": [{
        "text": "ok", "faults": [{"kind": "overloaded", "times": 3, "model": "primary"}]
    }]}))
    .await;
    let mut config = common::anthropic(&server.url());
    config.fallback_model = Some("backup".into());
    let (result, events) = common::send(config, &common::request("primary", true)).await;
    let response = result.unwrap();
    assert_eq!(response.model, "backup");
    assert_eq!(response.attempts, 3);
    let models: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(models, ["primary", "primary", "backup"]);
    assert!(events.contains(&ModelEvent::Fallback {
        from: "primary".into(),
        to: "backup".into()
    }));
}

#[tokio::test]
async fn overloads_without_fallback_exhaust_retries() {
    let server = common::mock(json!({"turns": [{
        "text": "ok", "faults": [{"kind": "overloaded", "times": 9}]
    }]}))
    .await;
    let mut config = common::openai(&server.openai_base_url());
    config.max_retries = 1;
    let (result, _) = common::send(config, &common::request("m", false)).await;
    let err = result.unwrap_err();
    assert_eq!(err.status(), Some(529));
    assert!(err.is_retryable());
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn truncated_stream_is_a_typed_error() {
    let fault =
        json!({"turns": [{"text": "hello world", "faults": [{"kind": "truncated_stream"}]}]});
    let server = common::mock(fault.clone()).await;
    let (result, _) = common::send(
        common::anthropic(&server.url()),
        &common::request("m", true),
    )
    .await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::TruncatedStream { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with("anthropic stream (HTTP 200)"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1, "not retried");

    let server = common::mock(fault.clone()).await;
    let (result, _) = common::send(
        common::openai(&server.openai_base_url()),
        &common::request("m", true),
    )
    .await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::TruncatedStream { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with("openai stream (HTTP 200)"),
        "{err}"
    );

    let server = common::mock(fault).await;
    let (result, _) = common::send(
        common::anthropic(&server.url()),
        &common::request("m", false),
    )
    .await;
    let err = result.unwrap_err();
    assert!(
        matches!(err, ModelError::MalformedResponse { status: 200, .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn malformed_delta_is_a_typed_error() {
    let fault = json!({"turns": [{"text": "hello", "faults": [{"kind": "malformed_delta"}]}]});
    let server = common::mock(fault.clone()).await;
    let (result, _) = common::send(
        common::anthropic(&server.url()),
        &common::request("m", true),
    )
    .await;
    let err = result.unwrap_err();
    assert!(
        matches!(err, ModelError::MalformedStream { status: 200, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with(
            "anthropic stream (HTTP 200): event 4 (content_block_delta) is not valid JSON"
        ),
        "{text}"
    );
    assert_eq!(server.requests().len(), 1, "not retried");

    let server = common::mock(fault).await;
    let (result, _) = common::send(
        common::openai(&server.openai_base_url()),
        &common::request("m", true),
    )
    .await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::MalformedStream { .. }), "{err:?}");
    assert!(err.to_string().contains("not valid JSON"), "{err}");
}

#[tokio::test]
async fn bad_request_is_not_retried() {
    let (url, count) = common::fixed_server(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}"#,
    )
    .await;
    let (result, events) = common::send(common::anthropic(&url), &common::request("m", true)).await;
    let err = result.unwrap_err();
    assert_eq!(
        err.to_string(),
        "anthropic API error (HTTP 400, invalid_request_error): max_tokens: too large"
    );
    assert!(!err.is_retryable());
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(events.is_empty());
}

#[tokio::test]
async fn unreachable_base_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut config = common::anthropic(&format!("http://127.0.0.1:{port}"));
    config.max_retries = 1;
    let (result, events) = common::send(config, &common::request("m", true)).await;
    let err = result.unwrap_err();
    assert!(matches!(err, ModelError::Unreachable { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "cannot reach anthropic at http://127.0.0.1:{port}/v1/messages: connection refused"
        )
    );
    assert_eq!(retries(&events).len(), 1);
}

#[tokio::test]
async fn whole_request_timeout() {
    let server = common::mock(json!({"turns": [{"text": "slow", "latency_ms": 3000}]})).await;
    let mut config = common::openai(&server.openai_base_url());
    config.request_timeout = Duration::from_millis(200);
    config.max_retries = 0;
    let started = Instant::now();
    let (result, _) = common::send(config, &common::request("m", true)).await;
    let err = result.unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::Timeout {
                provider: "openai",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.is_retryable());
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn cancellation_during_request_and_backoff() {
    let server = common::mock(json!({"turns": [{"text": "slow", "latency_ms": 5000}]})).await;
    let client = ModelClient::new(common::anthropic(&server.url())).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let result = client
        .send(&common::request("m", true), None, &cancel)
        .await;
    assert!(matches!(result, Err(ModelError::Cancelled)), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(2));

    let server = common::mock(json!({"turns": [{
        "text": "ok", "faults": [{"kind": "rate_limit", "retry_after_s": 30}]
    }]}))
    .await;
    let client = ModelClient::new(common::openai(&server.openai_base_url())).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let result = client
        .send(&common::request("m", false), None, &cancel)
        .await;
    assert!(matches!(result, Err(ModelError::Cancelled)), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(server.requests().len(), 1);

    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let result = client
        .send(&common::request("m", false), None, &cancelled)
        .await;
    assert!(matches!(result, Err(ModelError::Cancelled)));
}
