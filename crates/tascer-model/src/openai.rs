//! OpenAI-compatible Chat Completions: request conversion and non-streamed
//! responses.

use serde_json::{Map, Value, json};
use tascer_core::{ChatMessage, ContentBlock, ImageSource, Role, StopReason, Usage};

use crate::error::{ModelError, api_error_from_body};
use crate::types::{ModelRequest, Parsed};

/// Provider name used in errors.
pub(crate) const NAME: &str = "openai";

/// The JSON body of `POST /chat/completions` for `request`, asking for
/// `model`; with `usage_accounting` (OpenRouter) it asks for the answer's
/// cost too.
pub(crate) fn request_body(request: &ModelRequest, model: &str, usage_accounting: bool) -> Value {
    let mut body = json!({
        "model": model,
        "messages": convert_messages(request.system.as_deref(), &request.messages),
        "stream": request.stream,
    });
    if request.stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    if usage_accounting {
        body["usage"] = json!({"include": true});
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    }
                })
            })
            .collect();
    }
    if let Some(max) = request.max_tokens {
        body[max_tokens_key(model)] = json!(max);
    }
    body
}

/// OpenAI's reasoning models reject `max_tokens`.
fn max_tokens_key(model: &str) -> &'static str {
    let reasoning = ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|p| model.starts_with(p));
    if reasoning {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
}

/// Converts the system prompt and Anthropic-shaped history to Chat
/// Completions messages.
pub(crate) fn convert_messages(system: Option<&str>, messages: &[ChatMessage]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(system) = system {
        out.push(json!({"role": "system", "content": system}));
    }
    for message in messages {
        match message.role {
            Role::User => convert_user(message, &mut out),
            Role::Assistant => out.push(convert_assistant(message)),
        }
    }
    out
}

fn convert_user(message: &ChatMessage, out: &mut Vec<Value>) {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => out.push(json!({
                "role": "tool",
                "tool_call_id": tool_use_id,
                "content": content.to_text(),
            })),
            ContentBlock::Text { text } => texts.push(text.as_str()),
            ContentBlock::Image { source } => images.push(image_url(source)),
            ContentBlock::Thinking { .. }
            | ContentBlock::ToolUse { .. }
            | ContentBlock::ServerToolUse { .. }
            | ContentBlock::WebSearchToolResult { .. } => {}
        }
    }
    if images.is_empty() {
        if !texts.is_empty() {
            out.push(json!({"role": "user", "content": texts.join("\n")}));
        }
        return;
    }
    let mut parts: Vec<Value> = texts
        .iter()
        .map(|t| json!({"type": "text", "text": t}))
        .collect();
    parts.extend(
        images
            .into_iter()
            .map(|url| json!({"type": "image_url", "image_url": {"url": url}})),
    );
    out.push(json!({"role": "user", "content": parts}));
}

fn image_url(source: &ImageSource) -> String {
    match source {
        ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
        ImageSource::Url { url } => url.clone(),
    }
}

fn convert_assistant(message: &ChatMessage) -> Value {
    let mut text = Vec::new();
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::Text { text: t } => text.push(t.as_str()),
            ContentBlock::ToolUse { id, name, input } => calls.push(json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": input.to_string()},
            })),
            _ => {}
        }
    }
    let mut msg = Map::new();
    msg.insert("role".into(), json!("assistant"));
    let content = if text.is_empty() && !calls.is_empty() {
        Value::Null
    } else {
        json!(text.join("\n"))
    };
    msg.insert("content".into(), content);
    if !calls.is_empty() {
        msg.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(msg)
}

/// Maps a `finish_reason` to a stop reason.
pub(crate) fn stop_reason(finish_reason: &str) -> StopReason {
    match finish_reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

/// Reads an OpenAI `usage` object: cached prompt tokens become cache reads
/// and cache writes (OpenRouter's `cache_write_tokens`) cache writes, both
/// taken out of the input count.
pub(crate) fn usage_from(value: &Value) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let prompt = n(value.get("prompt_tokens"));
    let cached = n(value.pointer("/prompt_tokens_details/cached_tokens"));
    let written = n(value.pointer("/prompt_tokens_details/cache_write_tokens"));
    Usage {
        input_tokens: prompt.saturating_sub(cached).saturating_sub(written),
        output_tokens: n(value.get("completion_tokens")),
        cache_creation_input_tokens: written,
        cache_read_input_tokens: cached,
    }
}

/// The cost a `usage` object reports (OpenRouter's `usage.cost`, in US
/// dollars), when it reports one.
pub(crate) fn reported_cost(usage: &Value) -> Option<f64> {
    usage
        .get("cost")
        .and_then(Value::as_f64)
        .filter(|c| c.is_finite() && *c >= 0.0)
}

/// Parses tool-call arguments; empty means `{}`.
pub(crate) fn parse_arguments(arguments: &str) -> Result<Value, serde_json::Error> {
    if arguments.trim().is_empty() {
        Ok(Value::Object(Map::new()))
    } else {
        serde_json::from_str(arguments)
    }
}

/// The reasoning text some servers add (`reasoning_content` or `reasoning`).
pub(crate) fn reasoning_text(value: &Value) -> Option<&str> {
    value
        .get("reasoning_content")
        .or_else(|| value.get("reasoning"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Parses a non-streamed Chat Completions response body.
pub(crate) fn parse_response(status: u16, body: &str) -> Result<Parsed, ModelError> {
    let malformed = |detail: String| ModelError::MalformedResponse {
        provider: NAME,
        status,
        detail,
    };
    let value: Value = serde_json::from_str(body)
        .map_err(|e| malformed(format!("body is not valid JSON: {e}")))?;
    if value.get("error").is_some_and(|e| !e.is_null()) {
        return Err(api_error_from_body(NAME, status, body));
    }
    let choice = value
        .pointer("/choices/0")
        .ok_or_else(|| malformed("no choices[0]".to_string()))?;
    let message = choice
        .get("message")
        .ok_or_else(|| malformed("no choices[0].message".to_string()))?;
    let mut content = Vec::new();
    if let Some(thinking) = reasoning_text(message) {
        content.push(ContentBlock::Thinking {
            thinking: thinking.to_string(),
            signature: String::new(),
        });
    }
    if let Some(text) = message
        .get("content")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        content.push(ContentBlock::text(text));
    }
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, call) in calls.iter().enumerate() {
        let text = |ptr: &str| {
            call.pointer(ptr)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let name = text("/function/name").to_string();
        let input = parse_arguments(text("/function/arguments")).map_err(|e| {
            malformed(format!(
                "arguments of tool call {i} ({name}) are not valid JSON: {e}"
            ))
        })?;
        content.push(ContentBlock::ToolUse {
            id: text("/id").to_string(),
            name,
            input,
        });
    }
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
        content,
        stop_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(stop_reason),
        usage: value.get("usage").map(usage_from).unwrap_or_default(),
        cost_usd: value.get("usage").and_then(reported_cost),
    })
}

#[cfg(test)]
mod tests {
    use tascer_core::{ToolResultContent, ToolSpec};

    use super::*;

    #[test]
    fn converts_history() {
        let messages = vec![
            ChatMessage::user_text("list files"),
            ChatMessage {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Thinking {
                        thinking: "t".into(),
                        signature: String::new(),
                    },
                    ContentBlock::text("sure"),
                    ContentBlock::ToolUse {
                        id: "c1".into(),
                        name: "Ls".into(),
                        input: json!({"dir":"."}),
                    },
                ],
            },
            ChatMessage {
                role: Role::User,
                content: vec![
                    ContentBlock::text("also this"),
                    ContentBlock::ToolResult {
                        tool_use_id: "c1".into(),
                        content: ToolResultContent::Text("a.txt".into()),
                        is_error: None,
                    },
                ],
            },
            ChatMessage {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "c2".into(),
                    name: "Ls".into(),
                    input: json!({}),
                }],
            },
        ];
        let out = convert_messages(Some("sys"), &messages);
        assert_eq!(
            out,
            vec![
                json!({"role":"system","content":"sys"}),
                json!({"role":"user","content":"list files"}),
                json!({"role":"assistant","content":"sure","tool_calls":[
                    {"id":"c1","type":"function","function":{"name":"Ls","arguments":"{\"dir\":\".\"}"}}]}),
                json!({"role":"tool","tool_call_id":"c1","content":"a.txt"}),
                json!({"role":"user","content":"also this"}),
                json!({"role":"assistant","content":null,"tool_calls":[
                    {"id":"c2","type":"function","function":{"name":"Ls","arguments":"{}"}}]}),
            ]
        );
    }

    #[test]
    fn images_become_parts() {
        let m = ChatMessage {
            role: Role::User,
            content: vec![
                ContentBlock::text("see"),
                ContentBlock::Image {
                    source: ImageSource::Base64 {
                        media_type: "image/png".into(),
                        data: "AAAA".into(),
                    },
                },
            ],
        };
        let out = convert_messages(None, &[m]);
        assert_eq!(
            out[0]["content"][1],
            json!({"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}})
        );
    }

    #[test]
    fn body_shape() {
        let req = ModelRequest {
            model: "gpt-4o".into(),
            system: None,
            messages: vec![ChatMessage::user_text("hi")],
            tools: vec![ToolSpec {
                name: "Read".into(),
                description: "reads".into(),
                input_schema: json!({"type":"object"}),
            }],
            server_tools: Vec::new(),
            max_tokens: Some(10),
            stream: true,
        };
        let body = request_body(&req, "gpt-4o", false);
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert!(body.get("usage").is_none());
        let body = request_body(&req, "gpt-4o", true);
        assert_eq!(body["usage"], json!({"include": true}));
        assert_eq!(body["max_tokens"], 10);
        assert_eq!(
            body["tools"],
            json!([{"type":"function","function":{"name":"Read","description":"reads","parameters":{"type":"object"}}}])
        );
        let body = request_body(&req, "o3-mini", false);
        assert_eq!(body["max_completion_tokens"], 10);
        assert!(body.get("max_tokens").is_none());
    }

    #[test]
    fn parses_completion() {
        let body = r#"{"id":"chatcmpl-1","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok",
            "tool_calls":[{"id":"call_1","type":"function","function":{"name":"Read","arguments":"{\"path\":\"a\"}"}}]},
            "finish_reason":"tool_calls"}],
            "usage":{"prompt_tokens":100,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":60}}}"#;
        let p = parse_response(200, body).unwrap();
        assert_eq!(p.stop_reason, Some(StopReason::ToolUse));
        assert_eq!(p.usage.input_tokens, 40);
        assert_eq!(p.usage.cache_read_input_tokens, 60);
        assert_eq!(p.usage.output_tokens, 7);
        assert_eq!(p.content[0], ContentBlock::text("ok"));
        assert_eq!(
            p.content[1],
            ContentBlock::ToolUse {
                id: "call_1".into(),
                name: "Read".into(),
                input: json!({"path":"a"})
            }
        );
        assert_eq!(p.cost_usd, None);
        let routed = body
            .replace(
                r#""completion_tokens":7,"#,
                r#""completion_tokens":7,"cost":0.0125,"#,
            )
            .replace(
                r#""cached_tokens":60}"#,
                r#""cached_tokens":60,"cache_write_tokens":30}"#,
            );
        let p = parse_response(200, &routed).unwrap();
        assert_eq!(p.cost_usd, Some(0.0125));
        assert_eq!(p.usage.input_tokens, 10);
        assert_eq!(p.usage.cache_creation_input_tokens, 30);
        let bad = body.replace(r#"{\"path\":\"a\"}"#, "{nope");
        let err = parse_response(200, &bad).unwrap_err();
        assert!(err.to_string().contains("(Read)"), "{err}");
    }
}
