//! The tool call being decided: [`tascer_core::ToolCall`], the one type the
//! loop, the tools and governance share.

pub use tascer_core::ToolCall;
