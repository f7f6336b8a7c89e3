//! Content blocks: the pieces of a message, as in the Anthropic Messages API.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of message content. Serialized with a `type` tag exactly as the
/// Anthropic Messages API and Claude Code's stream-json frames spell it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// Extended thinking emitted by the model.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The provider's signature over the thinking (may be empty).
        #[serde(default)]
        signature: String,
    },
    /// A request by the model to call a tool.
    ToolUse {
        /// Provider-assigned id, echoed by the matching [`ContentBlock::ToolResult`].
        id: String,
        /// Tool name.
        name: String,
        /// Tool input (a JSON object).
        input: Value,
    },
    /// The result of a tool call, sent back in a user message.
    ToolResult {
        /// The id of the `tool_use` block this answers.
        tool_use_id: String,
        /// Result content: text or a list of blocks.
        #[serde(default, skip_serializing_if = "ToolResultContent::is_empty")]
        content: ToolResultContent,
        /// Whether the tool failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
    /// An image (e.g. a screenshot read by the Read tool).
    Image {
        /// Where the image bytes are.
        source: ImageSource,
    },
    /// A tool the provider ran on its side (Anthropic's `web_search`): the
    /// call, answered by a result block in the same message, never by a
    /// [`ContentBlock::ToolResult`].
    ServerToolUse {
        /// Provider-assigned id (`srvtoolu_…`).
        id: String,
        /// The server tool's name (`web_search`).
        name: String,
        /// Its input (for `web_search`, `{"query": …}`).
        input: Value,
    },
    /// The results of a provider-side web search: `content` is a list of
    /// `web_search_result` objects (`title`, `url`, `encrypted_content`,
    /// `page_age`) or a `web_search_tool_result_error`, kept as sent.
    WebSearchToolResult {
        /// The id of the [`ContentBlock::ServerToolUse`] it answers.
        tool_use_id: String,
        /// The results, as the provider sent them.
        content: Value,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// The text of a text block, if it is one.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// Image data for an [`ContentBlock::Image`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    /// Inline base64 data.
    Base64 {
        /// MIME type, e.g. `image/png`.
        media_type: String,
        /// Base64 data.
        data: String,
    },
    /// An image at a URL.
    Url {
        /// The URL.
        url: String,
    },
}

/// The content of a tool result: a string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// Plain text.
    Text(String),
    /// Structured blocks (text and images).
    Blocks(Vec<ContentBlock>),
}

impl Default for ToolResultContent {
    fn default() -> Self {
        ToolResultContent::Text(String::new())
    }
}

impl ToolResultContent {
    /// True when there is nothing in it.
    pub fn is_empty(&self) -> bool {
        match self {
            ToolResultContent::Text(t) => t.is_empty(),
            ToolResultContent::Blocks(b) => b.is_empty(),
        }
    }

    /// All text in the content, concatenated with newlines.
    pub fn to_text(&self) -> String {
        match self {
            ToolResultContent::Text(t) => t.clone(),
            ToolResultContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(ContentBlock::as_text)
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

impl From<String> for ToolResultContent {
    fn from(s: String) -> Self {
        ToolResultContent::Text(s)
    }
}

impl From<&str> for ToolResultContent {
    fn from(s: &str) -> Self {
        ToolResultContent::Text(s.to_string())
    }
}
