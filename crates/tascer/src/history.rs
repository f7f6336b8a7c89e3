//! The conversation sent to the model: how a user message joins it.

use tascer_core::{ChatMessage, Message, Role, UserContent};

/// True for a prompt of the main thread: a user message with text (tool
/// results are blocks; subagents' messages have a parent tool use).
pub(crate) fn is_prompt(message: &Message) -> bool {
    matches!(message, Message::User(u)
        if u.parent_tool_use_id.is_none() && matches!(u.message.content, UserContent::Text(_)))
}

/// Adds a user message to the history, merged into the last message when
/// that is a user message too (a resumed session can end with the results
/// of interrupted calls, an interrupted turn with tool results): strict
/// chat templates of some OpenAI-compatible servers refuse two user
/// messages in a row.
pub(crate) fn push_user(history: &mut Vec<ChatMessage>, message: ChatMessage) {
    match history.last_mut() {
        Some(last) if last.role == Role::User => last.content.extend(message.content),
        _ => history.push(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tascer_core::ContentBlock;

    #[test]
    fn a_user_message_after_a_user_message_is_merged_into_it() {
        let mut history = vec![ChatMessage::user_text("first")];
        push_user(&mut history, ChatMessage::user_text("second"));
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].content.len(), 2);
        history.push(ChatMessage {
            role: Role::Assistant,
            content: vec![ContentBlock::text("ok")],
        });
        push_user(&mut history, ChatMessage::user_text("third"));
        assert_eq!(history.len(), 3);
    }
}
