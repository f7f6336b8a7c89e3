//! The tool-call pairing invariant of a request history.

use std::collections::BTreeSet;

use serde_json::Value;

/// Checks that every tool call in a request body (either wire format) has
/// exactly one matching result, and that no result lacks its call.
///
/// - Anthropic: each `tool_use` block of an assistant message needs exactly
///   one `tool_result` block with that `tool_use_id` in the *next* user
///   message; a `tool_result` whose id is not a `tool_use` of the previous
///   assistant message is an orphan.
/// - OpenAI: each entry of an assistant message's `tool_calls` needs exactly
///   one `role: "tool"` message with that `tool_call_id` among the tool
///   messages directly following it; a tool message not answering a call of
///   that assistant message is an orphan.
///
/// Tool call ids must also be unique across the history. Returns a
/// description of the first violation.
pub fn check_tool_pairing(body: &Value) -> Result<(), String> {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Err("request body has no `messages` array".into());
    };
    check_anthropic(messages)?;
    check_openai(messages)
}

fn role(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or_default()
}

/// The `field` values of the content blocks of `m` with type `kind`.
fn block_ids<'a>(m: &'a Value, kind: &str, field: &str) -> Vec<&'a str> {
    m.get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some(kind))
                .map(|b| b.get(field).and_then(Value::as_str).unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

fn check_anthropic(messages: &[Value]) -> Result<(), String> {
    let mut all_uses = BTreeSet::new();
    for (i, m) in messages.iter().enumerate() {
        let uses = block_ids(m, "tool_use", "id");
        let results = block_ids(m, "tool_result", "tool_use_id");
        if role(m) != "user" {
            if let Some(id) = results.first() {
                return Err(format!(
                    "message {i} ({}): tool_result `{id}` outside a user message",
                    role(m)
                ));
            }
        } else {
            let previous: Vec<&str> = match i.checked_sub(1).map(|p| &messages[p]) {
                Some(p) if role(p) == "assistant" => block_ids(p, "tool_use", "id"),
                _ => Vec::new(),
            };
            if let Some(id) = results.iter().find(|id| !previous.contains(id)) {
                return Err(format!(
                    "message {i}: orphan tool_result `{id}`: no matching tool_use in the previous assistant message"
                ));
            }
        }
        if uses.is_empty() {
            continue;
        }
        if role(m) != "assistant" {
            return Err(format!(
                "message {i} ({}): tool_use `{}` outside an assistant message",
                role(m),
                uses[0]
            ));
        }
        for id in &uses {
            if !all_uses.insert(*id) {
                return Err(format!("message {i}: duplicate tool_use id `{id}`"));
            }
        }
        let next_results = match messages.get(i + 1) {
            Some(n) if role(n) == "user" => block_ids(n, "tool_result", "tool_use_id"),
            _ => Vec::new(),
        };
        for id in &uses {
            match next_results.iter().filter(|r| *r == id).count() {
                0 => {
                    return Err(format!(
                        "message {i}: tool_use `{id}` has no tool_result in the next user message"
                    ));
                }
                1 => {}
                n => {
                    return Err(format!(
                        "message {}: {n} tool_results for tool_use `{id}` (expected exactly one)",
                        i + 1
                    ));
                }
            }
        }
    }
    Ok(())
}

fn call_ids(m: &Value) -> Vec<&str> {
    m.get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| c.get("id").and_then(Value::as_str).unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

fn tool_call_id(m: &Value) -> &str {
    m.get("tool_call_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn check_openai(messages: &[Value]) -> Result<(), String> {
    let mut all_calls = BTreeSet::new();
    // Ids of the assistant message the current run of tool messages answers.
    let mut open: Vec<&str> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if role(m) == "tool" {
            let id = tool_call_id(m);
            if !open.contains(&id) {
                return Err(format!(
                    "message {i}: orphan tool message for `{id}`: no matching tool call in the preceding assistant message"
                ));
            }
            continue;
        }
        open.clear();
        let calls = call_ids(m);
        if calls.is_empty() {
            continue;
        }
        if role(m) != "assistant" {
            return Err(format!(
                "message {i} ({}): tool_calls outside an assistant message",
                role(m)
            ));
        }
        for id in &calls {
            if !all_calls.insert(*id) {
                return Err(format!("message {i}: duplicate tool call id `{id}`"));
            }
        }
        let answers: Vec<&str> = messages[i + 1..]
            .iter()
            .take_while(|n| role(n) == "tool")
            .map(tool_call_id)
            .collect();
        for id in &calls {
            match answers.iter().filter(|a| *a == id).count() {
                0 => {
                    return Err(format!(
                        "message {i}: tool call `{id}` has no following tool message"
                    ));
                }
                1 => {}
                n => {
                    return Err(format!(
                        "message {i}: {n} tool messages for tool call `{id}` (expected exactly one)"
                    ));
                }
            }
        }
        open = calls;
    }
    Ok(())
}
