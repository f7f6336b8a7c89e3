//! What contractors start from: their provider, which may differ from the
//! manager's, their model, and the settings files they read.

use tascer::guard::settings::SettingsSource;
use tascer::{Options, ProviderConfig};

use crate::error::ContractError;

/// Prefix of the environment variables read for contractors' provider:
/// when any `TASCER_CONTRACTOR_<NAME>` is set (other than
/// `TASCER_CONTRACTOR_MODEL`), contractors use only those (e.g.
/// `TASCER_CONTRACTOR_CLAUDE_CODE_OAUTH_TOKEN`), so a manager on one
/// provider can run contractors on another.
pub const CONTRACTOR_PREFIX: &str = "TASCER_CONTRACTOR_";

/// The options contractors start from: their provider, the user, project
/// and local settings files, and `TASCER_CONTRACTOR_MODEL` as their model.
///
/// The provider: when any `TASCER_CONTRACTOR_<NAME>` is set (see
/// [`CONTRACTOR_PREFIX`]), the one those variables describe, with the
/// retries and prices of `general`'s provider when it gives one; else
/// `general`'s (`None`: each session reads the usual variables).
/// `general` gives the provider the caller uses for its own sessions (the
/// CLI's applies its retry, price and timeout knobs); it is called after
/// the contractors' variables are read.
pub fn contractor_base<E: From<ContractError>>(
    general: impl FnOnce() -> Result<Option<ProviderConfig>, E>,
) -> Result<Options, E> {
    let mut base = Options::new();
    let prefixed = std::env::vars().any(|(k, _)| {
        k.strip_prefix(CONTRACTOR_PREFIX)
            .is_some_and(|rest| rest != "MODEL")
    });
    base.provider = if prefixed {
        let mut provider = ProviderConfig::from_env_with(|name| {
            std::env::var(format!("{CONTRACTOR_PREFIX}{name}")).ok()
        })
        .map_err(ContractError::ContractorProvider)?;
        if let Some(general) = general()? {
            provider.max_retries = general.max_retries;
            provider.prices = general.prices;
        }
        Some(provider)
    } else {
        general()?
    };
    base.model = std::env::var(format!("{CONTRACTOR_PREFIX}MODEL"))
        .ok()
        .filter(|m| !m.is_empty());
    base.setting_sources = vec![
        SettingsSource::User,
        SettingsSource::Project,
        SettingsSource::Local,
    ];
    Ok(base)
}
