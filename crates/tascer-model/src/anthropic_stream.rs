//! Assembling an Anthropic SSE stream into a message.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use tascer_core::ContentBlock;

use crate::anthropic::{NAME, content_block, error_event, update_usage, usage_from};
use crate::error::ModelError;
use crate::sse::StreamAssembler;
use crate::types::{Parsed, parse_stop_reason};

/// A content block while it streams.
#[derive(Debug)]
enum Partial {
    Text(String),
    Thinking {
        thinking: String,
        signature: String,
    },
    /// A `tool_use`, or a `server_tool_use` when `server`.
    ToolUse {
        id: String,
        name: String,
        json: String,
        start_input: Value,
        server: bool,
    },
    Finished(ContentBlock),
    /// A block type we do not represent (e.g. `redacted_thinking`).
    Unsupported,
}

/// Builds a message from Anthropic SSE events.
#[derive(Debug)]
pub(crate) struct AnthropicAssembler {
    status: u16,
    events: usize,
    parsed: Parsed,
    blocks: BTreeMap<u64, Partial>,
    done: bool,
}

impl AnthropicAssembler {
    /// An assembler for a stream answered with HTTP `status`.
    pub(crate) fn new(status: u16) -> Self {
        AnthropicAssembler {
            status,
            events: 0,
            parsed: Parsed::default(),
            blocks: BTreeMap::new(),
            done: false,
        }
    }

    fn malformed(&self, name: &str, what: impl std::fmt::Display) -> ModelError {
        ModelError::MalformedStream {
            provider: NAME,
            status: self.status,
            detail: format!("event {} ({name}) {what}", self.events),
        }
    }

    fn index(&self, name: &str, value: &Value) -> Result<u64, ModelError> {
        value
            .get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| self.malformed(name, "has no \"index\""))
    }

    fn block_start(&mut self, name: &str, value: &Value) -> Result<(), ModelError> {
        let index = self.index(name, value)?;
        let block = value.get("content_block").unwrap_or(&Value::Null);
        let text = |key: &str| {
            block
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let partial = match block.get("type").and_then(Value::as_str) {
            Some("text") => Partial::Text(text("text")),
            Some("thinking") => Partial::Thinking {
                thinking: text("thinking"),
                signature: text("signature"),
            },
            Some(kind @ ("tool_use" | "server_tool_use")) => Partial::ToolUse {
                id: text("id"),
                name: text("name"),
                json: String::new(),
                start_input: block.get("input").cloned().unwrap_or(Value::Null),
                server: kind == "server_tool_use",
            },
            Some(_) => match content_block(block) {
                Some(b) => Partial::Finished(b),
                None => Partial::Unsupported,
            },
            None => return Err(self.malformed(name, "has no content_block.type")),
        };
        self.blocks.insert(index, partial);
        Ok(())
    }

    fn block_delta(&mut self, name: &str, value: &Value) -> Result<(), ModelError> {
        let index = self.index(name, value)?;
        let delta = value.get("delta").unwrap_or(&Value::Null);
        let kind = delta
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let field = |key: &str| delta.get(key).and_then(Value::as_str);
        let mismatch = format!("has a {kind:?} delta that does not fit block {index}");
        let Some(block) = self.blocks.get_mut(&index) else {
            return Err(self.malformed(name, format!("refers to block {index}, never started")));
        };
        match (block, kind) {
            (Partial::Text(text), "text_delta") => match field("text") {
                Some(t) => text.push_str(t),
                None => return Err(self.malformed(name, "has a text_delta without text")),
            },
            (Partial::Thinking { thinking, .. }, "thinking_delta") => {
                thinking.push_str(field("thinking").unwrap_or_default());
            }
            (Partial::Thinking { signature, .. }, "signature_delta") => {
                signature.push_str(field("signature").unwrap_or_default());
            }
            (Partial::ToolUse { json, .. }, "input_json_delta") => {
                json.push_str(field("partial_json").unwrap_or_default());
            }
            (Partial::Unsupported | Partial::Finished(_), _) | (_, "citations_delta") => {}
            _ => return Err(self.malformed(name, mismatch)),
        }
        Ok(())
    }

    fn finish_block(
        &self,
        partial: Partial,
        index: u64,
    ) -> Result<Option<ContentBlock>, ModelError> {
        Ok(match partial {
            Partial::Text(text) => Some(ContentBlock::Text { text }),
            Partial::Thinking {
                thinking,
                signature,
            } => Some(ContentBlock::Thinking {
                thinking,
                signature,
            }),
            Partial::ToolUse {
                id,
                name,
                json,
                start_input,
                server,
            } => {
                let input = if json.trim().is_empty() {
                    match start_input {
                        Value::Object(map) => Value::Object(map),
                        _ => Value::Object(Map::new()),
                    }
                } else {
                    serde_json::from_str(&json).map_err(|e| ModelError::MalformedStream {
                        provider: NAME,
                        status: self.status,
                        detail: format!(
                            "input of tool_use block {index} ({name}) is not valid JSON: {e}"
                        ),
                    })?
                };
                Some(if server {
                    ContentBlock::ServerToolUse { id, name, input }
                } else {
                    ContentBlock::ToolUse { id, name, input }
                })
            }
            Partial::Finished(block) => Some(block),
            Partial::Unsupported => None,
        })
    }

    fn block_stop(&mut self, name: &str, value: &Value) -> Result<(), ModelError> {
        let index = self.index(name, value)?;
        let Some(partial) = self.blocks.remove(&index) else {
            return Err(self.malformed(name, format!("refers to block {index}, never started")));
        };
        let finished = match self.finish_block(partial, index)? {
            Some(block) => Partial::Finished(block),
            None => Partial::Unsupported,
        };
        self.blocks.insert(index, finished);
        Ok(())
    }
}

impl StreamAssembler for AnthropicAssembler {
    fn on_event(&mut self, name: &str, data: &str) -> Result<Vec<Value>, ModelError> {
        self.events += 1;
        let label = if name.is_empty() { "unnamed" } else { name };
        let value: Value = serde_json::from_str(data)
            .map_err(|e| self.malformed(label, format!("is not valid JSON: {e}")))?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(label)
            .to_string();
        let name = kind.as_str();
        match name {
            "message_start" => {
                let message = value.get("message").unwrap_or(&Value::Null);
                let text = |key: &str| message.get(key).and_then(Value::as_str).unwrap_or_default();
                self.parsed.id = text("id").to_string();
                self.parsed.model = text("model").to_string();
                if let Some(usage) = message.get("usage") {
                    self.parsed.usage = usage_from(usage);
                }
            }
            "content_block_start" => self.block_start(name, &value)?,
            "content_block_delta" => self.block_delta(name, &value)?,
            "content_block_stop" => self.block_stop(name, &value)?,
            "message_delta" => {
                if let Some(reason) = value
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.parsed.stop_reason = Some(parse_stop_reason(reason));
                }
                if let Some(usage) = value.get("usage") {
                    update_usage(&mut self.parsed.usage, usage);
                }
            }
            "message_stop" => self.done = true,
            "ping" => return Ok(Vec::new()),
            "error" => return Err(error_event(&value, self.status)),
            other => tracing::debug!(event = other, "ignoring unknown stream event"),
        }
        Ok(vec![value])
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(mut self) -> Result<Parsed, ModelError> {
        if !self.done {
            return Err(ModelError::TruncatedStream {
                provider: NAME,
                status: self.status,
                detail: format!("no message_stop after {} events", self.events),
            });
        }
        let blocks = std::mem::take(&mut self.blocks);
        let mut content = Vec::with_capacity(blocks.len());
        for (index, partial) in blocks {
            content.extend(self.finish_block(partial, index)?);
        }
        self.parsed.content = content;
        Ok(self.parsed)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tascer_core::StopReason;

    use super::*;

    fn feed(events: &[(&str, &str)]) -> (AnthropicAssembler, Vec<Value>) {
        let mut a = AnthropicAssembler::new(200);
        let mut out = Vec::new();
        for (name, data) in events {
            out.extend(a.on_event(name, data).unwrap());
        }
        (a, out)
    }

    const FULL: &[(&str, &str)] = &[
        (
            "message_start",
            r#"{"type":"message_start","message":{"id":"msg_1","model":"claude-x","usage":{"input_tokens":12,"output_tokens":1,"cache_creation_input_tokens":3,"cache_read_input_tokens":4}}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"let me"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        ("ping", r#"{"type":"ping"}"#),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hel"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"lo"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"tu_1","name":"Read","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":2}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"tu_2","name":"Ls","input":{}}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":3}"#,
        ),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ];

    #[test]
    fn assembles_full_stream() {
        let (a, out) = feed(FULL);
        assert_eq!(out.len(), FULL.len() - 1, "ping is not forwarded");
        assert!(a.is_done());
        let p = a.finish().unwrap();
        assert_eq!(p.id, "msg_1");
        assert_eq!(p.model, "claude-x");
        assert_eq!(p.stop_reason, Some(StopReason::ToolUse));
        assert_eq!(p.usage.input_tokens, 12);
        assert_eq!(p.usage.output_tokens, 42);
        assert_eq!(p.usage.cache_creation_input_tokens, 3);
        assert_eq!(p.usage.cache_read_input_tokens, 4);
        assert_eq!(
            p.content,
            vec![
                ContentBlock::Thinking {
                    thinking: "let me".into(),
                    signature: "SIG".into()
                },
                ContentBlock::text("Hello"),
                ContentBlock::ToolUse {
                    id: "tu_1".into(),
                    name: "Read".into(),
                    input: json!({"path":"a.txt"})
                },
                ContentBlock::ToolUse {
                    id: "tu_2".into(),
                    name: "Ls".into(),
                    input: json!({})
                },
            ]
        );
    }

    #[test]
    fn truncated_without_message_stop() {
        let (a, _) = feed(&FULL[..FULL.len() - 1]);
        let err = a.finish().unwrap_err();
        assert!(matches!(
            err,
            ModelError::TruncatedStream { status: 200, .. }
        ));
        assert!(
            err.to_string().contains("anthropic stream (HTTP 200)"),
            "{err}"
        );
    }

    #[test]
    fn malformed_delta_names_event() {
        let mut a = AnthropicAssembler::new(200);
        for (name, data) in &FULL[..2] {
            a.on_event(name, data).unwrap();
        }
        let err = a
            .on_event(
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"#,
            )
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(
                "anthropic stream (HTTP 200): event 3 (content_block_delta) is not valid JSON"
            ),
            "{text}"
        );
    }

    #[test]
    fn bad_tool_json_names_tool() {
        let mut a = AnthropicAssembler::new(200);
        a.on_event("", FULL[10].1).unwrap();
        a.on_event(
            "",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{oops"}}"#,
        )
        .unwrap();
        let err = a.on_event("", FULL[13].1).unwrap_err();
        assert!(err.to_string().contains("(Read)"), "{err}");
    }

    #[test]
    fn error_event_is_api_error() {
        let mut a = AnthropicAssembler::new(200);
        let err = a
            .on_event(
                "error",
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            )
            .unwrap_err();
        assert_eq!(err.status(), Some(529));
        assert!(err.is_retryable());
    }
}
