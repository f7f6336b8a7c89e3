//! Rebuilding the model conversation from stored frames.

use std::collections::HashSet;

use tascer_core::{ChatMessage, ContentBlock, Message, Role, ToolResultContent};

/// Text given to the model for a tool call whose result was never recorded
/// (the process died while it ran).
pub const INTERRUPTED_TOOL_RESULT: &str = "The session was interrupted while this tool call ran; \
     its effect is unknown. Check the state before retrying it.";

/// How the history of a compacted session starts, before the summary.
pub const COMPACTED_HISTORY_PREFIX: &str = "This session continues an earlier conversation \
     that was compacted to save context. Its summary:";

/// The first message of a compacted history: the prefix and the summary.
pub fn compacted_history_start(summary: &str) -> ChatMessage {
    ChatMessage::user_text(format!("{COMPACTED_HISTORY_PREFIX}\n\n{summary}"))
}

/// Rebuilds the conversation the model saw from a session's frames.
///
/// Only main-loop user and assistant frames count (subagent frames carry a
/// `parent_tool_use_id` and are skipped). A `compact_boundary` system frame
/// with a `summary` restarts the conversation from that summary. Consecutive
/// frames of the same role are merged. A `tool_use` left without a result (a crash mid-call) gets a
/// result saying the call was interrupted, so every `tool_use` has exactly
/// one `tool_result` and the call is never re-run blindly.
pub fn history_from_messages(messages: &[Message]) -> Vec<ChatMessage> {
    let mut history: Vec<ChatMessage> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            Message::User(u) if u.parent_tool_use_id.is_none() => {
                (Role::User, u.message.content.clone().into_blocks())
            }
            Message::Assistant(a) if a.parent_tool_use_id.is_none() => {
                (Role::Assistant, a.message.content.clone())
            }
            Message::System(s) if s.subtype == "compact_boundary" => {
                if let Some(summary) = s.data.get("summary").and_then(|v| v.as_str()) {
                    history = vec![compacted_history_start(summary)];
                }
                continue;
            }
            _ => continue,
        };
        match history.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => history.push(ChatMessage {
                role,
                content: blocks,
            }),
        }
    }
    close_dangling_tool_uses(&mut history);
    history
}

/// Adds "interrupted" results for tool uses that have none.
fn close_dangling_tool_uses(history: &mut Vec<ChatMessage>) {
    let mut index = 0;
    while index < history.len() {
        if history[index].role != Role::Assistant {
            index += 1;
            continue;
        }
        let answered: HashSet<String> = history
            .get(index + 1)
            .filter(|m| m.role == Role::User)
            .map(|m| {
                m.content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let missing: Vec<ContentBlock> = history[index]
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } if !answered.contains(id) => {
                    Some(ContentBlock::ToolResult {
                        tool_use_id: id.clone(),
                        content: ToolResultContent::Text(INTERRUPTED_TOOL_RESULT.to_string()),
                        is_error: Some(true),
                    })
                }
                _ => None,
            })
            .collect();
        if !missing.is_empty() {
            match history.get_mut(index + 1) {
                Some(next) if next.role == Role::User => {
                    let mut content = missing;
                    content.append(&mut next.content);
                    next.content = content;
                }
                _ => history.insert(
                    index + 1,
                    ChatMessage {
                        role: Role::User,
                        content: missing,
                    },
                ),
            }
        }
        index += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tascer_core::{ApiAssistantMessage, AssistantMessage, Usage, UserContent, UserMessage};

    fn assistant(content: Vec<ContentBlock>) -> Message {
        Message::Assistant(AssistantMessage {
            message: ApiAssistantMessage {
                id: "m".into(),
                kind: "message".into(),
                role: "assistant".into(),
                model: "x".into(),
                content,
                stop_reason: None,
                stop_sequence: None,
                usage: Usage::default(),
            },
            parent_tool_use_id: None,
            session_id: "s".into(),
            uuid: "u".into(),
        })
    }

    #[test]
    fn dangling_tool_use_gets_an_interrupted_result() {
        let messages = vec![
            Message::User(UserMessage::new(UserContent::Text("hi".into()), "s")),
            assistant(vec![ContentBlock::ToolUse {
                id: "t1".into(),
                name: "Bash".into(),
                input: json!({"command": "ls"}),
            }]),
        ];
        let history = history_from_messages(&messages);
        assert_eq!(history.len(), 3);
        match &history[2].content[0] {
            ContentBlock::ToolResult {
                tool_use_id,
                is_error,
                ..
            } => {
                assert_eq!(tool_use_id, "t1");
                assert_eq!(*is_error, Some(true));
            }
            other => panic!("unexpected block {other:?}"),
        }
    }

    #[test]
    fn consecutive_user_frames_merge() {
        let messages = vec![
            Message::User(UserMessage::new(UserContent::Text("a".into()), "s")),
            Message::User(UserMessage::new(UserContent::Text("b".into()), "s")),
        ];
        let history = history_from_messages(&messages);
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].content.len(), 2);
    }
}
