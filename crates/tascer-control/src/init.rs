//! The `initialize` control request (claude-compat §9.3, §9.5): what it
//! changes in the session's options (hook callbacks, agents, structured
//! output, system prompt, SDK MCP servers, and the fields the TS SDK may
//! send here instead of on the command line), and the response.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tascer::guard::hooks::{HookEvent, HookOptions, HookRegistry};
use tascer::{AgentDefinition, Client, Options, SystemPrompt};

use crate::callbacks::SdkHook;
use crate::channel::Control;
use crate::error::ControlError;
use crate::wire::CLAUDE_CODE_VERSION;

/// Fields of `initialize` that Tascer reads.
const READ: &[&str] = &[
    "subtype",
    "hooks",
    "agents",
    "jsonSchema",
    "systemPrompt",
    "appendSystemPrompt",
    "sdkMcpServers",
    "mcpServers",
    "settings",
    "disallowedTools",
    "plugins",
];

/// Fields that need nothing from Tascer: it lists the tools of SDK MCP
/// servers itself.
const NOT_NEEDED: &[&str] = &["sdkMcpServerConfigs", "sdkMcpServerManifests"];

/// Which of the fields the TS SDK can deliver in `initialize` were
/// applied (the response confirms each).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    /// `mcpServers`.
    pub mcp_servers: bool,
    /// `settings`.
    pub settings: bool,
    /// `disallowedTools`.
    pub disallowed_tools: bool,
    /// `plugins`.
    pub plugins: bool,
}

/// Applies an `initialize` request to the options. `Err` is the text of
/// the error response (a hook matcher that is not a regex, an agent
/// without a prompt, …); `warnings` gets one line per field or hook
/// Tascer does not act on.
pub fn apply(
    request: &Map<String, Value>,
    options: &mut Options,
    control: &Control,
    warnings: &mut Vec<String>,
) -> Result<Applied, String> {
    let mut applied = Applied::default();
    if let Some(hooks) = present(request, "hooks") {
        let registry = hook_registry(hooks, control, warnings)?;
        let mut all = options.hooks.take().unwrap_or_default();
        all.extend(registry);
        options.hooks = Some(all);
    }
    if let Some(agents) = present(request, "agents") {
        let agents = agents
            .as_object()
            .ok_or("initialize: agents must be an object of agent definitions")?;
        for (name, definition) in agents {
            let agent: AgentDefinition = serde_json::from_value(definition.clone())
                .map_err(|e| format!("initialize: agents.{name}: {e}"))?;
            options.agents.insert(name.clone(), agent);
        }
    }
    if let Some(schema) = present(request, "jsonSchema") {
        if !schema.is_object() {
            return Err("initialize: jsonSchema must be a JSON Schema object".into());
        }
        *options = std::mem::take(options).json_schema(schema.clone());
        options.max_structured_output_retries =
            structured_retries_from_env().map_err(|e| tascer::error_chain(&e))?;
    }
    apply_system_prompt(request, options)?;
    if let Some(names) = present(request, "sdkMcpServers") {
        for name in strings(names, "sdkMcpServers")? {
            options
                .mcp_servers
                .entry(name.clone())
                .or_insert(tascer::mcp::McpServerConfig::Sdk { name });
        }
    }
    if let Some(servers) = present(request, "mcpServers") {
        let config = json!({ "mcpServers": servers }).to_string();
        let servers = tascer::mcp::parse_mcp_config_str(&config)
            .map_err(|e| format!("initialize: mcpServers: {e}"))?;
        options.mcp_servers.extend(servers);
        applied.mcp_servers = true;
    }
    if let Some(settings) = present(request, "settings") {
        options.settings = Some(match settings {
            Value::String(file_or_json) => file_or_json.clone(),
            other => other.to_string(),
        });
        applied.settings = true;
    }
    if let Some(tools) = present(request, "disallowedTools") {
        options
            .disallowed_tools
            .extend(strings(tools, "disallowedTools")?);
        applied.disallowed_tools = true;
    }
    if let Some(plugins) = present(request, "plugins") {
        options.plugin_dirs.extend(plugin_dirs(plugins)?);
        applied.plugins = true;
    }
    for (field, value) in request {
        let inert = matches!(value, Value::Null | Value::Bool(false));
        if !inert && !READ.contains(&field.as_str()) && !NOT_NEEDED.contains(&field.as_str()) {
            warnings.push(format!(
                "warning: ignoring initialize field {field}: Tascer does not support it (see docs/sdk-compat.md)"
            ));
        }
    }
    Ok(applied)
}

/// The `plugins` field: the SDK's `plugins` option, `[{"type": "local",
/// "path", "skipMcpDiscovery"?}]`, as `--plugin-dir` (or
/// `--plugin-dir-no-mcp`) would give them.
fn plugin_dirs(plugins: &Value) -> Result<Vec<tascer::PluginDir>, String> {
    let list = plugins
        .as_array()
        .ok_or("initialize: plugins must be a list of {\"type\": \"local\", \"path\": …}")?;
    let mut dirs = Vec::new();
    for (i, plugin) in list.iter().enumerate() {
        let kind = plugin.get("type").and_then(Value::as_str);
        if kind != Some("local") {
            return Err(format!(
                "initialize: plugins[{i}]: unsupported plugin type {} (only \"local\")",
                plugin.get("type").unwrap_or(&Value::Null)
            ));
        }
        let path = plugin
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("initialize: plugins[{i}]: missing \"path\""))?;
        dirs.push(match plugin.get("skipMcpDiscovery") {
            Some(Value::Bool(true)) => tascer::PluginDir::without_mcp(path),
            _ => tascer::PluginDir::new(path),
        });
    }
    Ok(dirs)
}

/// `MAX_STRUCTURED_OUTPUT_RETRIES` (Claude Code's variable), if set: how
/// often a session asks the model again for output that fits the JSON
/// schema.
pub fn structured_retries_from_env() -> Result<Option<u32>, ControlError> {
    match std::env::var("MAX_STRUCTURED_OUTPUT_RETRIES") {
        Ok(v) if !v.trim().is_empty() => {
            v.trim()
                .parse()
                .map(Some)
                .map_err(|source| ControlError::StructuredRetries {
                    value: v.clone(),
                    source,
                })
        }
        _ => Ok(None),
    }
}

/// The field's value unless it is absent or null.
fn present<'a>(request: &'a Map<String, Value>, field: &str) -> Option<&'a Value> {
    request.get(field).filter(|v| !v.is_null())
}

fn strings(value: &Value, field: &str) -> Result<Vec<String>, String> {
    value
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| format!("initialize: {field} must be an array of strings"))
}

/// `systemPrompt` (a string, or strings joined by blank lines) replaces
/// the command line's prompt; `appendSystemPrompt` extends it.
fn apply_system_prompt(request: &Map<String, Value>, options: &mut Options) -> Result<(), String> {
    let replace = match present(request, "systemPrompt") {
        None => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(parts) => Some(strings(parts, "systemPrompt")?.join("\n\n")),
    };
    let append = match present(request, "appendSystemPrompt") {
        None => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(_) => return Err("initialize: appendSystemPrompt must be a string".into()),
    };
    options.system_prompt = match (replace, append, &options.system_prompt) {
        (None, None, _) => return Ok(()),
        (Some(text), None, _) => SystemPrompt::Replace(text),
        (Some(text), Some(more), _) => SystemPrompt::Replace(format!("{text}\n\n{more}")),
        (None, Some(more), SystemPrompt::Replace(text)) => {
            SystemPrompt::Replace(format!("{text}\n\n{more}"))
        }
        (None, Some(more), _) => SystemPrompt::Append(more),
    };
    Ok(())
}

/// `hooks`: `{Event: [{matcher?, hookCallbackIds, timeout? (s), onFailure?}]}`.
/// Each callback id becomes an in-process hook that asks the SDK; with
/// `onFailure` other than `continue`, a failure blocks (fail-closed).
fn hook_registry(
    hooks: &Value,
    control: &Control,
    warnings: &mut Vec<String>,
) -> Result<HookRegistry, String> {
    let events = hooks
        .as_object()
        .ok_or("initialize: hooks must be an object of event names")?;
    let mut builder = HookRegistry::builder();
    for (name, matchers) in events {
        let matchers = matchers
            .as_array()
            .ok_or_else(|| format!("initialize: hooks.{name} must be an array of matchers"))?;
        let Ok(event) = HookEvent::from_str(name) else {
            warnings.push(format!(
                "warning: the SDK registered {name} hooks, but Tascer does not fire {name}: they will not run"
            ));
            continue;
        };
        for (i, matcher) in matchers.iter().enumerate() {
            let at = format!("initialize: hooks.{name}[{i}]");
            let pattern = match matcher.get("matcher") {
                None | Some(Value::Null) => "",
                Some(Value::String(p)) => p.as_str(),
                Some(_) => return Err(format!("{at}.matcher must be a string or null")),
            };
            let timeout = match matcher.get("timeout") {
                None | Some(Value::Null) => tascer::guard::hooks::DEFAULT_TIMEOUT,
                Some(t) => t
                    .as_f64()
                    .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(|| format!("{at}.timeout must be a number of seconds above 0"))?,
            };
            // Claude Code reads any value but `continue` as `block`.
            let fail_closed = matcher
                .get("onFailure")
                .is_some_and(|f| !f.is_null() && f.as_str() != Some("continue"));
            let ids = matcher
                .get("hookCallbackIds")
                .map(|ids| strings(ids, &format!("hooks.{name}[{i}].hookCallbackIds")))
                .transpose()?
                .unwrap_or_default();
            for id in ids {
                let hook_options = HookOptions::default()
                    .name(format!("sdk hook_callback {id}"))
                    .timeout(timeout)
                    .fail_closed(fail_closed);
                builder = builder.hook_with(
                    event,
                    pattern,
                    hook_options,
                    Arc::new(SdkHook::new(&id, control.clone())),
                );
            }
        }
    }
    builder.build().map_err(|e| format!("initialize: {e}"))
}

/// The response body: what the session offers (commands, agents, model),
/// and which of the SDK's settings it applied.
pub async fn response(client: &Client, applied: Applied) -> Value {
    let commands: Vec<Value> = client
        .slash_commands()
        .await
        .into_iter()
        .map(|c| {
            json!({
                "name": c.name,
                "description": c.description,
                "argumentHint": c.argument_hint.unwrap_or_default(),
            })
        })
        .collect();
    let agents: Vec<Value> = client
        .agents()
        .await
        .into_iter()
        .map(|a| {
            let mut agent = json!({"name": a.name, "description": a.description});
            if let Some(model) = a.model {
                agent["model"] = json!(model);
            }
            agent
        })
        .collect();
    let model = client.model();
    let mut body = json!({
        "commands": commands,
        "agents": agents,
        "output_style": "default",
        "available_output_styles": ["default"],
        "models": [{"value": model, "displayName": model, "description": "The session's model"}],
        "account": {},
        "pid": std::process::id(),
        "hook_on_failure_supported": true,
        "hooks_applied": true,
        "claude_code_version": CLAUDE_CODE_VERSION,
        "tascer_version": tascer::VERSION,
        "session_id": client.session_id(),
    });
    for (field, yes) in [
        ("mcp_servers_applied", applied.mcp_servers),
        ("settings_applied", applied.settings),
        ("disallowed_tools_applied", applied.disallowed_tools),
        ("plugins_applied", applied.plugins),
    ] {
        if yes {
            body[field] = json!(true);
        }
    }
    body
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn request(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn control() -> Control {
        Control::start(tokio::io::sink())
    }

    #[tokio::test]
    async fn hooks_become_sdk_hooks_with_their_matcher_timeout_and_failure_mode() {
        let mut options = Options::new();
        let mut warnings = Vec::new();
        let init = request(json!({
            "subtype": "initialize",
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 5, "onFailure": "block"}],
                "Stop": [{"matcher": null, "hookCallbackIds": ["hook_2"]}],
                "TeammateIdle": [{"hookCallbackIds": ["hook_3"]}]
            },
            "forwardSubagentText": true
        }));
        apply(&init, &mut options, &control(), &mut warnings).unwrap();
        let hooks = options.hooks.unwrap();
        let hooks = hooks.hooks();
        assert_eq!(hooks.len(), 3);
        assert_eq!(hooks[0].event, HookEvent::PreToolUse);
        assert_eq!(hooks[0].matcher.pattern(), Some("Bash"));
        assert_eq!(hooks[0].options.timeout, Duration::from_secs(5));
        assert!(hooks[0].options.fail_closed);
        assert_eq!(hooks[1].name(), "sdk hook_callback hook_1");
        assert_eq!(hooks[2].event, HookEvent::Stop);
        assert!(!hooks[2].options.fail_closed);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("TeammateIdle"), "{warnings:?}");
        assert!(warnings[1].contains("forwardSubagentText"), "{warnings:?}");
    }

    #[tokio::test]
    async fn bad_fields_are_precise_errors() {
        let cases = [
            (
                json!({"hooks": {"PreToolUse": [{"matcher": "(", "hookCallbackIds": ["h"]}]}}),
                "invalid matcher",
            ),
            (
                json!({"hooks": {"PreToolUse": [{"hookCallbackIds": ["h"], "timeout": -1}]}}),
                "hooks.PreToolUse[0].timeout must be a number of seconds above 0",
            ),
            (
                json!({"agents": {"reviewer": {"description": "d"}}}),
                "agents.reviewer: missing field `prompt`",
            ),
            (
                json!({"sdkMcpServers": "calc"}),
                "sdkMcpServers must be an array of strings",
            ),
        ];
        for (init, expected) in cases {
            let err = apply(
                &request(init.clone()),
                &mut Options::new(),
                &control(),
                &mut Vec::new(),
            )
            .unwrap_err();
            assert!(err.contains(expected), "{init}: {err}");
        }
    }

    #[tokio::test]
    async fn system_prompt_agents_schema_and_delivered_fields_apply() {
        let mut options = Options::new().system_prompt("from argv");
        let init = request(json!({
            "appendSystemPrompt": "more",
            "agents": {"reviewer": {"description": "Reviews", "prompt": "Review it", "tools": ["Read"]}},
            "jsonSchema": {"type": "object"},
            "sdkMcpServers": ["calc"],
            "disallowedTools": ["WebFetch"],
        }));
        let applied = apply(&init, &mut options, &control(), &mut Vec::new()).unwrap();
        assert_eq!(
            options.system_prompt,
            SystemPrompt::Replace("from argv\n\nmore".into())
        );
        assert_eq!(options.agents["reviewer"].prompt, "Review it");
        assert!(options.output_format.is_some());
        assert!(options.mcp_servers.contains_key("calc"));
        assert_eq!(options.disallowed_tools, ["WebFetch"]);
        assert!(applied.disallowed_tools && !applied.mcp_servers);
    }
}
