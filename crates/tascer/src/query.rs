//! [`query`]: one prompt, its messages as a stream.

use serde_json::Map;
use tokio::sync::mpsc::unbounded_channel;

use tascer_core::{Message, ResultMessage, ResultSubtype, Usage};

use crate::client::Client;
use crate::options::Options;
use crate::stream::MessageStream;

/// Runs one prompt and yields its messages: `system/init`, assistant and
/// user (tool result) messages, then one result.
///
/// A session that cannot start (no API key, unknown session to resume, …)
/// yields a single `error_during_execution` result whose `errors` say why.
/// Must be called inside a Tokio runtime.
pub fn query(prompt: impl Into<String>, options: Options) -> MessageStream {
    let prompt = prompt.into();
    let (tx, rx) = unbounded_channel();
    tokio::spawn(async move {
        let mut client = match Client::connect(options).await {
            Ok(client) => client,
            Err(err) => {
                let _ = tx.send(Message::Result(startup_failure(&err.to_string())));
                return;
            }
        };
        if let Err(err) = client.query(prompt).await {
            let _ = tx.send(Message::Result(startup_failure(&err.to_string())));
            return;
        }
        let mut stream = client.receive_response();
        while let Some(message) = futures::StreamExt::next(&mut stream).await {
            if tx.send(message).is_err() {
                client.interrupt();
                break;
            }
        }
        client.disconnect().await;
    });
    MessageStream::new(rx)
}

/// The zeroed result of a session that could not start.
fn startup_failure(error: &str) -> ResultMessage {
    ResultMessage {
        subtype: ResultSubtype::ErrorDuringExecution,
        is_error: true,
        duration_ms: 0,
        duration_api_ms: 0,
        num_turns: 0,
        result: Some(error.to_string()),
        stop_reason: None,
        session_id: String::new(),
        total_cost_usd: 0.0,
        unpriced_models: Vec::new(),
        usage: Usage::default(),
        model_usage: Map::new(),
        permission_denials: Vec::new(),
        errors: vec![error.to_string()],
        api_error_status: None,
        terminal_reason: "turn_setup_failed".into(),
        structured_output: None,
        uuid: tascer_core::new_id(),
    }
}
