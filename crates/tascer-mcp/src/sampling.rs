//! Sampling (`sampling/createMessage`): a server asks the client's model
//! for a completion. Whoever owns a model implements [`Sampler`] (a
//! session: its own provider, recorded like its other model calls);
//! without one the client does not offer sampling and refuses requests.

use futures::future::BoxFuture;
use serde_json::{Value, json};

/// One message of a sampling request (text only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The text (non-text content is described in brackets).
    pub text: String,
}

/// A server's sampling request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingRequest {
    /// The server (config key) that asks.
    pub server: String,
    /// The conversation to complete.
    pub messages: Vec<SamplingMessage>,
    /// `systemPrompt`.
    pub system_prompt: Option<String>,
    /// `maxTokens`.
    pub max_tokens: u32,
}

/// The completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingResponse {
    /// The model that answered.
    pub model: String,
    /// Its text.
    pub text: String,
    /// Why it stopped (`endTurn`, `maxTokens`, …).
    pub stop_reason: Option<String>,
}

/// Answers sampling requests.
pub trait Sampler: Send + Sync {
    /// Completes `request`; `Err` is the refusal or failure the server gets.
    fn create_message(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<SamplingResponse, String>>;
}

fn text_of(content: &Value) -> String {
    let one = |c: &Value| match c.get("type").and_then(Value::as_str) {
        Some("text") => c["text"].as_str().unwrap_or_default().to_owned(),
        Some(other) => format!("[{other} content]"),
        None => String::new(),
    };
    match content {
        Value::Array(items) => items.iter().map(one).collect::<Vec<_>>().join("\n"),
        other => one(other),
    }
}

/// The request in plain form, from the wire shape of
/// `sampling/createMessage` params.
pub(crate) fn request_from_wire(server: &str, params: &Value) -> SamplingRequest {
    let messages = params["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| SamplingMessage {
            role: m["role"].as_str().unwrap_or("user").to_owned(),
            text: text_of(&m["content"]),
        })
        .collect();
    SamplingRequest {
        server: server.to_owned(),
        messages,
        system_prompt: params["systemPrompt"].as_str().map(str::to_owned),
        max_tokens: params["maxTokens"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(1024),
    }
}

/// The wire shape of a `CreateMessageResult`.
pub(crate) fn response_to_wire(response: &SamplingResponse) -> Value {
    let mut result = json!({
        "role": "assistant",
        "content": {"type": "text", "text": response.text},
        "model": response.model,
    });
    if let Some(reason) = &response.stop_reason {
        result["stopReason"] = json!(reason);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shapes() {
        let r = request_from_wire(
            "s",
            &json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}},
                                  {"role": "assistant", "content": [{"type": "image"}]}],
                    "systemPrompt": "be brief", "maxTokens": 100}),
        );
        assert_eq!(r.messages[0].text, "hi");
        assert_eq!(r.messages[1].text, "[image content]");
        assert_eq!(r.system_prompt.as_deref(), Some("be brief"));
        assert_eq!(r.max_tokens, 100);
        let w = response_to_wire(&SamplingResponse {
            model: "m".into(),
            text: "ok".into(),
            stop_reason: Some("endTurn".into()),
        });
        assert_eq!(w["content"]["text"], "ok");
        assert_eq!(w["stopReason"], "endTurn");
    }
}
