//! Session options from the JSON the Python side sends (`TascerAgentOptions`
//! and `ClaudeAgentOptions` fields, snake_case). Unknown keys are an error
//! naming them, so a misspelt option is never silently dropped.

use serde_json::{Map, Value};
use tascer::guard::gates::ValidationConfig;
use tascer::guard::settings::SettingsSource;
use tascer::{Options, PermissionMode, ProviderConfig};

/// Every key [`from_json`] reads.
const KEYS: &[&str] = &[
    "model",
    "cwd",
    "home",
    "system_prompt",
    "append_system_prompt",
    "max_turns",
    "max_budget_usd",
    "permission_mode",
    "allowed_tools",
    "disallowed_tools",
    "tools",
    "env",
    "resume",
    "setting_sources",
    "validation",
    "env_allowlist",
    "capture_git_state",
    "generate_proofs",
    "provider",
    "base_url",
    "api_key",
];

/// Builds [`Options`] from `value`, a JSON object.
pub fn from_json(value: &Value) -> Result<Options, String> {
    let object = value
        .as_object()
        .ok_or_else(|| "options must be a JSON object".to_owned())?;
    if let Some(unknown) = object.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!("unknown option {unknown:?}"));
    }
    let mut options = Options::new();
    if let Some(provider) = provider(object)? {
        options = options.provider(provider);
    }
    if let Some(model) = string(object, "model")? {
        options = options.model(model);
    }
    if let Some(cwd) = string(object, "cwd")? {
        options = options.cwd(cwd);
    }
    if let Some(home) = string(object, "home")? {
        options = options.home(home);
    }
    if let Some(prompt) = string(object, "system_prompt")? {
        options = options.system_prompt(prompt);
    }
    if let Some(text) = string(object, "append_system_prompt")? {
        options = options.append_system_prompt(text);
    }
    if let Some(n) = object.get("max_turns").filter(|v| !v.is_null()) {
        let n = n.as_u64().and_then(|n| u32::try_from(n).ok());
        options = options.max_turns(n.ok_or("max_turns must be a positive integer")?);
    }
    if let Some(usd) = object.get("max_budget_usd").filter(|v| !v.is_null()) {
        options = options.max_budget_usd(usd.as_f64().ok_or("max_budget_usd must be a number")?);
    }
    if let Some(mode) = string(object, "permission_mode")? {
        let mode: PermissionMode = mode.parse().map_err(|e| format!("permission_mode: {e}"))?;
        options = options.permission_mode(mode);
    }
    options = options
        .allowed_tools(strings(object, "allowed_tools")?.unwrap_or_default())
        .disallowed_tools(strings(object, "disallowed_tools")?.unwrap_or_default());
    if let Some(tools) = strings(object, "tools")? {
        options = options.tools(tools);
    }
    if let Some(env) = object.get("env").and_then(Value::as_object) {
        for (key, value) in env {
            let value = value
                .as_str()
                .ok_or(format!("env {key:?} must be a string"))?;
            options = options.env(key.clone(), value);
        }
    }
    if let Some(id) = string(object, "resume")? {
        options = options.resume(id);
    }
    if let Some(names) = strings(object, "setting_sources")? {
        let sources = names
            .iter()
            .map(|n| {
                SettingsSource::from_sdk_name(n).ok_or(format!(
                    "unknown setting source {n:?} (expected user, project or local)"
                ))
            })
            .collect::<Result<Vec<_>, _>>()?;
        options = options.setting_sources(sources);
    }
    if let Some(validation) = object.get("validation").filter(|v| !v.is_null()) {
        let config =
            ValidationConfig::from_value(validation).map_err(|e| format!("validation: {e}"))?;
        options = options.validation(config);
    }
    if let Some(names) = strings(object, "env_allowlist")? {
        options = options.context_env(names);
    }
    if let Some(on) = boolean(object, "capture_git_state")? {
        options = options.capture_git_state(on);
    }
    if let Some(on) = boolean(object, "generate_proofs")? {
        options = options.generate_proofs(on);
    }
    Ok(options)
}

/// The provider the options name (`provider`: `anthropic` | `openai`,
/// with `base_url` and `api_key`); `None`: from the environment, as the CLI
/// does.
fn provider(object: &Map<String, Value>) -> Result<Option<ProviderConfig>, String> {
    let kind = string(object, "provider")?;
    let base_url = string(object, "base_url")?;
    let api_key = string(object, "api_key")?;
    if kind.is_none() && base_url.is_none() && api_key.is_none() {
        return Ok(None);
    }
    let mut config = match kind.as_deref() {
        None | Some("anthropic") => ProviderConfig::anthropic(),
        Some("openai") => ProviderConfig::openai(),
        Some(other) => return Err(format!("unknown provider {other:?} (anthropic or openai)")),
    };
    if let Some(url) = base_url {
        config.base_url = url;
    }
    if api_key.is_some() {
        config.api_key = api_key;
    }
    Ok(Some(config))
}

fn string(object: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

fn boolean(object: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(format!("{key} must be true or false")),
    }
}

fn strings(object: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or(format!("{key} must be a list of strings"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(format!("{key} must be a list of strings")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::from_json;

    #[test]
    fn a_misspelt_or_mistyped_option_is_an_error_naming_it() {
        let err = from_json(&json!({"permision_mode": "plan"})).err();
        assert_eq!(err.as_deref(), Some("unknown option \"permision_mode\""));
        let err = from_json(&json!({"max_turns": "ten"})).err();
        assert_eq!(err.as_deref(), Some("max_turns must be a positive integer"));
        let err = from_json(&json!({"setting_sources": ["users"]})).err();
        assert!(err.is_some_and(|e| e.contains("\"users\"")));
        let err = from_json(&json!({"validation": {"per_tool": {"Bash": {"pre_gates": 3}}}})).err();
        assert!(err.is_some_and(|e| e.starts_with("validation:")));
    }

    #[test]
    fn the_options_the_python_side_sends_are_read() {
        let options = from_json(&json!({
            "model": "mock-model", "permission_mode": "plan", "max_turns": 3,
            "allowed_tools": ["Read"], "env_allowlist": ["CI"],
            "capture_git_state": false, "generate_proofs": true,
            "provider": "openai", "base_url": "http://127.0.0.1:9", "api_key": null,
        }))
        .ok();
        let options = options.as_ref();
        assert_eq!(options.and_then(|o| o.model.as_deref()), Some("mock-model"));
        assert_eq!(options.and_then(|o| o.max_turns), Some(3));
        assert_eq!(options.and_then(|o| o.capture_git_state), Some(false));
        assert_eq!(
            options.and_then(|o| o.context_env.clone()),
            Some(vec!["CI".to_owned()])
        );
    }
}
