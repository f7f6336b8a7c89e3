//! Provider configuration: endpoint, credentials, retry policy, prices.

use std::fmt;
use std::time::Duration;

use crate::error::ModelError;
use crate::price::PriceTable;

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// The Anthropic Messages API (`POST /v1/messages`).
    Anthropic,
    /// An OpenAI-compatible Chat Completions API (`POST /chat/completions`).
    OpenAi,
}

impl ProviderKind {
    /// `anthropic` or `openai`.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
        }
    }
}

/// Default Anthropic base URL (the client appends `/v1/messages`).
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// Default OpenAI base URL (the client appends `/chat/completions`).
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// OpenRouter's base URL (the client appends `/chat/completions`).
pub const OPENROUTER_DEFAULT_BASE_URL: &str = "https://openrouter.ai/api/v1";
/// The `HTTP-Referer` sent to OpenRouter (its app attribution).
pub const OPENROUTER_REFERER: &str = env!("CARGO_PKG_REPOSITORY");
/// The `X-Title` sent to OpenRouter (its app attribution).
pub const OPENROUTER_TITLE: &str = "Tascer";

/// The environment variables [`ProviderConfig::from_env`] looks for, as named
/// in [`ModelError::MissingApiKey`].
pub const API_KEY_VARS: &str = "ANTHROPIC_API_KEY (or an OAuth bearer token in ANTHROPIC_AUTH_TOKEN / \
     CLAUDE_CODE_OAUTH_TOKEN), OPENAI_API_KEY / OPENAI_BASE_URL for an OpenAI-compatible server, \
     or OPENROUTER_API_KEY";

/// Extra headers for every request, from the environment: a JSON object
/// (`{"HTTP-Referer": "https://…", "X-Title": "…"}`) or `Name: value`
/// lines (e.g. an OpenAI-compatible router's attribution headers).
pub const EXTRA_HEADERS_VAR: &str = "TASCER_EXTRA_HEADERS";

/// The `anthropic-beta` flag sent with a `CLAUDE_CODE_OAUTH_TOKEN`.
pub const ANTHROPIC_OAUTH_BETA: &str = "oauth-2025-04-20";

/// Parses [`EXTRA_HEADERS_VAR`]'s value: a JSON object of strings, or
/// `Name: value` pairs one per line.
pub fn parse_extra_headers(text: &str) -> Result<Vec<(String, String)>, ModelError> {
    let text = text.trim();
    if text.starts_with('{') {
        let map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).map_err(|e| {
                ModelError::InvalidConfig(format!("{EXTRA_HEADERS_VAR} is not a JSON object: {e}"))
            })?;
        return map
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => Ok((k, s)),
                other => Err(ModelError::InvalidConfig(format!(
                    "{EXTRA_HEADERS_VAR}: the value of {k:?} must be a string, got {other}"
                ))),
            })
            .collect();
    }
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|line| {
            let (name, value) = line.split_once(':').ok_or_else(|| {
                ModelError::InvalidConfig(format!(
                    "{EXTRA_HEADERS_VAR}: {line:?} is not `Name: value` (or pass a JSON object)"
                ))
            })?;
            Ok((name.trim().to_string(), value.trim().to_string()))
        })
        .collect()
}

/// Adds `extra` to `headers`, each replacing the headers of the same
/// name (case-insensitive).
pub(crate) fn merge_headers(headers: &mut Vec<(String, String)>, extra: &[(String, String)]) {
    for (name, value) in extra {
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        headers.push((name.clone(), value.clone()));
    }
}

/// How to reach and use one model provider.
#[derive(Clone)]
pub struct ProviderConfig {
    /// Wire format.
    pub kind: ProviderKind,
    /// API key; `None` sends no auth header (fine for local servers).
    pub api_key: Option<String>,
    /// Base URL; trailing slashes are tolerated.
    pub base_url: String,
    /// Retries after the first attempt (default 4, so up to 5 attempts).
    pub max_retries: u32,
    /// First backoff delay (default 500 ms), doubled per retry, full jitter.
    pub initial_backoff: Duration,
    /// Backoff cap (default 20 s).
    pub max_backoff: Duration,
    /// Longest wait for the provider: for the response to a request, and
    /// between two events of a streamed answer (default 600 s). The
    /// connect timeout is the smaller of this and 10 s. A long answer that
    /// keeps streaming is never cut off.
    pub request_timeout: Duration,
    /// Model to switch to after repeated overloads.
    pub fallback_model: Option<String>,
    /// Consecutive 529 (overloaded) answers before switching to
    /// `fallback_model` (default 2).
    pub overloads_before_fallback: u32,
    /// `max_tokens` sent to Anthropic when the request has none (default 8192).
    pub default_max_tokens: u32,
    /// Prices for cost reporting.
    pub prices: PriceTable,
    /// Extra headers sent with every request.
    pub extra_headers: Vec<(String, String)>,
    /// OpenRouter's dialect: each request asks for usage accounting
    /// (`"usage": {"include": true}`), whose reported cost is used, and
    /// model aliases resolve to OpenRouter ids (`anthropic/claude-…`).
    pub openrouter: bool,
}

impl ProviderConfig {
    fn defaults(kind: ProviderKind, base_url: &str) -> Self {
        ProviderConfig {
            kind,
            api_key: None,
            base_url: base_url.to_string(),
            max_retries: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            request_timeout: Duration::from_secs(600),
            fallback_model: None,
            overloads_before_fallback: 2,
            default_max_tokens: 8192,
            prices: PriceTable::with_defaults(),
            extra_headers: Vec::new(),
            openrouter: false,
        }
    }

    /// Anthropic with default settings and no key.
    pub fn anthropic() -> Self {
        Self::defaults(ProviderKind::Anthropic, ANTHROPIC_DEFAULT_BASE_URL)
    }

    /// OpenAI with default settings and no key.
    pub fn openai() -> Self {
        Self::defaults(ProviderKind::OpenAi, OPENAI_DEFAULT_BASE_URL)
    }

    /// OpenRouter with default settings and no key: its address, its
    /// attribution headers (`HTTP-Referer`, `X-Title`), usage accounting
    /// (each answer's cost as OpenRouter bills it) and its model ids.
    pub fn openrouter() -> Self {
        let mut config = Self::defaults(ProviderKind::OpenAi, OPENROUTER_DEFAULT_BASE_URL);
        config.openrouter = true;
        config.extra_headers = vec![
            ("HTTP-Referer".into(), OPENROUTER_REFERER.into()),
            ("X-Title".into(), OPENROUTER_TITLE.into()),
        ];
        config
    }

    /// Asks Anthropic for these beta features (the SDKs' `betas`): they
    /// join the `anthropic-beta` header (after any flag already there,
    /// each once). Only the Anthropic provider has the header: for
    /// another, nothing changes and the error says so.
    pub fn add_betas(&mut self, betas: &[String]) -> Result<(), ModelError> {
        let betas: Vec<&str> = betas
            .iter()
            .flat_map(|b| b.split(','))
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .collect();
        if betas.is_empty() {
            return Ok(());
        }
        if self.kind != ProviderKind::Anthropic {
            return Err(ModelError::InvalidConfig(format!(
                "betas ({}) are Anthropic's: the {:?} provider has no anthropic-beta header",
                betas.join(","),
                self.kind
            )));
        }
        let at = self
            .extra_headers
            .iter()
            .position(|(k, _)| k.eq_ignore_ascii_case("anthropic-beta"));
        let mut flags: Vec<String> = at
            .map(|i| {
                self.extra_headers[i]
                    .1
                    .split(',')
                    .map(|f| f.trim().to_string())
                    .collect()
            })
            .unwrap_or_default();
        for beta in betas {
            if !flags.iter().any(|f| f == beta) {
                flags.push(beta.to_string());
            }
        }
        let value = flags.join(",");
        match at {
            Some(i) => self.extra_headers[i].1 = value,
            None => self.extra_headers.push(("anthropic-beta".into(), value)),
        }
        Ok(())
    }

    /// The secrets this configuration sends (the API key, bearer tokens),
    /// which must never show in output.
    pub fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = self.api_key.iter().cloned().collect();
        out.extend(
            self.extra_headers
                .iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                .map(|(_, v)| v.strip_prefix("Bearer ").unwrap_or(v).to_string()),
        );
        out
    }

    /// The full endpoint URL for this provider.
    pub fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        match self.kind {
            ProviderKind::Anthropic => format!("{base}/v1/messages"),
            ProviderKind::OpenAi => format!("{base}/chat/completions"),
        }
    }
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("kind", &self.kind)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("base_url", &self.base_url)
            .field("max_retries", &self.max_retries)
            .field("initial_backoff", &self.initial_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("request_timeout", &self.request_timeout)
            .field("fallback_model", &self.fallback_model)
            .field("overloads_before_fallback", &self.overloads_before_fallback)
            .field("default_max_tokens", &self.default_max_tokens)
            .field("openrouter", &self.openrouter)
            .field(
                "extra_headers",
                &self
                    .extra_headers
                    .iter()
                    .map(|(k, _)| k)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn oauth_tokens_are_bearer_headers_without_an_api_key() {
        let c = ProviderConfig::from_env_with(env(&[
            ("CLAUDE_CODE_OAUTH_TOKEN", "oat-1"),
            ("OPENAI_API_KEY", "sk-oai"),
        ]))
        .unwrap();
        assert_eq!(c.kind, ProviderKind::Anthropic);
        assert_eq!(c.api_key, None);
        assert_eq!(
            c.extra_headers,
            vec![
                ("authorization".to_string(), "Bearer oat-1".to_string()),
                (
                    "anthropic-beta".to_string(),
                    ANTHROPIC_OAUTH_BETA.to_string()
                ),
            ]
        );
        let c = ProviderConfig::from_env_with(env(&[
            ("ANTHROPIC_AUTH_TOKEN", "tok"),
            ("CLAUDE_CODE_OAUTH_TOKEN", "oat-1"),
            ("ANTHROPIC_BASE_URL", "http://gw"),
        ]))
        .unwrap();
        assert_eq!(c.base_url, "http://gw");
        assert_eq!(
            c.extra_headers,
            vec![("authorization".to_string(), "Bearer tok".to_string())]
        );
    }

    #[test]
    fn betas_join_the_anthropic_beta_header_once_each() {
        let mut c = ProviderConfig::anthropic();
        c.extra_headers
            .push(("anthropic-beta".into(), ANTHROPIC_OAUTH_BETA.into()));
        c.add_betas(&["context-1m-2025-08-07,  b2".into(), "b2".into()])
            .unwrap();
        assert_eq!(
            c.extra_headers,
            vec![(
                "anthropic-beta".to_string(),
                format!("{ANTHROPIC_OAUTH_BETA},context-1m-2025-08-07,b2")
            )]
        );
        let mut o = ProviderConfig::openai();
        let err = o.add_betas(&["b".into()]).unwrap_err().to_string();
        assert!(err.contains("no anthropic-beta header"), "{err}");
        assert!(o.extra_headers.is_empty());
    }

    #[test]
    fn extra_headers_from_json_or_lines() {
        let c = ProviderConfig::from_env_with(env(&[
            ("OPENAI_API_KEY", "k"),
            ("OPENAI_BASE_URL", "https://openrouter.ai/api/v1"),
            (
                EXTRA_HEADERS_VAR,
                r#"{"HTTP-Referer": "https://x.example", "X-Title": "T"}"#,
            ),
        ]))
        .unwrap();
        assert_eq!(c.extra_headers.len(), 2);
        assert!(c.extra_headers.contains(&("X-Title".into(), "T".into())));
        assert_eq!(
            parse_extra_headers("A: 1\n\n B : two words ").unwrap(),
            vec![("A".into(), "1".into()), ("B".into(), "two words".into())]
        );
        let err = parse_extra_headers("no colon").unwrap_err().to_string();
        assert!(err.contains("TASCER_EXTRA_HEADERS"), "{err}");
        assert!(parse_extra_headers(r#"{"A": 1}"#).is_err());
    }

    #[test]
    fn anthropic_wins() {
        let c = ProviderConfig::from_env_with(env(&[
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("ANTHROPIC_BASE_URL", "http://localhost:1/"),
            ("OPENAI_API_KEY", "sk-oai"),
        ]))
        .unwrap();
        assert_eq!(c.kind, ProviderKind::Anthropic);
        assert_eq!(c.api_key.as_deref(), Some("sk-ant"));
        assert_eq!(c.endpoint(), "http://localhost:1/v1/messages");
    }

    #[test]
    fn openai_base_url_alone() {
        let c =
            ProviderConfig::from_env_with(env(&[("OPENAI_BASE_URL", "http://localhost:11434/v1")]))
                .unwrap();
        assert_eq!(c.kind, ProviderKind::OpenAi);
        assert_eq!(c.api_key, None);
        assert_eq!(c.endpoint(), "http://localhost:11434/v1/chat/completions");
        let c = ProviderConfig::from_env_with(env(&[("OPENAI_API_KEY", "k")])).unwrap();
        assert_eq!(c.endpoint(), "https://api.openai.com/v1/chat/completions");
    }

    #[test]
    fn missing_key_names_both() {
        let err = ProviderConfig::from_env_with(env(&[("ANTHROPIC_API_KEY", "  ")])).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("ANTHROPIC_API_KEY") && text.contains("OPENAI_API_KEY"),
            "{text}"
        );
    }

    #[test]
    fn debug_hides_key() {
        let mut c = ProviderConfig::anthropic();
        c.api_key = Some("secret".into());
        assert!(!format!("{c:?}").contains("secret"));
        assert_eq!(c.endpoint(), "https://api.anthropic.com/v1/messages");
    }
}
