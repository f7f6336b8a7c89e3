//! [`ModelClient`]: one HTTP client, the retry loop and provider dispatch.

use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tascer_core::Usage;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::anthropic_stream::AnthropicAssembler;
use crate::config::{ProviderConfig, ProviderKind};
use crate::error::{ModelError, api_error_from_body, transport_cause};
use crate::openai_stream::OpenAiAssembler;
use crate::source::AnswerSource;
use crate::types::{ModelEvent, ModelRequest, ModelResponse, Parsed};
use crate::{anthropic, openai, retry, sse};

/// Connect timeout for every request.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A model provider client. Cheap to clone: clones share one connection pool.
#[derive(Clone)]
pub struct ModelClient {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    config: ProviderConfig,
    http: reqwest::Client,
    endpoint: String,
    headers: HeaderMap,
    /// Answers from here instead of the provider, when set.
    source: Option<Arc<dyn AnswerSource>>,
}

/// A failed attempt, with the server's retry hint.
struct Failure {
    error: ModelError,
    retry_after: Option<Duration>,
}

impl From<ModelError> for Failure {
    fn from(error: ModelError) -> Self {
        Failure {
            error,
            retry_after: None,
        }
    }
}

impl std::fmt::Debug for ModelClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelClient")
            .field("provider", &self.provider_name())
            .field("endpoint", &self.inner.endpoint)
            .finish_non_exhaustive()
    }
}

impl ModelClient {
    /// Builds a client; fails on an unusable base URL or header.
    pub fn new(config: ProviderConfig) -> Result<Self, ModelError> {
        let endpoint = config.endpoint();
        let url = reqwest::Url::parse(&endpoint).map_err(|e| {
            ModelError::InvalidConfig(format!("base URL {:?}: {e}", config.base_url))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ModelError::InvalidConfig(format!(
                "base URL {:?} must be http or https",
                config.base_url
            )));
        }
        let headers = build_headers(&config)?;
        let mut http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT.min(config.request_timeout))
            .user_agent(concat!("tascer/", env!("CARGO_PKG_VERSION")));
        if url.scheme() == "http" {
            // A plain-HTTP endpoint (a local server) needs no TLS roots:
            // loading the system's (~300 files on Linux) cost more than
            // the rest of a short run's start-up. An https endpoint keeps
            // the platform verifier and the system's roots, so
            // company-installed CAs keep working.
            http = http.tls_certs_only(Vec::<reqwest::Certificate>::new());
        }
        let http = http
            .build()
            .map_err(|e| ModelError::InvalidConfig(format!("HTTP client: {e}")))?;
        Ok(ModelClient {
            inner: Arc::new(Inner {
                config,
                http,
                endpoint,
                headers,
                source: None,
            }),
        })
    }

    /// A client whose answers come from `source` instead of a provider
    /// (no HTTP request is made); `config` still names the prices and
    /// model aliases.
    pub fn from_source(
        config: ProviderConfig,
        source: Arc<dyn AnswerSource>,
    ) -> Result<Self, ModelError> {
        let client = ModelClient::new(config)?;
        let inner = Arc::unwrap_or_clone(client.inner);
        Ok(ModelClient {
            inner: Arc::new(Inner {
                source: Some(source),
                ..inner
            }),
        })
    }

    /// The configuration this client was built with.
    pub fn config(&self) -> &ProviderConfig {
        &self.inner.config
    }

    /// `anthropic` or `openai` (or the [`AnswerSource`]'s name).
    pub fn provider_name(&self) -> &'static str {
        match &self.inner.source {
            Some(source) => source.name(),
            None => self.inner.config.kind.name(),
        }
    }

    /// The cost of `usage` on `model`, USD, from the configured prices (0
    /// for a model without a price; see [`cost`](Self::cost)).
    pub fn cost_usd(&self, model: &str, usage: &Usage) -> f64 {
        self.inner.config.prices.cost_usd(model, usage)
    }

    /// The cost of one answer, USD: the cost the provider reported
    /// (`reported`, e.g. [`ModelResponse::cost_usd`]) when there is one,
    /// else `usage` at `model`'s price; `None` when neither is known.
    pub fn cost(&self, model: &str, usage: &Usage, reported: Option<f64>) -> Option<f64> {
        reported.or_else(|| self.inner.config.prices.cost(model, usage))
    }

    /// Whether the cost of `model`'s answers will be known: the provider
    /// reports costs (OpenRouter) or the price table has the model (after
    /// [`resolve_model`](Self::resolve_model)).
    pub fn knows_cost(&self, model: &str) -> bool {
        let config = &self.inner.config;
        config.openrouter
            || config
                .prices
                .price_for(&config.resolve_model(model))
                .is_some()
    }

    /// The id sent for `model` (aliases resolved for this provider, see
    /// [`ProviderConfig::resolve_model`]).
    pub fn resolve_model(&self, model: &str) -> String {
        self.inner.config.resolve_model(model)
    }

    /// Sends one request, retrying rate limits, overloads, server errors,
    /// unreachable endpoints, timeouts and broken or damaged streams (see
    /// [`ModelError::is_retryable`]). `events` receives stream, retry and
    /// fallback events as they happen: the stream events of a failed
    /// attempt have already been sent when its retry is announced, and the
    /// next attempt starts again with `message_start`. When `cancel` fires the HTTP
    /// request is dropped and [`ModelError::Cancelled`] returned.
    ///
    /// Boxed: the state machine of the request with its retries and
    /// stream parsing is compiled once, here, not in every crate that
    /// calls a model.
    pub fn send<'a>(
        &'a self,
        request: &'a ModelRequest,
        events: Option<&'a UnboundedSender<ModelEvent>>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(self.send_now(request, events, cancel))
    }

    async fn send_now(
        &self,
        request: &ModelRequest,
        events: Option<&UnboundedSender<ModelEvent>>,
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        if let Some(source) = &self.inner.source {
            return source.answer(request, events, cancel).await;
        }
        let config = &self.inner.config;
        let emit = |event: ModelEvent| {
            if let Some(tx) = events {
                let _ = tx.send(event);
            }
        };
        let mut model = config.resolve_model(&request.model);
        let mut overloads = 0u32;
        let mut api_duration = Duration::ZERO;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            if cancel.is_cancelled() {
                return Err(ModelError::Cancelled);
            }
            let started = Instant::now();
            let outcome = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                result = self.attempt(request, &model, events) => result,
            };
            api_duration += started.elapsed();
            let Failure { error, retry_after } = match outcome {
                Ok(parsed) => return Ok(self.response(parsed, &model, attempt, api_duration)),
                Err(failure) => failure,
            };
            if !error.is_retryable() || attempt > config.max_retries {
                return Err(error);
            }
            overloads = if error.status() == Some(529) {
                overloads + 1
            } else {
                0
            };
            if overloads > 0
                && overloads >= config.overloads_before_fallback
                && let Some(fallback) = config
                    .fallback_model
                    .as_deref()
                    .map(|f| config.resolve_model(f))
                    .filter(|f| *f != model)
            {
                tracing::warn!(from = %model, to = %fallback, "model overloaded; switching to fallback");
                emit(ModelEvent::Fallback {
                    from: std::mem::replace(&mut model, fallback.clone()),
                    to: fallback,
                });
            }
            let delay = retry_after.unwrap_or_else(|| {
                retry::jittered_backoff(attempt, config.initial_backoff, config.max_backoff)
            });
            // Surfaced to users as a `system/api_retry` message; the log keeps it at info.
            tracing::info!(attempt, delay_ms = delay.as_millis() as u64, error = %error, "retrying model request");
            emit(ModelEvent::Retry {
                attempt,
                max_retries: config.max_retries,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                status: error.status(),
                error: error.to_string(),
            });
            tokio::select! {
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    fn response(
        &self,
        parsed: Parsed,
        model: &str,
        attempts: u32,
        api_duration: Duration,
    ) -> ModelResponse {
        ModelResponse {
            id: parsed.id,
            model: if parsed.model.is_empty() {
                model.to_string()
            } else {
                parsed.model
            },
            content: parsed.content,
            stop_reason: parsed.stop_reason,
            usage: parsed.usage,
            cost_usd: parsed.cost_usd,
            attempts,
            api_duration,
        }
    }

    /// One HTTP attempt asking for `model`.
    async fn attempt(
        &self,
        request: &ModelRequest,
        model: &str,
        events: Option<&UnboundedSender<ModelEvent>>,
    ) -> Result<Parsed, Failure> {
        let inner = &self.inner;
        let provider = self.provider_name();
        if inner.config.kind != ProviderKind::Anthropic && !request.server_tools.is_empty() {
            return Err(ModelError::InvalidConfig(format!(
                "server tools are an Anthropic Messages API feature; the {provider} provider \
                 has none"
            ))
            .into());
        }
        let body = match inner.config.kind {
            ProviderKind::Anthropic => {
                anthropic::request_body(request, model, inner.config.default_max_tokens)
            }
            ProviderKind::OpenAi => openai::request_body(request, model, inner.config.openrouter),
        };
        let idle = inner.config.request_timeout;
        let timeout = |waiting: &str| ModelError::Timeout {
            provider,
            after: idle,
            waiting: waiting.to_string(),
        };
        let send = inner
            .http
            .post(&inner.endpoint)
            .headers(inner.headers.clone())
            .json(&body)
            .send();
        let response = tokio::time::timeout(idle, send)
            .await
            .map_err(|_| timeout("no response"))?
            .map_err(|e| ModelError::Unreachable {
                provider,
                url: inner.endpoint.clone(),
                detail: transport_cause(&e),
            })?;
        let status = response.status().as_u16();
        if !response.status().is_success() {
            let retry_after = retry::retry_after(response.headers());
            let text = tokio::time::timeout(idle, response.text())
                .await
                .map_err(|_| timeout("no error body"))?
                .unwrap_or_default();
            return Err(Failure {
                error: api_error_from_body(provider, status, &text),
                retry_after,
            });
        }
        let parsed = match (inner.config.kind, request.stream) {
            (ProviderKind::Anthropic, true) => {
                let assembler = AnthropicAssembler::new(status);
                sse::read_stream(response, assembler, provider, events, idle).await
            }
            (ProviderKind::OpenAi, true) => {
                let assembler = OpenAiAssembler::new(status, model);
                sse::read_stream(response, assembler, provider, events, idle).await
            }
            (kind, false) => {
                let text = tokio::time::timeout(idle, response.text())
                    .await
                    .map_err(|_| timeout("no complete response body"))?
                    .map_err(|e| ModelError::MalformedResponse {
                        provider,
                        status,
                        detail: format!("reading the body failed: {}", transport_cause(&e)),
                    })?;
                match kind {
                    ProviderKind::Anthropic => anthropic::parse_response(status, &text),
                    ProviderKind::OpenAi => openai::parse_response(status, &text),
                }
            }
        };
        Ok(parsed?)
    }
}

fn build_headers(config: &ProviderConfig) -> Result<HeaderMap, ModelError> {
    let mut headers = HeaderMap::new();
    let mut add = |name: &str, value: &str, secret: bool| -> Result<(), ModelError> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| ModelError::InvalidConfig(format!("header name {name:?}: {e}")))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|e| ModelError::InvalidConfig(format!("value of header {name}: {e}")))?;
        value.set_sensitive(secret);
        headers.append(name, value);
        Ok(())
    };
    add(CONTENT_TYPE.as_str(), "application/json", false)?;
    match config.kind {
        ProviderKind::Anthropic => {
            add("anthropic-version", anthropic::API_VERSION, false)?;
            if let Some(key) = &config.api_key {
                add("x-api-key", key, true)?;
            }
        }
        ProviderKind::OpenAi => {
            if let Some(key) = &config.api_key {
                add("authorization", &format!("Bearer {key}"), true)?;
            }
        }
    }
    for (name, value) in &config.extra_headers {
        add(name, value, false)?;
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_config() {
        let mut c = ProviderConfig::anthropic();
        c.base_url = "not a url".into();
        assert!(matches!(
            ModelClient::new(c),
            Err(ModelError::InvalidConfig(_))
        ));
        let mut c = ProviderConfig::openai();
        c.extra_headers.push(("bad header".into(), "x".into()));
        assert!(matches!(
            ModelClient::new(c),
            Err(ModelError::InvalidConfig(_))
        ));
    }

    #[test]
    fn builds_for_http_and_https() {
        for base in ["http://127.0.0.1:1", "https://api.anthropic.com"] {
            let mut c = ProviderConfig::anthropic();
            c.base_url = base.into();
            assert!(ModelClient::new(c).is_ok(), "{base}");
        }
    }

    /// Answers every request with its own model name as text.
    struct Echo;

    impl AnswerSource for Echo {
        fn name(&self) -> &'static str {
            "echo"
        }

        fn answer<'a>(
            &'a self,
            request: &'a ModelRequest,
            _events: Option<&'a UnboundedSender<ModelEvent>>,
            _cancel: &'a CancellationToken,
        ) -> futures::future::BoxFuture<'a, Result<ModelResponse, ModelError>> {
            Box::pin(async move {
                Ok(ModelResponse {
                    id: "echo".into(),
                    model: request.model.clone(),
                    content: vec![tascer_core::ContentBlock::text(request.model.clone())],
                    stop_reason: None,
                    usage: Usage::default(),
                    cost_usd: Some(0.0),
                    attempts: 1,
                    api_duration: Duration::ZERO,
                })
            })
        }
    }

    #[tokio::test]
    async fn a_source_answers_instead_of_the_provider() {
        // An unreachable provider: only the source can answer.
        let mut c = ProviderConfig::anthropic();
        c.base_url = "http://127.0.0.1:9".into();
        c.max_retries = 0;
        let client = ModelClient::from_source(c, Arc::new(Echo)).unwrap();
        assert_eq!(client.provider_name(), "echo");
        let request = ModelRequest {
            model: "m1".into(),
            ..ModelRequest::default()
        };
        let answer = client
            .send(&request, None, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(answer.content, vec![tascer_core::ContentBlock::text("m1")]);
    }

    #[test]
    fn headers() {
        let mut c = ProviderConfig::openai();
        let h = build_headers(&c).unwrap();
        assert!(h.get("authorization").is_none());
        c.api_key = Some("k".into());
        c.extra_headers.push(("x-extra".into(), "1".into()));
        let h = build_headers(&c).unwrap();
        assert_eq!(h.get("authorization").unwrap(), "Bearer k");
        assert_eq!(h.get("x-extra").unwrap(), "1");
        let mut c = ProviderConfig::anthropic();
        c.api_key = Some("k".into());
        let h = build_headers(&c).unwrap();
        assert_eq!(h.get("x-api-key").unwrap(), "k");
        assert_eq!(h.get("anthropic-version").unwrap(), "2023-06-01");
    }
}
