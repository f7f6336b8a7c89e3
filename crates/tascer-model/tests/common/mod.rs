//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tascer_core::{ChatMessage, ToolSpec};
use tascer_model::{
    ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse, ProviderConfig,
};
use tascer_testkit::{MockServer, Scenario};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Starts a mock server playing the scenario given as JSON.
pub async fn mock(scenario: Value) -> MockServer {
    let scenario = Scenario::from_json(&scenario.to_string()).unwrap();
    MockServer::start(scenario).await.unwrap()
}

fn fast(mut config: ProviderConfig) -> ProviderConfig {
    config.initial_backoff = Duration::from_millis(10);
    config.max_backoff = Duration::from_millis(40);
    config.request_timeout = Duration::from_secs(10);
    config
}

/// Anthropic config for `base_url`, key `test-key`, fast backoff.
pub fn anthropic(base_url: &str) -> ProviderConfig {
    let mut c = fast(ProviderConfig::anthropic());
    c.base_url = format!("{base_url}/");
    c.api_key = Some("test-key".into());
    c
}

/// OpenAI config for `base_url`, key `test-key`, fast backoff.
pub fn openai(base_url: &str) -> ProviderConfig {
    let mut c = fast(ProviderConfig::openai());
    c.base_url = base_url.to_string();
    c.api_key = Some("test-key".into());
    c
}

/// A one-message request offering a `Read` tool.
pub fn request(model: &str, stream: bool) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        system: Some("You are a test.".into()),
        messages: vec![ChatMessage::user_text("hello")],
        tools: vec![ToolSpec {
            name: "Read".into(),
            description: "Reads a file".into(),
            input_schema: json!({"type":"object","properties":{"path":{"type":"string"}}}),
        }],
        server_tools: Vec::new(),
        max_tokens: None,
        stream,
    }
}

/// Sends `request` and collects the events emitted meanwhile.
pub async fn send(
    config: ProviderConfig,
    request: &ModelRequest,
) -> (Result<ModelResponse, ModelError>, Vec<ModelEvent>) {
    let client = ModelClient::new(config).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let result = client
        .send(request, Some(&tx), &CancellationToken::new())
        .await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    (result, events)
}

/// The `type` of every streamed event.
pub fn stream_types(events: &[ModelEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::Stream(v) => v["type"].as_str().map(str::to_string),
            _ => None,
        })
        .collect()
}

/// A raw HTTP server answering every request with `status` and `body`;
/// returns its base URL and a request counter.
pub async fn fixed_server(status: u16, body: &'static str) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Ok(n) = socket.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                counter.fetch_add(1, Ordering::SeqCst);
                let response = format!(
                    "HTTP/1.1 {status} Whatever\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (url, count)
}
