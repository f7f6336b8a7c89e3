//! What the server keeps of a request ([`RecordedRequest`]) and what it
//! needs to know about an incoming model request ([`RequestInfo`]).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::reply::Wire;

/// One request the server received, as served by `GET /_mock/requests`:
/// model requests, and any other request a client sends (answered 404),
/// so a test sees everything a client such as Claude Code sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// HTTP method (`POST` for model requests).
    #[serde(default = "default_method")]
    pub method: String,
    /// Request path, e.g. `/v1/messages`.
    pub path: String,
    /// Parsed JSON body (a JSON string holding the raw text when the body
    /// was not valid JSON).
    pub body: Value,
    /// Headers, lowercase names; repeated headers joined with `, `.
    pub headers: BTreeMap<String, String>,
}

fn default_method() -> String {
    "POST".to_string()
}

/// The facts of a request that pick and shape the answer.
#[derive(Debug, Clone)]
pub(crate) struct RequestInfo {
    /// The requested model, if named.
    pub model: Option<String>,
    /// `stream: true`.
    pub stream: bool,
    /// OpenAI `stream_options.include_usage: true`.
    pub include_usage: bool,
    /// Number of assistant messages in the history = index of the turn to play.
    pub turn_index: usize,
    /// All text of the first user message (selects a conversation).
    pub first_user_text: String,
    /// All text of the system prompt (fills `{{system:…}}` placeholders).
    pub system_text: String,
    /// Hash of the system prompt and first user message (plus the path).
    pub conversation_key: u64,
    /// Size of the request body in bytes, for usage estimates.
    pub size: usize,
}

impl RequestInfo {
    /// Inspects a parsed request body; `Err` names what is wrong with it.
    pub(crate) fn parse(wire: Wire, path: &str, body: &Value, size: usize) -> Result<Self, String> {
        let Some(obj) = body.as_object() else {
            return Err("request body must be a JSON object".into());
        };
        let Some(messages) = obj.get("messages").and_then(Value::as_array) else {
            return Err("messages: field required (an array)".into());
        };
        if wire == Wire::Anthropic && !obj.get("max_tokens").is_some_and(Value::is_u64) {
            return Err("max_tokens: field required (a positive integer)".into());
        }
        let role = |m: &Value| m.get("role").and_then(Value::as_str).map(str::to_owned);
        let turn_index = messages
            .iter()
            .filter(|m| role(m).as_deref() == Some("assistant"))
            .count();
        let first_user = messages
            .iter()
            .find(|m| role(m).as_deref() == Some("user"))
            .and_then(|m| m.get("content"));
        let system = match wire {
            Wire::Anthropic => obj.get("system"),
            Wire::OpenAi => messages
                .iter()
                .find(|m| matches!(role(m).as_deref(), Some("system" | "developer")))
                .and_then(|m| m.get("content")),
        };
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        path.hash(&mut hasher);
        system.map(Value::to_string).hash(&mut hasher);
        first_user.map(Value::to_string).hash(&mut hasher);
        Ok(RequestInfo {
            model: obj.get("model").and_then(Value::as_str).map(str::to_owned),
            stream: obj.get("stream").and_then(Value::as_bool).unwrap_or(false),
            include_usage: obj
                .get("stream_options")
                .and_then(|o| o.get("include_usage"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            turn_index,
            first_user_text: first_user.map(text_of).unwrap_or_default(),
            system_text: system.map(text_of).unwrap_or_default(),
            conversation_key: hasher.finish(),
            size,
        })
    }
}

/// The text in a message's content: a string, or the text parts of a list.
pub(crate) fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
