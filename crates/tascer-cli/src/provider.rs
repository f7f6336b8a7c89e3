//! The model provider the command line uses.

use anyhow::Context;

/// The provider from the environment, with the CLI's own knobs applied
/// (see [`apply_knobs`]). `None` when no knob is set: the library then
/// reads the provider variables itself.
pub(crate) fn provider_from_env(
    request_timeout: Option<std::time::Duration>,
) -> anyhow::Result<Option<tascer::ProviderConfig>> {
    if !knobs_set() && request_timeout.is_none() {
        return Ok(None);
    }
    let mut provider = tascer::ProviderConfig::from_env()?;
    apply_knobs(&mut provider, request_timeout)?;
    Ok(Some(provider))
}

/// True when `TASCER_MAX_RETRIES` or `TASCER_PRICES` is set.
fn knobs_set() -> bool {
    ["TASCER_MAX_RETRIES", "TASCER_PRICES"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|v| !v.is_empty()))
}

/// The CLI's knobs on `provider`: `TASCER_MAX_RETRIES` (retries after the
/// first attempt), `TASCER_PRICES` (a JSON price table, inline or as a file
/// path, merged over the defaults) and `--request-timeout` /
/// `TASCER_REQUEST_TIMEOUT`.
pub(crate) fn apply_knobs(
    provider: &mut tascer::ProviderConfig,
    request_timeout: Option<std::time::Duration>,
) -> anyhow::Result<()> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if let Some(timeout) = request_timeout {
        provider.request_timeout = timeout;
    }
    if let Some(n) = var("TASCER_MAX_RETRIES") {
        provider.max_retries = n
            .parse()
            .with_context(|| format!("TASCER_MAX_RETRIES must be a whole number, got {n:?}"))?;
    }
    if let Some(table) = var("TASCER_PRICES") {
        let json = if table.trim_start().starts_with('{') {
            table
        } else {
            std::fs::read_to_string(&table)
                .with_context(|| format!("cannot read TASCER_PRICES file {table}"))?
        };
        provider
            .prices
            .merge_json(&json)
            .context("TASCER_PRICES is not a valid price table")?;
    }
    Ok(())
}

/// A provider named on the command line (`--provider`), from its
/// variables, with the knobs applied.
pub(crate) fn named_provider(
    name: &str,
    request_timeout: Option<std::time::Duration>,
) -> anyhow::Result<tascer::ProviderConfig> {
    let name: tascer::ProviderName = name.parse()?;
    let mut provider = tascer::EnvProviders::from_env()?.provider(name)?.config;
    apply_knobs(&mut provider, request_timeout)?;
    Ok(provider)
}
