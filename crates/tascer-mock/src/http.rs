//! Small helpers building HTTP responses.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use futures::StreamExt;
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
    sse_then(frames, StreamEnd::Finish)
}

/// Never answers: the request stays accepted and unanswered until the
/// client gives up (the connection's task is dropped then).
pub(crate) async fn never() -> Response {
    std::future::pending().await
}

/// How a scripted event stream ends after its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    /// The body ends normally (the chunked body is terminated).
    Finish,
    /// The connection is aborted: the client sees a transport error.
    Abort,
    /// Nothing more is sent; the connection stays open.
    Stall,
}

/// A `text/event-stream` response sending `frames`, then ending as `end` says.
pub(crate) fn sse_then(frames: Vec<String>, end: StreamEnd) -> Response {
    let frames = futures::stream::iter(
        frames
            .into_iter()
            .map(|f| Ok::<_, std::io::Error>(bytes::Bytes::from(f))),
    );
    let tail = futures::stream::once(async move {
        match end {
            StreamEnd::Stall => std::future::pending().await,
            StreamEnd::Abort | StreamEnd::Finish => {
                // Let the frames reach the client first, as they would from
                // a provider that drops the connection mid-answer.
                tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "mock: connection dropped",
                ))
            }
        }
    });
    let body = match end {
        StreamEnd::Finish => Body::from_stream(frames),
        StreamEnd::Abort | StreamEnd::Stall => Body::from_stream(frames.chain(tail)),
    };
    let mut resp = raw(200, "text/event-stream", body);
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
