//! Small helpers building HTTP responses.

use std::convert::Infallible;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

/// A response with the given status, content type and body.
pub(crate) fn raw(status: u16, content_type: &'static str, body: Body) -> Response {
    let mut resp = Response::new(body);
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

/// A JSON response.
pub(crate) fn json(status: u16, value: &Value) -> Response {
    raw(status, "application/json", Body::from(value.to_string()))
}

/// A JSON error response, with `retry-after` when given.
pub(crate) fn error(status: u16, value: &Value, retry_after_s: Option<u64>) -> Response {
    let mut resp = json(status, value);
    if let Some(secs) = retry_after_s {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    resp
}

/// A `text/event-stream` response sending each frame as its own chunk.
pub(crate) fn sse(frames: Vec<String>) -> Response {
    let stream = futures::stream::iter(
        frames
            .into_iter()
            .map(|f| Ok::<_, Infallible>(bytes::Bytes::from(f))),
    );
    let mut resp = raw(200, "text/event-stream", Body::from_stream(stream));
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

/// A JSON body cut in half (invalid JSON), status 200.
pub(crate) fn truncated_json(value: &Value) -> Response {
    let text = value.to_string();
    let mut cut = text.len() / 2;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    raw(200, "application/json", Body::from(text[..cut].to_string()))
}

/// A body that is not valid JSON, status 200.
pub(crate) fn malformed_json() -> Response {
    raw(
        200,
        "application/json",
        Body::from("{\"mock\": this is not valid json"),
    )
}
