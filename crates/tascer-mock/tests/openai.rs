//! The OpenAI Chat Completions wire format, streaming and not.

mod common;

use common::*;
use serde_json::json;
use tascer_mock::{MockServer, Scenario, Turn};

fn scenario() -> Scenario {
    Scenario::new()
        .turn(
            Turn::text("I'll read the file.")
                .with_thinking("ignored for OpenAI")
                .with_tool("Read", json!({"file_path": "a.txt"}))
                .with_tool("Grep", json!({"pattern": "fn main", "path": "src"})),
        )
        .turn(Turn::text("The answer is 42."))
}

#[tokio::test]
async fn non_streaming_tool_calls() {
    let server = MockServer::start(scenario()).await.unwrap();
    let body = openai_body(
        json!([{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]),
        false,
    );
    let (status, _, text) = post(&server, "/v1/chat/completions", &body).await;
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["object"], "chat.completion");
    assert!(v["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert!(v["created"].is_u64());
    assert_eq!(v["model"], "gpt-test");
    let choice = &v["choices"][0];
    assert_eq!(choice["index"], 0);
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["message"]["content"], "I'll read the file.");
    let calls = choice["message"]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert!(calls[0]["id"].as_str().unwrap().starts_with("call_0_0_"));
    assert_eq!(calls[0]["type"], "function");
    assert_eq!(calls[0]["function"]["name"], "Read");
    let args: serde_json::Value =
        serde_json::from_str(calls[0]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"file_path": "a.txt"}));
    assert_eq!(calls[1]["function"]["name"], "Grep");
    let u = &v["usage"];
    assert_eq!(
        u["total_tokens"].as_u64().unwrap(),
        u["prompt_tokens"].as_u64().unwrap() + u["completion_tokens"].as_u64().unwrap()
    );
}

#[tokio::test]
async fn streaming_tool_calls_reassemble() {
    let server = MockServer::start(scenario()).await.unwrap();
    let body = openai_body(json!([{"role": "user", "content": "go"}]), true);
    let (status, headers, text) = post(&server, "/v1/chat/completions", &body).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/event-stream");
    let (content, calls, finish, usage, content_chunks) = assemble_openai(&parse_sse(&text));
    assert_eq!(content.as_deref(), Some("I'll read the file."));
    assert!(content_chunks >= 2);
    assert_eq!(finish, "tool_calls");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["name"], "Read");
    let args: serde_json::Value =
        serde_json::from_str(calls[0]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"file_path": "a.txt"}));
    let args: serde_json::Value =
        serde_json::from_str(calls[1]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"pattern": "fn main", "path": "src"}));
    assert!(usage["prompt_tokens"].as_u64().unwrap() >= 1);
    // Argument fragments come in several chunks.
    let fragments = parse_sse(&text)
        .iter()
        .filter(|(_, d)| d.contains("\"arguments\"") && !d.contains("\"name\""))
        .count();
    assert!(fragments >= 4, "{fragments}");
}

#[tokio::test]
async fn streaming_without_usage_and_history_turn() {
    let server = MockServer::start(scenario()).await.unwrap();
    let history = json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null,
         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "file text"}
    ]);
    let body = json!({"model": "gpt-test", "messages": history, "stream": true});
    let (_, _, text) = post(&server, "/v1/chat/completions", &body).await;
    let events = parse_sse(&text);
    assert!(events.iter().all(|(_, d)| !d.contains("\"usage\"")));
    let (content, calls, finish, _, _) = assemble_openai(&events);
    assert_eq!(content.as_deref(), Some("The answer is 42."));
    assert!(calls.is_empty());
    assert_eq!(finish, "stop");

    let body = json!({"model": "gpt-test", "messages": history});
    let (_, _, text) = post(&server, "/v1/chat/completions", &body).await;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "The answer is 42.");
    assert!(v["choices"][0]["message"].get("tool_calls").is_none());
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
}

#[tokio::test]
async fn tool_only_turn_has_null_content() {
    let server = MockServer::start(Scenario::new().turn(Turn::tool("Read", json!({}))))
        .await
        .unwrap();
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "go"}]});
    let (_, _, text) = post(&server, "/v1/chat/completions", &body).await;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v["choices"][0]["message"]["content"].is_null());
    assert_eq!(
        v["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
        "{}"
    );
}
