//! Assembling an OpenAI Chat Completions stream, re-emitted as
//! Anthropic-shaped events.

use std::collections::HashMap;

use serde_json::{Value, json};
use tascer_core::ContentBlock;

use crate::error::{ModelError, api_error_from_body, embedded_error_status};
use crate::openai::{
    NAME, parse_arguments, reasoning_text, reported_cost, stop_reason, usage_from,
};
use crate::sse::StreamAssembler;
use crate::types::Parsed;

/// A content block being assembled.
#[derive(Debug)]
enum Block {
    Text(String),
    Thinking(String),
    Tool {
        id: String,
        name: String,
        args: String,
    },
}

/// Builds a message from Chat Completions chunks and synthesizes the
/// equivalent Anthropic stream events.
#[derive(Debug)]
pub(crate) struct OpenAiAssembler {
    status: u16,
    requested_model: String,
    chunks: usize,
    started: bool,
    parsed: Parsed,
    blocks: Vec<Block>,
    open: Option<usize>,
    tool_blocks: HashMap<u64, usize>,
    done: bool,
}

impl OpenAiAssembler {
    /// An assembler for a stream answered with HTTP `status` to a request
    /// for `requested_model`.
    pub(crate) fn new(status: u16, requested_model: &str) -> Self {
        OpenAiAssembler {
            status,
            requested_model: requested_model.to_string(),
            chunks: 0,
            started: false,
            parsed: Parsed::default(),
            blocks: Vec::new(),
            open: None,
            tool_blocks: HashMap::new(),
            done: false,
        }
    }

    fn malformed(&self, detail: String) -> ModelError {
        ModelError::MalformedStream {
            provider: NAME,
            status: self.status,
            detail,
        }
    }

    /// A chunk carrying an `error` object: an API error with the status
    /// the error stands for (the stream itself said HTTP 200).
    fn error_chunk(&self, chunk: &Value, data: &str) -> ModelError {
        let mut error = api_error_from_body(NAME, self.status, data);
        if let ModelError::Api { status, kind, .. } = &mut error {
            let code = chunk.get("error").and_then(|e| e.get("code"));
            *status = embedded_error_status(kind, code);
        }
        error
    }

    /// Closes the open block (validating tool arguments).
    fn close(&mut self, out: &mut Vec<Value>) -> Result<(), ModelError> {
        let Some(index) = self.open.take() else {
            return Ok(());
        };
        if let Some(Block::Tool { name, args, .. }) = self.blocks.get(index) {
            parse_arguments(args).map_err(|e| {
                self.malformed(format!(
                    "arguments of tool call {index} ({name}) are not valid JSON: {e}"
                ))
            })?;
        }
        out.push(json!({"type": "content_block_stop", "index": index}));
        Ok(())
    }

    /// Opens a new block, closing the previous one; returns its index.
    fn open_block(&mut self, block: Block, out: &mut Vec<Value>) -> Result<usize, ModelError> {
        self.close(out)?;
        let index = self.blocks.len();
        let content_block = match &block {
            Block::Text(_) => json!({"type": "text", "text": ""}),
            Block::Thinking(_) => json!({"type": "thinking", "thinking": "", "signature": ""}),
            Block::Tool { id, name, .. } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": {}})
            }
        };
        out.push(
            json!({"type": "content_block_start", "index": index, "content_block": content_block}),
        );
        self.blocks.push(block);
        self.open = Some(index);
        Ok(index)
    }

    fn push_text(
        &mut self,
        thinking: bool,
        text: &str,
        out: &mut Vec<Value>,
    ) -> Result<(), ModelError> {
        let fits = |b: &Block| {
            if thinking {
                matches!(b, Block::Thinking(_))
            } else {
                matches!(b, Block::Text(_))
            }
        };
        let index = match self.open {
            Some(i) if self.blocks.get(i).is_some_and(fits) => i,
            _ => {
                let block = if thinking {
                    Block::Thinking(String::new())
                } else {
                    Block::Text(String::new())
                };
                self.open_block(block, out)?
            }
        };
        if let Some(Block::Text(buf) | Block::Thinking(buf)) = self.blocks.get_mut(index) {
            buf.push_str(text);
        }
        let delta = if thinking {
            json!({"type": "thinking_delta", "thinking": text})
        } else {
            json!({"type": "text_delta", "text": text})
        };
        out.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        Ok(())
    }

    fn push_tool_call(
        &mut self,
        position: usize,
        call: &Value,
        out: &mut Vec<Value>,
    ) -> Result<(), ModelError> {
        let key = call
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position as u64);
        let text = |ptr: &str| {
            call.pointer(ptr)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let index = match self.tool_blocks.get(&key) {
            Some(&i) => i,
            None => {
                let id = match text("/id") {
                    "" => format!("call_{key}"),
                    id => id.to_string(),
                };
                let block = Block::Tool {
                    id,
                    name: text("/function/name").to_string(),
                    args: String::new(),
                };
                let i = self.open_block(block, out)?;
                self.tool_blocks.insert(key, i);
                i
            }
        };
        let fragment = text("/function/arguments");
        if !fragment.is_empty() {
            if let Some(Block::Tool { args, .. }) = self.blocks.get_mut(index) {
                args.push_str(fragment);
            }
            out.push(json!({
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": fragment},
            }));
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<Value>) -> Result<(), ModelError> {
        self.start(&Value::Null, out);
        self.close(out)?;
        let usage = self.parsed.usage;
        out.push(json!({
            "type": "message_delta",
            "delta": {
                "stop_reason": self.parsed.stop_reason.as_ref().map(|r| r.as_str().to_string()),
                "stop_sequence": null,
            },
            "usage": usage,
        }));
        out.push(json!({"type": "message_stop"}));
        self.done = true;
        Ok(())
    }

    fn start(&mut self, chunk: &Value, out: &mut Vec<Value>) {
        if self.started {
            return;
        }
        self.started = true;
        let text = |key: &str| chunk.get(key).and_then(Value::as_str).unwrap_or_default();
        self.parsed.id = text("id").to_string();
        self.parsed.model = match text("model") {
            "" => self.requested_model.clone(),
            m => m.to_string(),
        };
        out.push(json!({
            "type": "message_start",
            "message": {
                "id": self.parsed.id,
                "type": "message",
                "role": "assistant",
                "model": self.parsed.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
        }));
    }
}

impl StreamAssembler for OpenAiAssembler {
    fn on_event(&mut self, _name: &str, data: &str) -> Result<Vec<Value>, ModelError> {
        self.chunks += 1;
        let mut out = Vec::new();
        if data.trim() == "[DONE]" {
            self.end(&mut out)?;
            return Ok(out);
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| self.malformed(format!("chunk {} is not valid JSON: {e}", self.chunks)))?;
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(self.error_chunk(&chunk, data));
        }
        self.start(&chunk, &mut out);
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.parsed.usage = usage_from(usage);
            self.parsed.cost_usd = reported_cost(usage).or(self.parsed.cost_usd);
        }
        let choices = chunk
            .get("choices")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if let Some(choice) = choices.first() {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            if let Some(thinking) = reasoning_text(delta) {
                self.push_text(true, thinking, &mut out)?;
            }
            if let Some(text) = delta
                .get("content")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                self.push_text(false, text, &mut out)?;
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (position, call) in calls.iter().enumerate() {
                    self.push_tool_call(position, call, &mut out)?;
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.parsed.stop_reason = Some(stop_reason(reason));
            }
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(mut self) -> Result<Parsed, ModelError> {
        if !self.done {
            return Err(ModelError::TruncatedStream {
                provider: NAME,
                status: self.status,
                detail: format!("no [DONE] after {} chunks", self.chunks),
            });
        }
        let mut content = Vec::with_capacity(self.blocks.len());
        for (index, block) in std::mem::take(&mut self.blocks).into_iter().enumerate() {
            match block {
                Block::Text(text) => content.push(ContentBlock::Text { text }),
                Block::Thinking(thinking) => content.push(ContentBlock::Thinking {
                    thinking,
                    signature: String::new(),
                }),
                Block::Tool { id, name, args } => {
                    let input = parse_arguments(&args).map_err(|e| {
                        self.malformed(format!(
                            "arguments of tool call {index} ({name}) are not valid JSON: {e}"
                        ))
                    })?;
                    content.push(ContentBlock::ToolUse { id, name, input });
                }
            }
        }
        self.parsed.content = content;
        Ok(self.parsed)
    }
}

#[cfg(test)]
mod tests {
    use tascer_core::StopReason;

    use super::*;

    const CHUNKS: &[&str] = &[
        r#"{"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
        r#"{"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}"#,
        r#"{"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}"#,
        r#"{"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"Read","arguments":""}}]},"finish_reason":null}]}"#,
        r#"{"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]},"finish_reason":null}]}"#,
        r#"{"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a\"}"}}]},"finish_reason":null}]}"#,
        r#"{"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"Ls","arguments":"{}"}}]},"finish_reason":null}]}"#,
        r#"{"id":"c1","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"id":"c1","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":20}}}"#,
        "[DONE]",
    ];

    #[test]
    fn assembles_and_synthesizes() {
        let mut a = OpenAiAssembler::new(200, "gpt-4o");
        let mut events = Vec::new();
        for c in CHUNKS {
            events.extend(a.on_event("", c).unwrap());
        }
        let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
        assert_eq!(
            types,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
            ]
        );
        assert_eq!(events[12]["delta"]["stop_reason"], "tool_use");
        assert_eq!(events[12]["usage"]["output_tokens"], 9);
        let p = a.finish().unwrap();
        assert_eq!(p.stop_reason, Some(StopReason::ToolUse));
        assert_eq!(p.usage.input_tokens, 30);
        assert_eq!(p.usage.cache_read_input_tokens, 20);
        assert_eq!(
            p.content,
            vec![
                ContentBlock::text("Hello"),
                ContentBlock::ToolUse {
                    id: "call_a".into(),
                    name: "Read".into(),
                    input: json!({"path":"a"})
                },
                ContentBlock::ToolUse {
                    id: "call_b".into(),
                    name: "Ls".into(),
                    input: json!({})
                },
            ]
        );
    }

    #[test]
    fn truncated_without_done() {
        let mut a = OpenAiAssembler::new(200, "m");
        for c in &CHUNKS[..8] {
            a.on_event("", c).unwrap();
        }
        let err = a.finish().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("openai stream (HTTP 200) ended early"),
            "{err}"
        );
    }

    #[test]
    fn bad_arguments_name_tool() {
        let mut a = OpenAiAssembler::new(200, "m");
        a.on_event("", CHUNKS[3]).unwrap();
        a.on_event(
            "",
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{nope"}}]}}]}"#,
        )
        .unwrap();
        let err = a.on_event("", "[DONE]").unwrap_err();
        assert!(matches!(err, ModelError::MalformedStream { .. }));
        assert!(err.to_string().contains("(Read)"), "{err}");
        let mut a = OpenAiAssembler::new(200, "m");
        assert!(a.on_event("", "{oops").is_err());
    }

    #[test]
    fn reasoning_becomes_thinking() {
        let mut a = OpenAiAssembler::new(200, "m");
        a.on_event("", r#"{"choices":[{"delta":{"reasoning_content":"hmm"}}]}"#)
            .unwrap();
        a.on_event(
            "",
            r#"{"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}"#,
        )
        .unwrap();
        a.on_event("", "[DONE]").unwrap();
        let p = a.finish().unwrap();
        assert_eq!(p.model, "m");
        assert_eq!(p.stop_reason, Some(StopReason::EndTurn));
        assert_eq!(p.content.len(), 2);
    }
}
