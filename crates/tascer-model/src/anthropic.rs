//! Anthropic Messages API: request bodies and non-streamed responses.

use serde_json::{Value, json};
use tascer_core::{ContentBlock, Usage};

use crate::error::{ModelError, embedded_error_status, status_for_error_kind};
use crate::types::{ModelRequest, Parsed, parse_stop_reason};

/// Provider name used in errors.
pub(crate) const NAME: &str = "anthropic";
/// The `anthropic-version` header value.
pub(crate) const API_VERSION: &str = "2023-06-01";

/// The JSON body of `POST /v1/messages` for `request`, asking for `model`.
pub(crate) fn request_body(request: &ModelRequest, model: &str, default_max_tokens: u32) -> Value {
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_tokens.unwrap_or(default_max_tokens),
        "messages": request.messages,
        "stream": request.stream,
    });
    if let Some(system) = &request.system {
        body["system"] = json!(system);
    }
    if !request.tools.is_empty() || !request.server_tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                })
            })
            .chain(request.server_tools.iter().cloned())
            .collect();
    }
    body
}

/// Reads an Anthropic `usage` object, tolerating missing and null fields.
pub(crate) fn usage_from(value: &Value) -> Usage {
    let mut usage = Usage::default();
    update_usage(&mut usage, value);
    usage
}

/// Overwrites the fields of `usage` that `value` carries.
pub(crate) fn update_usage(usage: &mut Usage, value: &Value) {
    let fields: [(&str, &mut u64); 4] = [
        ("input_tokens", &mut usage.input_tokens),
        ("output_tokens", &mut usage.output_tokens),
        (
            "cache_creation_input_tokens",
            &mut usage.cache_creation_input_tokens,
        ),
        (
            "cache_read_input_tokens",
            &mut usage.cache_read_input_tokens,
        ),
    ];
    for (name, slot) in fields {
        if let Some(n) = value.get(name).and_then(Value::as_u64) {
            *slot = n;
        }
    }
}

/// Converts a wire content block; unknown block types give `None`.
pub(crate) fn content_block(value: &Value) -> Option<ContentBlock> {
    match serde_json::from_value::<ContentBlock>(value.clone()) {
        Ok(block) => Some(block),
        Err(e) => {
            tracing::debug!(block = %value, error = %e, "skipping unsupported content block");
            None
        }
    }
}

/// An `{"type":"error","error":{…}}` payload as an [`ModelError::Api`].
pub(crate) fn error_event(value: &Value, http_status: u16) -> ModelError {
    let error = value.get("error").unwrap_or(&Value::Null);
    let kind = error
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("api_error")
        .to_string();
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)")
        .to_string();
    // An error inside a successful response (an SSE `error` event) stands
    // for the status its type names; an unknown type is a server failure.
    let status = if (200..300).contains(&http_status) {
        embedded_error_status(&kind, None)
    } else {
        status_for_error_kind(&kind, http_status)
    };
    ModelError::Api {
        provider: NAME,
        status,
        kind,
        message,
    }
}

/// Parses a non-streamed Messages API response body.
pub(crate) fn parse_response(status: u16, body: &str) -> Result<Parsed, ModelError> {
    let malformed = |detail: String| ModelError::MalformedResponse {
        provider: NAME,
        status,
        detail,
    };
    let value: Value = serde_json::from_str(body)
        .map_err(|e| malformed(format!("body is not valid JSON: {e}")))?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(error_event(&value, status));
    }
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no \"content\" array".to_string()))?;
    let text = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Ok(Parsed {
        id: text("id"),
        model: text("model"),
        content: blocks.iter().filter_map(content_block).collect(),
        stop_reason: value
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(parse_stop_reason),
        usage: value.get("usage").map(usage_from).unwrap_or_default(),
        cost_usd: None,
    })
}

#[cfg(test)]
mod tests {
    use tascer_core::{ChatMessage, StopReason, ToolSpec};

    use super::*;

    #[test]
    fn body_shape() {
        let req = ModelRequest {
            model: "m".into(),
            system: Some("be brief".into()),
            messages: vec![ChatMessage::user_text("hi")],
            tools: vec![ToolSpec {
                name: "Read".into(),
                description: "reads".into(),
                input_schema: json!({"type":"object"}),
            }],
            server_tools: Vec::new(),
            max_tokens: None,
            stream: true,
        };
        let body = request_body(&req, "other", 100);
        assert_eq!(
            body,
            json!({
                "model": "other",
                "max_tokens": 100,
                "system": "be brief",
                "messages": [{"role":"user","content":[{"type":"text","text":"hi"}]}],
                "tools": [{"name":"Read","description":"reads","input_schema":{"type":"object"}}],
                "stream": true,
            })
        );
        let bare = request_body(
            &ModelRequest {
                max_tokens: Some(5),
                ..ModelRequest::default()
            },
            "m",
            100,
        );
        assert!(bare.get("system").is_none() && bare.get("tools").is_none());
        assert_eq!(bare["max_tokens"], 5);
    }

    #[test]
    fn parses_message() {
        let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-x",
            "content":[{"type":"thinking","thinking":"hmm","signature":"sig"},
                       {"type":"text","text":"hello"},
                       {"type":"server_tool_use","id":"s","name":"web_search","input":{"query":"q"}},
                       {"type":"web_search_tool_result","tool_use_id":"s","content":[{"type":"web_search_result","title":"T","url":"https://e.com"}]},
                       {"type":"redacted_thinking","data":"x"},
                       {"type":"tool_use","id":"tu_1","name":"Read","input":{"path":"a"}}],
            "stop_reason":"tool_use","stop_sequence":null,
            "usage":{"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":null,"cache_read_input_tokens":7}}"#;
        let p = parse_response(200, body).unwrap();
        assert_eq!(p.id, "msg_1");
        // redacted_thinking is not represented; the server tool's blocks are.
        assert_eq!(p.content.len(), 5);
        assert_eq!(
            p.content[2],
            ContentBlock::ServerToolUse {
                id: "s".into(),
                name: "web_search".into(),
                input: json!({"query": "q"}),
            }
        );
        assert!(matches!(
            &p.content[3],
            ContentBlock::WebSearchToolResult { tool_use_id, content }
                if tool_use_id == "s" && content[0]["url"] == "https://e.com"
        ));
        assert_eq!(p.stop_reason, Some(StopReason::ToolUse));
        assert_eq!(p.usage.cache_read_input_tokens, 7);
        assert_eq!(p.usage.cache_creation_input_tokens, 0);
        assert!(matches!(
            parse_response(200, "{"),
            Err(ModelError::MalformedResponse { status: 200, .. })
        ));
    }
}
