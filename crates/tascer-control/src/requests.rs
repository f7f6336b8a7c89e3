//! The SDK's control requests once the session runs (claude-compat §9.5):
//! each is answered at once, with a result or the reference's error text.

use serde_json::{Map, Value, json};
use tascer::Client;
use tascer::guard::permissions::PermissionMode;

use crate::channel::Control;
use crate::tasks::Tasks;
use crate::wire;

/// The request's `subtype` (empty when missing).
pub fn subtype(request: &Map<String, Value>) -> &str {
    request
        .get("subtype")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Answers one control request of the SDK on `control`.
pub(crate) fn answer(
    control: &Control,
    client: &Client,
    tasks: &Tasks,
    request_id: &str,
    request: &Map<String, Value>,
) {
    let kind = subtype(request);
    let answer = match kind {
        "initialize" => Err("Already initialized".to_string()),
        "interrupt" => {
            client.interrupt();
            Ok(json!({}))
        }
        "set_permission_mode" => set_permission_mode(control, client, request),
        "set_model" => {
            let model = request
                .get("model")
                .and_then(Value::as_str)
                .filter(|m| *m != "default");
            client.set_model(model);
            Ok(json!({}))
        }
        "set_max_thinking_tokens" => {
            eprintln!(
                "warning: ignoring set_max_thinking_tokens: Tascer does not configure thinking"
            );
            Ok(json!({}))
        }
        "mcp_status" => Ok(json!({ "mcpServers": mcp_status(client) })),
        "mcp_reconnect" | "mcp_toggle" => {
            mcp_change(control, client, request_id, request);
            return;
        }
        "rewind_files" => {
            rewind_files(control, client, request_id, request);
            return;
        }
        "get_task_output" => tasks.output(request),
        "stop_task" => tasks.stop(request),
        "background_tasks" => Err(
            "Tascer cannot move a running call to the background: start it there (Bash with \
             run_in_background)"
                .to_string(),
        ),
        _ => Err(format!("Unsupported control request subtype: {kind}")),
    };
    match answer {
        Ok(body) => control.send(&wire::success(request_id, body)),
        Err(error) => control.send(&wire::error(request_id, &error)),
    }
}

/// Switches the mode and says so with a `system/status` frame.
fn set_permission_mode(
    control: &Control,
    client: &Client,
    request: &Map<String, Value>,
) -> Result<Value, String> {
    let name = request.get("mode").and_then(Value::as_str).unwrap_or("");
    // The error lists the modes.
    let mode: PermissionMode = name
        .parse()
        .map_err(|e: tascer::guard::permissions::UnknownPermissionMode| e.to_string())?;
    client
        .set_permission_mode(mode)
        .map_err(|e| e.to_string())?;
    control.send(&json!({
        "type": "system",
        "subtype": "status",
        "status": null,
        "permissionMode": mode.as_str(),
        "session_id": client.session_id(),
        "uuid": tascer::new_id(),
    }));
    Ok(json!({ "mode": mode.as_str() }))
}

/// `mcp_reconnect {serverName}` / `mcp_toggle {serverName, enabled}`:
/// answered when the server is connected again (or turned off).
fn mcp_change(control: &Control, client: &Client, request_id: &str, request: &Map<String, Value>) {
    let name = request
        .get("serverName")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let enabled = request.get("enabled").and_then(Value::as_bool);
    let toggle = subtype(request) == "mcp_toggle";
    let (control, request_id, manager) =
        (control.clone(), request_id.to_owned(), client.mcp_manager());
    tokio::spawn(async move {
        let result = match (manager, toggle, enabled) {
            (None, ..) => Err(format!("no MCP server named '{name}'")),
            (Some(_), true, None) => Err("mcp_toggle needs \"enabled\"".to_string()),
            (Some(m), true, Some(on)) => m.set_enabled(&name, on).await.map_err(|e| e.to_string()),
            (Some(m), false, _) => m.reconnect(&name).await.map_err(|e| e.to_string()),
        };
        match result {
            Ok(()) => control.send(&wire::success(&request_id, json!({}))),
            Err(error) => control.send(&wire::error(&request_id, &error)),
        }
    });
}

/// `rewind_files {user_message_id, dry_run?}`: answered once the running
/// turn (if any) ended and the files are restored, in Claude Code's
/// `RewindFilesResult` shape. A refusal is an error response, except on a
/// dry run, which answers `canRewind: false` with the error (as Claude
/// Code does).
fn rewind_files(
    control: &Control,
    client: &Client,
    request_id: &str,
    request: &Map<String, Value>,
) {
    let id = request
        .get("user_message_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let dry_run = request
        .get("dry_run")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let (control, request_id, rewinder) =
        (control.clone(), request_id.to_owned(), client.rewinder());
    tokio::spawn(async move {
        match rewinder.rewind(&id, dry_run).await {
            Ok(summary) => control.send(&wire::success(
                &request_id,
                json!({
                    "canRewind": true,
                    "filesChanged": summary.files_changed,
                    "insertions": summary.insertions,
                    "deletions": summary.deletions,
                }),
            )),
            Err(error) if dry_run => control.send(&wire::success(
                &request_id,
                json!({ "canRewind": false, "error": error.to_string() }),
            )),
            Err(error) => control.send(&wire::error(&request_id, &error.to_string())),
        }
    });
}

/// The MCP servers in Claude Code's `McpServerStatus` shape.
fn mcp_status(client: &Client) -> Vec<Value> {
    client
        .mcp_status()
        .into_iter()
        .map(|s| {
            let mut status = json!({
                "name": s.name,
                "status": s.status,
                "tools": s.tools.iter().map(|t| json!({"name": t})).collect::<Vec<_>>(),
            });
            if let Some(info) = s.server_info {
                status["serverInfo"] = info;
            }
            if let Some(error) = s.error {
                status["error"] = json!(error);
            }
            status
        })
        .collect()
}
