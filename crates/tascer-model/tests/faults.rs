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

/// Sends a streamed request over both wires against `turn` (a scenario
/// turn as JSON) with `max_retries`; returns (wire, result, events, requests
/// the server saw).
async fn both_wires(
    turn: serde_json::Value,
    max_retries: u32,
) -> Vec<(
    &'static str,
    Result<tascer_model::ModelResponse, ModelError>,
    Vec<ModelEvent>,
    usize,
)> {
    let mut out = Vec::new();
    for wire in ["anthropic", "openai"] {
        let server = common::mock(json!({"turns": [turn.clone()]})).await;
        let mut config = if wire == "anthropic" {
            common::anthropic(&server.url())
        } else {
            common::openai(&server.openai_base_url())
        };
        config.max_retries = max_retries;
        let (result, events) = common::send(config, &common::request("m", true)).await;
        out.push((wire, result, events, server.requests().len()));
    }
    out
}

/// Each fault inside a 200 stream, once: retried, and the answer is the
/// second attempt's, whole.
#[tokio::test]
async fn faults_inside_a_stream_are_retried_both_wires() {
    let faults = [
        json!({"kind": "truncated_stream"}),
        json!({"kind": "malformed_delta"}),
        json!({"kind": "close_after", "events": 4}),
        json!({"kind": "stream_error"}),
    ];
    for fault in faults {
        let turn = json!({"text": "hello world, complete", "faults": [fault.clone()]});
        for (wire, result, events, requests) in both_wires(turn, 2).await {
            let response = result.unwrap_or_else(|e| panic!("{wire} {fault}: {e}"));
            assert_eq!(response.attempts, 2, "{wire} {fault}");
            assert_eq!(requests, 2, "{wire} {fault}");
            assert_eq!(
                response.content,
                vec![tascer_core::ContentBlock::Text {
                    text: "hello world, complete".into()
                }],
                "{wire} {fault}"
            );
            let retries = retries(&events);
            assert_eq!(retries.len(), 1, "{wire} {fault}: {events:?}");
            assert_eq!(retries[0].0, 1);
            // The failed attempt's events were forwarded before the retry;
            // the retry starts again with message_start.
            let retry_at = events
                .iter()
                .position(|e| matches!(e, ModelEvent::Retry { .. }))
                .unwrap();
            let starts = |events: &[ModelEvent]| {
                events
                    .iter()
                    .filter(|e| matches!(e, ModelEvent::Stream(v) if v["type"] == "message_start"))
                    .count()
            };
            assert_eq!(starts(&events[retry_at..]), 1, "{wire} {fault}");
        }
    }
}

/// When the stream faults persist, retries run out and the last fault is
/// reported as a typed error naming the provider and what was wrong.
#[tokio::test]
async fn persistent_stream_faults_exhaust_retries_with_a_typed_error() {
    let cases = [
        (
            json!({"kind": "truncated_stream", "times": 9}),
            "ended early",
        ),
        (
            json!({"kind": "malformed_delta", "times": 9}),
            "not valid JSON",
        ),
        (
            json!({"kind": "close_after", "events": 3, "times": 9}),
            "connection failed after 3 events",
        ),
        (
            json!({"kind": "stream_error", "times": 9}),
            "mock: internal error in the stream",
        ),
    ];
    for (fault, says) in cases {
        let turn = json!({"text": "never", "faults": [fault.clone()]});
        for (wire, result, events, requests) in both_wires(turn, 1).await {
            let err = result.unwrap_err();
            let text = err.to_string();
            assert!(text.starts_with(wire), "{wire} {fault}: {text}");
            assert!(text.contains(says), "{wire} {fault}: {text}");
            assert!(err.is_retryable(), "{wire} {fault}: {err:?}");
            assert!(err.advice().is_some());
            assert_eq!(requests, 2, "{wire} {fault}");
            assert_eq!(retries(&events).len(), 1, "{wire} {fault}");
        }
    }
}

#[tokio::test]
async fn stream_error_stands_for_a_server_error() {
    let turn = json!({"text": "x", "faults": [{"kind": "stream_error"}]});
    for (wire, result, _, _) in both_wires(turn, 0).await {
        let err = result.unwrap_err();
        assert!(
            matches!(err, ModelError::Api { status: 500, .. }),
            "{wire}: {err:?}"
        );
    }
}

#[tokio::test]
async fn truncated_non_streamed_body_is_a_typed_error() {
    let server = common::mock(
        json!({"turns": [{"text": "hello world", "faults": [{"kind": "truncated_stream"}]}]}),
    )
    .await;
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
async fn malformed_delta_names_the_event() {
    let fault = json!({"turns": [{"text": "hello", "faults": [{"kind": "malformed_delta"}]}]});
    let server = common::mock(fault).await;
    let mut config = common::anthropic(&server.url());
    config.max_retries = 0;
    let (result, _) = common::send(config, &common::request("m", true)).await;
    let text = result.unwrap_err().to_string();
    assert!(
        text.starts_with(
            "anthropic stream (HTTP 200): event 4 (content_block_delta) is not valid JSON"
        ),
        "{text}"
    );
}

/// A server that never answers, and one that stalls after a few events:
/// each attempt ends after the idle timeout, is retried, and when retries
/// run out the error says what was awaited.
#[tokio::test]
async fn hanging_and_stalling_servers_time_out_and_are_retried() {
    for (fault, waiting) in [
        (json!({"kind": "hang", "times": 9}), "no response"),
        (
            json!({"kind": "stall_after", "events": 3, "times": 9}),
            "no stream event after 3 events",
        ),
    ] {
        let turn = json!({"text": "never", "faults": [fault.clone()]});
        for wire in ["anthropic", "openai"] {
            let server = common::mock(json!({"turns": [turn.clone()]})).await;
            let mut config = if wire == "anthropic" {
                common::anthropic(&server.url())
            } else {
                common::openai(&server.openai_base_url())
            };
            config.max_retries = 1;
            config.request_timeout = Duration::from_millis(300);
            let started = Instant::now();
            let (result, events) = common::send(config, &common::request("m", true)).await;
            let err = result.unwrap_err();
            assert!(
                matches!(err, ModelError::Timeout { .. }),
                "{wire} {fault}: {err:?}"
            );
            assert_eq!(
                err.to_string(),
                format!("{wire} request timed out: {waiting} for 0.3s"),
            );
            assert_eq!(server.requests().len(), 2, "{wire} {fault}");
            assert_eq!(retries(&events).len(), 1);
            assert!(started.elapsed() < Duration::from_secs(5));
        }
    }
    // A stall once: the retry succeeds.
    let turn = json!({"text": "after a stall", "faults": [{"kind": "stall_after", "events": 2}]});
    let server = common::mock(json!({"turns": [turn]})).await;
    let mut config = common::openai(&server.openai_base_url());
    config.request_timeout = Duration::from_millis(300);
    let (result, _) = common::send(config, &common::request("m", true)).await;
    assert_eq!(result.unwrap().attempts, 2);
}

/// The timeout is between events, not for the whole answer: a stream whose
/// events keep coming is never cut off.
#[tokio::test]
async fn a_slow_but_steady_answer_is_not_cut_off() {
    let server = common::mock(json!({"turns": [{"text": "slow start", "latency_ms": 200}]})).await;
    let mut config = common::anthropic(&server.url());
    config.request_timeout = Duration::from_millis(350);
    config.max_retries = 0;
    let (result, _) = common::send(config, &common::request("m", true)).await;
    assert_eq!(result.unwrap().attempts, 1);
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
async fn slow_first_response_times_out() {
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
