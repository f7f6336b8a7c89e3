//! Plain types shared by every Tascer crate.
//!
//! This crate does no I/O. It holds the message and content-block types whose
//! JSON form is exactly Claude Code's `stream-json` frames, the neutral
//! conversation types the model providers speak, usage and cost figures, and
//! the [`Tool`] trait that built-in, custom and MCP tools implement.

pub mod call;
pub mod content;
pub mod conversation;
pub mod message;
pub mod tool;
pub mod usage;

pub use call::ToolCall;
pub use content::{ContentBlock, ImageSource, ToolResultContent};
pub use conversation::{ChatMessage, Role, StopReason, ToolSpec};
pub use message::{
    ApiAssistantMessage, AssistantMessage, Message, PermissionDenial, ResultMessage, ResultSubtype,
    StreamEvent, SystemMessage, UserContent, UserMessage, UserPayload,
};
pub use tool::{ChildSession, FileAccess, Tool, ToolContext, ToolOutput};
pub use usage::{ModelUsage, Usage};

/// A fresh random session or message id (UUID v4, hyphenated).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
