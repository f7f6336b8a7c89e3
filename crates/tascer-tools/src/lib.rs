//! Built-in tools for Tascer, with Claude Code's tool names, input schemas
//! and output shapes.
//!
//! Every tool implements [`tascer_core::Tool`]. Tools of one session share a
//! [`ToolState`] (which files were read, and when; background shells), so
//! build them together with [`builtin_tools`]:
//!
//! ```
//! use tascer_tools::{ToolState, builtin_tools};
//!
//! let tools = builtin_tools(ToolState::new());
//! assert_eq!(tools[0].name(), "Read");
//! ```

use std::sync::Arc;

use tascer_core::Tool;

mod bash;
mod edit;
mod error;
mod glob;
mod grep;
mod read;
mod state;
mod util;
mod write;

pub use bash::BashTool;
pub use edit::EditTool;
pub use error::ToolError;
pub use glob::GlobTool;
pub use grep::GrepTool;
pub use read::ReadTool;
pub use state::{BackgroundShell, BackgroundShells, ToolState};
pub use write::WriteTool;

/// Names of the built-in tools, in the order [`builtin_tools`] returns them.
pub fn tool_names() -> &'static [&'static str] {
    &["Read", "Write", "Edit", "Bash", "Glob", "Grep"]
}

/// All built-in tools, sharing one session state.
pub fn builtin_tools(state: ToolState) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadTool::new(state.clone())),
        Arc::new(WriteTool::new(state.clone())),
        Arc::new(EditTool::new(state.clone())),
        Arc::new(BashTool::new(state)),
        Arc::new(GlobTool::new()),
        Arc::new(GrepTool::new()),
    ]
}
