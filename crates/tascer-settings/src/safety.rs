//! The `safety` and `webhooks` objects of a settings file, as written
//! (docs/reviewers.md). Unknown keys are errors: a misspelt safety switch
//! must not silently leave the safety off.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tascer_core::{Behavior, HookEvent, ToolClass};

/// The `safety` object: low-risk auto-approve, path classes and the LLM
/// reviewers. Each part is off unless present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SafetySettings {
    /// Read-only tools on trusted paths run without asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_approve: Option<AutoApproveSettings>,
    /// Which paths are trusted and which are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_classes: Option<PathClassSettings>,
    /// The LLM reviewers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewers: Option<ReviewersSettings>,
    /// Under `tascer hook`: the longest a hook answer may take, reviewers
    /// included (default 20000, safely below the 30 s hook timeout
    /// install writes); past it the reviewer still waiting fails and its
    /// fail mode decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_deadline_ms: Option<u64>,
}

/// `safety.autoApprove`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AutoApproveSettings {
    /// Off switch (default on when the object is present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The tools approved (default `Read`, `Glob`, `Grep`, `LS`,
    /// `NotebookRead`); only read-only tools may be named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Tools approved outright when a call touches no path (default
    /// `WebSearch`, `TodoWrite`, `Skill`, `LSP`); a name may end in `*`
    /// (`mcp__docs__*`).
    #[serde(
        default,
        rename = "lowRiskTools",
        skip_serializing_if = "Option::is_none"
    )]
    pub low_risk_tools: Option<Vec<String>>,
}

/// What a call touching a sensitive file gets. Its own type, not a
/// [`Behavior`]: the setting may only say `deny` or `ask`, never `allow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SensitiveAction {
    /// Refused.
    Deny,
    /// Asked about (the default without path classes).
    Ask,
}

impl SensitiveAction {
    /// The behavior it stands for.
    pub fn behavior(self) -> Behavior {
        match self {
            SensitiveAction::Deny => Behavior::Deny,
            SensitiveAction::Ask => Behavior::Ask,
        }
    }
}

/// `safety.pathClasses`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PathClassSettings {
    /// Off switch (default on when the object is present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Trusted directories besides the project directory (`~/` allowed;
    /// relative ones are anchored at the project). Default `["~/.claude"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted: Option<Vec<String>>,
    /// Sensitive patterns added to the built-in ones (`.env`, `*.pem`,
    /// `.ssh/`, …): a file name pattern, or a directory with a trailing
    /// `/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensitive: Vec<String>,
    /// What reading a sensitive file gets (default `deny`; writing one is
    /// always denied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensitive_action: Option<SensitiveAction>,
}

/// `safety.reviewers`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReviewersSettings {
    /// The model every reviewer uses unless it names its own (default:
    /// each reviewer's model class where the provider knows the aliases,
    /// else the session's model); `haiku`, `sonnet`, `opus` are resolved
    /// for the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Reviews calls the rules would ask a human about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_approve: Option<ReviewerSettings>,
    /// Reviews a `toolApprove` denial again, with recent transcript context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_appeal: Option<ReviewerSettings>,
    /// After a failed tool call, checks that the agent's next action
    /// acknowledges the failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_acknowledge: Option<ReviewerSettings>,
    /// On Stop, checks that the work matches the user's request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_validate: Option<ReviewerSettings>,
    /// A plan written to Claude Code's plans directory, or presented with
    /// `ExitPlanMode`, must match the user's request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_validate: Option<ReviewerSettings>,
    /// An edit of a workspace file must not carry cosmetic changes the
    /// user did not ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style_drift: Option<ReviewerSettings>,
    /// A change to a `CLAUDE.md` must follow the file's own conventions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude_md_validate: Option<ReviewerSettings>,
}

/// One reviewer's settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReviewerSettings {
    /// Off switch (default on when the object is present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The model (default: `reviewers.model`, else the reviewer's model
    /// class where the provider knows the aliases, else the session's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Longest wait for the verdict, model call included (default 30000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// What a failed review (timeout, provider error, malformed answer)
    /// counts as: `closed` refuses, `open` lets it pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_mode: Option<FailMode>,
    /// How long a verdict is reused for the same question (default 3600;
    /// 0 turns the cache off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_ttl_seconds: Option<u64>,
    /// Transcript messages shown to the reviewer besides the user's
    /// latest request (default 6 for `toolApprove`, 12 for the others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_messages: Option<usize>,
    /// `intentValidate` only: most Stops it may block in one session
    /// (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_blocks: Option<u32>,
}

/// What a failed review (timeout, provider error, malformed answer) counts
/// as (a reviewer's `failMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FailMode {
    /// As a pass: the call runs, the stop goes through.
    Open,
    /// As a fail: the call is refused, the stop blocked.
    Closed,
}

/// One entry of `webhooks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookSettings {
    /// Where events are POSTed (`http://` or `https://`).
    pub url: String,
    /// The events sent (default: every event): hook event names, and
    /// `McpToolCall` for the gatekeeper's tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<WebhookEvent>>,
    /// Extra request headers (e.g. `Authorization`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Longest wait for the webhook's answer, per attempt (default 5000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Most events waiting for this URL (default 10000); further events
    /// are dropped and counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_queue: Option<u64>,
    /// Attempts per event before it is dropped and counted (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// Wait before the first retry, doubled for each further one up to
    /// five minutes (default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<u64>,
}

impl SafetySettings {
    /// Checks what serde cannot: a deadline above 0, auto-approved tools
    /// are read-only, and `maxBlocks` is only given to `intentValidate`.
    pub fn validate(&self) -> Result<(), String> {
        if self.hook_deadline_ms == Some(0) {
            return Err("safety.hookDeadlineMs must be above 0".into());
        }
        if let Some(tools) = self.auto_approve.as_ref().and_then(|a| a.tools.as_ref()) {
            for tool in tools {
                if ToolClass::of(tool) != ToolClass::ReadOnly {
                    return Err(format!(
                        "safety.autoApprove.tools: `{tool}` is not a read-only tool (only read-only \
                         tools such as Read, Glob, Grep, LS may be auto-approved)"
                    ));
                }
            }
        }
        if let Some(r) = &self.reviewers {
            for (name, settings) in [
                ("toolApprove", &r.tool_approve),
                ("toolAppeal", &r.tool_appeal),
                ("errorAcknowledge", &r.error_acknowledge),
                ("planValidate", &r.plan_validate),
                ("styleDrift", &r.style_drift),
                ("claudeMdValidate", &r.claude_md_validate),
            ] {
                if settings.as_ref().is_some_and(|s| s.max_blocks.is_some()) {
                    return Err(format!(
                        "safety.reviewers.{name}.maxBlocks: only intentValidate blocks Stops"
                    ));
                }
            }
            for (name, settings) in [
                ("toolApprove", &r.tool_approve),
                ("toolAppeal", &r.tool_appeal),
                ("errorAcknowledge", &r.error_acknowledge),
                ("intentValidate", &r.intent_validate),
                ("planValidate", &r.plan_validate),
                ("styleDrift", &r.style_drift),
                ("claudeMdValidate", &r.claude_md_validate),
            ] {
                if settings
                    .as_ref()
                    .is_some_and(|s| s.timeout_ms == Some(0) || s.model.as_deref() == Some(""))
                {
                    return Err(format!(
                        "safety.reviewers.{name}: timeoutMs must be above 0 and model not empty"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// An event a webhook may receive: a hook event, or a tool call of the
/// gatekeeper (`tascer mcp serve`). Written as its name (`"PreToolUse"`,
/// `"McpToolCall"`); any other name is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WebhookEvent {
    /// A hook event (`PreToolUse`, `Stop`, …).
    Hook(HookEvent),
    /// A gatekeeper tool call (`check`, `confirm`, `commit`, `push`,
    /// `validate_intent`, the audit tools) under `tascer mcp serve`.
    McpToolCall,
}

impl WebhookEvent {
    /// The event's name, as written in settings and in the payload's
    /// `hook_event_name`.
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookEvent::Hook(event) => event.as_str(),
            WebhookEvent::McpToolCall => "McpToolCall",
        }
    }
}

impl From<HookEvent> for WebhookEvent {
    fn from(event: HookEvent) -> Self {
        WebhookEvent::Hook(event)
    }
}

impl std::str::FromStr for WebhookEvent {
    type Err = String;

    /// A hook event's name, or `McpToolCall` (case-sensitive).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        if name == "McpToolCall" {
            return Ok(WebhookEvent::McpToolCall);
        }
        name.parse::<HookEvent>()
            .map(WebhookEvent::Hook)
            .map_err(|_| {
                format!("unknown webhook event {name:?}: expected a hook event name or McpToolCall")
            })
    }
}

impl Serialize for WebhookEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for WebhookEvent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl WebhookSettings {
    /// Checks the URL scheme and the numbers.
    pub fn validate(&self) -> Result<(), String> {
        let scheme_ok = self.url.starts_with("http://") || self.url.starts_with("https://");
        if !scheme_ok || self.url.len() <= "https://".len() {
            return Err(format!(
                "webhooks: url {:?} must be an http:// or https:// URL",
                self.url
            ));
        }
        if self.timeout_ms == Some(0) || self.max_queue == Some(0) || self.max_attempts == Some(0) {
            return Err(format!(
                "webhooks ({}): timeoutMs, maxQueue and maxAttempts must be above 0",
                self.url
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn webhook_events_are_hook_events_or_mcp_tool_call() {
        let hook: WebhookSettings = serde_json::from_str(
            r#"{"url": "https://x.example", "events": ["Stop", "McpToolCall"]}"#,
        )
        .unwrap();
        assert_eq!(
            hook.events,
            Some(vec![
                WebhookEvent::Hook(HookEvent::Stop),
                WebhookEvent::McpToolCall
            ])
        );
        assert_eq!(
            serde_json::to_value(&hook.events).unwrap(),
            serde_json::json!(["Stop", "McpToolCall"])
        );
        let err = serde_json::from_str::<WebhookSettings>(
            r#"{"url": "https://x.example", "events": ["McpToolCalls"]}"#,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("unknown webhook event \"McpToolCalls\""),
            "{err}"
        );
    }
}
