//! Fault injection: each kind, retries walking through the fault list, the
//! model filter, and per-conversation bookkeeping.

mod common;

use common::*;
use serde_json::{Value, json};
use tascer_mock::{Fault, MockServer, Scenario, Turn};

fn user(text: &str) -> Value {
    json!([{"role": "user", "content": text}])
}

fn is_json(s: &str) -> bool {
    serde_json::from_str::<Value>(s).is_ok()
}

#[tokio::test]
async fn rate_limit_then_normal_answer() {
    let scenario = Scenario::new().turn(Turn::text("ok").with_fault(Fault::rate_limit(2)));
    let server = MockServer::start(scenario).await.unwrap();
    let body = anthropic_body(user("hi"), false);
    let (status, headers, text) = post(&server, "/v1/messages", &body).await;
    assert_eq!(status, 429);
    assert_eq!(headers["retry-after"], "2");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "rate_limit_error");
    assert!(v["error"]["message"].is_string());
    let (status, _, text) = post(&server, "/v1/messages", &body).await;
    assert_eq!(status, 200);
    assert!(text.contains("\"ok\""));
    assert_eq!(
        server.requests().len(),
        2,
        "fault-answered requests are recorded"
    );
}

#[tokio::test]
async fn faults_are_served_in_order_openai() {
    let scenario = Scenario::new().turn(
        Turn::text("finally")
            .with_fault(Fault::rate_limit(1))
            .with_fault(Fault::server_error(502))
            .with_fault(Fault::overloaded()),
    );
    let server = MockServer::start(scenario).await.unwrap();
    let body = openai_body(user("hi"), false);
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let (status, headers, text) = post(&server, "/v1/chat/completions", &body).await;
        statuses.push(status);
        let v: Value = serde_json::from_str(&text).unwrap();
        match status {
            429 => {
                assert_eq!(headers["retry-after"], "1");
                assert_eq!(v["error"]["type"], "rate_limit_error");
                assert_eq!(v["error"]["code"], "rate_limit_exceeded");
            }
            502 | 529 => assert!(v["error"]["message"].is_string()),
            200 => assert_eq!(v["choices"][0]["message"]["content"], "finally"),
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!(statuses, [429, 502, 529, 200]);
}

#[tokio::test]
async fn anthropic_error_types() {
    let scenario = Scenario::new().turn(
        Turn::text("x")
            .with_fault(Fault::server_error(503))
            .with_fault(Fault::overloaded()),
    );
    let server = MockServer::start(scenario).await.unwrap();
    let body = anthropic_body(user("hi"), true);
    let (status, _, text) = post(&server, "/v1/messages", &body).await;
    assert_eq!(status, 503);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["type"], "api_error");
    let (status, _, text) = post(&server, "/v1/messages", &body).await;
    assert_eq!(status, 529);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["type"], "overloaded_error");
    let (status, _, text) = post(&server, "/v1/messages", &body).await;
    assert_eq!(status, 200);
    assemble_anthropic(&parse_sse(&text));
}

#[tokio::test]
async fn overloaded_times_and_model_filter() {
    let scenario = Scenario::new().turn(
        Turn::text("served").with_fault(Fault::overloaded().times(3).for_model("primary-model")),
    );
    let server = MockServer::start(scenario).await.unwrap();
    let mut body = anthropic_body(user("hi"), false);

    // Another model skips the fault without consuming it.
    body["model"] = json!("fallback-model");
    let (status, _, _) = post(&server, "/v1/messages", &body).await;
    assert_eq!(status, 200);

    body["model"] = json!("primary-model");
    for _ in 0..3 {
        let (status, _, _) = post(&server, "/v1/messages", &body).await;
        assert_eq!(status, 529);
    }
    let (status, _, text) = post(&server, "/v1/messages", &body).await;
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["model"], "primary-model");
}

#[tokio::test]
async fn faults_are_tracked_per_conversation_and_turn() {
    let scenario = Scenario::new()
        .turn(Turn::text("one").with_fault(Fault::server_error(500)))
        .turn(Turn::text("two").with_fault(Fault::server_error(500)));
    let server = MockServer::start(scenario).await.unwrap();
    for conversation in ["first", "second"] {
        let body = anthropic_body(user(conversation), false);
        assert_eq!(post(&server, "/v1/messages", &body).await.0, 500);
        assert_eq!(post(&server, "/v1/messages", &body).await.0, 200);
        let history = json!([
            {"role": "user", "content": conversation},
            {"role": "assistant", "content": "one"},
            {"role": "user", "content": "next"}
        ]);
        let body = anthropic_body(history, false);
        assert_eq!(post(&server, "/v1/messages", &body).await.0, 500);
        let (status, _, text) = post(&server, "/v1/messages", &body).await;
        assert_eq!(status, 200);
        assert!(text.contains("\"two\""));
    }
}

#[tokio::test]
async fn truncated_stream_anthropic() {
    let scenario = Scenario::new()
        .turn(Turn::text("a long enough answer").with_fault(Fault::truncated_stream().times(2)));
    let server = MockServer::start(scenario).await.unwrap();
    let (status, _, text) = post(&server, "/v1/messages", &anthropic_body(user("hi"), true)).await;
    assert_eq!(status, 200);
    let events = parse_sse(&text);
    assert!(events.len() >= 2);
    assert!(events.iter().all(|(_, d)| is_json(d)));
    assert_eq!(events[0].0.as_deref(), Some("message_start"));
    assert!(
        events
            .iter()
            .all(|(e, _)| e.as_deref() != Some("message_stop"))
    );
    assert!(
        events
            .iter()
            .all(|(e, _)| e.as_deref() != Some("message_delta"))
    );

    // Non-streaming: half a JSON body.
    let (status, _, text) = post(&server, "/v1/messages", &anthropic_body(user("hi"), false)).await;
    assert_eq!(status, 200);
    assert!(!text.is_empty() && !is_json(&text));

    let (_, _, text) = post(&server, "/v1/messages", &anthropic_body(user("hi"), true)).await;
    let (message, _) = assemble_anthropic(&parse_sse(&text));
    assert_eq!(message["content"][0]["text"], "a long enough answer");
}

#[tokio::test]
async fn truncated_stream_openai() {
    let scenario = Scenario::new()
        .turn(Turn::text("a long enough answer").with_fault(Fault::truncated_stream()));
    let server = MockServer::start(scenario).await.unwrap();
    let (status, _, text) = post(
        &server,
        "/v1/chat/completions",
        &openai_body(user("hi"), true),
    )
    .await;
    assert_eq!(status, 200);
    let events = parse_sse(&text);
    assert!(!events.is_empty());
    assert!(events.iter().all(|(_, d)| d != "[DONE]" && is_json(d)));
    for (_, d) in &events {
        let v: Value = serde_json::from_str(d).unwrap();
        assert!(v["choices"][0]["finish_reason"].is_null());
    }
    let (_, _, text) = post(
        &server,
        "/v1/chat/completions",
        &openai_body(user("hi"), true),
    )
    .await;
    let (content, _, finish, _, _) = assemble_openai(&parse_sse(&text));
    assert_eq!(content.as_deref(), Some("a long enough answer"));
    assert_eq!(finish, "stop");
}

#[tokio::test]
async fn malformed_delta_both_formats() {
    let scenario =
        Scenario::new().turn(Turn::text("fine").with_fault(Fault::malformed_delta().times(2)));
    let server = MockServer::start(scenario).await.unwrap();

    let (status, _, text) = post(&server, "/v1/messages", &anthropic_body(user("a"), true)).await;
    assert_eq!(status, 200);
    let events = parse_sse(&text);
    let (last_event, last_data) = events.last().unwrap();
    assert_eq!(last_event.as_deref(), Some("content_block_delta"));
    assert!(!is_json(last_data));
    assert!(events[..events.len() - 1].iter().all(|(_, d)| is_json(d)));

    let (status, _, text) = post(&server, "/v1/messages", &anthropic_body(user("a"), false)).await;
    assert_eq!(status, 200);
    assert!(!is_json(&text));

    let (status, _, text) = post(
        &server,
        "/v1/chat/completions",
        &openai_body(user("b"), true),
    )
    .await;
    assert_eq!(status, 200);
    let events = parse_sse(&text);
    assert!(!is_json(&events.last().unwrap().1));
    assert!(events.iter().all(|(_, d)| d != "[DONE]"));

    let (_, _, text) = post(
        &server,
        "/v1/chat/completions",
        &openai_body(user("b"), false),
    )
    .await;
    assert!(!is_json(&text));

    let (status, _, text) = post(
        &server,
        "/v1/chat/completions",
        &openai_body(user("b"), false),
    )
    .await;
    assert_eq!(status, 200);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "fine");
}

#[tokio::test]
async fn truncated_empty_turn_has_no_terminal_event() {
    let scenario = Scenario::new().turn(Turn::new().with_fault(Fault::truncated_stream().times(2)));
    let server = MockServer::start(scenario).await.unwrap();
    let (_, _, text) = post(
        &server,
        "/v1/chat/completions",
        &openai_body(user("e"), true),
    )
    .await;
    for (_, d) in parse_sse(&text) {
        let v: Value = serde_json::from_str(&d).unwrap();
        assert!(v["choices"][0]["finish_reason"].is_null(), "{d}");
    }
    let (_, _, text) = post(&server, "/v1/messages", &anthropic_body(user("e"), true)).await;
    let events = parse_sse(&text);
    assert!(!events.is_empty());
    assert!(
        events
            .iter()
            .all(|(e, _)| !matches!(e.as_deref(), Some("message_delta" | "message_stop")))
    );
}

/// Streams the response of a POST; returns the status and the body bytes
/// read until the body ends, fails, or nothing arrives for `quiet`, and how
/// it ended: "end", "error" or "silent".
async fn read_until_quiet(
    server: &MockServer,
    path: &str,
    body: &Value,
    quiet: std::time::Duration,
) -> (Option<u16>, String, &'static str) {
    use futures::StreamExt;
    let send = reqwest::Client::new()
        .post(format!("{}{path}", server.url()))
        .json(body)
        .send();
    let resp = match tokio::time::timeout(quiet, send).await {
        Err(_) => return (None, String::new(), "silent"),
        Ok(Err(_)) => return (None, String::new(), "error"),
        Ok(Ok(resp)) => resp,
    };
    let status = resp.status().as_u16();
    let mut stream = resp.bytes_stream();
    let mut text = String::new();
    loop {
        match tokio::time::timeout(quiet, stream.next()).await {
            Err(_) => return (Some(status), text, "silent"),
            Ok(None) => return (Some(status), text, "end"),
            Ok(Some(Err(_))) => return (Some(status), text, "error"),
            Ok(Some(Ok(bytes))) => text.push_str(&String::from_utf8_lossy(&bytes)),
        }
    }
}

#[tokio::test]
async fn close_after_drops_the_connection_after_n_events_both_wires() {
    let quiet = std::time::Duration::from_secs(3);
    let scenario = Scenario::new().turn(
        Turn::text("a long enough answer")
            .with_tool("Read", json!({"file_path": "a.txt"}))
            .with_fault(Fault::close_after(5)),
    );
    let server = MockServer::start(scenario).await.unwrap();
    let (status, text, end) = read_until_quiet(
        &server,
        "/v1/messages",
        &anthropic_body(user("hi"), true),
        quiet,
    )
    .await;
    assert_eq!((status, end), (Some(200), "error"));
    let events = parse_sse(&text);
    assert_eq!(events.len(), 5, "{text}");
    assert!(events.iter().all(|(_, d)| is_json(d)));
    let (status, text, end) = read_until_quiet(
        &server,
        "/v1/chat/completions",
        &openai_body(user("hi"), true),
        quiet,
    )
    .await;
    assert_eq!((status, end), (Some(200), "error"));
    let events = parse_sse(&text);
    assert_eq!(events.len(), 5, "{text}");
    assert!(events.iter().all(|(_, d)| is_json(d) && d != "[DONE]"));
    // The fault was served once for this conversation: the whole answer now.
    let (_, text, end) = read_until_quiet(
        &server,
        "/v1/messages",
        &anthropic_body(user("hi"), true),
        quiet,
    )
    .await;
    assert_eq!(end, "end");
    assemble_anthropic(&parse_sse(&text));
}

#[tokio::test]
async fn stream_error_event_and_chunk() {
    let scenario = Scenario::new().turn(Turn::text("some text").with_fault(Fault::stream_error()));
    let server = MockServer::start(scenario).await.unwrap();
    let (status, _, text) = post(&server, "/v1/messages", &anthropic_body(user("hi"), true)).await;
    assert_eq!(status, 200);
    let events = parse_sse(&text);
    let (name, data) = events.last().unwrap();
    assert_eq!(name.as_deref(), Some("error"));
    let v: Value = serde_json::from_str(data).unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "api_error");
    assert_eq!(events[0].0.as_deref(), Some("message_start"));

    let scenario = Scenario::new().turn(Turn::text("some text").with_fault(Fault::stream_error()));
    let server = MockServer::start(scenario).await.unwrap();
    let (status, _, text) = post(
        &server,
        "/v1/chat/completions",
        &openai_body(user("hi"), true),
    )
    .await;
    assert_eq!(status, 200);
    let events = parse_sse(&text);
    let v: Value = serde_json::from_str(&events.last().unwrap().1).unwrap();
    assert_eq!(v["error"]["type"], "server_error");
    assert!(events.iter().all(|(_, d)| d != "[DONE]"));
}

#[tokio::test]
async fn hang_and_stall_after_send_nothing_more() {
    let quiet = std::time::Duration::from_millis(400);
    let scenario = Scenario::new().turn(
        Turn::text("a long enough answer")
            .with_fault(Fault::hang())
            .with_fault(Fault::stall_after(3)),
    );
    let server = MockServer::start(scenario).await.unwrap();
    let body = openai_body(user("hi"), true);
    let (status, _, end) = read_until_quiet(&server, "/v1/chat/completions", &body, quiet).await;
    assert_eq!((status, end), (None, "silent"), "no status, no headers");
    let (status, text, end) = read_until_quiet(&server, "/v1/chat/completions", &body, quiet).await;
    assert_eq!((status, end), (Some(200), "silent"));
    assert_eq!(parse_sse(&text).len(), 3, "{text}");
    let (_, text, end) = read_until_quiet(&server, "/v1/chat/completions", &body, quiet).await;
    assert_eq!(end, "end");
    assert!(text.contains("[DONE]"));
    assert_eq!(server.requests().len(), 3);
}
