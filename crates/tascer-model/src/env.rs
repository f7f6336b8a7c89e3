//! Which providers the environment configures ([`EnvProviders`]), and each
//! one built from its variables ([`EnvProviders::provider`]): Anthropic
//! with an API key or a bearer token, OpenRouter, and other
//! OpenAI-compatible servers. [`ProviderConfig::from_env`] takes the first
//! of them in a fixed order; callers with roles (a manager and its
//! contractors) pick one by name.

use std::fmt;
use std::str::FromStr;

use crate::config::{
    ANTHROPIC_OAUTH_BETA, API_KEY_VARS, EXTRA_HEADERS_VAR, ProviderConfig, merge_headers,
    parse_extra_headers,
};
use crate::error::ModelError;

/// The variable holding an OpenRouter key.
pub const OPENROUTER_API_KEY_VAR: &str = "OPENROUTER_API_KEY";
/// The variable overriding OpenRouter's address.
pub const OPENROUTER_BASE_URL_VAR: &str = "OPENROUTER_BASE_URL";

/// A provider as users name it (`--provider`, `--contractor-provider`,
/// settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderName {
    /// Anthropic's Messages API with `ANTHROPIC_API_KEY` (with a bearer
    /// token when no key is set).
    Anthropic,
    /// Anthropic's Messages API with a bearer token: `ANTHROPIC_AUTH_TOKEN`
    /// or Claude Code's `CLAUDE_CODE_OAUTH_TOKEN`.
    AnthropicOauth,
    /// OpenRouter (OpenAI wire): `OPENROUTER_API_KEY`, or `OPENAI_API_KEY`
    /// / `OPENAI_BASE_URL` pointing at it.
    #[serde(rename = "openrouter")]
    OpenRouter,
    /// Another OpenAI-compatible server: `OPENAI_API_KEY` / `OPENAI_BASE_URL`.
    #[serde(rename = "openai")]
    OpenAi,
}

impl ProviderName {
    /// Every name, in the order [`ProviderConfig::from_env`] prefers them.
    pub const ALL: [ProviderName; 4] = [
        ProviderName::Anthropic,
        ProviderName::AnthropicOauth,
        ProviderName::OpenAi,
        ProviderName::OpenRouter,
    ];

    /// `anthropic`, `anthropic-oauth`, `openrouter` or `openai`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderName::Anthropic => "anthropic",
            ProviderName::AnthropicOauth => "anthropic-oauth",
            ProviderName::OpenRouter => "openrouter",
            ProviderName::OpenAi => "openai",
        }
    }

    /// True for the providers that speak Anthropic's Messages API.
    pub fn is_anthropic(self) -> bool {
        matches!(self, ProviderName::Anthropic | ProviderName::AnthropicOauth)
    }

    /// The variables that configure this provider, for messages.
    pub fn variables(self) -> &'static str {
        match self {
            ProviderName::Anthropic => "ANTHROPIC_API_KEY",
            ProviderName::AnthropicOauth => "CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_AUTH_TOKEN",
            ProviderName::OpenRouter => {
                "OPENROUTER_API_KEY (or OPENAI_API_KEY / OPENAI_BASE_URL pointing at openrouter.ai)"
            }
            ProviderName::OpenAi => "OPENAI_API_KEY and/or OPENAI_BASE_URL",
        }
    }
}

impl fmt::Display for ProviderName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderName {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "anthropic" => Ok(ProviderName::Anthropic),
            "anthropic-oauth" | "oauth" => Ok(ProviderName::AnthropicOauth),
            "openrouter" => Ok(ProviderName::OpenRouter),
            "openai" => Ok(ProviderName::OpenAi),
            other => Err(ModelError::InvalidConfig(format!(
                "unknown provider {other:?} (expected anthropic, anthropic-oauth, openrouter or openai)"
            ))),
        }
    }
}

/// A provider built from the environment, and where its credential came
/// from.
#[derive(Debug, Clone)]
pub struct EnvProvider {
    /// Which provider.
    pub name: ProviderName,
    /// Its configuration (with `TASCER_EXTRA_HEADERS` applied).
    pub config: ProviderConfig,
    /// The variable its credential was read from (`None`: no credential,
    /// e.g. a local server reached through `OPENAI_BASE_URL` alone).
    pub credential: Option<&'static str>,
}

/// An OpenAI-wire server's variables.
#[derive(Clone, Default)]
struct OpenAiVars {
    key: Option<(String, &'static str)>,
    base: Option<String>,
}

/// The providers the environment configures, read once.
#[derive(Clone, Default)]
pub struct EnvProviders {
    anthropic_key: Option<String>,
    anthropic_base: Option<String>,
    token: Option<(String, &'static str)>,
    openrouter: Option<OpenAiVars>,
    openai: Option<OpenAiVars>,
    extra_headers: Vec<(String, String)>,
}

impl fmt::Debug for EnvProviders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnvProviders")
            .field("configured", &self.configured())
            .finish_non_exhaustive()
    }
}

/// True when `url`'s host is openrouter.ai (or one of its subdomains).
pub fn is_openrouter_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host = rest
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default()
        .rsplit('@')
        .next()
        .unwrap_or_default();
    let host = host
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    host == "openrouter.ai" || host.ends_with(".openrouter.ai")
}

/// True for an OpenRouter key (`sk-or-…`).
fn is_openrouter_key(key: &str) -> bool {
    key.starts_with("sk-or-")
}

impl EnvProviders {
    /// Reads the process environment; see [`EnvProviders::read`].
    pub fn from_env() -> Result<Self, ModelError> {
        Self::read(|name| std::env::var(name).ok())
    }

    /// Reads the provider variables looked up with `get` (empty values
    /// count as unset). `OPENAI_API_KEY` / `OPENAI_BASE_URL` configure
    /// OpenRouter when the base URL is on openrouter.ai or the key is an
    /// OpenRouter key (`sk-or-…`); `OPENROUTER_API_KEY` (with
    /// `OPENROUTER_BASE_URL`) configures it too. Two different OpenRouter
    /// keys are an error.
    pub fn read(get: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        let var = |name: &str| {
            get(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let token = var("ANTHROPIC_AUTH_TOKEN")
            .map(|t| (t, "ANTHROPIC_AUTH_TOKEN"))
            .or_else(|| var("CLAUDE_CODE_OAUTH_TOKEN").map(|t| (t, "CLAUDE_CODE_OAUTH_TOKEN")));
        let openai_key = var("OPENAI_API_KEY");
        let openai_base = var("OPENAI_BASE_URL");
        let openai_is_router = openai_base.as_deref().is_some_and(is_openrouter_url)
            || openai_key.as_deref().is_some_and(is_openrouter_key);
        let openai_vars = (openai_key.is_some() || openai_base.is_some()).then(|| OpenAiVars {
            key: openai_key.clone().map(|k| (k, "OPENAI_API_KEY")),
            base: openai_base.clone(),
        });
        let router_key = var(OPENROUTER_API_KEY_VAR);
        let router_base = var(OPENROUTER_BASE_URL_VAR);
        let (openrouter, openai) = match (openai_vars, openai_is_router) {
            (Some(vars), true) => {
                if let (Some(a), Some(b)) = (&router_key, &openai_key)
                    && a != b
                {
                    return Err(ModelError::InvalidConfig(
                        "OPENROUTER_API_KEY and OPENAI_API_KEY both name OpenRouter keys and they \
                         differ: unset one of them"
                            .into(),
                    ));
                }
                let vars = OpenAiVars {
                    base: vars.base.or(router_base),
                    ..vars
                };
                (Some(vars), None)
            }
            (openai, _) => {
                let router = router_key.map(|k| OpenAiVars {
                    key: Some((k, OPENROUTER_API_KEY_VAR)),
                    base: router_base,
                });
                (router, openai)
            }
        };
        let extra_headers = match var(EXTRA_HEADERS_VAR) {
            Some(text) => parse_extra_headers(&text)?,
            None => Vec::new(),
        };
        Ok(EnvProviders {
            anthropic_key: var("ANTHROPIC_API_KEY"),
            anthropic_base: var("ANTHROPIC_BASE_URL"),
            token,
            openrouter,
            openai,
            extra_headers,
        })
    }

    /// The providers configured, in [`ProviderName::ALL`]'s order.
    pub fn configured(&self) -> Vec<ProviderName> {
        ProviderName::ALL
            .into_iter()
            .filter(|name| self.has(*name))
            .collect()
    }

    /// True when the environment configures `name` (for
    /// [`ProviderName::Anthropic`]: an API key).
    pub fn has(&self, name: ProviderName) -> bool {
        match name {
            ProviderName::Anthropic => self.anthropic_key.is_some(),
            ProviderName::AnthropicOauth => self.token.is_some(),
            ProviderName::OpenRouter => self.openrouter.is_some(),
            ProviderName::OpenAi => self.openai.is_some(),
        }
    }

    /// The first configured provider in [`ProviderName::ALL`]'s order: an
    /// Anthropic key, an Anthropic bearer token, an OpenAI-compatible
    /// server, OpenRouter.
    pub fn first(&self) -> Result<EnvProvider, ModelError> {
        match self.configured().first() {
            Some(name) => self.provider(*name),
            None => Err(ModelError::MissingApiKey {
                vars: API_KEY_VARS.to_string(),
            }),
        }
    }

    /// `name` built from its variables; an error naming them when they are
    /// not set. [`ProviderName::Anthropic`] without a key uses a bearer
    /// token when one is set.
    pub fn provider(&self, name: ProviderName) -> Result<EnvProvider, ModelError> {
        let missing = || ModelError::MissingApiKey {
            vars: format!("{} for the {name} provider", name.variables()),
        };
        let (config, credential) = match name {
            ProviderName::Anthropic if self.anthropic_key.is_some() => {
                let mut config = self.anthropic();
                config.api_key = self.anthropic_key.clone();
                (config, Some("ANTHROPIC_API_KEY"))
            }
            ProviderName::Anthropic | ProviderName::AnthropicOauth => {
                let (token, var) = self.token.as_ref().ok_or_else(missing)?;
                let mut config = self.anthropic();
                config
                    .extra_headers
                    .push(("authorization".into(), format!("Bearer {token}")));
                if *var == "CLAUDE_CODE_OAUTH_TOKEN" {
                    // Anthropic accepts Claude OAuth tokens with this beta flag.
                    config
                        .extra_headers
                        .push(("anthropic-beta".into(), ANTHROPIC_OAUTH_BETA.into()));
                }
                (config, Some(*var))
            }
            ProviderName::OpenRouter => {
                let vars = self.openrouter.as_ref().ok_or_else(missing)?;
                let mut config = ProviderConfig::openrouter();
                apply(&mut config, vars);
                (config, vars.key.as_ref().map(|(_, v)| *v))
            }
            ProviderName::OpenAi => {
                let vars = self.openai.as_ref().ok_or_else(missing)?;
                let mut config = ProviderConfig::openai();
                apply(&mut config, vars);
                (config, vars.key.as_ref().map(|(_, v)| *v))
            }
        };
        let mut config = config;
        merge_headers(&mut config.extra_headers, &self.extra_headers);
        Ok(EnvProvider {
            name,
            config,
            credential,
        })
    }

    fn anthropic(&self) -> ProviderConfig {
        let mut config = ProviderConfig::anthropic();
        if let Some(base) = &self.anthropic_base {
            config.base_url = base.clone();
        }
        config
    }
}

impl ProviderConfig {
    /// Reads the process environment; see [`ProviderConfig::from_env_with`].
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_env_with(|name| std::env::var(name).ok())
    }

    /// Picks a provider from environment variables looked up with `get`,
    /// the first of: `ANTHROPIC_API_KEY` (with optional
    /// `ANTHROPIC_BASE_URL`) selects Anthropic; an OAuth bearer token
    /// (`ANTHROPIC_AUTH_TOKEN`, `CLAUDE_CODE_OAUTH_TOKEN`) selects Anthropic
    /// with `Authorization: Bearer`; `OPENAI_API_KEY` and/or
    /// `OPENAI_BASE_URL` select an OpenAI-compatible server (OpenRouter
    /// when they point at it; a base URL alone is enough, for local servers
    /// that need no key); `OPENROUTER_API_KEY` selects OpenRouter. Empty
    /// values count as unset. See [`EnvProviders`] to
    /// choose among several.
    pub fn from_env_with(get: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        Ok(EnvProviders::read(get)?.first()?.config)
    }
}

/// An OpenAI-wire server's key and address.
fn apply(config: &mut ProviderConfig, vars: &OpenAiVars) {
    config.api_key = vars.key.as_ref().map(|(k, _)| k.clone());
    if let Some(base) = &vars.base {
        config.base_url = base.clone();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::config::ProviderKind;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn header<'a>(config: &'a ProviderConfig, name: &str) -> Option<&'a str> {
        config
            .extra_headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn openai_variables_pointing_at_openrouter_are_openrouter() {
        let e = EnvProviders::read(env(&[
            ("OPENAI_API_KEY", "sk-or-v1-abc"),
            ("OPENAI_BASE_URL", "https://openrouter.ai/api/v1"),
            ("CLAUDE_CODE_OAUTH_TOKEN", "oat"),
        ]))
        .unwrap();
        assert_eq!(
            e.configured(),
            [ProviderName::AnthropicOauth, ProviderName::OpenRouter]
        );
        let p = e.provider(ProviderName::OpenRouter).unwrap();
        assert_eq!(p.config.kind, ProviderKind::OpenAi);
        assert!(p.config.openrouter);
        assert_eq!(p.credential, Some("OPENAI_API_KEY"));
        assert_eq!(p.config.api_key.as_deref(), Some("sk-or-v1-abc"));
        assert_eq!(
            p.config.endpoint(),
            "https://openrouter.ai/api/v1/chat/completions"
        );
        assert_eq!(header(&p.config, "X-Title"), Some("Tascer"));
        assert!(header(&p.config, "HTTP-Referer").is_some());
        // The key alone says OpenRouter too, at OpenRouter's address.
        let e = EnvProviders::read(env(&[("OPENAI_API_KEY", "sk-or-v1-abc")])).unwrap();
        let p = e.first().unwrap();
        assert_eq!(p.name, ProviderName::OpenRouter);
        assert_eq!(
            p.config.base_url,
            crate::config::OPENROUTER_DEFAULT_BASE_URL
        );
        // An OpenRouter address with any key.
        let e = EnvProviders::read(env(&[
            ("OPENAI_API_KEY", "k"),
            ("OPENAI_BASE_URL", "https://eu.openrouter.ai/api/v1/"),
        ]))
        .unwrap();
        assert_eq!(e.configured(), [ProviderName::OpenRouter]);
    }

    #[test]
    fn openrouter_variables_and_their_address() {
        let e = EnvProviders::read(env(&[
            ("OPENROUTER_API_KEY", "sk-or-1"),
            ("OPENROUTER_BASE_URL", "http://127.0.0.1:9/v1"),
            ("OPENAI_BASE_URL", "http://localhost:11434/v1"),
        ]))
        .unwrap();
        assert_eq!(
            e.configured(),
            [ProviderName::OpenAi, ProviderName::OpenRouter]
        );
        let p = e.provider(ProviderName::OpenRouter).unwrap();
        assert_eq!(p.credential, Some("OPENROUTER_API_KEY"));
        assert_eq!(p.config.base_url, "http://127.0.0.1:9/v1");
        let p = e.provider(ProviderName::OpenAi).unwrap();
        assert!(!p.config.openrouter);
        assert_eq!(p.credential, None);
        // Two different OpenRouter keys: no silent choice.
        let err = EnvProviders::read(env(&[
            ("OPENROUTER_API_KEY", "sk-or-1"),
            ("OPENAI_API_KEY", "sk-or-2"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(err.contains("differ"), "{err}");
    }

    #[test]
    fn extra_headers_replace_openrouters_defaults() {
        let e = EnvProviders::read(env(&[
            ("OPENROUTER_API_KEY", "sk-or-1"),
            (EXTRA_HEADERS_VAR, r#"{"x-title": "Mine", "X-Other": "1"}"#),
        ]))
        .unwrap();
        let p = e.provider(ProviderName::OpenRouter).unwrap();
        let titles: Vec<_> = p
            .config
            .extra_headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("x-title"))
            .collect();
        assert_eq!(titles.len(), 1);
        assert_eq!(header(&p.config, "x-title"), Some("Mine"));
        assert_eq!(header(&p.config, "x-other"), Some("1"));
    }

    #[test]
    fn naming_a_provider_that_is_not_configured_names_its_variables() {
        let e = EnvProviders::read(env(&[("ANTHROPIC_API_KEY", "k")])).unwrap();
        let err = e
            .provider(ProviderName::AnthropicOauth)
            .unwrap_err()
            .to_string();
        assert!(err.contains("CLAUDE_CODE_OAUTH_TOKEN"), "{err}");
        let err = e
            .provider(ProviderName::OpenRouter)
            .unwrap_err()
            .to_string();
        assert!(err.contains("OPENROUTER_API_KEY"), "{err}");
        assert_eq!(
            "Anthropic-OAuth".parse::<ProviderName>().unwrap(),
            ProviderName::AnthropicOauth
        );
        assert!("bedrock".parse::<ProviderName>().is_err());
    }

    #[test]
    fn openrouter_urls() {
        assert!(is_openrouter_url("https://openrouter.ai/api/v1"));
        assert!(is_openrouter_url("https://user@openrouter.ai:443"));
        assert!(!is_openrouter_url("https://notopenrouter.ai/v1"));
        assert!(!is_openrouter_url("http://127.0.0.1:9/openrouter.ai"));
    }
}
