//! Plain types shared by every Tascer crate.
//!
//! This crate does no I/O. It holds the message and content-block types whose
//! JSON form is exactly Claude Code's `stream-json` frames, the neutral
//! conversation types the model providers speak, usage and cost figures,
//! the [`Tool`] trait that built-in, custom and MCP tools implement, the
//! one allow/ask/deny type, [`Behavior`], and the one hook-event enum,
//! [`HookEvent`].

pub mod behavior;
pub mod call;
pub mod content;
pub mod conversation;
pub mod error_text;
pub mod hook_event;
pub mod message;
pub mod observe;
pub mod permission_mode;
pub mod shell;
pub mod tool;
pub mod usage;

pub use behavior::Behavior;
pub use call::ToolCall;
pub use content::{ContentBlock, ImageSource, ToolResultContent};
pub use conversation::{ChatMessage, Role, StopReason, ToolSpec};
pub use error_text::error_chain;
pub use hook_event::{HookEvent, UnknownHookEvent};
pub use message::{
    ApiAssistantMessage, AssistantMessage, Message, PermissionDenial, ResultMessage, ResultSubtype,
    StreamEvent, SystemMessage, UserContent, UserMessage, UserPayload,
};
pub use permission_mode::{PermissionMode, ToolClass, UnknownPermissionMode};
pub use shell::shell_quote;
pub use tool::{ChildSession, FileAccess, SharedCwd, Tool, ToolContext, ToolOutput};
pub use usage::{ModelUsage, Usage, format_cost};

/// A fresh random session or message id (UUID v4, hyphenated).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
