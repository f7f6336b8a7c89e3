//! The Anthropic Messages wire format, streaming and not.

mod common;

use common::*;
use serde_json::json;
use tascer_mock::{MockServer, Scenario, Turn, Usage};

fn scenario() -> Scenario {
    Scenario::new()
        .turn(
            Turn::text("I'll read the file.")
                .with_thinking("let me think about it")
                .with_tool("Read", json!({"file_path": "a.txt", "limit": 10}))
                .with_tool_id("toolu_fixed", "Glob", json!({"pattern": "**/*.rs"})),
        )
        .turn(Turn::text("All done, the file is fine."))
}

fn history_after_tool(tool_id: &str) -> serde_json::Value {
    json!([
        {"role": "user", "content": "read a.txt"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "hi"}]}
    ])
}

#[tokio::test]
async fn non_streaming_text_thinking_and_tools() {
    let server = MockServer::start(scenario()).await.unwrap();
    let body = anthropic_body(json!([{"role": "user", "content": "read a.txt"}]), false);
    let (status, headers, text) = post(&server, "/v1/messages", &body).await;
    assert_eq!(status, 200);
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["type"], "message");
    assert_eq!(v["role"], "assistant");
    assert_eq!(v["model"], "claude-test");
    assert!(v["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(v["stop_reason"], "tool_use");
    assert!(v["stop_sequence"].is_null());
    let content = v["content"].as_array().unwrap();
    assert_eq!(content.len(), 4);
    assert_eq!(content[0]["type"], "thinking");
    assert_eq!(content[0]["thinking"], "let me think about it");
    assert!(content[0]["signature"].is_string());
    assert_eq!(
        content[1],
        json!({"type": "text", "text": "I'll read the file."})
    );
    assert_eq!(content[2]["type"], "tool_use");
    assert_eq!(content[2]["name"], "Read");
    assert_eq!(
        content[2]["input"],
        json!({"file_path": "a.txt", "limit": 10})
    );
    assert!(content[2]["id"].as_str().unwrap().starts_with("toolu_0_0_"));
    assert_eq!(content[3]["id"], "toolu_fixed");
    for k in [
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ] {
        assert!(v["usage"][k].is_u64(), "usage.{k}");
    }
    assert!(v["usage"]["input_tokens"].as_u64().unwrap() >= 1);
    assert!(v["usage"]["output_tokens"].as_u64().unwrap() >= 1);

    // Generated ids are unique per served call.
    let (_, _, again) = post(&server, "/v1/messages", &body).await;
    let again: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_ne!(again["content"][2]["id"], content[2]["id"]);
}

#[tokio::test]
async fn streaming_reassembles_to_the_scenario() {
    let server = MockServer::start(scenario()).await.unwrap();
    let body = anthropic_body(json!([{"role": "user", "content": "read a.txt"}]), true);
    let (status, headers, text) = post(&server, "/v1/messages", &body).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/event-stream");
    let (message, deltas) = assemble_anthropic(&parse_sse(&text));
    assert_eq!(message["model"], "claude-test");
    assert_eq!(message["stop_reason"], "tool_use");
    let content = message["content"].as_array().unwrap();
    assert_eq!(content.len(), 4);
    assert_eq!(content[0]["type"], "thinking");
    assert_eq!(content[0]["thinking"], "let me think about it");
    assert!(!content[0]["signature"].as_str().unwrap().is_empty());
    assert_eq!(content[1]["text"], "I'll read the file.");
    assert_eq!(content[2]["name"], "Read");
    assert_eq!(
        content[2]["input"],
        json!({"file_path": "a.txt", "limit": 10})
    );
    assert_eq!(content[3]["id"], "toolu_fixed");
    assert_eq!(content[3]["input"], json!({"pattern": "**/*.rs"}));
    // Thinking: 2+ thinking deltas plus a signature; text and JSON: 2+ deltas.
    assert!(deltas.iter().all(|d| *d >= 2), "{deltas:?}");
}

#[tokio::test]
async fn history_selects_the_turn() {
    let server = MockServer::start(scenario()).await.unwrap();
    for stream in [false, true] {
        let body = anthropic_body(history_after_tool("toolu_x"), stream);
        let (status, _, text) = post(&server, "/v1/messages", &body).await;
        assert_eq!(status, 200);
        let message = if stream {
            assemble_anthropic(&parse_sse(&text)).0
        } else {
            serde_json::from_str(&text).unwrap()
        };
        assert_eq!(message["stop_reason"], "end_turn");
        assert_eq!(
            message["content"],
            json!([{"type": "text", "text": "All done, the file is fine."}])
        );
    }
}

#[tokio::test]
async fn past_the_end_and_loop_last_turn() {
    let history = json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "more"}
    ]);
    let server = MockServer::start(Scenario::new().turn(Turn::text("only")))
        .await
        .unwrap();
    let (_, _, text) = post(
        &server,
        "/v1/messages",
        &anthropic_body(history.clone(), false),
    )
    .await;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["content"][0]["text"], "(mock scenario has no more turns)");
    assert_eq!(v["stop_reason"], "end_turn");

    let looping = Scenario::new()
        .turn(Turn::tool("Bash", json!({"command": "true"})))
        .loop_last_turn(true);
    let server = MockServer::start(looping).await.unwrap();
    let (_, _, text) = post(&server, "/v1/messages", &anthropic_body(history, false)).await;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["content"][0]["name"], "Bash");
    assert_eq!(v["stop_reason"], "tool_use");
}

#[tokio::test]
async fn explicit_usage_stop_reason_and_default_model() {
    let usage = Usage {
        input_tokens: 100,
        output_tokens: 20,
        cache_read_input_tokens: 7,
        cache_creation_input_tokens: 3,
    };
    let scenario = Scenario::new().with_model("scenario-model").turn(
        Turn::text("cut")
            .with_usage(usage)
            .with_stop_reason("max_tokens"),
    );
    let server = MockServer::start(scenario).await.unwrap();
    let body = json!({"max_tokens": 10, "messages": [{"role": "user", "content": "x"}]});
    let (_, _, text) = post(&server, "/v1/messages", &body).await;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["model"], "scenario-model");
    assert_eq!(v["stop_reason"], "max_tokens");
    assert_eq!(
        v["usage"],
        json!({"input_tokens": 100, "output_tokens": 20,
               "cache_read_input_tokens": 7, "cache_creation_input_tokens": 3})
    );

    let mut body = body;
    body["stream"] = json!(true);
    let (_, _, text) = post(&server, "/v1/messages", &body).await;
    let (message, _) = assemble_anthropic(&parse_sse(&text));
    assert_eq!(message["usage"]["input_tokens"], 100);
    assert_eq!(message["usage"]["cache_read_input_tokens"], 7);
    assert_eq!(message["usage"]["output_tokens"], 20);
    assert_eq!(message["stop_reason"], "max_tokens");
}

#[tokio::test]
async fn bad_requests_get_400() {
    let server = MockServer::start(scenario()).await.unwrap();
    let (status, _, text) = post(&server, "/v1/messages", &json!({"messages": []})).await;
    assert_eq!(status, 400);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["type"], "invalid_request_error");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_tokens")
    );
    assert_eq!(server.requests().len(), 1, "bad requests are recorded too");
}

#[tokio::test]
async fn latency_delays_the_answer() {
    let server = MockServer::start(Scenario::new().turn(Turn::text("slow").with_latency_ms(300)))
        .await
        .unwrap();
    let start = std::time::Instant::now();
    let body = anthropic_body(json!([{"role": "user", "content": "x"}]), false);
    let (status, _, _) = post(&server, "/v1/messages", &body).await;
    assert_eq!(status, 200);
    assert!(start.elapsed() >= std::time::Duration::from_millis(300));
}
