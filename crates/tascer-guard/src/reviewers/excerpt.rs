//! A conversation as the reviewers read it: (role, content) messages in
//! Anthropic's content shape, written out as text with tool calls and
//! results in brackets. The loop's stored history and Claude Code's
//! transcript file both come down to this.

use serde_json::Value;

use super::{TranscriptExcerpt, TranscriptMessage};

/// Prefix of the course corrections `intent-validate` sends back as user
/// messages: they are not the user's request.
pub const CORRECTION_PREFIX: &str = "Tascer intent-validate:";

/// Longest tool input or result written out, in characters.
const PART_CHARS: usize = 600;

impl TranscriptExcerpt {
    /// The latest request and the last `max` of `messages`, (role,
    /// content) pairs in Anthropic's content shape (a string or an array
    /// of content blocks).
    pub fn from_messages(messages: &[(String, Value)], max: usize) -> Self {
        let request = messages
            .iter()
            .rev()
            .filter(|(role, _)| role == "user")
            .find_map(|(_, content)| prompt_text(content));
        let start = messages.len().saturating_sub(max);
        TranscriptExcerpt {
            request,
            messages: messages[start..]
                .iter()
                .map(|(role, content)| TranscriptMessage {
                    role: role.clone(),
                    text: written_out(content),
                })
                .collect(),
        }
    }
}

/// The text of a user message that is a prompt (text, no tool results),
/// unless it is one of Tascer's own corrections.
fn prompt_text(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            if blocks.iter().any(|b| b["type"] == "tool_result") {
                return None;
            }
            blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        }
        _ => return None,
    };
    let trimmed = text.trim();
    (!trimmed.is_empty() && !trimmed.starts_with(CORRECTION_PREFIX)).then(|| trimmed.to_string())
}

/// A message's content as text: text blocks as they are, tool calls and
/// results in brackets (cut short), thinking and images left out.
fn written_out(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().map(str::to_string),
                Some("tool_use") => Some(format!(
                    "[tool_use {} {}]",
                    b["name"].as_str().unwrap_or("?"),
                    cut(&b["input"].to_string())
                )),
                Some("tool_result") => {
                    let error = if b["is_error"].as_bool().unwrap_or(false) {
                        " (error)"
                    } else {
                        ""
                    };
                    Some(format!(
                        "[tool_result{error} {}]",
                        cut(&result_text(&b["content"]))
                    ))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(PART_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
