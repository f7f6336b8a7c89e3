//! OpenAI Chat Completions against the mock server, streamed and not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::json;
use tascer_core::{ChatMessage, ContentBlock, Role, StopReason, ToolResultContent, Usage};

fn scenario() -> serde_json::Value {
    json!({"turns": [{
        "text": "Reading it now.",
        "tool_calls": [
            {"id": "call_1", "name": "Read", "input": {"path": "a.txt"}},
            {"id": "call_2", "name": "Read", "input": {}}
        ],
        "usage": {"input_tokens": 10, "output_tokens": 20,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 30}
    }, {"text": "Done."}]})
}

fn check_response(r: &tascer_model::ModelResponse) {
    assert_eq!(r.model, "gpt-4o");
    assert_eq!(r.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 10,
            output_tokens: 20,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 30
        }
    );
    assert_eq!(
        r.content,
        vec![
            ContentBlock::text("Reading it now."),
            ContentBlock::ToolUse {
                id: "call_1".into(),
                name: "Read".into(),
                input: json!({"path": "a.txt"})
            },
            ContentBlock::ToolUse {
                id: "call_2".into(),
                name: "Read".into(),
                input: json!({})
            },
        ]
    );
}

#[tokio::test]
async fn streaming_text_tool_calls_and_usage() {
    let server = common::mock(scenario()).await;
    let config = common::openai(&server.openai_base_url());
    let (result, events) = common::send(config, &common::request("gpt-4o", true)).await;
    check_response(&result.unwrap());

    let types = common::stream_types(&events);
    assert_eq!(types.first().map(String::as_str), Some("message_start"));
    assert_eq!(
        types[types.len() - 2..],
        ["message_delta".to_string(), "message_stop".to_string()]
    );
    assert_eq!(
        types.iter().filter(|t| *t == "content_block_start").count(),
        3
    );
    assert_eq!(
        types.iter().filter(|t| *t == "content_block_stop").count(),
        3
    );

    let requests = server.requests();
    let req = &requests[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(
        req.headers.get("authorization").map(String::as_str),
        Some("Bearer test-key")
    );
    assert_eq!(req.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        req.body["messages"][0],
        json!({"role": "system", "content": "You are a test."})
    );
    assert_eq!(
        req.body["messages"][1],
        json!({"role": "user", "content": "hello"})
    );
    assert_eq!(req.body["tools"][0]["function"]["name"], "Read");
}

#[tokio::test]
async fn non_streaming() {
    let server = common::mock(scenario()).await;
    let config = common::openai(&server.openai_base_url());
    let (result, events) = common::send(config, &common::request("gpt-4o", false)).await;
    check_response(&result.unwrap());
    assert!(events.is_empty());
}

#[tokio::test]
async fn second_turn_with_tool_results_and_no_key() {
    let server = common::mock(scenario()).await;
    let mut config = common::openai(&server.openai_base_url());
    config.api_key = None;
    let mut request = common::request("local-model", true);
    request.messages.push(ChatMessage {
        role: Role::Assistant,
        content: vec![ContentBlock::ToolUse {
            id: "call_1".into(),
            name: "Read".into(),
            input: json!({"path": "a.txt"}),
        }],
    });
    request.messages.push(ChatMessage {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: "call_1".into(),
            content: ToolResultContent::Text("contents".into()),
            is_error: None,
        }],
    });
    let (result, _) = common::send(config, &request).await;
    let response = result.unwrap();
    assert_eq!(response.content, vec![ContentBlock::text("Done.")]);
    assert_eq!(response.stop_reason, Some(StopReason::EndTurn));
    let req = &server.requests()[0];
    assert!(!req.headers.contains_key("authorization"));
    assert_eq!(
        req.body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "contents"})
    );
    assert!(tascer_testkit::check_tool_pairing(&req.body).is_ok());
}

/// OpenRouter: the request asks for usage accounting, carries the
/// attribution headers, names the model as OpenRouter does (an alias
/// resolved), and the cost OpenRouter reports comes back with the answer,
/// streamed or not.
#[tokio::test]
async fn openrouter_reports_its_cost_and_gets_its_headers() {
    let server = common::mock(json!({"loop_last_turn": true, "turns": [{
        "text": "Hi.",
        "cost_usd": 0.0042
    }]}))
    .await;
    let mut config = tascer_model::ProviderConfig::openrouter();
    config.base_url = server.openai_base_url();
    config.api_key = Some("sk-or-v1-test".into());
    let client = tascer_model::ModelClient::new(config).unwrap();
    for stream in [true, false] {
        let (result, _) =
            common::send(client.config().clone(), &common::request("sonnet", stream)).await;
        let response = result.unwrap();
        assert_eq!(response.cost_usd, Some(0.0042), "stream {stream}");
        assert_eq!(response.model, "anthropic/claude-sonnet-4.5");
        assert_eq!(
            client.cost(&response.model, &response.usage, response.cost_usd),
            Some(0.0042)
        );
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.body["usage"], json!({"include": true}));
        assert_eq!(r.body["model"], "anthropic/claude-sonnet-4.5");
        assert_eq!(r.headers["authorization"], "Bearer sk-or-v1-test");
        assert_eq!(r.headers["x-title"], tascer_model::OPENROUTER_TITLE);
        assert_eq!(r.headers["http-referer"], tascer_model::OPENROUTER_REFERER);
    }
    // A plain OpenAI-compatible server is not asked for usage accounting.
    server.clear_requests();
    let config = common::openai(&server.openai_base_url());
    let (result, _) = common::send(config, &common::request("gpt-4o", true)).await;
    assert_eq!(result.unwrap().cost_usd, Some(0.0042));
    assert!(server.requests()[0].body.get("usage").is_none());
}
