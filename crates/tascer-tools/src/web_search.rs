//! `WebSearch`: searches the web through a [`SearchBackend`]; ships
//! [`BraveSearch`] (Brave Search API), configured by environment variables.

use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::error::ToolError;
use crate::lazy_client::LazyClient;
use crate::services::{SearchBackend, SearchHit, SearchRequest};
use crate::state::ToolState;
use crate::util::{finish, input_schema, parse_input};

const NAME: &str = "WebSearch";

/// The [Brave Search API](https://api.search.brave.com/) web search.
#[derive(Debug, Clone)]
pub struct BraveSearch {
    api_key: String,
    base_url: String,
    count: u32,
    client: LazyClient,
}

impl BraveSearch {
    /// Environment variable holding the API key.
    pub const API_KEY_ENV: &'static str = "BRAVE_SEARCH_API_KEY";
    /// Environment variable overriding the API's base URL.
    pub const BASE_URL_ENV: &'static str = "BRAVE_SEARCH_BASE_URL";
    /// The API's base URL; requests go to `<base>/res/v1/web/search`.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.search.brave.com";

    /// A client using `api_key` against the public API.
    pub fn new(api_key: impl Into<String>) -> Self {
        BraveSearch {
            api_key: api_key.into(),
            base_url: Self::DEFAULT_BASE_URL.into(),
            count: 10,
            client: LazyClient::new(|| reqwest::Client::builder().timeout(Duration::from_secs(30))),
        }
    }

    /// Sends requests to another base URL (a proxy or a test server).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Asks for this many results (1–20; default 10).
    pub fn with_count(mut self, count: u32) -> Self {
        self.count = count.clamp(1, 20);
        self
    }

    /// Configured from `BRAVE_SEARCH_API_KEY` and `BRAVE_SEARCH_BASE_URL` as
    /// `lookup` finds them; `None` without an API key.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let key = lookup(Self::API_KEY_ENV).filter(|k| !k.trim().is_empty())?;
        let mut brave = BraveSearch::new(key.trim());
        if let Some(base) = lookup(Self::BASE_URL_ENV).filter(|b| !b.trim().is_empty()) {
            brave = brave.with_base_url(base.trim());
        }
        Some(brave)
    }

    /// The query sent to Brave: a single allowed domain and the blocked
    /// domains become `site:` operators.
    fn query_text(request: &SearchRequest) -> String {
        let mut q = request.query.clone();
        if let [only] = request.allowed_domains.as_slice() {
            q.push_str(&format!(" site:{}", normalize_domain(only)));
        }
        for d in &request.blocked_domains {
            q.push_str(&format!(" -site:{}", normalize_domain(d)));
        }
        q
    }

    async fn run(&self, request: &SearchRequest) -> Result<Vec<SearchHit>, String> {
        let endpoint = format!("{}/res/v1/web/search", self.base_url.trim_end_matches('/'));
        let count = self.count.to_string();
        let url = reqwest::Url::parse_with_params(
            &endpoint,
            [("q", Self::query_text(request).as_str()), ("count", &count)],
        )
        .map_err(|e| format!("Invalid Brave Search URL {endpoint}: {e}"))?;
        let client = self.client.get()?;
        let resp = client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .header("X-Subscription-Token", &self.api_key)
            .send()
            .await
            .map_err(|e| format!("Brave Search request failed: {e}"))?;
        let status = resp.status();
        if !status.is_success() {
            let body = resp.text().await.unwrap_or_default();
            let body: String = body.chars().take(500).collect();
            return Err(format!(
                "Brave Search returned status {}: {body}",
                status.as_u16()
            ));
        }
        let body: Value = resp
            .json()
            .await
            .map_err(|e| format!("Brave Search returned an unreadable response: {e}"))?;
        let results = body
            .pointer("/web/results")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(results
            .iter()
            .filter_map(|r| {
                let url = r.get("url")?.as_str()?.to_string();
                let title = r
                    .get("title")
                    .and_then(Value::as_str)
                    .map(strip_tags)
                    .unwrap_or_else(|| url.clone());
                let snippet = r.get("description").and_then(Value::as_str).map(strip_tags);
                Some(SearchHit {
                    title,
                    url,
                    snippet,
                })
            })
            .collect())
    }
}

impl SearchBackend for BraveSearch {
    fn name(&self) -> &str {
        "brave"
    }

    fn search<'a>(
        &'a self,
        request: &'a SearchRequest,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, String>> {
        Box::pin(self.run(request))
    }
}

/// Removes HTML tags (Brave marks matches with `<strong>`) and decodes the
/// common entities.
fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// `https://www.Example.com/x` → `www.example.com`; `*.a.com` → `a.com`.
fn normalize_domain(d: &str) -> String {
    let d = d.trim().to_ascii_lowercase();
    let d = d
        .strip_prefix("https://")
        .or_else(|| d.strip_prefix("http://"))
        .unwrap_or(&d);
    let d = d.split(['/', '?', '#']).next().unwrap_or(d);
    d.trim_start_matches("*.").trim_end_matches('.').to_string()
}

/// The host of a URL, lowercased.
fn host_of(url: &str) -> Option<String> {
    reqwest::Url::parse(url)
        .ok()?
        .host_str()
        .map(|h| h.to_ascii_lowercase())
}

/// True when `host` is `domain` or one of its subdomains.
fn host_matches(host: &str, domain: &str) -> bool {
    let domain = normalize_domain(domain);
    !domain.is_empty() && (host == domain || host.ends_with(&format!(".{domain}")))
}

/// Keeps the hits the domain lists allow.
pub(crate) fn filter_hits(hits: Vec<SearchHit>, request: &SearchRequest) -> Vec<SearchHit> {
    hits.into_iter()
        .filter(|hit| {
            let Some(host) = host_of(&hit.url) else {
                return false;
            };
            let allowed = request.allowed_domains.is_empty()
                || request
                    .allowed_domains
                    .iter()
                    .any(|d| host_matches(&host, d));
            let blocked = request
                .blocked_domains
                .iter()
                .any(|d| host_matches(&host, d));
            allowed && !blocked
        })
        .collect()
}

/// Input of [`WebSearchTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebSearchInput {
    /// The search query to use.
    #[schemars(length(min = 2))]
    query: String,
    /// Only include search results from these domains.
    #[serde(default)]
    allowed_domains: Option<Vec<String>>,
    /// Never include search results from these domains.
    #[serde(default)]
    blocked_domains: Option<Vec<String>>,
}

/// Searches the web.
#[derive(Debug, Clone)]
pub struct WebSearchTool {
    state: ToolState,
}

impl WebSearchTool {
    /// A `WebSearch` tool using the backend configured in `state`, or else
    /// [`BraveSearch`] when `BRAVE_SEARCH_API_KEY` is set (in the session's
    /// environment or the process's), or else the provider's search
    /// configured in `state` ([`ToolState::with_provider_search`]).
    pub fn new(state: ToolState) -> Self {
        WebSearchTool { state }
    }
}

impl Tool for WebSearchTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Searches the web and returns result titles, URLs and snippets. Use it for current \
         information beyond the model's knowledge. allowed_domains limits results to those \
         domains (and subdomains); blocked_domains excludes them. Cite the result URLs you use."
    }

    fn input_schema(&self) -> Value {
        input_schema::<WebSearchInput>()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            tokio::select! {
                out = self.run(input, ctx) => finish(out),
                _ = ctx.cancel.cancelled() => ToolOutput::error("WebSearch was interrupted."),
            }
        })
    }
}

impl WebSearchTool {
    fn backend(&self, ctx: &ToolContext) -> Result<std::sync::Arc<dyn SearchBackend>, ToolError> {
        if let Some(backend) = self.state.search_backend() {
            return Ok(backend);
        }
        let lookup = |name: &str| {
            ctx.env
                .get(name)
                .cloned()
                .or_else(|| std::env::var(name).ok())
        };
        if let Some(brave) = BraveSearch::from_env(lookup) {
            return Ok(std::sync::Arc::new(brave));
        }
        if let Some(provider) = self.state.provider_search() {
            return Ok(provider);
        }
        Err(ToolError::msg(format!(
            "WebSearch needs a Brave Search API key ({}; optionally {} for another endpoint) \
             or the Anthropic provider, whose own web search it uses otherwise.",
            BraveSearch::API_KEY_ENV,
            BraveSearch::BASE_URL_ENV
        )))
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: WebSearchInput = parse_input(NAME, input)?;
        let invalid = |message: &str| ToolError::InvalidInput {
            tool: NAME,
            message: message.into(),
        };
        if input.query.trim().chars().count() < 2 {
            return Err(invalid("query must be at least 2 characters"));
        }
        let allowed = input.allowed_domains.unwrap_or_default();
        let blocked = input.blocked_domains.unwrap_or_default();
        if !allowed.is_empty() && !blocked.is_empty() {
            return Err(invalid(
                "cannot specify both allowed_domains and blocked_domains in the same request",
            ));
        }
        let backend = self.backend(ctx)?;
        let request = SearchRequest {
            query: input.query.trim().to_string(),
            allowed_domains: allowed,
            blocked_domains: blocked,
        };
        let started = Instant::now();
        let hits = backend
            .search(&request)
            .await
            .map_err(|e| ToolError::msg(format!("Web search failed: {e}")))?;
        let hits = filter_hits(hits, &request);

        let links: Vec<Value> = hits
            .iter()
            .map(|h| json!({"title": h.title, "url": h.url}))
            .collect();
        let mut text = format!("Web search results for query: \"{}\"\n\n", request.query);
        if hits.is_empty() {
            text.push_str("No results found.");
        } else {
            text.push_str(&format!("Links: {}\n", Value::Array(links)));
            for (i, h) in hits.iter().enumerate() {
                text.push_str(&format!("\n{}. {}\n   {}", i + 1, h.title, h.url));
                if let Some(s) = h.snippet.as_deref().filter(|s| !s.is_empty()) {
                    text.push_str(&format!("\n   {s}"));
                }
            }
            text.push_str(
                "\n\nREMINDER: cite the sources you use from these results, with their URLs.",
            );
        }
        let content: Vec<Value> = hits
            .iter()
            .map(|h| {
                let mut v = json!({"title": h.title, "url": h.url});
                if let Some(s) = &h.snippet {
                    v["snippet"] = json!(s);
                }
                v
            })
            .collect();
        let raw = json!({
            "query": request.query,
            "results": [{"tool_use_id": ctx.tool_use_id, "content": content}],
            "durationSeconds": started.elapsed().as_secs_f64(),
            "searchCount": 1,
            "backend": backend.name(),
        });
        Ok(ToolOutput::text(text).with_raw(raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(url: &str) -> SearchHit {
        SearchHit {
            title: url.into(),
            url: url.into(),
            snippet: None,
        }
    }

    #[test]
    fn domain_filters() {
        let hits = vec![
            hit("https://docs.rs/x"),
            hit("https://www.example.com/a"),
            hit("https://badexample.com/"),
            hit("not a url"),
        ];
        let req = |a: &[&str], b: &[&str]| SearchRequest {
            query: "q".into(),
            allowed_domains: a.iter().map(|s| s.to_string()).collect(),
            blocked_domains: b.iter().map(|s| s.to_string()).collect(),
        };
        let urls = |hs: Vec<SearchHit>| hs.into_iter().map(|h| h.url).collect::<Vec<_>>();
        assert_eq!(
            urls(filter_hits(hits.clone(), &req(&["example.com"], &[]))),
            ["https://www.example.com/a"]
        );
        assert_eq!(
            urls(filter_hits(
                hits.clone(),
                &req(&[], &["https://Example.com/"])
            )),
            ["https://docs.rs/x", "https://badexample.com/"]
        );
        assert_eq!(filter_hits(hits, &req(&[], &[])).len(), 3);
    }

    #[test]
    fn strips_tags_and_entities() {
        assert_eq!(strip_tags("a <strong>b</strong> &amp; c"), "a b & c");
    }
}
