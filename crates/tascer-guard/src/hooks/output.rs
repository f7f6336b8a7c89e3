//! [`HookOutput`]: the JSON a hook answers with (Claude Code's
//! `SyncHookJSONOutput`), parsed leniently: fields of the wrong type and
//! unknown fields are ignored, nothing panics.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tascer_core::{Behavior, HookEvent};

/// Top-level `decision`. Its own type, not a [`Behavior`]: it mirrors the
/// wire, whose words are `block` and `approve`, and `block` means more
/// than deny (it blocks a prompt, a stop or a compaction, or gives tool
/// feedback).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TopDecision {
    /// `"block"`: block the prompt / stop / give tool feedback
    /// (for `PreToolUse`, deprecated alias of `deny`).
    Block,
    /// `"approve"`: deprecated alias of `permissionDecision: "allow"`.
    Approve,
}

impl TopDecision {
    /// What it means as a `PreToolUse` permission decision: `block` is
    /// deny, `approve` is allow.
    pub fn behavior(self) -> Behavior {
        match self {
            TopDecision::Block => Behavior::Deny,
            TopDecision::Approve => Behavior::Allow,
        }
    }
}

/// `hookSpecificOutput.decision` of `PermissionRequest`. Its own type, not
/// a [`Behavior`]: it mirrors the wire (`behavior` tag), has no "ask", and
/// each answer carries its own data (a rewritten input and permission
/// updates, or a message and an interrupt flag).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "behavior", rename_all = "lowercase")]
pub enum PermissionRequestDecision {
    /// Grant the permission.
    Allow {
        /// Replacement tool input.
        #[serde(
            rename = "updatedInput",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        updated_input: Option<Value>,
        /// Permission updates to apply (wire `PermissionUpdate`s).
        #[serde(
            rename = "updatedPermissions",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        updated_permissions: Option<Vec<Value>>,
    },
    /// Refuse the permission.
    Deny {
        /// Message for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// True to also interrupt the run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interrupt: Option<bool>,
    },
}

/// `hookSpecificOutput`: event-specific fields. All optional; the runner
/// uses the ones that make sense for the event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput {
    /// Event the output is meant for; when present and different from the
    /// event that ran, the whole `hookSpecificOutput` is ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_event_name: Option<String>,
    /// `PreToolUse`: allow (rules still apply), deny (the reason goes to
    /// the model) or ask (the user or the permission callback decides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<Behavior>,
    /// `PreToolUse`: why (to the model for deny, to the user otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_decision_reason: Option<String>,
    /// `PreToolUse`: replacement tool input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// Extra context for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    /// `PostToolUse`: replacement tool output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_tool_output: Option<Value>,
    /// `PermissionRequest`: the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<PermissionRequestDecision>,
    /// `Elicitation`: `accept`, `decline` or `cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// `Elicitation`: the form fields of an `accept`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

/// A hook's JSON output. Every field is optional; [`HookOutput::default`]
/// means "no opinion, go on".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "Value")]
pub struct HookOutput {
    /// `continue`: `Some(false)` stops the whole run (wins over decisions).
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continue_: Option<bool>,
    /// `stopReason`: shown to the user when `continue` is false.
    #[serde(rename = "stopReason", skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// `suppressOutput`: hide the hook's stdout from the transcript.
    #[serde(rename = "suppressOutput", skip_serializing_if = "Option::is_none")]
    pub suppress_output: Option<bool>,
    /// `systemMessage`: a message shown to the user.
    #[serde(rename = "systemMessage", skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// `decision`: `"block"` / `"approve"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<TopDecision>,
    /// `reason`: why, for `decision`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `hookSpecificOutput`.
    #[serde(rename = "hookSpecificOutput", skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<HookSpecificOutput>,
}

impl From<Value> for HookOutput {
    fn from(value: Value) -> Self {
        HookOutput::from_value(&value)
    }
}

fn get_str(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_string)
}

fn get_bool(map: &Map<String, Value>, key: &str) -> Option<bool> {
    map.get(key).and_then(Value::as_bool)
}

fn get_value(map: &Map<String, Value>, key: &str) -> Option<Value> {
    map.get(key).filter(|v| !v.is_null()).cloned()
}

impl HookOutput {
    /// Parses a JSON value leniently: a non-object gives the default,
    /// fields of the wrong type are dropped, unknown fields ignored.
    pub fn from_value(value: &Value) -> HookOutput {
        let Some(map) = value.as_object() else {
            return HookOutput::default();
        };
        let decision = match map.get("decision").and_then(Value::as_str) {
            Some("block") => Some(TopDecision::Block),
            Some("approve") => Some(TopDecision::Approve),
            _ => None,
        };
        HookOutput {
            continue_: get_bool(map, "continue"),
            stop_reason: get_str(map, "stopReason"),
            suppress_output: get_bool(map, "suppressOutput"),
            system_message: get_str(map, "systemMessage"),
            decision,
            reason: get_str(map, "reason"),
            hook_specific_output: map
                .get("hookSpecificOutput")
                .and_then(Value::as_object)
                .map(HookSpecificOutput::from_map),
        }
    }

    /// Parses hook stdout. `None` when the text is not valid JSON.
    pub fn parse(text: &str) -> Option<HookOutput> {
        serde_json::from_str::<Value>(text.trim())
            .ok()
            .map(|v| HookOutput::from_value(&v))
    }

    /// True when `continue` is `false`.
    pub fn stops(&self) -> bool {
        self.continue_ == Some(false)
    }

    /// `PreToolUse` output denying the call.
    pub fn deny(reason: impl Into<String>) -> HookOutput {
        HookOutput::permission(Behavior::Deny, Some(reason.into()))
    }

    /// `PreToolUse` output allowing the call.
    pub fn allow() -> HookOutput {
        HookOutput::permission(Behavior::Allow, None)
    }

    /// `PreToolUse` output asking the user.
    pub fn ask(reason: impl Into<String>) -> HookOutput {
        HookOutput::permission(Behavior::Ask, Some(reason.into()))
    }

    /// `PreToolUse` output with a permission decision.
    pub fn permission(decision: Behavior, reason: Option<String>) -> HookOutput {
        HookOutput {
            hook_specific_output: Some(HookSpecificOutput {
                permission_decision: Some(decision),
                permission_decision_reason: reason,
                ..HookSpecificOutput::default()
            }),
            ..HookOutput::default()
        }
    }

    /// Output with `decision: "block"` and a reason (blocks a prompt, a
    /// stop, a compaction; gives tool feedback).
    pub fn block(reason: impl Into<String>) -> HookOutput {
        HookOutput {
            decision: Some(TopDecision::Block),
            reason: Some(reason.into()),
            ..HookOutput::default()
        }
    }

    /// Output adding context for the model.
    pub fn context(text: impl Into<String>) -> HookOutput {
        HookOutput {
            hook_specific_output: Some(HookSpecificOutput {
                additional_context: Some(text.into()),
                ..HookSpecificOutput::default()
            }),
            ..HookOutput::default()
        }
    }

    /// Output with `continue: false`, stopping the run.
    pub fn stop(reason: impl Into<String>) -> HookOutput {
        HookOutput {
            continue_: Some(false),
            stop_reason: Some(reason.into()),
            ..HookOutput::default()
        }
    }

    /// Sets `hookSpecificOutput.updatedInput`.
    pub fn with_updated_input(mut self, input: Value) -> HookOutput {
        self.hook_specific_output
            .get_or_insert_with(HookSpecificOutput::default)
            .updated_input = Some(input);
        self
    }

    /// Sets `systemMessage`.
    pub fn with_system_message(mut self, message: impl Into<String>) -> HookOutput {
        self.system_message = Some(message.into());
        self
    }

    /// The `hookSpecificOutput` when it is meant for `event` (its
    /// `hookEventName` is absent or names `event`).
    pub fn specific_for(&self, event: HookEvent) -> Option<&HookSpecificOutput> {
        self.hook_specific_output.as_ref().filter(|s| {
            s.hook_event_name
                .as_deref()
                .is_none_or(|n| n == event.as_str())
        })
    }
}

impl HookSpecificOutput {
    fn from_map(map: &Map<String, Value>) -> HookSpecificOutput {
        let permission_decision = match map.get("permissionDecision").and_then(Value::as_str) {
            Some("allow") | Some("approve") => Some(Behavior::Allow),
            Some("deny") | Some("block") => Some(Behavior::Deny),
            Some("ask") => Some(Behavior::Ask),
            _ => None,
        };
        HookSpecificOutput {
            hook_event_name: get_str(map, "hookEventName"),
            permission_decision,
            permission_decision_reason: get_str(map, "permissionDecisionReason"),
            updated_input: get_value(map, "updatedInput"),
            additional_context: get_str(map, "additionalContext"),
            updated_tool_output: get_value(map, "updatedToolOutput")
                .or_else(|| get_value(map, "updatedMCPToolOutput")),
            decision: map
                .get("decision")
                .and_then(|d| serde_json::from_value(d.clone()).ok()),
            action: get_str(map, "action"),
            content: get_value(map, "content"),
        }
    }
}
