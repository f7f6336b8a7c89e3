//! The provider-neutral conversation: what the loop sends to a model.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::ContentBlock;

/// Who wrote a [`ChatMessage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (prompts and tool results).
    User,
    /// The model.
    Assistant,
}

/// One message of the conversation history, in Anthropic's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Author.
    pub role: Role,
    /// Content blocks.
    pub content: Vec<ContentBlock>,
}

impl ChatMessage {
    /// A user message holding one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::User,
            content: vec![ContentBlock::text(text)],
        }
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the tool's input.
    pub input_schema: Value,
}

/// Why the model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Natural end of the turn.
    EndTurn,
    /// The model wants tool results.
    ToolUse,
    /// The output token limit was reached.
    MaxTokens,
    /// A stop sequence matched.
    StopSequence,
    /// The model paused a long turn.
    PauseTurn,
    /// The model refused.
    Refusal,
    /// Anything else a provider reports.
    #[serde(untagged)]
    Other(String),
}

impl StopReason {
    /// The wire spelling.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Refusal => "refusal",
            StopReason::Other(s) => s,
        }
    }
}
