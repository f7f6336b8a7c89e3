//! The SDK's control requests once the session runs (claude-compat §9.5):
//! each is answered at once, with a result or the reference's error text.

use serde_json::{Map, Value, json};
use tascer::Client;
use tascer::guard::permissions::PermissionMode;

use crate::channel::Control;
use crate::wire;

/// The request's `subtype` (empty when missing).
pub fn subtype(request: &Map<String, Value>) -> &str {
    request
        .get("subtype")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Answers one control request of the SDK on `control`.
pub fn answer(control: &Control, client: &Client, request_id: &str, request: &Map<String, Value>) {
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
