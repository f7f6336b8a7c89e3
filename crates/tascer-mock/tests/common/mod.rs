//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tascer_mock::MockServer;

/// POSTs `body` to `path` and returns (status, headers, body text).
pub async fn post(
    server: &MockServer,
    path: &str,
    body: &Value,
) -> (u16, reqwest::header::HeaderMap, String) {
    let resp = reqwest::Client::new()
        .post(format!("{}{path}", server.url()))
        .header("x-api-key", "test-key")
        .header("authorization", "Bearer test-token")
        .json(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.text().await.unwrap())
}

/// An Anthropic request body with the given messages.
pub fn anthropic_body(messages: Value, stream: bool) -> Value {
    json!({"model": "claude-test", "max_tokens": 1024, "system": "be brief",
           "messages": messages, "stream": stream})
}

/// An OpenAI request body with the given messages.
pub fn openai_body(messages: Value, stream: bool) -> Value {
    json!({"model": "gpt-test", "messages": messages, "stream": stream,
           "stream_options": {"include_usage": true}})
}

/// One server-sent event: (event name, data line).
pub type Sse = (Option<String>, String);

/// Splits an event-stream body into events.
pub fn parse_sse(text: &str) -> Vec<Sse> {
    let mut out = Vec::new();
    for frame in text.split("\n\n") {
        if frame.trim().is_empty() {
            continue;
        }
        let mut event = None;
        let mut data = String::new();
        for line in frame.lines() {
            if let Some(e) = line.strip_prefix("event: ") {
                event = Some(e.to_string());
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            }
        }
        out.push((event, data));
    }
    out
}

/// Rebuilds the Anthropic message from its stream events, checking the
/// event order; returns the message with its content blocks and the
/// number of deltas seen per block.
pub fn assemble_anthropic(events: &[Sse]) -> (Value, Vec<usize>) {
    let data: Vec<(String, Value)> = events
        .iter()
        .map(|(e, d)| {
            let v: Value = serde_json::from_str(d).unwrap();
            let name = e.clone().unwrap();
            assert_eq!(v["type"], name.as_str(), "event name matches data type");
            (name, v)
        })
        .collect();
    assert_eq!(data[0].0, "message_start");
    assert_eq!(data.last().unwrap().0, "message_stop");
    assert!(data.iter().any(|(n, _)| n == "ping"));
    let mut message = data[0].1["message"].clone();
    assert_eq!(message["content"], json!([]));
    let mut blocks: Vec<Value> = Vec::new();
    let mut partial: Vec<String> = Vec::new();
    let mut deltas: Vec<usize> = Vec::new();
    for (name, v) in &data[1..] {
        match name.as_str() {
            "content_block_start" => {
                assert_eq!(v["index"], blocks.len());
                blocks.push(v["content_block"].clone());
                partial.push(String::new());
                deltas.push(0);
            }
            "content_block_delta" => {
                let i = v["index"].as_u64().unwrap() as usize;
                deltas[i] += 1;
                let d = &v["delta"];
                let b = &mut blocks[i];
                match d["type"].as_str().unwrap() {
                    "text_delta" => {
                        let t = format!(
                            "{}{}",
                            b["text"].as_str().unwrap(),
                            d["text"].as_str().unwrap()
                        );
                        b["text"] = json!(t);
                    }
                    "thinking_delta" => {
                        let t = format!(
                            "{}{}",
                            b["thinking"].as_str().unwrap(),
                            d["thinking"].as_str().unwrap()
                        );
                        b["thinking"] = json!(t);
                    }
                    "signature_delta" => b["signature"] = d["signature"].clone(),
                    "input_json_delta" => partial[i].push_str(d["partial_json"].as_str().unwrap()),
                    other => panic!("unexpected delta {other}"),
                }
            }
            "content_block_stop" => {
                let i = v["index"].as_u64().unwrap() as usize;
                if blocks[i]["type"] == "tool_use" {
                    blocks[i]["input"] = serde_json::from_str(&partial[i]).unwrap();
                }
            }
            "message_delta" => {
                message["stop_reason"] = v["delta"]["stop_reason"].clone();
                message["usage"]["output_tokens"] = v["usage"]["output_tokens"].clone();
            }
            "ping" | "message_stop" => {}
            other => panic!("unexpected event {other}"),
        }
    }
    message["content"] = Value::Array(blocks);
    (message, deltas)
}

/// Rebuilds an OpenAI completion message from stream chunks: returns
/// (content, tool_calls as [{id, name, arguments}], finish_reason, usage,
/// number of content chunks).
pub fn assemble_openai(events: &[Sse]) -> (Option<String>, Vec<Value>, String, Value, usize) {
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let mut content: Option<String> = None;
    let mut calls: Vec<Value> = Vec::new();
    let mut finish = String::new();
    let mut usage = Value::Null;
    let mut content_chunks = 0;
    for (i, (event, data)) in events[..events.len() - 1].iter().enumerate() {
        assert!(event.is_none());
        let v: Value = serde_json::from_str(data).unwrap();
        assert_eq!(v["object"], "chat.completion.chunk");
        if let Some(u) = v.get("usage") {
            usage = u.clone();
        }
        let Some(choice) = v["choices"].get(0) else {
            continue;
        };
        let delta = &choice["delta"];
        if i == 0 {
            assert_eq!(delta["role"], "assistant");
        }
        if let Some(c) = delta["content"].as_str() {
            content_chunks += 1;
            content.get_or_insert_with(String::new).push_str(c);
        }
        if let Some(tcs) = delta["tool_calls"].as_array() {
            for tc in tcs {
                let idx = tc["index"].as_u64().unwrap() as usize;
                if idx == calls.len() {
                    assert!(tc["id"].is_string(), "first tool call delta carries the id");
                    assert_eq!(tc["type"], "function");
                    calls.push(
                        json!({"id": tc["id"], "name": tc["function"]["name"], "arguments": ""}),
                    );
                }
                if let Some(a) = tc["function"]["arguments"].as_str() {
                    let s = format!("{}{a}", calls[idx]["arguments"].as_str().unwrap());
                    calls[idx]["arguments"] = json!(s);
                }
            }
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            finish = f.to_string();
        }
    }
    (content, calls, finish, usage, content_chunks)
}
