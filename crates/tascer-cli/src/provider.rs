//! The model provider the command line uses.

use anyhow::Context;

/// The provider from the environment, with the CLI's own knobs applied:
/// `TASCER_MAX_RETRIES` (retries after the first attempt),
/// `TASCER_PRICES` (a JSON price table, inline or as a file path, merged
/// over the defaults) and `--request-timeout` / `TASCER_REQUEST_TIMEOUT`.
/// `None` when none is set: the library then reads the provider variables
/// itself.
pub(crate) fn provider_from_env(
    request_timeout: Option<std::time::Duration>,
) -> anyhow::Result<Option<tascer::ProviderConfig>> {
    let retries = std::env::var("TASCER_MAX_RETRIES")
        .ok()
        .filter(|v| !v.is_empty());
    let prices = std::env::var("TASCER_PRICES")
        .ok()
        .filter(|v| !v.is_empty());
    if retries.is_none() && prices.is_none() && request_timeout.is_none() {
        return Ok(None);
    }
    let mut provider = tascer::ProviderConfig::from_env()?;
    if let Some(timeout) = request_timeout {
        provider.request_timeout = timeout;
    }
    if let Some(n) = retries {
        provider.max_retries = n
            .parse()
            .with_context(|| format!("TASCER_MAX_RETRIES must be a whole number, got {n:?}"))?;
    }
    if let Some(table) = prices {
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
    Ok(Some(provider))
}
