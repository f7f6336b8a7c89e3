//! Request, response and event types of a model call.

use std::time::Duration;

use serde_json::Value;
use tascer_core::{ChatMessage, ContentBlock, StopReason, ToolSpec, Usage};

/// One model call, provider-neutral.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRequest {
    /// Model name.
    pub model: String,
    /// System prompt.
    pub system: Option<String>,
    /// Conversation so far.
    pub messages: Vec<ChatMessage>,
    /// Tools offered to the model.
    pub tools: Vec<ToolSpec>,
    /// Tools the provider runs on its side, as the provider's API spells
    /// them (Anthropic's `{"type": "web_search_20250305", "name":
    /// "web_search", …}`), sent after `tools`. Only the Anthropic wire has
    /// them: a request with server tools to another provider fails with
    /// [`ModelError::InvalidConfig`](crate::ModelError::InvalidConfig).
    pub server_tools: Vec<Value>,
    /// Output token limit; Anthropic falls back to
    /// [`ProviderConfig::default_max_tokens`](crate::ProviderConfig::default_max_tokens).
    pub max_tokens: Option<u32>,
    /// Whether to stream (SSE). Streaming emits [`ModelEvent::Stream`] events.
    pub stream: bool,
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// Provider message id.
    pub id: String,
    /// The model that answered (the fallback model after a fallback).
    pub model: String,
    /// Content blocks (text, thinking, tool calls).
    pub content: Vec<ContentBlock>,
    /// Why the model stopped.
    pub stop_reason: Option<StopReason>,
    /// Token usage.
    pub usage: Usage,
    /// The cost the provider reported for this answer, USD (OpenRouter's
    /// usage accounting); `None` when it reported none.
    pub cost_usd: Option<f64>,
    /// HTTP attempts made, including the successful one.
    pub attempts: u32,
    /// Time spent in HTTP attempts (backoff sleeps excluded).
    pub api_duration: Duration,
}

/// Events emitted while a request runs (for `include_partial_messages` and
/// `system/api_retry` frames).
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// One streaming event in Anthropic's SSE event shape
    /// (`{"type":"content_block_delta",…}`); OpenAI streams are translated to
    /// the same shape.
    Stream(Value),
    /// A retry is about to happen.
    Retry {
        /// Which retry this is (1 for the first retry, i.e. the second attempt).
        attempt: u32,
        /// The configured maximum number of retries.
        max_retries: u32,
        /// How long we wait before it, ms.
        delay_ms: u64,
        /// HTTP status of the failure, if there was a response.
        status: Option<u16>,
        /// The failure, as text.
        error: String,
    },
    /// Switched to the fallback model after repeated overloads.
    Fallback {
        /// The model that was overloaded.
        from: String,
        /// The model used from now on.
        to: String,
    },
}

/// A parsed answer, before the client adds attempts and timing.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Parsed {
    pub id: String,
    pub model: String,
    pub content: Vec<ContentBlock>,
    pub stop_reason: Option<StopReason>,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
}

/// Parses a wire stop reason (`end_turn`, `tool_use` …).
pub(crate) fn parse_stop_reason(s: &str) -> StopReason {
    serde_json::from_value(Value::String(s.to_string()))
        .unwrap_or_else(|_| StopReason::Other(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons() {
        assert_eq!(parse_stop_reason("end_turn"), StopReason::EndTurn);
        assert_eq!(parse_stop_reason("tool_use"), StopReason::ToolUse);
        assert_eq!(
            parse_stop_reason("weird"),
            StopReason::Other("weird".into())
        );
    }
}
