//! The OpenAI Chat Completions wire format (`POST /v1/chat/completions`).

use axum::response::Response;
use serde_json::{Value, json};

use crate::http::{self, StreamEnd};
use crate::reply::{Reply, split_chunks, unix_now};
use crate::turn::FaultKind;

/// Maps an Anthropic stop reason to an OpenAI finish reason; unknown values
/// pass through unchanged so scenarios may use OpenAI spellings directly.
pub(crate) fn finish_reason(stop_reason: &str) -> &str {
    match stop_reason {
        "tool_use" => "tool_calls",
        "end_turn" | "stop_sequence" | "pause_turn" => "stop",
        "max_tokens" => "length",
        "refusal" => "content_filter",
        other => other,
    }
}

/// The answer as a JSON or event-stream response.
pub(crate) fn respond(reply: &Reply, stream: bool, include_usage: bool) -> Response {
    if stream {
        let mut frames: Vec<String> = chunks(reply, include_usage).iter().map(frame).collect();
        frames.push("data: [DONE]\n\n".to_string());
        http::sse(frames)
    } else {
        http::json(200, &completion(reply))
    }
}

/// A fault as a response; `reply` is the answer the fault interrupts.
pub(crate) async fn fault(kind: &FaultKind, reply: &Reply, stream: bool) -> Response {
    match kind {
        FaultKind::RateLimit { retry_after_s } => error(
            429,
            "rate_limit_error",
            Some("rate_limit_exceeded"),
            "mock: rate limit exceeded",
            Some(*retry_after_s),
        ),
        FaultKind::ServerError { status } => error(
            *status,
            "server_error",
            None,
            "mock: internal server error",
            None,
        ),
        FaultKind::Overloaded => error(
            529,
            "server_error",
            Some("overloaded"),
            "mock: overloaded",
            None,
        ),
        FaultKind::TruncatedStream if stream => {
            // The role chunk and the first content (or tool call) chunk:
            // never a finish_reason, never [DONE].
            let all = chunks(reply, false);
            // The last chunk carries the finish_reason: never send it.
            let keep = 2.min(all.len().saturating_sub(1));
            let frames = all.iter().take(keep).map(frame).collect();
            http::sse(frames)
        }
        FaultKind::TruncatedStream => http::truncated_json(&completion(reply)),
        FaultKind::MalformedDelta if stream => {
            let first = chunks(reply, false)
                .iter()
                .take(1)
                .map(frame)
                .collect::<Vec<_>>();
            let mut frames = first;
            frames.push(format!(
                "data: {{\"id\":\"{}\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"unterminated\n\n",
                reply.id
            ));
            http::sse(frames)
        }
        FaultKind::MalformedDelta => http::malformed_json(),
        FaultKind::CloseAfter { events } if stream => {
            http::sse_then(partial_frames(reply, *events), StreamEnd::Abort)
        }
        FaultKind::CloseAfter { .. } => http::truncated_json(&completion(reply)),
        FaultKind::StreamError if stream => {
            let mut frames = partial_frames(reply, 2);
            frames.push(frame(&json!({"error": {
                "message": "mock: internal error in the stream",
                "type": "server_error", "param": null, "code": null,
            }})));
            http::sse(frames)
        }
        FaultKind::StreamError => error(
            500,
            "server_error",
            None,
            "mock: internal server error",
            None,
        ),
        FaultKind::StallAfter { events } if stream => {
            http::sse_then(partial_frames(reply, *events), StreamEnd::Stall)
        }
        FaultKind::Hang | FaultKind::StallAfter { .. } => http::never().await,
    }
}

/// The first `n` chunks of the answer's stream, never the one with the
/// `finish_reason`, never `[DONE]`.
fn partial_frames(reply: &Reply, n: u32) -> Vec<String> {
    let all = chunks(reply, false);
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    let n = n.min(all.len().saturating_sub(1));
    all.iter().take(n).map(frame).collect()
}

/// An OpenAI error response.
pub(crate) fn error(
    status: u16,
    error_type: &str,
    code: Option<&str>,
    message: &str,
    retry_after_s: Option<u64>,
) -> Response {
    let body =
        json!({"error": {"message": message, "type": error_type, "param": null, "code": code}});
    http::error(status, &body, retry_after_s)
}

fn usage_json(reply: &Reply) -> Value {
    let u = &reply.usage;
    let prompt = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
    let mut usage = json!({
        "prompt_tokens": prompt,
        "completion_tokens": u.output_tokens,
        "total_tokens": prompt + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cache_read_input_tokens},
    });
    if let Some(cost) = reply.cost_usd {
        usage["cost"] = json!(cost);
    }
    usage
}

fn completion(reply: &Reply) -> Value {
    let mut message = json!({"role": "assistant", "content": reply.text});
    if !reply.tool_calls.is_empty() {
        let calls: Vec<Value> = reply
            .tool_calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function",
                       "function": {"name": c.name, "arguments": c.input.to_string()}})
            })
            .collect();
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": reply.id,
        "object": "chat.completion",
        "created": unix_now(),
        "model": reply.model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": finish_reason(&reply.stop_reason)}],
        "usage": usage_json(reply),
    })
}

/// The stream chunks of the answer (without `[DONE]`).
fn chunks(reply: &Reply, include_usage: bool) -> Vec<Value> {
    let created = unix_now();
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({
            "id": reply.id, "object": "chat.completion.chunk", "created": created,
            "model": reply.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut out = vec![chunk(json!({"role": "assistant"}), None)];
    if let Some(text) = &reply.text {
        for piece in split_chunks(text, 3) {
            out.push(chunk(json!({"content": piece}), None));
        }
    }
    for (i, call) in reply.tool_calls.iter().enumerate() {
        out.push(chunk(
            json!({"tool_calls": [{"index": i, "id": call.id, "type": "function",
                                   "function": {"name": call.name, "arguments": ""}}]}),
            None,
        ));
        for piece in split_chunks(&call.input.to_string(), 3) {
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    out.push(chunk(json!({}), Some(finish_reason(&reply.stop_reason))));
    if include_usage {
        out.push(json!({
            "id": reply.id, "object": "chat.completion.chunk", "created": created,
            "model": reply.model, "choices": [], "usage": usage_json(reply),
        }));
    }
    out
}

fn frame(data: &Value) -> String {
    format!("data: {data}\n\n")
}
