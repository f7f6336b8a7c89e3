//! The SDK's callbacks as Tascer hooks, permission callback, MCP tunnel
//! and elicitor: each sends its control request (`hook_callback`,
//! `can_use_tool`, `mcp_message`, `elicitation`) and turns the answer into
//! what admission, the permission engine or the MCP client expects. They enter
//! the same pipeline as every other hook and callback, so their answers
//! are recorded in the ledger like the others'.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tascer::guard::hooks::{Hook, HookError, HookInput, HookOutput};
use tascer::guard::permissions::{
    CanUseTool, CanUseToolRequest, CanUseToolResult, PermissionUpdate, allow_suggestions,
    parse_updates,
};
use tascer::mcp::{ElicitationRequest, ElicitationResponse, Elicitor, McpTunnel};

use crate::channel::{Control, RequestError};

/// One SDK hook callback (`hookCallbackIds` entry of `initialize`).
pub struct SdkHook {
    name: String,
    callback_id: String,
    control: Control,
}

impl SdkHook {
    /// The callback `callback_id`, reached through `control`.
    pub fn new(callback_id: &str, control: Control) -> Self {
        SdkHook {
            name: format!("sdk hook_callback {callback_id}"),
            callback_id: callback_id.to_string(),
            control,
        }
    }
}

impl Hook for SdkHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn call<'a>(&'a self, input: &'a HookInput) -> BoxFuture<'a, Result<HookOutput, HookError>> {
        async move {
            let input = input.to_value();
            let request = json!({
                "subtype": "hook_callback",
                "callback_id": self.callback_id,
                "tool_use_id": input.get("tool_use_id").cloned().unwrap_or(Value::Null),
                "input": input,
            });
            let answer = self
                .control
                .request(request)
                .await
                .map_err(|e| HookError::msg(format!("the SDK's hook callback failed: {e}")))?;
            if answer.get("async").and_then(Value::as_bool) == Some(true) {
                // An async hook cannot decide anything (claude-compat §6.2).
                return Ok(HookOutput::default());
            }
            Ok(HookOutput::from_value(&answer))
        }
        .boxed()
    }
}

/// The `can_use_tool` callback: asks the SDK (`--permission-prompt-tool
/// stdio`). A failed request denies the call with the reason.
pub fn can_use_tool(control: Control) -> CanUseTool {
    Arc::new(move |request: CanUseToolRequest| {
        let control = control.clone();
        async move {
            let rules: Vec<String> = request
                .suggestions
                .iter()
                .map(|rule| rule.to_rule_string())
                .collect();
            let suggestions = allow_suggestions(rules.iter().map(String::as_str));
            let wire = json!({
                "subtype": "can_use_tool",
                "tool_name": request.tool_name,
                "input": request.input,
                "tool_use_id": request.tool_use_id,
                "permission_suggestions": suggestions,
                "blocked_path": request.blocked_path,
                "decision_reason": request.decision_reason,
            });
            match control.request(wire).await {
                Ok(answer) => permission_answer(&answer, &request.input),
                Err(e) => CanUseToolResult::Deny {
                    message: e.to_string(),
                    interrupt: false,
                },
            }
        }
        .boxed()
    })
}

/// Reads a `can_use_tool` answer: `allow` with `updatedInput` (the
/// original input when absent), or `deny` with `message` and `interrupt`.
fn permission_answer(answer: &Value, original: &Value) -> CanUseToolResult {
    match answer.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            let updated = answer
                .get("updatedInput")
                .filter(|u| u.is_object())
                .unwrap_or(original);
            CanUseToolResult::Allow {
                updated_input: Some(updated.clone()),
                updated_permissions: permission_updates(answer.get("updatedPermissions")),
            }
        }
        Some("deny") => CanUseToolResult::Deny {
            message: answer
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            interrupt: answer
                .get("interrupt")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        other => CanUseToolResult::Deny {
            message: format!(
                "the can_use_tool callback answered behavior {}, which is neither allow nor deny",
                other.map_or_else(|| "(none)".to_string(), |b| format!("{b:?}"))
            ),
            interrupt: false,
        },
    }
}

/// The `updatedPermissions` of an allow answer; an entry Tascer cannot
/// read is a warning, and the others still apply.
fn permission_updates(value: Option<&Value>) -> Vec<PermissionUpdate> {
    let items = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(other) => {
            tracing::warn!(
                "ignoring the updatedPermissions of a can_use_tool answer: {other} is not a list"
            );
            return Vec::new();
        }
    };
    let (updates, warnings) = parse_updates(items);
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    updates
}

/// Carries the MCP messages of the SDK's in-process servers
/// (`mcp_message`).
pub struct SdkMcpTunnel {
    control: Control,
}

impl SdkMcpTunnel {
    /// A tunnel through `control`.
    pub fn new(control: Control) -> Self {
        SdkMcpTunnel { control }
    }
}

impl McpTunnel for SdkMcpTunnel {
    fn exchange(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, String>> {
        let control = self.control.clone();
        let request = json!({"subtype": "mcp_message", "server_name": server, "message": message});
        async move {
            let answer = control.request(request).await.map_err(|e| e.to_string())?;
            answer
                .get("mcp_response")
                .cloned()
                .ok_or_else(|| "the SDK's mcp_message answer has no mcp_response".to_string())
        }
        .boxed()
    }
}

/// Asks the SDK host an MCP server's question (`elicitation` control
/// request; the TypeScript SDK's `onElicitation`). The session asks it
/// after its Elicitation hooks.
pub struct SdkElicitor {
    control: Control,
}

impl SdkElicitor {
    /// An elicitor asking through `control`.
    pub fn new(control: Control) -> Self {
        SdkElicitor { control }
    }
}

impl Elicitor for SdkElicitor {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        async move {
            let answer = self.control.request(elicitation_request(&request)).await;
            elicitation_answer(answer)
        }
        .boxed()
    }
}

/// The `elicitation` control request for `request`.
fn elicitation_request(request: &ElicitationRequest) -> Value {
    let mut wire = json!({
        "subtype": "elicitation",
        "mcp_server_name": request.server,
        "message": request.message,
        "mode": request.mode(),
    });
    if let Some(url) = &request.url {
        wire["url"] = json!(url);
    }
    if let Some(id) = &request.elicitation_id {
        wire["elicitation_id"] = json!(id);
    }
    if !request.requested_schema.is_null() {
        wire["requested_schema"] = request.requested_schema.clone();
    }
    wire
}

/// Reads the host's answer (`{action, content?}`). An error answer (an
/// SDK that does not know the request) or a closed stream declines, with
/// the reason.
fn elicitation_answer(answer: Result<Value, RequestError>) -> ElicitationResponse {
    let answer = match answer {
        Ok(answer) => answer,
        Err(e) => {
            return ElicitationResponse::Decline(format!(
                "the SDK host did not answer the elicitation request: {e}"
            ));
        }
    };
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => ElicitationResponse::Accept(
            answer
                .get("content")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        ),
        Some("decline") => ElicitationResponse::Decline("declined by the SDK host".into()),
        Some("cancel") => ElicitationResponse::Cancel,
        other => ElicitationResponse::Decline(format!(
            "the SDK host answered the elicitation request with action {} (accept, decline \
             or cancel)",
            other.map_or_else(|| "(none)".to_string(), |a| format!("{a:?}"))
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_defaults_to_the_original_input_and_deny_keeps_interrupt() {
        let original = json!({"command": "ls"});
        assert_eq!(
            permission_answer(&json!({"behavior": "allow"}), &original),
            CanUseToolResult::Allow {
                updated_input: Some(original.clone()),
                updated_permissions: Vec::new(),
            }
        );
        let rewritten = json!({"command": "ls -la"});
        assert_eq!(
            permission_answer(
                &json!({"behavior": "allow", "updatedInput": rewritten}),
                &original
            ),
            CanUseToolResult::Allow {
                updated_input: Some(rewritten),
                updated_permissions: Vec::new(),
            }
        );
        assert_eq!(
            permission_answer(
                &json!({"behavior": "deny", "message": "no", "interrupt": true}),
                &original
            ),
            CanUseToolResult::Deny {
                message: "no".into(),
                interrupt: true
            }
        );
        let always = permission_answer(
            &json!({"behavior": "allow", "updatedPermissions": [
                {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls:*"}],
                 "behavior": "allow", "destination": "localSettings"},
                {"type": "setMode", "mode": "acceptEdits"},
                {"type": "bogus"},
            ]}),
            &original,
        );
        let CanUseToolResult::Allow {
            updated_permissions,
            ..
        } = always
        else {
            panic!("{always:?}");
        };
        assert_eq!(
            updated_permissions.len(),
            2,
            "the unreadable one is left out"
        );
        assert_eq!(
            updated_permissions[0].describe(),
            "added allow rule(s) Bash(ls:*) (localSettings)"
        );
        assert_eq!(
            updated_permissions[1].describe(),
            "set the mode to acceptEdits (session)"
        );
        assert!(matches!(
            permission_answer(&json!({"behavior": "maybe"}), &original),
            CanUseToolResult::Deny {
                interrupt: false,
                ..
            }
        ));
    }

    #[test]
    fn elicitation_requests_and_answers_follow_the_sdk_wire() {
        let form = ElicitationRequest {
            server: "conf".into(),
            message: "Who?".into(),
            requested_schema: json!({"type": "object"}),
            url: None,
            elicitation_id: None,
        };
        assert_eq!(
            elicitation_request(&form),
            json!({"subtype": "elicitation", "mcp_server_name": "conf", "message": "Who?",
                   "mode": "form", "requested_schema": {"type": "object"}})
        );
        let url = ElicitationRequest {
            requested_schema: Value::Null,
            url: Some("https://example.com/x".into()),
            elicitation_id: Some("e1".into()),
            ..form
        };
        assert_eq!(
            elicitation_request(&url),
            json!({"subtype": "elicitation", "mcp_server_name": "conf", "message": "Who?",
                   "mode": "url", "url": "https://example.com/x", "elicitation_id": "e1"})
        );
        let accepted = elicitation_answer(Ok(json!({"action": "accept", "content": {"a": 1}})));
        assert_eq!(
            accepted,
            ElicitationResponse::Accept(json!({"a": 1}).as_object().cloned().unwrap())
        );
        assert_eq!(
            elicitation_answer(Ok(json!({"action": "cancel"}))),
            ElicitationResponse::Cancel
        );
        assert!(matches!(
            elicitation_answer(Ok(json!({"action": "decline"}))),
            ElicitationResponse::Decline(_)
        ));
        let ElicitationResponse::Decline(reason) =
            elicitation_answer(Err(RequestError::Sdk("Unsupported control request".into())))
        else {
            panic!("an error answer declines");
        };
        assert!(reason.contains("Unsupported control request"), "{reason}");
    }
}
