//! Routes: side requests answered by what they contain, not by their turn.
//!
//! A scenario's turns answer one conversation by its position (the n-th
//! request of a history gets turn n). Some requests are not part of that
//! conversation: an agent may call the model on the side (a reviewer that
//! judges a tool call, a classifier) with a fresh one-message history each
//! time. A [`Route`] answers such requests: the first route whose
//! conditions all hold for a request answers it with its turn, however
//! many times it matches, before the scenario's turns are consulted.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::request::{RecordedRequest, text_of};
use crate::turn::Turn;

/// A side request's answer, chosen by the request's content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// Text the request's system prompt contains (Anthropic `system`, or
    /// the OpenAI `system`/`developer` message); any system prompt when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_system_contains: Option<String>,
    /// Text the request's last user message contains; any when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_last_user_contains: Option<String>,
    /// The answer.
    pub turn: Turn,
}

impl Route {
    /// A route for requests whose system prompt contains `text`.
    pub fn when_system_contains(text: impl Into<String>, turn: Turn) -> Self {
        Route {
            when_system_contains: Some(text.into()),
            when_last_user_contains: None,
            turn,
        }
    }

    /// A route for questions to Tascer's LLM reviewer `name`
    /// (`tool-approve`, …; its system prompt starts `Tascer reviewer:
    /// <name>`) whose text contains `needle` (the call, the request…).
    pub fn reviewer(name: &str, needle: impl Into<String>, turn: Turn) -> Self {
        Route::when_system_contains(format!("{REVIEWER_MARK}{name}\n"), turn)
            .and_last_user_contains(needle)
    }

    /// Also requires the last user message to contain `text`.
    pub fn and_last_user_contains(mut self, text: impl Into<String>) -> Self {
        self.when_last_user_contains = Some(text.into());
        self
    }

    /// True when every condition holds for a request body.
    pub(crate) fn matches(&self, body: &Value) -> bool {
        let system_ok = self
            .when_system_contains
            .as_ref()
            .is_none_or(|needle| system_text(body).contains(needle.as_str()));
        let user_ok = self
            .when_last_user_contains
            .as_ref()
            .is_none_or(|needle| last_user_text(body).contains(needle.as_str()));
        system_ok && user_ok
    }
}

/// How the system prompt of a Tascer reviewer starts (before its name).
pub const REVIEWER_MARK: &str = "Tascer reviewer: ";

/// A reviewer's answer: `{"verdict": …, "reason": …}` as its only text.
pub fn reviewer_verdict(verdict: &str, reason: &str) -> Turn {
    Turn::text(serde_json::json!({"verdict": verdict, "reason": reason}).to_string())
}

/// How many of `requests` were questions to Tascer's reviewer `name`.
pub fn reviewer_requests(requests: &[RecordedRequest], name: &str) -> usize {
    let mark = format!("{REVIEWER_MARK}{name}\n");
    requests
        .iter()
        .filter(|r| system_text(&r.body).contains(&mark))
        .count()
}

/// The system prompt's text: Anthropic's `system` (a string or text
/// blocks), or the OpenAI `system`/`developer` messages.
fn system_text(body: &Value) -> String {
    let mut parts = vec![text_of(body.get("system").unwrap_or(&Value::Null))];
    for message in messages(body) {
        if matches!(role(message), Some("system" | "developer")) {
            parts.push(text_of(message.get("content").unwrap_or(&Value::Null)));
        }
    }
    parts.join("\n")
}

/// The last user message's text.
fn last_user_text(body: &Value) -> String {
    messages(body)
        .iter()
        .rev()
        .find(|m| role(m) == Some("user"))
        .and_then(|m| m.get("content"))
        .map(text_of)
        .unwrap_or_default()
}

fn messages(body: &Value) -> &[Value] {
    body.get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn role(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_conditions_must_hold_on_either_wire_format() {
        let route = Route::when_system_contains("reviewer: approve", Turn::text("ok"))
            .and_last_user_contains("rm -rf");
        let anthropic = json!({
            "system": [{"type": "text", "text": "Tascer reviewer: approve"}],
            "messages": [{"role": "user", "content": "call: rm -rf build"}],
        });
        let openai = json!({
            "messages": [
                {"role": "system", "content": "Tascer reviewer: approve"},
                {"role": "user", "content": [{"type": "text", "text": "call: rm -rf /"}]},
            ],
        });
        assert!(route.matches(&anthropic));
        assert!(route.matches(&openai));
        let other_call = json!({
            "system": "Tascer reviewer: approve",
            "messages": [{"role": "user", "content": "call: ls"}],
        });
        assert!(!route.matches(&other_call));
        let other_system = json!({
            "system": "You are a coding agent",
            "messages": [{"role": "user", "content": "rm -rf build"}],
        });
        assert!(!route.matches(&other_system));
    }
}
