//! The Anthropic Messages API wire format (`POST /v1/messages`).

use axum::response::Response;
use serde_json::{Value, json};

use crate::http::{self, StreamEnd};
use crate::reply::{Reply, split_chunks};
use crate::turn::FaultKind;

/// The fake signature attached to thinking blocks.
const SIGNATURE: &str = "mock-signature-Ym9ndXMgc2lnbmF0dXJl";

/// The answer as a JSON or event-stream response.
pub(crate) fn respond(reply: &Reply, stream: bool) -> Response {
    if stream {
        http::sse(events(reply).iter().map(frame).collect())
    } else {
        http::json(200, &message(reply))
    }
}

/// A fault as a response; `reply` is the answer the fault interrupts.
pub(crate) async fn fault(kind: &FaultKind, reply: &Reply, stream: bool) -> Response {
    match kind {
        FaultKind::RateLimit { retry_after_s } => error(
            429,
            "rate_limit_error",
            "mock: rate limit exceeded",
            Some(*retry_after_s),
        ),
        FaultKind::ServerError { status } => {
            error(*status, "api_error", "mock: internal server error", None)
        }
        FaultKind::Overloaded => error(529, "overloaded_error", "mock: overloaded", None),
        FaultKind::TruncatedStream if stream => {
            let events = events(reply);
            let cut = events
                .iter()
                .position(|(name, _)| *name == "content_block_delta")
                .map_or(2, |i| i + 1);
            http::sse(events.iter().take(cut).map(frame).collect())
        }
        FaultKind::TruncatedStream => http::truncated_json(&message(reply)),
        FaultKind::MalformedDelta if stream => {
            let mut frames: Vec<String> = events(reply).iter().take(2).map(frame).collect();
            frames.push(frame(&(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}}),
            )));
            frames.push(
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\
                 \"delta\":{\"type\":\"text_delta\",\"text\":\"unterminated\n\n"
                    .to_string(),
            );
            http::sse(frames)
        }
        FaultKind::MalformedDelta => http::malformed_json(),
        FaultKind::CloseAfter { events } if stream => {
            http::sse_then(partial_frames(reply, *events), StreamEnd::Abort)
        }
        FaultKind::CloseAfter { .. } => http::truncated_json(&message(reply)),
        FaultKind::StreamError if stream => {
            let mut frames = partial_frames(reply, 3);
            frames.push(frame(&(
                "error",
                json!({"type": "error",
                       "error": {"type": "api_error", "message": "mock: internal error in the stream"}}),
            )));
            http::sse(frames)
        }
        FaultKind::StreamError => error(500, "api_error", "mock: internal server error", None),
        FaultKind::StallAfter { events } if stream => {
            http::sse_then(partial_frames(reply, *events), StreamEnd::Stall)
        }
        FaultKind::Hang | FaultKind::StallAfter { .. } => http::never().await,
    }
}

/// The first `n` frames of the answer's stream, never its final
/// `message_stop`.
fn partial_frames(reply: &Reply, n: u32) -> Vec<String> {
    let events = events(reply);
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    let n = n.min(events.len().saturating_sub(1));
    events.iter().take(n).map(frame).collect()
}

/// An Anthropic error response.
pub(crate) fn error(
    status: u16,
    error_type: &str,
    message: &str,
    retry_after_s: Option<u64>,
) -> Response {
    let body = json!({"type": "error", "error": {"type": error_type, "message": message}});
    http::error(status, &body, retry_after_s)
}

fn usage_json(reply: &Reply, output_tokens: u64) -> Value {
    json!({
        "input_tokens": reply.usage.input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": reply.usage.cache_creation_input_tokens,
        "cache_read_input_tokens": reply.usage.cache_read_input_tokens,
    })
}

/// The content blocks of the answer, in order: thinking, text, tool uses.
fn blocks(reply: &Reply) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(thinking) = &reply.thinking {
        out.push(json!({"type": "thinking", "thinking": thinking, "signature": SIGNATURE}));
    }
    for (id, search) in &reply.web_searches {
        out.push(
            json!({"type": "server_tool_use", "id": id, "name": "web_search",
                        "input": {"query": search.query}}),
        );
        let results: Vec<Value> = search
            .results
            .iter()
            .map(|r| {
                json!({"type": "web_search_result", "title": r.title, "url": r.url,
                       "encrypted_content": "bW9jaw==", "page_age": null})
            })
            .collect();
        out.push(json!({"type": "web_search_tool_result", "tool_use_id": id,
                        "content": results}));
    }
    if let Some(text) = &reply.text {
        out.push(json!({"type": "text", "text": text}));
    }
    for call in &reply.tool_calls {
        out.push(
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}),
        );
    }
    out
}

fn message(reply: &Reply) -> Value {
    json!({
        "id": reply.id,
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": blocks(reply),
        "stop_reason": reply.stop_reason,
        "stop_sequence": null,
        "usage": usage_json(reply, reply.usage.output_tokens),
    })
}

/// The stream events of the answer, as (event name, data).
fn events(reply: &Reply) -> Vec<(&'static str, Value)> {
    let mut ev = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {
                "id": reply.id, "type": "message", "role": "assistant", "model": reply.model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": usage_json(reply, 1),
            }}),
        ),
        ("ping", json!({"type": "ping"})),
    ];
    for (index, block) in blocks(reply).into_iter().enumerate() {
        let delta = |delta: Value| {
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        };
        let kind = block["type"].as_str().unwrap_or_default().to_string();
        let (start, deltas): (Value, Vec<(&'static str, Value)>) = match kind.as_str() {
            "thinking" => {
                let text = block["thinking"].as_str().unwrap_or_default();
                let mut d: Vec<_> = split_chunks(text, 3)
                    .into_iter()
                    .map(|c| delta(json!({"type": "thinking_delta", "thinking": c})))
                    .collect();
                d.push(delta(
                    json!({"type": "signature_delta", "signature": SIGNATURE}),
                ));
                (
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                    d,
                )
            }
            "text" => {
                let text = block["text"].as_str().unwrap_or_default();
                let d = split_chunks(text, 3)
                    .into_iter()
                    .map(|c| delta(json!({"type": "text_delta", "text": c})))
                    .collect();
                (json!({"type": "text", "text": ""}), d)
            }
            // Sent whole in its start event, as Anthropic does.
            "web_search_tool_result" => (block, Vec::new()),
            kind => {
                let input = block["input"].to_string();
                let d = split_chunks(&input, 3)
                    .into_iter()
                    .map(|c| delta(json!({"type": "input_json_delta", "partial_json": c})))
                    .collect();
                (
                    json!({"type": kind, "id": block["id"], "name": block["name"],
                               "input": {}}),
                    d,
                )
            }
        };
        ev.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        ev.extend(deltas);
        ev.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    ev.push((
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": reply.stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": reply.usage.output_tokens}}),
    ));
    ev.push(("message_stop", json!({"type": "message_stop"})));
    ev
}

fn frame((name, data): &(&'static str, Value)) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}
