//! Elicitation (`elicitation/create`): a server asks the user for input
//! mid-call. Whoever can answer implements [`Elicitor`] (an SDK host's
//! callback, a terminal prompt); without one the client does not offer
//! elicitation, and a server that asks anyway is declined (logged with
//! the reason). Accepted form answers get the schema's defaults for the
//! fields left out (SEP-1034).

use futures::future::BoxFuture;
use serde_json::{Map, Value};

/// A server's question.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// The server (config key) that asks.
    pub server: String,
    /// What it asks, for a person.
    pub message: String,
    /// `form`: the JSON Schema of the answer (`requestedSchema`); `url`:
    /// `null`.
    pub requested_schema: Value,
    /// `url` mode: the page where the user answers.
    pub url: Option<String>,
    /// `url` mode: the server's id of this question (`elicitationId`),
    /// which its completion notification names.
    pub elicitation_id: Option<String>,
}

impl ElicitationRequest {
    /// The request's mode on the wire: `url` or `form`.
    pub fn mode(&self) -> &'static str {
        if self.url.is_some() { "url" } else { "form" }
    }
}

/// The answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitationResponse {
    /// The user answered (form fields; empty for `url` mode).
    Accept(Map<String, Value>),
    /// The user (or the policy) said no; the reason is logged.
    Decline(String),
    /// The user dismissed the question.
    Cancel,
}

/// Answers elicitation requests.
pub trait Elicitor: Send + Sync {
    /// Asks whoever can answer `request`.
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse>;
}

/// Adds the `default` of every property of `schema` that `content` lacks.
pub fn apply_defaults(schema: &Value, content: &mut Map<String, Value>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        if content.contains_key(name) {
            continue;
        }
        if let Some(default) = property.get("default") {
            content.insert(name.clone(), default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_only_missing_fields() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John"},
            "age": {"type": "integer", "default": 30},
            "note": {"type": "string"}
        }});
        let mut content = Map::new();
        content.insert("age".into(), json!(41));
        apply_defaults(&schema, &mut content);
        assert_eq!(Value::Object(content), json!({"name": "John", "age": 41}));
    }
}
