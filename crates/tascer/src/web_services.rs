//! The model calls behind the built-in web tools, over the session's
//! provider (docs/tools.md): [`ModelSummarizer`] answers WebFetch's
//! prompt with a small model, [`ProviderSearch`] runs WebSearch through
//! Anthropic's own web search (a side request offering only its
//! `web_search` server tool, as Claude Code's WebSearch does). Both add
//! what they use to the session's cost, as the reviewers' calls do.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use tascer_core::{ChatMessage, ContentBlock};
use tascer_guard::reviewers::ModelClass;
use tascer_model::{ModelRequest, ProviderKind};
use tascer_tools::{SearchBackend, SearchHit, SearchRequest, Summarizer};
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::loop_env::LoopEnv;
use crate::reviewer::{ModelQuestion, ask_model, class_model};

/// Environment variable naming the model that answers WebFetch's prompt
/// (over the settings' `webFetch.model`); `off` turns it off.
pub const WEB_FETCH_MODEL_ENV: &str = "TASCER_WEBFETCH_MODEL";
/// Output tokens of WebFetch's answer.
const SUMMARY_MAX_TOKENS: u32 = 4096;
/// Output tokens of the web search side request.
const SEARCH_MAX_TOKENS: u32 = 4096;
/// Searches the model may run for one WebSearch call.
const SEARCH_MAX_USES: u32 = 8;
/// Anthropic's price of one web search, USD ($10 per 1,000 searches).
const WEB_SEARCH_USD: f64 = 0.01;

/// The web tools' services of one session.
#[derive(Default)]
pub(crate) struct WebServices {
    /// Answers WebFetch's prompt (`None`: turned off).
    pub summarizer: Option<Arc<dyn Summarizer>>,
    /// The provider's web search (`None`: the provider has none).
    pub provider_search: Option<Arc<dyn SearchBackend>>,
}

/// The services for a session asking `session_model`, configured by the
/// settings' `webFetch` section and the environment (the session's
/// variables, then the process's).
pub(crate) fn for_session(
    web_fetch: &Map<String, Value>,
    env: &LoopEnv,
    session_model: &str,
) -> Result<WebServices, Error> {
    let lookup = |name: &str| {
        env.env
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    };
    let configured = match lookup(WEB_FETCH_MODEL_ENV) {
        Some(value) => Some(value),
        None => match web_fetch.get("model") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Bool(false)) => Some("off".into()),
            Some(other) => {
                return Err(Error::InvalidOptions(format!(
                    "settings: webFetch.model must be a model name or \"off\", not {other}"
                )));
            }
        },
    };
    let summary_model = match configured.as_deref().map(str::trim) {
        Some(off) if off.is_empty() || off.eq_ignore_ascii_case("off") => None,
        Some(model) => Some(model.to_string()),
        // The small model class where the provider knows it, else the
        // session's model.
        None => Some(
            class_model(&env.client, ModelClass::Haiku)
                .unwrap_or_else(|| session_model.to_string()),
        ),
    };
    let summarizer = summary_model.map(|model| {
        Arc::new(ModelSummarizer {
            env: env.clone(),
            model,
        }) as Arc<dyn Summarizer>
    });
    let provider_search = (env.client.config().kind == ProviderKind::Anthropic).then(|| {
        Arc::new(ProviderSearch {
            env: env.clone(),
            model: session_model.to_string(),
        }) as Arc<dyn SearchBackend>
    });
    Ok(WebServices {
        summarizer,
        provider_search,
    })
}

/// Answers WebFetch's prompt about a page with one model call.
pub(crate) struct ModelSummarizer {
    env: LoopEnv,
    model: String,
}

impl Summarizer for ModelSummarizer {
    fn summarize<'a>(
        &'a self,
        content: &'a str,
        prompt: &'a str,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let question = ModelQuestion {
                model: self.model.clone(),
                system: tascer_tools::SUMMARY_SYSTEM.to_string(),
                user: tascer_tools::summary_request(content, prompt),
                max_tokens: SUMMARY_MAX_TOKENS,
            };
            let answer = ask_model(&self.env.client, question)
                .await
                .map_err(|e| e.to_string())?;
            self.env
                .add_usage(&answer.model, &answer.usage, answer.cost_usd);
            let text = answer.text("\n");
            if text.trim().is_empty() {
                return Err(format!("{} answered with no text", answer.model));
            }
            Ok(text)
        })
    }
}

/// WebSearch through Anthropic's `web_search` server tool.
pub(crate) struct ProviderSearch {
    env: LoopEnv,
    model: String,
}

impl ProviderSearch {
    /// The server tool's definition for `request`.
    fn server_tool(request: &SearchRequest) -> Value {
        let mut tool = json!({
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": SEARCH_MAX_USES,
        });
        if !request.allowed_domains.is_empty() {
            tool["allowed_domains"] = json!(request.allowed_domains);
        }
        if !request.blocked_domains.is_empty() {
            tool["blocked_domains"] = json!(request.blocked_domains);
        }
        tool
    }

    async fn run(&self, request: &SearchRequest) -> Result<Vec<SearchHit>, String> {
        let model_request = ModelRequest {
            model: self.model.clone(),
            system: Some(
                "Search the web for the user's query with the web_search tool, then name the \
                 sources you found in a sentence or two."
                    .into(),
            ),
            messages: vec![ChatMessage::user_text(format!(
                "Perform a web search for the query: {}",
                request.query
            ))],
            server_tools: vec![Self::server_tool(request)],
            max_tokens: Some(SEARCH_MAX_TOKENS),
            stream: true,
            ..ModelRequest::default()
        };
        let response = self
            .env
            .client
            .send(&model_request, None, &CancellationToken::new())
            .await
            .map_err(|e| format!("the provider's web search failed: {e}"))?;
        let searches = response
            .content
            .iter()
            .filter(
                |b| matches!(b, ContentBlock::ServerToolUse { name, .. } if name == "web_search"),
            )
            .count();
        let tokens = self
            .env
            .client
            .cost(&response.model, &response.usage, response.cost_usd);
        let reported = tokens.map(|usd| usd + searches as f64 * WEB_SEARCH_USD);
        self.env
            .add_usage(&response.model, &response.usage, reported);
        search_hits(&response.content)
    }
}

/// The hits of the `web_search_tool_result` blocks among `content`; a
/// result that is an error is the search's error.
pub(crate) fn search_hits(content: &[ContentBlock]) -> Result<Vec<SearchHit>, String> {
    let mut hits = Vec::new();
    for block in content {
        let ContentBlock::WebSearchToolResult { content, .. } = block else {
            continue;
        };
        let Some(results) = content.as_array() else {
            let code = content
                .get("error_code")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            return Err(format!("the provider's web search failed: {code}"));
        };
        hits.extend(results.iter().filter_map(|r| {
            let url = r.get("url")?.as_str()?.to_string();
            let title = r
                .get("title")
                .and_then(Value::as_str)
                .map_or_else(|| url.clone(), str::to_string);
            Some(SearchHit {
                title,
                url,
                snippet: None,
            })
        }));
    }
    Ok(hits)
}

impl SearchBackend for ProviderSearch {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn search<'a>(
        &'a self,
        request: &'a SearchRequest,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, String>> {
        Box::pin(self.run(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_and_errors_of_search_results() {
        let blocks = vec![
            ContentBlock::ServerToolUse {
                id: "s".into(),
                name: "web_search".into(),
                input: json!({"query": "q"}),
            },
            ContentBlock::WebSearchToolResult {
                tool_use_id: "s".into(),
                content: json!([{"type": "web_search_result", "title": "T", "url": "https://a.example/"},
                                {"type": "web_search_result", "url": "https://b.example/"}]),
            },
            ContentBlock::text("summary"),
        ];
        let hits = search_hits(&blocks).expect("hits");
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].title, "T");
        assert_eq!(hits[1].title, "https://b.example/");
        let failed = vec![ContentBlock::WebSearchToolResult {
            tool_use_id: "s".into(),
            content: json!({"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}),
        }];
        assert_eq!(
            search_hits(&failed).unwrap_err(),
            "the provider's web search failed: max_uses_exceeded"
        );
    }
}
