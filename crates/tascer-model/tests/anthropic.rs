//! Anthropic Messages API against the mock server, streamed and not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::json;
use tascer_core::{ContentBlock, StopReason, Usage};

fn scenario() -> serde_json::Value {
    json!({"turns": [{
        "thinking": "Let me look at the file.",
        "text": "Reading it now.",
        "tool_calls": [{"id": "toolu_1", "name": "Read", "input": {"path": "a.txt", "n": [1, 2]}}],
        "usage": {"input_tokens": 11, "output_tokens": 22,
                  "cache_creation_input_tokens": 33, "cache_read_input_tokens": 44}
    }]})
}

fn check_response(r: &tascer_model::ModelResponse) {
    assert_eq!(r.model, "claude-sonnet-4-5");
    assert!(r.id.starts_with("msg_"), "{}", r.id);
    assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(r.attempts, 1);
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 11,
            output_tokens: 22,
            cache_creation_input_tokens: 33,
            cache_read_input_tokens: 44
        }
    );
    assert_eq!(r.content.len(), 3);
    match &r.content[0] {
        ContentBlock::Thinking {
            thinking,
            signature,
        } => {
            assert_eq!(thinking, "Let me look at the file.");
            assert!(!signature.is_empty());
        }
        other => panic!("expected thinking, got {other:?}"),
    }
    assert_eq!(r.content[1], ContentBlock::text("Reading it now."));
    assert_eq!(
        r.content[2],
        ContentBlock::ToolUse {
            id: "toolu_1".into(),
            name: "Read".into(),
            input: json!({"path": "a.txt", "n": [1, 2]}),
        }
    );
}

#[tokio::test]
async fn streaming_text_thinking_tool_use_and_usage() {
    let server = common::mock(scenario()).await;
    let config = common::anthropic(&server.url());
    let (result, events) = common::send(config, &common::request("claude-sonnet-4-5", true)).await;
    let response = result.unwrap();
    check_response(&response);

    let types = common::stream_types(&events);
    assert_eq!(types.first().map(String::as_str), Some("message_start"));
    assert_eq!(types.last().map(String::as_str), Some("message_stop"));
    assert!(types.iter().any(|t| t == "content_block_delta"));
    assert!(!types.iter().any(|t| t == "ping"));

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let req = &requests[0];
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(
        req.headers.get("x-api-key").map(String::as_str),
        Some("test-key")
    );
    assert_eq!(
        req.headers.get("anthropic-version").map(String::as_str),
        Some("2023-06-01")
    );
    assert_eq!(req.body["stream"], true);
    assert_eq!(req.body["max_tokens"], 8192);
    assert_eq!(req.body["system"], "You are a test.");
    assert_eq!(req.body["tools"][0]["name"], "Read");
    assert_eq!(
        req.body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hello"}]}])
    );

    let client = tascer_model::ModelClient::new(common::anthropic(&server.url())).unwrap();
    let cost = client.cost_usd(&response.model, &response.usage);
    let expected = (11.0 * 3.0 + 22.0 * 15.0 + 33.0 * 3.75 + 44.0 * 0.3) / 1e6;
    assert!((cost - expected).abs() < 1e-12, "{cost} vs {expected}");
}

#[tokio::test]
async fn non_streaming() {
    let server = common::mock(scenario()).await;
    let config = common::anthropic(&server.url());
    let mut request = common::request("claude-sonnet-4-5", false);
    request.max_tokens = Some(100);
    let (result, events) = common::send(config, &request).await;
    check_response(&result.unwrap());
    assert!(events.is_empty(), "{events:?}");
    let body = &server.requests()[0].body;
    assert_eq!(body["stream"], false);
    assert_eq!(body["max_tokens"], 100);
}

#[tokio::test]
async fn no_key_sends_no_auth_header() {
    let server = common::mock(json!({"turns": [{"text": "hi"}]})).await;
    let mut config = common::anthropic(&server.url());
    config.api_key = None;
    let (result, _) = common::send(config, &common::request("m", true)).await;
    assert_eq!(result.unwrap().content, vec![ContentBlock::text("hi")]);
    assert!(!server.requests()[0].headers.contains_key("x-api-key"));
}
