//! Client side of the legacy "HTTP with SSE" transport (MCP protocol
//! 2024-11-05), which rmcp 3.x no longer implements.
//!
//! The client opens `GET <url>` with `Accept: text/event-stream`. The
//! server's first event is `endpoint`, whose data is the (possibly
//! relative) URL to POST JSON-RPC messages to; every server→client message
//! then arrives as a `message` event with JSON data. Client→server messages
//! are POSTs (`Content-Type: application/json`) to that endpoint, usually
//! answered with `202 Accepted` (the reply comes over the event stream).
//! The configured headers go with both the GET and the POSTs.
//!
//! [`SseTransport::connect`] does the GET and waits for the `endpoint`
//! event (an endpoint on another origin is refused); the result is an rmcp
//! [`Transport`] that `ServiceExt::serve` drives. It has no timeout of its
//! own: the caller bounds the whole startup.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Client, StatusCode, Url};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;

/// The parsed event stream of the GET response.
type EventStream =
    Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<reqwest::Error>>> + Send>>;

/// How much of an error response body is quoted in a message.
const BODY_SNIPPET_BYTES: usize = 300;

/// What can go wrong on the legacy SSE transport. Every message names the
/// URL involved.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SseError {
    /// The configured URL does not parse or is not http(s).
    #[error("invalid SSE URL {url:?}: {message}")]
    BadUrl { url: String, message: String },
    /// reqwest could not build a client.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// The GET could not be sent (connection refused, DNS, TLS, …).
    #[error("cannot connect to {url}: {message}")]
    Connect { url: Url, message: String },
    /// The GET was answered with a non-2xx status.
    #[error("GET {url} returned {status}{body}")]
    Status {
        url: Url,
        status: StatusCode,
        body: String,
    },
    /// The GET was answered with something other than an event stream.
    #[error(
        "GET {url} answered with Content-Type {content_type:?}, not text/event-stream \
         (for a streamable HTTP server use \"type\": \"http\")"
    )]
    NotEventStream { url: Url, content_type: String },
    /// The event stream ended before the `endpoint` event.
    #[error("{url} closed the event stream before sending an `endpoint` event")]
    NoEndpoint { url: Url },
    /// Reading or parsing the event stream failed.
    #[error("reading the event stream of {url} failed: {message}")]
    Stream { url: Url, message: String },
    /// The `endpoint` event does not hold a URL.
    #[error("the `endpoint` event of {url} is not a valid URL ({endpoint:?}): {message}")]
    BadEndpoint {
        url: Url,
        endpoint: String,
        message: String,
    },
    /// The `endpoint` event points to another origin.
    #[error(
        "the `endpoint` event of {url} names {endpoint}, which is on another origin; \
         refusing to send messages there"
    )]
    CrossOrigin { url: Url, endpoint: Url },
    /// A message could not be serialized.
    #[error("cannot serialize a message: {0}")]
    Serialize(#[from] serde_json::Error),
    /// A POST could not be sent.
    #[error("POST {endpoint} failed: {message}")]
    Post { endpoint: Url, message: String },
    /// A POST was answered with a non-2xx status.
    #[error("POST {endpoint} returned {status}{body}")]
    PostStatus {
        endpoint: Url,
        status: StatusCode,
        body: String,
    },
}

/// `error: source: source…` of a reqwest error, without its URL (the
/// messages above name it already).
fn reqwest_chain(err: reqwest::Error) -> String {
    let err = err.without_url();
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// `": <first bytes of the body>"`, or `""` for an empty body.
async fn body_snippet(mut response: reqwest::Response) -> String {
    let mut bytes = Vec::new();
    while bytes.len() < BODY_SNIPPET_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    bytes.truncate(BODY_SNIPPET_BYTES);
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    }
}

/// Logs a warning when the connect future is dropped (the caller's startup
/// timeout) while still waiting for the `endpoint` event.
struct EndpointWait<'a> {
    url: &'a Url,
    armed: bool,
}

impl Drop for EndpointWait<'_> {
    fn drop(&mut self) {
        if self.armed {
            tracing::warn!(url = %self.url, "MCP SSE: gave up waiting for the `endpoint` event");
        }
    }
}

/// A connected legacy SSE transport: the open event stream plus the
/// endpoint to POST to.
pub(crate) struct SseTransport {
    http: Client,
    /// The configured URL (the GET).
    url: Url,
    /// Where messages are POSTed (same origin as `url`).
    endpoint: Url,
    /// Configured headers plus `Content-Type: application/json`.
    post_headers: HeaderMap,
    events: EventStream,
    /// Set once the stream ended, failed or was closed.
    done: bool,
}

impl SseTransport {
    /// Opens the event stream at `url` (sending `headers`) and waits for
    /// the server's `endpoint` event.
    pub(crate) async fn connect(url: &str, headers: HeaderMap) -> Result<Self, SseError> {
        let bad_url = |message: String| SseError::BadUrl {
            url: url.to_owned(),
            message,
        };
        let url = Url::parse(url).map_err(|e| bad_url(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad_url(format!(
                "scheme {:?} is not http or https",
                url.scheme()
            )));
        }
        let http = Client::builder()
            .build()
            .map_err(|e| SseError::Client(reqwest_chain(e)))?;

        let mut get_headers = headers.clone();
        get_headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let response = http
            .get(url.clone())
            .headers(get_headers)
            .send()
            .await
            .map_err(|e| SseError::Connect {
                url: url.clone(),
                message: reqwest_chain(e),
            })?;
        let status = response.status();
        if !status.is_success() {
            return Err(SseError::Status {
                url,
                status,
                body: body_snippet(response).await,
            });
        }
        if let Some(content_type) = response.headers().get(CONTENT_TYPE) {
            let content_type = String::from_utf8_lossy(content_type.as_bytes()).into_owned();
            if !content_type
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
            {
                return Err(SseError::NotEventStream { url, content_type });
            }
        }

        let mut events: EventStream = Box::pin(response.bytes_stream().eventsource());
        let mut wait = EndpointWait {
            url: &url,
            armed: true,
        };
        let endpoint = wait_for_endpoint(&url, &mut events).await;
        wait.armed = false;
        drop(wait);
        let endpoint = endpoint?;
        tracing::debug!(%url, %endpoint, "MCP SSE: connected");

        let mut post_headers = headers;
        post_headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(SseTransport {
            http,
            url,
            endpoint,
            post_headers,
            events,
            done: false,
        })
    }

    /// Ends the stream: drops the GET response (closing the connection).
    fn finish(&mut self) {
        self.done = true;
        self.events = Box::pin(futures::stream::empty());
    }
}

/// Reads events until `endpoint`; resolves it against `url` and checks the
/// origin.
async fn wait_for_endpoint(url: &Url, events: &mut EventStream) -> Result<Url, SseError> {
    loop {
        match events.next().await {
            None => return Err(SseError::NoEndpoint { url: url.clone() }),
            Some(Err(e)) => {
                return Err(SseError::Stream {
                    url: url.clone(),
                    message: stream_error(e),
                });
            }
            Some(Ok(event)) if event.event == "endpoint" => {
                let data = event.data.trim();
                let endpoint = url.join(data).map_err(|e| SseError::BadEndpoint {
                    url: url.clone(),
                    endpoint: data.to_owned(),
                    message: e.to_string(),
                })?;
                if endpoint.origin() != url.origin() {
                    return Err(SseError::CrossOrigin {
                        url: url.clone(),
                        endpoint,
                    });
                }
                return Ok(endpoint);
            }
            Some(Ok(event)) => {
                tracing::debug!(%url, event = %event.event, "MCP SSE: ignoring an event before `endpoint`");
            }
        }
    }
}

fn stream_error(e: EventStreamError<reqwest::Error>) -> String {
    match e {
        EventStreamError::Transport(e) => reqwest_chain(e),
        other => other.to_string(),
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn name() -> Cow<'static, str> {
        "SseTransport".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), SseError>> + Send + 'static {
        let endpoint = self.endpoint.clone();
        let request = serde_json::to_vec(&item).map(|body| {
            self.http
                .post(endpoint.clone())
                .headers(self.post_headers.clone())
                .body(body)
        });
        async move {
            let response = request?.send().await.map_err(|e| SseError::Post {
                endpoint: endpoint.clone(),
                message: reqwest_chain(e),
            })?;
            let status = response.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(SseError::PostStatus {
                    endpoint,
                    status,
                    body: body_snippet(response).await,
                })
            }
        }
    }

    /// Cancel-safe: the only await point is `next()` on the stream, which
    /// keeps its state in `self.events`.
    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if self.done {
                return None;
            }
            match self.events.next().await {
                None => {
                    tracing::debug!(url = %self.url, "MCP SSE: the server closed the event stream");
                    self.finish();
                }
                Some(Err(e)) => {
                    tracing::warn!(url = %self.url, error = %stream_error(e), "MCP SSE: event stream failed");
                    self.finish();
                }
                Some(Ok(event)) if event.event == "message" => {
                    match serde_json::from_str::<ServerJsonRpcMessage>(&event.data) {
                        Ok(message) => return Some(message),
                        Err(e) => tracing::warn!(
                            url = %self.url,
                            error = %e,
                            "MCP SSE: ignoring a message that is not JSON-RPC"
                        ),
                    }
                }
                Some(Ok(event)) => {
                    tracing::debug!(url = %self.url, event = %event.event, "MCP SSE: ignoring event");
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), SseError>> + Send {
        self.finish();
        std::future::ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn stream_of(text: &'static str) -> EventStream {
        let chunks = vec![Ok::<_, reqwest::Error>(text.as_bytes())];
        Box::pin(futures::stream::iter(chunks).eventsource())
    }

    #[tokio::test]
    async fn endpoint_resolution_and_origin() {
        let url = Url::parse("http://127.0.0.1:3001/sse").unwrap();
        let mut s = stream_of(": hi\n\nevent: endpoint\ndata: /message?sessionId=abc\n\n");
        let ep = wait_for_endpoint(&url, &mut s).await.unwrap();
        assert_eq!(ep.as_str(), "http://127.0.0.1:3001/message?sessionId=abc");

        let mut s = stream_of("event: endpoint\ndata: http://127.0.0.1:3001/m\n\n");
        assert_eq!(
            wait_for_endpoint(&url, &mut s).await.unwrap().as_str(),
            "http://127.0.0.1:3001/m"
        );

        for other in [
            "http://evil.example/m",
            "https://127.0.0.1:3001/m",
            "http://127.0.0.1:3002/m",
            "//evil.example/m",
        ] {
            let text: &'static str =
                Box::leak(format!("event: endpoint\ndata: {other}\n\n").into_boxed_str());
            let err = wait_for_endpoint(&url, &mut stream_of(text))
                .await
                .unwrap_err()
                .to_string();
            assert!(err.contains("another origin"), "{other}: {err}");
        }

        let err = wait_for_endpoint(&url, &mut stream_of("event: message\ndata: {}\n\n"))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("before sending an `endpoint` event") && err.contains("/sse"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn bad_urls() {
        for url in ["not a url", "ftp://h/sse"] {
            let err = SseTransport::connect(url, HeaderMap::new())
                .await
                .err()
                .unwrap()
                .to_string();
            assert!(err.contains("invalid SSE URL"), "{err}");
        }
    }
}
