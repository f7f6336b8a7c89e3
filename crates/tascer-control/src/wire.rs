//! The lines of the stream-json control protocol (claude-compat §9): what
//! the SDK writes to standard input, parsed leniently but never guessed,
//! and the control frames written back.

use serde_json::{Map, Value, json};

/// The Claude Code version whose protocol this crate speaks (the CLI the
/// tested SDKs bundle): reported in `system/init` and in the `initialize`
/// response (and by `tascer --version`), so the SDKs take Tascer for a
/// current CLI.
pub const CLAUDE_CODE_VERSION: &str = "2.1.332";

/// One line the SDK wrote.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Incoming {
    /// A prompt (`type: user`).
    User(UserLine),
    /// A request for the CLI (`type: control_request`).
    ControlRequest {
        /// Echoed in the response.
        request_id: String,
        /// The request object; its `subtype` says what is asked.
        request: Map<String, Value>,
    },
    /// The answer to one of our requests (`type: control_response`).
    ControlResponse {
        /// The request it answers.
        request_id: String,
        /// `Ok(response)` for `success`, `Err(error)` for `error`.
        outcome: Result<Value, String>,
    },
    /// The SDK withdraws one of its requests (`control_cancel_request`).
    ControlCancel {
        /// The withdrawn request.
        request_id: String,
    },
    /// `keep_alive`: nothing to do.
    KeepAlive,
    /// `update_environment_variables`.
    UpdateEnvironment,
    /// An `assistant` or `system` line meant to seed the history.
    Seed(String),
    /// A line of a type the protocol does not have.
    Unknown(String),
}

/// A `user` line: the prompt and what identifies it.
#[derive(Debug, Clone, PartialEq)]
pub struct UserLine {
    /// `message.content`: a string, or content blocks.
    pub content: Value,
    /// The line's `uuid`, when it has one (duplicates are skipped).
    pub uuid: Option<String>,
}

/// A line that ends the session: the process exits 1 with this text on
/// standard error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// The line is not JSON.
    #[error("Error parsing streaming input line: {line}: {error}")]
    NotJson {
        /// The line (shortened).
        line: String,
        /// The JSON error.
        error: String,
    },
    /// The line is JSON but not an object with a `type`.
    #[error("Error parsing streaming input line: {line}: expected a JSON object with a \"type\"")]
    NotAMessage {
        /// The line (shortened).
        line: String,
    },
    /// A user line whose `message.role` is not `user`.
    #[error("Error: Expected message role 'user', got '{role}'")]
    NotUserRole {
        /// The role found.
        role: String,
    },
    /// A user line without `message.content`.
    #[error("Error: a user message needs message.content (a string or content blocks)")]
    NoContent,
    /// A control line without a `request_id`.
    #[error("Error: a {kind} line needs a string request_id")]
    NoRequestId {
        /// `control_request`, `control_response`, …
        kind: &'static str,
    },
    /// A `control_request` without a `request` object.
    #[error("Error: control_request {request_id} has no request object")]
    NoRequest {
        /// Its id.
        request_id: String,
    },
}

/// How much of a bad line an error quotes.
const QUOTED_CHARS: usize = 200;

fn quote(line: &str) -> String {
    let mut quoted: String = line.chars().take(QUOTED_CHARS).collect();
    if quoted.len() < line.len() {
        quoted.push('…');
    }
    quoted
}

/// Parses one line of standard input. `Ok(None)` for a blank line.
pub fn parse_line(line: &str) -> Result<Option<Incoming>, LineError> {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(trimmed).map_err(|e| LineError::NotJson {
        line: quote(trimmed),
        error: e.to_string(),
    })?;
    let Some(kind) = value.get("type").and_then(Value::as_str) else {
        return Err(LineError::NotAMessage {
            line: quote(trimmed),
        });
    };
    let request_id = |kind: &'static str, v: &Value| {
        v.get("request_id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or(LineError::NoRequestId { kind })
    };
    let incoming = match kind {
        "user" => Incoming::User(user_line(&value)?),
        "control_request" => {
            let request_id = request_id("control_request", &value)?;
            match value.get("request").and_then(Value::as_object) {
                Some(request) => Incoming::ControlRequest {
                    request_id,
                    request: request.clone(),
                },
                None => return Err(LineError::NoRequest { request_id }),
            }
        }
        "control_response" => {
            let response = value.get("response").cloned().unwrap_or(Value::Null);
            let request_id = request_id("control_response", &response)?;
            let outcome = match response.get("subtype").and_then(Value::as_str) {
                Some("error") => Err(response
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("the SDK answered with an error")
                    .to_string()),
                _ => Ok(response.get("response").cloned().unwrap_or(json!({}))),
            };
            Incoming::ControlResponse {
                request_id,
                outcome,
            }
        }
        "control_cancel_request" => Incoming::ControlCancel {
            request_id: request_id("control_cancel_request", &value)?,
        },
        "keep_alive" => Incoming::KeepAlive,
        "update_environment_variables" => Incoming::UpdateEnvironment,
        "assistant" | "system" => Incoming::Seed(kind.to_string()),
        other => Incoming::Unknown(other.to_string()),
    };
    Ok(Some(incoming))
}

fn user_line(value: &Value) -> Result<UserLine, LineError> {
    let message = value.get("message").cloned().unwrap_or(Value::Null);
    let role = message.get("role").and_then(Value::as_str).unwrap_or("");
    if role != "user" {
        return Err(LineError::NotUserRole {
            role: role.to_string(),
        });
    }
    let content = match message.get("content") {
        Some(c @ (Value::String(_) | Value::Array(_))) => c.clone(),
        _ => return Err(LineError::NoContent),
    };
    Ok(UserLine {
        content,
        uuid: value
            .get("uuid")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// The text of a prompt's content, and the types of the blocks that are
/// not text (which Tascer does not take).
pub fn prompt_text(content: &Value) -> (String, Vec<String>) {
    match content {
        Value::String(text) => (text.clone(), Vec::new()),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            let mut skipped = Vec::new();
            for block in blocks {
                match (block.get("type").and_then(Value::as_str), block.get("text")) {
                    (Some("text"), Some(Value::String(text))) => texts.push(text.as_str()),
                    (kind, _) => skipped.push(kind.unwrap_or("untyped").to_string()),
                }
            }
            (texts.join("\n\n"), skipped)
        }
        _ => (String::new(), Vec::new()),
    }
}

/// `{"type":"control_response","response":{"subtype":"success",…}}`.
pub fn success(request_id: &str, response: Value) -> Value {
    json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response},
    })
}

/// `{"type":"control_response","response":{"subtype":"error",…}}`.
pub fn error(request_id: &str, error: &str) -> Value {
    json!({
        "type": "control_response",
        "response": {"subtype": "error", "request_id": request_id, "error": error},
    })
}

/// A request of ours: `{"type":"control_request","request_id":…,"request":…}`.
pub fn request(request_id: &str, request: Value) -> Value {
    json!({"type": "control_request", "request_id": request_id, "request": request})
}

/// Withdraws a request of ours that is no longer waited for.
pub fn cancel(request_id: &str) -> Value {
    json!({"type": "control_cancel_request", "request_id": request_id})
}

/// The result frame of a session that could not start: zeroed, with the
/// error (Claude Code's shape for startup failures). `tascer run` writes it
/// too, in its JSON output formats.
pub fn startup_failure_result(error: &str) -> Value {
    json!({
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": true,
        "duration_ms": 0,
        "duration_api_ms": 0,
        "num_turns": 0,
        "session_id": "",
        "total_cost_usd": 0.0,
        "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        "modelUsage": {},
        "permission_denials": [],
        "errors": [error],
        "result": error,
        "terminal_reason": "turn_setup_failed",
        "uuid": tascer::new_id(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn user_lines_take_a_string_or_blocks_and_require_the_user_role() {
        let line = r#"{"type":"user","session_id":"","message":{"role":"user","content":"Hello"},"parent_tool_use_id":null}"#;
        let Some(Incoming::User(user)) = parse_line(line).unwrap() else {
            panic!("not a user line")
        };
        assert_eq!(prompt_text(&user.content).0, "Hello");

        let blocks = json!([{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]);
        assert_eq!(
            prompt_text(&blocks),
            ("a\n\nb".to_string(), vec!["image".to_string()])
        );

        let wrong = r#"{"type":"user","message":{"role":"assistant","content":"x"}}"#;
        assert_eq!(
            parse_line(wrong).unwrap_err().to_string(),
            "Error: Expected message role 'user', got 'assistant'"
        );
    }

    #[test]
    fn control_lines_need_their_ids_and_request() {
        let ok = r#"{"type":"control_response","response":{"subtype":"error","request_id":"r1","error":"nope"}}"#;
        assert_eq!(
            parse_line(ok).unwrap(),
            Some(Incoming::ControlResponse {
                request_id: "r1".into(),
                outcome: Err("nope".into())
            })
        );
        let no_request = r#"{"type":"control_request","request_id":"r2"}"#;
        assert_eq!(
            parse_line(no_request).unwrap_err(),
            LineError::NoRequest {
                request_id: "r2".into()
            }
        );
        assert!(matches!(
            parse_line(r#"{"type":"control_request","request":{}}"#),
            Err(LineError::NoRequestId { .. })
        ));
    }

    #[test]
    fn bad_lines_are_errors_blank_and_unknown_lines_are_not() {
        assert_eq!(parse_line("   ").unwrap(), None);
        let err = parse_line("{not json").unwrap_err().to_string();
        assert!(
            err.starts_with("Error parsing streaming input line: {not json: "),
            "{err}"
        );
        assert!(matches!(
            parse_line("[1,2]"),
            Err(LineError::NotAMessage { .. })
        ));
        assert_eq!(
            parse_line(r#"{"type":"telepathy"}"#).unwrap(),
            Some(Incoming::Unknown("telepathy".into()))
        );
    }
}
