//! `WebFetch`: fetches a URL, converts HTML to markdown, and answers a prompt
//! on it with an optional [`Summarizer`](crate::Summarizer).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use reqwest::Url;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::error::ToolError;
use crate::fetch_cache::{CachedFetch, FetchCache};
use crate::lazy_client::LazyClient;
use crate::state::ToolState;
use crate::util::{blocking, finish, input_schema, parse_input, truncate_chars};

const NAME: &str = "WebFetch";

/// Limits of [`WebFetchTool`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebFetchConfig {
    /// Whole-request timeout (default 30 s).
    pub timeout: Duration,
    /// Largest response body in bytes (default 10 MiB).
    pub max_bytes: u64,
    /// Most redirects followed (default 10).
    pub max_redirects: usize,
    /// Characters of content returned (or given to the summarizer); longer
    /// content is cut with a note (default 100 000).
    pub max_content_chars: usize,
}

impl Default for WebFetchConfig {
    fn default() -> Self {
        WebFetchConfig {
            timeout: Duration::from_secs(30),
            max_bytes: 10 * 1024 * 1024,
            max_redirects: 10,
            max_content_chars: 100_000,
        }
    }
}

/// Input of [`WebFetchTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebFetchInput {
    /// The URL to fetch content from.
    #[schemars(url)]
    url: String,
    /// The prompt to run on the fetched content.
    prompt: String,
}

/// Fetches a web page.
#[derive(Clone)]
pub struct WebFetchTool {
    state: ToolState,
    config: WebFetchConfig,
    client: LazyClient,
    /// Answers by URL and prompt, for 15 minutes (shared by clones).
    cache: Arc<FetchCache>,
}

impl std::fmt::Debug for WebFetchTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebFetchTool")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl WebFetchTool {
    /// A `WebFetch` tool with the default limits, using the summarizer
    /// configured in `state`.
    pub fn new(state: ToolState) -> Self {
        Self::with_config(state, WebFetchConfig::default())
    }

    /// A `WebFetch` tool with custom limits.
    pub fn with_config(state: ToolState, config: WebFetchConfig) -> Self {
        let (max_redirects, timeout) = (config.max_redirects, config.timeout);
        let client = LazyClient::new(move || {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::limited(max_redirects))
                .timeout(timeout)
                .user_agent(concat!("tascer/", env!("CARGO_PKG_VERSION"), " (WebFetch)"))
        });
        WebFetchTool {
            state,
            config,
            client,
            cache: Arc::new(FetchCache::default()),
        }
    }
}

impl Tool for WebFetchTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Fetches content from a URL and processes it with a prompt. HTTP URLs are upgraded to \
         HTTPS (except for localhost). HTML is converted to markdown. When a summarizer model is \
         configured, the result is its answer to the prompt about the page; otherwise the page's \
         markdown is returned (cut to a maximum length). Answers are reused for 15 minutes for \
         the same URL and prompt. Redirects are followed (at most 10); responses over 10 MiB \
         and requests taking over 30 seconds fail."
    }

    fn input_schema(&self) -> Value {
        input_schema::<WebFetchInput>()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let work = self.run(input);
            tokio::select! {
                out = work => finish(out),
                _ = ctx.cancel.cancelled() => ToolOutput::error("WebFetch was interrupted."),
            }
        })
    }
}

/// True for `localhost`, 127.0.0.0/8 and `::1`.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => false,
    }
}

/// Parses the URL, accepting only http(s), and upgrades http to https except
/// for loopback hosts.
pub(crate) fn prepare_url(url: &str) -> Result<Url, ToolError> {
    let mut parsed = Url::parse(url.trim()).map_err(|e| ToolError::InvalidInput {
        tool: NAME,
        message: format!("url is not a valid URL: {e}"),
    })?;
    match parsed.scheme() {
        "https" => {}
        "http" => {
            let loopback = parsed.host_str().is_some_and(is_loopback_host);
            if !loopback && parsed.set_scheme("https").is_err() {
                return Err(ToolError::msg(format!("Cannot upgrade {url} to https")));
            }
            // The default http port means the default https port after the upgrade.
            if !loopback && parsed.port() == Some(80) {
                let _ = parsed.set_port(None);
            }
        }
        other => {
            return Err(ToolError::InvalidInput {
                tool: NAME,
                message: format!("url must use http or https, not {other}"),
            });
        }
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(ToolError::InvalidInput {
            tool: NAME,
            message: "url has no host".into(),
        });
    }
    Ok(parsed)
}

/// How the body is turned into text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
}

fn classify(content_type: Option<&str>, body: &[u8]) -> Option<Kind> {
    let ct = content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase());
    match ct.as_deref() {
        Some("text/html" | "application/xhtml+xml") => Some(Kind::Html),
        Some(c)
            if c.starts_with("text/")
                || c.ends_with("+json")
                || c.ends_with("+xml")
                || matches!(
                    c,
                    "application/json"
                        | "application/xml"
                        | "application/javascript"
                        | "application/x-javascript"
                        | "application/ecmascript"
                        | "application/x-ndjson"
                        | "application/yaml"
                        | "application/x-yaml"
                        | "application/toml"
                ) =>
        {
            Some(Kind::Text)
        }
        Some("") | Some("application/octet-stream") | None => {
            // Unlabelled: text if it decodes, HTML if it looks like it.
            let text = std::str::from_utf8(body).ok()?;
            let head = text
                .trim_start()
                .get(..512)
                .unwrap_or(text)
                .to_ascii_lowercase();
            if head.starts_with("<!doctype html") || head.contains("<html") {
                Some(Kind::Html)
            } else {
                Some(Kind::Text)
            }
        }
        Some(_) => None,
    }
}

/// Converts HTML to markdown, skipping scripts, styles and similar.
fn html_to_markdown(html: String) -> Result<String, ToolError> {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "iframe", "svg", "head",
        ])
        .build();
    converter
        .convert(&html)
        .map_err(|e| ToolError::msg(format!("Cannot convert the HTML to markdown: {e}")))
}

fn reason(status: reqwest::StatusCode) -> String {
    match status.canonical_reason() {
        Some(r) => format!("{} {r}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

impl WebFetchTool {
    fn request_error(&self, url: &Url, e: reqwest::Error) -> ToolError {
        if e.is_timeout() {
            ToolError::msg(format!(
                "Fetching {url} timed out after {} seconds.",
                self.config.timeout.as_secs_f64()
            ))
        } else if e.is_redirect() {
            ToolError::msg(format!(
                "Fetching {url} failed: too many redirects (at most {} are followed).",
                self.config.max_redirects
            ))
        } else {
            // reqwest's Display omits the cause chain; it holds the useful part.
            let mut msg = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                msg.push_str(&format!(": {s}"));
                source = s.source();
            }
            ToolError::msg(format!("Fetching {url} failed: {msg}"))
        }
    }

    async fn run(&self, input: Value) -> Result<ToolOutput, ToolError> {
        let input: WebFetchInput = parse_input(NAME, input)?;
        let url = prepare_url(&input.url)?;
        if let Some(hit) = self.cache.get(url.as_str(), &input.prompt) {
            return Ok(ToolOutput::text(hit.text).with_raw(hit.raw));
        }
        let started = Instant::now();
        let page = self.fetch(&url).await?;
        let (text, result, note) = self.answer(&page, &input.prompt).await;
        let raw = json!({
            "bytes": page.bytes,
            "code": page.status.as_u16(),
            "codeText": page.status.canonical_reason().unwrap_or(""),
            "result": result,
            "durationMs": started.elapsed().as_millis() as u64,
            "url": input.url,
            "finalUrl": page.final_url.as_str(),
            "contentType": page.content_type,
            "truncated": page.cut,
            "promptApplied": note.is_none(),
        });
        // A failed answer is not kept: the next call asks again.
        if note != Some(Note::Failed) {
            let cached = CachedFetch {
                text: text.clone(),
                raw: raw.clone(),
            };
            self.cache.put(url.as_str(), &input.prompt, cached);
        }
        Ok(ToolOutput::text(text).with_raw(raw))
    }

    /// The tool's text and `result` for `page`: the summarizer's answer to
    /// `prompt`, else the page with a note saying why the prompt was not
    /// applied.
    async fn answer(&self, page: &Page, prompt: &str) -> (String, String, Option<Note>) {
        let url = &page.final_url;
        let Some(summarizer) = self.state.summarizer() else {
            let text = format!(
                "Content of {url} (no summarizer is configured, so the prompt was not \
                 applied; the page follows as markdown):\n\n{}",
                page.content
            );
            return (text, page.content.clone(), Some(Note::Off));
        };
        match summarizer.summarize(&page.content, prompt).await {
            Ok(answer) => (answer.clone(), answer, None),
            Err(e) => {
                let text = format!(
                    "Content of {url} (the prompt could not be applied: the model that answers \
                     it failed: {e}; the page follows as markdown):\n\n{}",
                    page.content
                );
                (text, page.content.clone(), Some(Note::Failed))
            }
        }
    }

    /// Fetches `url` and turns the body into markdown (or text), cut to
    /// the content limit.
    async fn fetch(&self, url: &Url) -> Result<Page, ToolError> {
        let client = self.client.get().map_err(ToolError::msg)?;
        let mut resp = client
            .get(url.clone())
            .header(
                reqwest::header::ACCEPT,
                "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5",
            )
            .send()
            .await
            .map_err(|e| self.request_error(url, e))?;
        let status = resp.status();
        let final_url = resp.url().clone();
        if !status.is_success() {
            return Err(ToolError::msg(format!(
                "Request to {final_url} failed with status code {}.",
                reason(status)
            )));
        }
        let limit = self.config.max_bytes;
        let too_large = || {
            ToolError::msg(format!(
                "The response from {final_url} is larger than the {limit}-byte limit."
            ))
        };
        if resp.content_length().is_some_and(|n| n > limit) {
            return Err(too_large());
        }
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut body: Vec<u8> = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.request_error(url, e))? {
            if body.len() as u64 + chunk.len() as u64 > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        let bytes = body.len();

        let kind = classify(content_type.as_deref(), &body).ok_or_else(|| {
            ToolError::msg(format!(
                "{final_url} returned content of type {}, which WebFetch cannot read (only HTML \
                 and text are supported).",
                content_type.as_deref().unwrap_or("unknown")
            ))
        })?;
        let text = String::from_utf8_lossy(&body).into_owned();
        let content = match kind {
            Kind::Html => blocking(move || html_to_markdown(text)).await?,
            Kind::Text => text,
        };
        let total_chars = content.chars().count();
        let (kept, cut) = truncate_chars(&content, self.config.max_content_chars);
        let mut kept = kept.to_string();
        if cut {
            kept.push_str(&format!(
                "\n\n[Content truncated: showing the first {} of {total_chars} characters.]",
                self.config.max_content_chars
            ));
        }
        Ok(Page {
            status,
            final_url,
            content_type,
            bytes,
            content: kept,
            cut,
        })
    }
}

/// A fetched page, as markdown or text.
struct Page {
    status: reqwest::StatusCode,
    final_url: Url,
    content_type: Option<String>,
    bytes: usize,
    /// The content, cut to the limit (with a note when cut).
    content: String,
    cut: bool,
}

/// Why the prompt was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Note {
    /// No summarizer is configured.
    Off,
    /// The summarizer failed.
    Failed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upgrades_http_except_loopback() {
        let u = |s: &str| prepare_url(s).unwrap().to_string();
        assert_eq!(u("http://example.com/a?b=1"), "https://example.com/a?b=1");
        assert_eq!(u("http://example.com:80/"), "https://example.com/");
        assert_eq!(u("https://example.com/"), "https://example.com/");
        assert_eq!(u("http://127.0.0.1:8080/x"), "http://127.0.0.1:8080/x");
        assert_eq!(u("http://127.9.9.9/"), "http://127.9.9.9/");
        assert_eq!(u("http://localhost:3000/"), "http://localhost:3000/");
        assert_eq!(u("http://[::1]:3000/"), "http://[::1]:3000/");
        assert_eq!(u("http://128.0.0.1/"), "https://128.0.0.1/");
        assert!(prepare_url("ftp://example.com/").is_err());
        assert!(prepare_url("not a url").is_err());
    }

    #[test]
    fn classifies_content_types() {
        assert_eq!(
            classify(Some("text/html; charset=utf-8"), b""),
            Some(Kind::Html)
        );
        assert_eq!(classify(Some("application/json"), b"{}"), Some(Kind::Text));
        assert_eq!(classify(Some("text/plain"), b"x"), Some(Kind::Text));
        assert_eq!(classify(None, b"<!DOCTYPE html><p>x"), Some(Kind::Html));
        assert_eq!(classify(Some("image/png"), b"\x89PNG"), None);
        assert_eq!(classify(None, b"\xff\xfe\x00"), None);
    }
}
