//! The error type of every model call.

use std::time::Duration;

use serde_json::Value;

/// What can go wrong talking to a model provider.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// No credentials or endpoint were configured.
    #[error("no API key: set {vars}")]
    MissingApiKey {
        /// The environment variables that would have supplied one.
        vars: String,
    },
    /// The provider could not be reached (connection refused, DNS, reset
    /// before a response arrived).
    #[error("cannot reach {provider} at {url}: {detail}")]
    Unreachable {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// The URL that was requested.
        url: String,
        /// What failed.
        detail: String,
    },
    /// The provider answered with an error (non-retryable, or retries ran out).
    #[error("{provider} API error (HTTP {status}, {kind}): {message}")]
    Api {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// HTTP status (or the status an SSE `error` event stands for).
        status: u16,
        /// The provider's error type, e.g. `rate_limit_error`.
        kind: String,
        /// The provider's error message.
        message: String,
    },
    /// A streamed response could not be understood.
    #[error("{provider} stream (HTTP {status}): {detail}")]
    MalformedStream {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// HTTP status of the response.
        status: u16,
        /// What was wrong.
        detail: String,
    },
    /// A streamed response ended before its final event.
    #[error("{provider} stream (HTTP {status}) ended early: {detail}")]
    TruncatedStream {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// HTTP status of the response.
        status: u16,
        /// What was missing.
        detail: String,
    },
    /// A non-streamed response body could not be understood.
    #[error("{provider} response (HTTP {status}) is malformed: {detail}")]
    MalformedResponse {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// HTTP status of the response.
        status: u16,
        /// What was wrong.
        detail: String,
    },
    /// The provider sent nothing for longer than the configured timeout:
    /// no response to the request, or no stream event for that long.
    #[error("{provider} request timed out: {waiting} for {}s", after.as_secs_f64())]
    Timeout {
        /// `anthropic` or `openai`.
        provider: &'static str,
        /// The timeout that expired.
        after: Duration,
        /// What was awaited, e.g. `no response` or `no stream event after 6 events`.
        waiting: String,
    },
    /// The caller cancelled the request.
    #[error("model request cancelled")]
    Cancelled,
    /// The configuration cannot work (bad URL, bad price JSON …).
    #[error("invalid model configuration: {0}")]
    InvalidConfig(String),
    /// An [`AnswerSource`](crate::AnswerSource) has no answer (a replay
    /// past the end of its record, or stopped where it was asked to).
    #[error("{0}")]
    NoAnswer(String),
}

impl ModelError {
    /// The HTTP status involved, when there was a response.
    pub fn status(&self) -> Option<u16> {
        match self {
            ModelError::Api { status, .. }
            | ModelError::MalformedStream { status, .. }
            | ModelError::TruncatedStream { status, .. }
            | ModelError::MalformedResponse { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether trying again may help: rate limits, overloads, server errors
    /// (also when reported inside a stream), unreachable endpoints,
    /// timeouts, and streams that broke off or arrived damaged. A streamed
    /// answer is only used once it is complete, so nothing of a failed
    /// attempt has been acted on and a retry cannot duplicate anything.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Api { status, .. } => is_retryable_status(*status),
            ModelError::Unreachable { .. }
            | ModelError::Timeout { .. }
            | ModelError::TruncatedStream { .. }
            | ModelError::MalformedStream { .. } => true,
            _ => false,
        }
    }

    /// What the user can try when this error ends a run, as one sentence
    /// without a final period; `None` for cancellation.
    pub fn advice(&self) -> Option<&'static str> {
        Some(match self {
            ModelError::MissingApiKey { .. } => "set one of those variables and run again",
            ModelError::Unreachable { .. } => {
                "check that the server is running and that ANTHROPIC_BASE_URL / OPENAI_BASE_URL point at it"
            }
            ModelError::Api { status, .. } => match status {
                401 | 403 => {
                    "check the API key (ANTHROPIC_API_KEY / OPENAI_API_KEY) and its permissions"
                }
                404 => "check the model name (--model) and the base URL",
                408 | 500..=599 => {
                    "the provider is failing or overloaded: try again later, or name a --fallback-model"
                }
                429 => {
                    "the rate limit or quota is used up: wait and try again, or raise TASCER_MAX_RETRIES"
                }
                _ => {
                    "the provider refused the request: check the model name, max tokens and the message above"
                }
            },
            ModelError::MalformedStream { .. }
            | ModelError::TruncatedStream { .. }
            | ModelError::MalformedResponse { .. } => {
                "the connection or a proxy between you and the provider damaged the answer: try again, or check the base URL"
            }
            ModelError::Timeout { .. } => {
                "try again later, or allow a slower provider with --request-timeout SECONDS (TASCER_REQUEST_TIMEOUT)"
            }
            ModelError::InvalidConfig(_) => "fix the configuration named above",
            ModelError::Cancelled | ModelError::NoAnswer(_) => return None,
        })
    }
}

/// The HTTP status an error reported inside a successful (HTTP 200)
/// response stands for: from a numeric `code` (vLLM and others send the
/// HTTP status there), else from the error's type or code (Anthropic and
/// OpenAI spellings), else 500 — the provider failed while answering.
pub(crate) fn embedded_error_status(kind: &str, code: Option<&Value>) -> u16 {
    if let Some(status) = code
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..=599).contains(c))
    {
        return status;
    }
    let code = code.and_then(Value::as_str).unwrap_or_default();
    for name in [kind, code] {
        let status = match name {
            "invalid_api_key" => 401,
            "model_not_found" => 404,
            "context_length_exceeded" => 400,
            "rate_limit_exceeded" | "insufficient_quota" => 429,
            "overloaded" => 529,
            "server_error" => 500,
            other => status_for_error_kind(other, 0),
        };
        if status != 0 {
            return status;
        }
    }
    500
}

/// HTTP statuses worth retrying.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500 | 502 | 503 | 504 | 529)
}

/// Builds an [`ModelError::Api`] from an error body of either provider:
/// `{"error":{"type"|"code":…,"message":…}}` or `{"error":"…"}`; anything
/// else is reported as raw text cut to 500 characters.
pub(crate) fn api_error_from_body(provider: &'static str, status: u16, body: &str) -> ModelError {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    let (kind, message) = match error {
        Some(Value::Object(obj)) => {
            let kind = obj
                .get("type")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .or_else(|| obj.get("code").and_then(value_to_string));
            let message = obj.get("message").and_then(value_to_string);
            (kind, message)
        }
        Some(Value::String(s)) => (None, Some(s.clone())),
        _ => (None, None),
    };
    ModelError::Api {
        provider,
        status,
        kind: kind.unwrap_or_else(|| default_kind(status).to_string()),
        message: message.unwrap_or_else(|| {
            let text = truncate_chars(body.trim(), 500);
            if text.is_empty() {
                "(empty body)".to_string()
            } else {
                text
            }
        }),
    }
}

/// The HTTP status an Anthropic error type stands for (used for SSE `error`
/// events, which arrive on an HTTP 200 stream).
pub(crate) fn status_for_error_kind(kind: &str, fallback: u16) -> u16 {
    match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "api_error" => 500,
        "overloaded_error" => 529,
        _ => fallback,
    }
}

fn default_kind(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        s if s >= 500 => "api_error",
        _ => "http_error",
    }
}

fn value_to_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// At most `max` characters of `s`, with `…` when cut.
pub(crate) fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// A short description of a transport error: "connection refused", or the
/// innermost cause (not the whole chain, unlike [`tascer_core::error_chain`]).
pub(crate) fn transport_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = Some(error);
    let mut last = error.to_string();
    while let Some(err) = current {
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return "connection refused".to_string();
        }
        last = err.to_string();
        current = err.source();
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_anthropic_error_body() {
        let e = api_error_from_body(
            "anthropic",
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#,
        );
        assert_eq!(
            e.to_string(),
            "anthropic API error (HTTP 400, invalid_request_error): bad"
        );
        assert!(!e.is_retryable());
        assert_eq!(e.status(), Some(400));
    }

    #[test]
    fn parses_openai_error_body() {
        let e = api_error_from_body(
            "openai",
            429,
            r#"{"error":{"message":"slow down","type":"","code":"rate_limit_exceeded"}}"#,
        );
        match &e {
            ModelError::Api { kind, message, .. } => {
                assert_eq!(kind, "rate_limit_exceeded");
                assert_eq!(message, "slow down");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(e.is_retryable());
    }

    #[test]
    fn raw_body_is_cut() {
        let body = "x".repeat(800);
        match api_error_from_body("openai", 502, &body) {
            ModelError::Api { kind, message, .. } => {
                assert_eq!(kind, "api_error");
                assert_eq!(message.chars().count(), 501);
            }
            other => panic!("unexpected {other:?}"),
        }
        match api_error_from_body("openai", 404, r#"{"error":"model 'x' not found"}"#) {
            ModelError::Api { message, .. } => assert_eq!(message, "model 'x' not found"),
            other => panic!("unexpected {other:?}"),
        }
    }
}
