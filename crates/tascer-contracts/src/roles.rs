//! Which provider and model each role of a contracts run uses — the
//! manager (a session offered `ExecuteContracts`) and its contractors —
//! chosen from the environment the setup uses or named explicitly, and
//! the options contractors start from. The one place that decides it:
//! the CLI, `--dry-run` and the library all ask [`choose_provider`].

use std::fmt;

use tascer::guard::settings::SettingsSource;
use tascer::{EnvProviders, Options, ProviderConfig, ProviderName, default_model_for};

use crate::error::ContractError;

/// Prefix of the environment variables read for contractors' provider:
/// when any `TASCER_CONTRACTOR_<NAME>` is set (other than
/// `TASCER_CONTRACTOR_MODEL` and `TASCER_CONTRACTOR_PROVIDER`),
/// contractors read only those (e.g.
/// `TASCER_CONTRACTOR_CLAUDE_CODE_OAUTH_TOKEN`), for splits the plain
/// variables cannot express.
pub const CONTRACTOR_PREFIX: &str = "TASCER_CONTRACTOR_";

/// The contractors' model when none is given (`--contractor-model`
/// overrides it; a contract's `Model:` constraint overrides both).
pub const CONTRACTOR_MODEL_VAR: &str = "TASCER_CONTRACTOR_MODEL";

/// The contractors' provider by name (`--contractor-provider` overrides it).
pub const CONTRACTOR_PROVIDER_VAR: &str = "TASCER_CONTRACTOR_PROVIDER";

/// A role of a contracts run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The session offered `ExecuteContracts`: it writes contracts and
    /// reviews their results. Prefers an OpenAI-compatible provider
    /// (OpenRouter).
    Manager,
    /// A contract's session. Prefers Anthropic (an API key, or a bearer
    /// token such as `CLAUDE_CODE_OAUTH_TOKEN`).
    Contractor,
}

impl Role {
    /// `manager` or `contractor`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Manager => "manager",
            Role::Contractor => "contractor",
        }
    }

    /// The flag that names this role's provider.
    pub fn provider_flag(self) -> &'static str {
        match self {
            Role::Manager => "--provider",
            Role::Contractor => "--contractor-provider",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a role asks for explicitly (flags, variables); unset parts are
/// chosen from the environment.
#[derive(Debug, Clone, Default)]
pub struct RoleChoice {
    /// The provider, by name.
    pub provider: Option<ProviderName>,
    /// The model (an alias such as `sonnet` is resolved for the provider).
    pub model: Option<String>,
}

impl RoleChoice {
    /// This choice, its unset parts taken from `lower` (a source of lower
    /// precedence).
    pub fn or(self, lower: RoleChoice) -> RoleChoice {
        RoleChoice {
            provider: self.provider.or(lower.provider),
            model: self.model.or(lower.model),
        }
    }
}

/// The settings' `contracts` section (its layers merged): the manager's
/// and the contractors' choices, from `managerProvider`, `managerModel`,
/// `contractorProvider` and `contractorModel`. Another key, or a value
/// that is not a provider name or a string, is an error.
pub fn choices_from_settings(
    section: &serde_json::Map<String, serde_json::Value>,
) -> Result<(RoleChoice, RoleChoice), ContractError> {
    let invalid = |message: String| ContractError::Other(format!("settings contracts: {message}"));
    let mut manager = RoleChoice::default();
    let mut contractor = RoleChoice::default();
    for (key, value) in section {
        let text = value
            .as_str()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| invalid(format!("{key} must be a non-empty string, not {value}")))?;
        let provider = || {
            text.parse::<ProviderName>()
                .map_err(|e| invalid(format!("{key}: {e}")))
        };
        match key.as_str() {
            "managerProvider" => manager.provider = Some(provider()?),
            "managerModel" => manager.model = Some(text.to_string()),
            "contractorProvider" => contractor.provider = Some(provider()?),
            "contractorModel" => contractor.model = Some(text.to_string()),
            other => {
                return Err(invalid(format!(
                    "unknown key {other:?} (expected managerProvider, managerModel, \
                     contractorProvider or contractorModel)"
                )));
            }
        }
    }
    Ok((manager, contractor))
}

/// The provider and model a role will use, and where its credential
/// comes from.
#[derive(Debug, Clone)]
pub struct RoleProvider {
    /// The role.
    pub role: Role,
    /// The provider.
    pub name: ProviderName,
    /// Its configuration, as the environment gives it.
    pub config: ProviderConfig,
    /// The variable its credential is read from (`None`: no credential).
    pub credential: Option<String>,
    /// The model as it will be sent (an alias resolved): the choice's, else
    /// the provider's default. A contract's `Model:` constraint still
    /// overrides a contractor's.
    pub model: String,
}

impl RoleProvider {
    /// One line for people, never the credential itself:
    /// `manager     openrouter  anthropic/claude-sonnet-4.5  OPENAI_API_KEY  https://openrouter.ai/api/v1`.
    pub fn describe(&self) -> String {
        format!(
            "{:<11} provider {:<16} model {:<30} credential {:<26} at {}",
            self.role.as_str(),
            self.name.as_str(),
            self.model,
            self.credential.as_deref().unwrap_or("none"),
            without_userinfo(&self.config.base_url)
        )
    }
}

/// `url` without a `user:password@` part, which may hold a secret.
fn without_userinfo(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let host = authority.rsplit('@').next().unwrap_or(authority);
    match scheme {
        "" => format!("{host}{path}"),
        s => format!("{s}://{host}{path}"),
    }
}

/// The environment as contractors read it: the `TASCER_CONTRACTOR_<VAR>`
/// variables when any is set (see [`CONTRACTOR_PREFIX`]), else the
/// process's, like the manager.
pub fn contractor_env() -> Result<EnvProviders, ContractError> {
    let prefixed = std::env::vars().any(|(k, _)| {
        k.strip_prefix(CONTRACTOR_PREFIX)
            .is_some_and(|rest| rest != "MODEL" && rest != "PROVIDER")
    });
    if prefixed {
        EnvProviders::read(|name| std::env::var(format!("{CONTRACTOR_PREFIX}{name}")).ok())
            .map_err(ContractError::ContractorProvider)
    } else {
        EnvProviders::from_env().map_err(|e| ContractError::RoleProvider {
            role: Role::Contractor.as_str(),
            message: e.to_string(),
        })
    }
}

/// The contractors' explicit choice from the environment:
/// [`CONTRACTOR_PROVIDER_VAR`] and [`CONTRACTOR_MODEL_VAR`] (flags
/// replace either).
pub fn contractor_choice_from_env() -> Result<RoleChoice, ContractError> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let provider = match var(CONTRACTOR_PROVIDER_VAR) {
        Some(name) => {
            Some(
                name.parse()
                    .map_err(|e: tascer::ModelError| ContractError::RoleProvider {
                        role: Role::Contractor.as_str(),
                        message: format!("{CONTRACTOR_PROVIDER_VAR}: {e}"),
                    })?,
            )
        }
        None => None,
    };
    Ok(RoleChoice {
        provider,
        model: var(CONTRACTOR_MODEL_VAR),
    })
}

/// The provider and model `role` uses with the providers `env` configures.
///
/// A provider named in `choice` is used (an error naming its variables
/// when they are not set). Otherwise the role's preferred kind is taken
/// when the environment configures exactly one of it: the manager prefers
/// an OpenAI-compatible server (OpenRouter, or another), the contractor
/// Anthropic (an API key, or a bearer token such as
/// `CLAUDE_CODE_OAUTH_TOKEN`); with none of it, the other kind. Two
/// candidates of the same kind (say `ANTHROPIC_API_KEY` and
/// `CLAUDE_CODE_OAUTH_TOKEN`) are an error that says which flag chooses,
/// never a silent choice.
pub fn choose_provider(
    role: Role,
    env: &EnvProviders,
    choice: &RoleChoice,
) -> Result<RoleProvider, ContractError> {
    let error = |message: String| ContractError::RoleProvider {
        role: role.as_str(),
        message,
    };
    let name = match choice.provider {
        Some(name) => name,
        None => preferred(role, env).map_err(error)?,
    };
    let built = env.provider(name).map_err(|e| error(e.to_string()))?;
    let model = match &choice.model {
        Some(model) => built.config.resolve_model(model),
        None => default_model_for(&built.config),
    };
    Ok(RoleProvider {
        role,
        name,
        config: built.config,
        credential: built.credential.map(str::to_string),
        model,
    })
}

/// The one provider of the role's preferred kind, else of the other kind.
fn preferred(role: Role, env: &EnvProviders) -> Result<ProviderName, String> {
    let openai_wire = [ProviderName::OpenRouter, ProviderName::OpenAi];
    let anthropic = [ProviderName::Anthropic, ProviderName::AnthropicOauth];
    let order = match role {
        Role::Manager => [openai_wire, anthropic],
        Role::Contractor => [anthropic, openai_wire],
    };
    for kind in order {
        let found: Vec<ProviderName> = kind.into_iter().filter(|n| env.has(*n)).collect();
        match found.as_slice() {
            [] => continue,
            [one] => return Ok(*one),
            several => {
                let listed: Vec<String> = several
                    .iter()
                    .map(|n| format!("{n} ({})", n.variables()))
                    .collect();
                return Err(format!(
                    "the environment configures {}; choose one with {} {}",
                    listed.join(" and "),
                    role.provider_flag(),
                    several
                        .iter()
                        .map(|n| n.as_str())
                        .collect::<Vec<_>>()
                        .join("|")
                ));
            }
        }
    }
    Err(format!(
        "no model provider is configured: set {} (see docs/contracts.md)",
        tascer::ProviderName::ALL
            .iter()
            .map(|n| n.variables())
            .collect::<Vec<_>>()
            .join(", or ")
    ))
}

/// The options contractors start from: `provider` (its configuration
/// and model), the user, project and local settings files.
pub fn contractor_base(provider: &RoleProvider) -> Options {
    let mut base = Options::new();
    base.provider = Some(provider.config.clone());
    base.model = Some(provider.model.clone());
    base.setting_sources = vec![
        SettingsSource::User,
        SettingsSource::Project,
        SettingsSource::Local,
    ];
    base
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> EnvProviders {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        EnvProviders::read(move |name| map.get(name).cloned()).unwrap()
    }

    /// The setup's environment: OpenRouter through the OpenAI variables,
    /// the OAuth token for contractors.
    fn setup() -> EnvProviders {
        env(&[
            ("OPENAI_API_KEY", "sk-or-v1-x"),
            ("OPENAI_BASE_URL", "https://openrouter.ai/api/v1"),
            ("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-x"),
        ])
    }

    #[test]
    fn the_setup_splits_the_roles() {
        let e = setup();
        let m = choose_provider(Role::Manager, &e, &RoleChoice::default()).unwrap();
        assert_eq!(m.name, ProviderName::OpenRouter);
        assert_eq!(m.credential.as_deref(), Some("OPENAI_API_KEY"));
        let c = choose_provider(
            Role::Contractor,
            &e,
            &RoleChoice {
                model: Some("sonnet".into()),
                ..RoleChoice::default()
            },
        )
        .unwrap();
        assert_eq!(c.name, ProviderName::AnthropicOauth);
        assert_eq!(c.credential.as_deref(), Some("CLAUDE_CODE_OAUTH_TOKEN"));
        assert_eq!(c.model, "claude-sonnet-4-5");
        let line = c.describe();
        assert!(
            line.contains("anthropic-oauth") && !line.contains("oat01"),
            "{line}"
        );
        assert_eq!(
            without_userinfo("https://u:secret@host.example:8080/v1?q"),
            "https://host.example:8080/v1?q"
        );
        assert_eq!(without_userinfo("http://127.0.0.1:9"), "http://127.0.0.1:9");
    }

    #[test]
    fn settings_choose_below_flags() {
        let section = serde_json::json!({
            "managerProvider": "openrouter",
            "contractorProvider": "anthropic-oauth",
            "contractorModel": "haiku"
        });
        let (manager, contractor) = choices_from_settings(section.as_object().unwrap()).unwrap();
        assert_eq!(manager.provider, Some(ProviderName::OpenRouter));
        let flags = RoleChoice {
            provider: None,
            model: Some("opus".into()),
        };
        let chosen = flags.or(contractor);
        assert_eq!(chosen.provider, Some(ProviderName::AnthropicOauth));
        assert_eq!(chosen.model.as_deref(), Some("opus"));
        for bad in [
            serde_json::json!({"contractorProvider": "bedrock"}),
            serde_json::json!({"contractorModels": "x"}),
            serde_json::json!({"managerModel": 3}),
        ] {
            let err = choices_from_settings(bad.as_object().unwrap())
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("settings contracts: "), "{err}");
        }
    }

    #[test]
    fn one_provider_serves_both_roles() {
        let e = env(&[("ANTHROPIC_API_KEY", "k")]);
        for role in [Role::Manager, Role::Contractor] {
            let p = choose_provider(role, &e, &RoleChoice::default()).unwrap();
            assert_eq!(p.name, ProviderName::Anthropic);
        }
        let e = env(&[("OPENROUTER_API_KEY", "sk-or-1")]);
        let p = choose_provider(Role::Contractor, &e, &RoleChoice::default()).unwrap();
        assert_eq!(p.name, ProviderName::OpenRouter);
        assert_eq!(p.model, "anthropic/claude-sonnet-4.5");
    }

    #[test]
    fn an_ambiguous_environment_is_an_error_naming_the_flag() {
        let e = env(&[("ANTHROPIC_API_KEY", "k"), ("CLAUDE_CODE_OAUTH_TOKEN", "t")]);
        let err = choose_provider(Role::Contractor, &e, &RoleChoice::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--contractor-provider anthropic|anthropic-oauth"),
            "{err}"
        );
        let chosen = RoleChoice {
            provider: Some(ProviderName::AnthropicOauth),
            model: None,
        };
        let p = choose_provider(Role::Contractor, &e, &chosen).unwrap();
        assert_eq!(p.name, ProviderName::AnthropicOauth);
        let e = env(&[
            ("OPENROUTER_API_KEY", "sk-or-1"),
            ("OPENAI_BASE_URL", "http://localhost:11434/v1"),
        ]);
        let err = choose_provider(Role::Manager, &e, &RoleChoice::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("--provider openrouter|openai"), "{err}");
        let err = choose_provider(Role::Manager, &env(&[]), &RoleChoice::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("CLAUDE_CODE_OAUTH_TOKEN"), "{err}");
    }
}
