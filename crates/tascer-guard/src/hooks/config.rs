//! Parses the settings `hooks` value (Claude Code's shape plus Tascer's
//! `failClosed` and `priority`) into registered command hooks.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use serde_json::{Map, Value};
use tascer_core::HookEvent;

use super::command::CommandHook;
use super::error::{HookConfigError, json_type};
use super::matcher::Matcher;
use super::registered::{DEFAULT_TIMEOUT, HookHandler, HookOptions, RegisteredHook};

/// Hook types Claude Code knows but Tascer does not run (skipped with a
/// warning).
const UNSUPPORTED_TYPES: &[&str] = &["prompt", "agent", "http", "mcp_tool"];

/// Parsed hooks plus warnings about skipped entries.
pub(crate) struct Parsed {
    pub hooks: Vec<RegisteredHook>,
    pub warnings: Vec<String>,
}

fn shape(event: HookEvent, path: String, message: impl Into<String>) -> HookConfigError {
    HookConfigError::Shape {
        event: event.to_string(),
        path,
        message: message.into(),
    }
}

/// Parses a settings `hooks` value.
pub(crate) fn parse(value: &Value, project_dir: &Path) -> Result<Parsed, HookConfigError> {
    let mut parsed = Parsed {
        hooks: Vec::new(),
        warnings: Vec::new(),
    };
    let map = match value {
        Value::Null => return Ok(parsed),
        Value::Object(m) => m,
        other => {
            return Err(HookConfigError::NotAnObject {
                found: json_type(other),
            });
        }
    };
    for (name, groups) in map {
        let event = match HookEvent::from_str(name) {
            Ok(e) => e,
            Err(_) if HookEvent::NOT_FIRED.contains(&name.as_str()) => {
                parsed.warnings.push(format!(
                    "hooks.{name}: event not supported by Tascer; skipped"
                ));
                continue;
            }
            Err(_) => return Err(HookConfigError::UnknownEvent { name: name.clone() }),
        };
        let groups = groups.as_array().ok_or_else(|| {
            shape(
                event,
                String::new(),
                format!("expected an array, found {}", json_type(groups)),
            )
        })?;
        for (gi, group) in groups.iter().enumerate() {
            parse_group(event, gi, group, project_dir, &mut parsed)?;
        }
    }
    Ok(parsed)
}

fn parse_group(
    event: HookEvent,
    gi: usize,
    group: &Value,
    project_dir: &Path,
    parsed: &mut Parsed,
) -> Result<(), HookConfigError> {
    let group = group.as_object().ok_or_else(|| {
        shape(
            event,
            format!("[{gi}]"),
            format!("expected an object, found {}", json_type(group)),
        )
    })?;
    let pattern = match group.get("matcher") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(other) => {
            return Err(shape(
                event,
                format!("[{gi}].matcher"),
                format!("expected a string, found {}", json_type(other)),
            ));
        }
    };
    let matcher = Matcher::new(pattern).map_err(|source| HookConfigError::BadMatcher {
        event: event.to_string(),
        matcher: pattern.unwrap_or_default().to_string(),
        source,
    })?;
    let hooks = match group.get("hooks") {
        Some(Value::Array(a)) => a,
        None | Some(Value::Null) => return Ok(()),
        Some(other) => {
            return Err(shape(
                event,
                format!("[{gi}].hooks"),
                format!("expected an array, found {}", json_type(other)),
            ));
        }
    };
    for (hi, hook) in hooks.iter().enumerate() {
        let path = format!("[{gi}].hooks[{hi}]");
        let hook = hook.as_object().ok_or_else(|| {
            shape(
                event,
                path.clone(),
                format!("expected an object, found {}", json_type(hook)),
            )
        })?;
        let kind = hook
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("command");
        if kind != "command" {
            if UNSUPPORTED_TYPES.contains(&kind) {
                parsed.warnings.push(format!(
                    "hooks.{event}{path}: `{kind}` hooks are not supported by Tascer; skipped"
                ));
                continue;
            }
            return Err(HookConfigError::UnknownHookType {
                event: event.to_string(),
                path,
                kind: kind.to_string(),
            });
        }
        let command = hook
            .get("command")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
            .ok_or_else(|| {
                shape(
                    event,
                    path.clone(),
                    "command hook needs a non-empty `command` string",
                )
            })?;
        let options = parse_options(event, &path, hook)?;
        parsed.hooks.push(RegisteredHook {
            event,
            matcher: matcher.clone(),
            handler: HookHandler::Command(CommandHook {
                command: command.to_string(),
                project_dir: project_dir.to_path_buf(),
                plugin_root: None,
            }),
            options,
        });
    }
    Ok(())
}

fn parse_options(
    event: HookEvent,
    path: &str,
    hook: &Map<String, Value>,
) -> Result<HookOptions, HookConfigError> {
    let timeout = match hook.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(v) => v
            .as_f64()
            .filter(|s| s.is_finite() && *s > 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .ok_or_else(|| {
                shape(
                    event,
                    format!("{path}.timeout"),
                    format!("expected a positive number of seconds, found {v}"),
                )
            })?,
    };
    let priority = match hook.get("priority") {
        None | Some(Value::Null) => 0,
        Some(v) => v
            .as_i64()
            .and_then(|p| i32::try_from(p).ok())
            .ok_or_else(|| {
                shape(
                    event,
                    format!("{path}.priority"),
                    format!("expected an integer, found {v}"),
                )
            })?,
    };
    let fail_closed = match hook.get("failClosed") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(shape(
                event,
                format!("{path}.failClosed"),
                format!("expected a boolean, found {}", json_type(v)),
            ));
        }
    };
    // Claude Code's newer `onFailure: "block"` means the same.
    let on_failure_block = hook.get("onFailure").and_then(Value::as_str) == Some("block");
    Ok(HookOptions {
        name: None,
        priority,
        timeout,
        fail_closed: fail_closed || on_failure_block,
    })
}
