//! Built-in tools for Tascer, with Claude Code's tool names, input schemas
//! and output shapes.
//!
//! Every tool implements [`tascer_core::Tool`]. Tools of one session share a
//! [`ToolState`] (which files were read, and when; background shells; the
//! todo list; the plan-mode exit flag; optional services such as a
//! [`Summarizer`], a [`SearchBackend`] and a [`UserAnswerer`]), so build them
//! together with [`builtin_tools`]:
//!
//! ```
//! use tascer_tools::{ToolState, builtin_tools};
//!
//! let tools = builtin_tools(ToolState::new());
//! assert_eq!(tools[0].name(), "Read");
//! ```

use std::sync::Arc;

use tascer_core::Tool;

mod ask;
mod bash;
mod bash_output;
mod edit;
mod error;
mod fetch_cache;
mod file_edit;
mod glob;
mod grep;
mod lazy_client;
mod multi_edit;
mod notebook;
mod read;
mod services;
mod state;
mod todo;
mod todo_list;
mod util;
mod web_fetch;
mod web_search;
mod write;

pub use ask::{AskUserQuestionTool, ExitPlanModeTool};
pub use bash::BashTool;
pub use bash_output::{BashOutputTool, KillShellTool};
pub use edit::EditTool;
pub use error::ToolError;
pub use glob::GlobTool;
pub use grep::GrepTool;
pub use multi_edit::MultiEditTool;
pub use notebook::NotebookEditTool;
pub use read::ReadTool;
pub use services::{
    Question, QuestionOption, SUMMARY_SYSTEM, SearchBackend, SearchHit, SearchRequest, Summarizer,
    UserAnswerer, summary_request,
};
pub use state::{BackgroundShell, BackgroundShells, ShellStatus, TaskListener, ToolState};
pub use tascer_sandbox::CommandSandbox;
pub use todo::TodoWriteTool;
pub use todo_list::{TodoItem, TodoStatus};
pub use web_fetch::{WebFetchConfig, WebFetchTool};
pub use web_search::{BraveSearch, WebSearchTool};
pub use write::WriteTool;

/// Names of the built-in tools, in the order [`builtin_tools`] returns them.
pub fn tool_names() -> &'static [&'static str] {
    &[
        "Read",
        "Write",
        "Edit",
        "MultiEdit",
        "Bash",
        "BashOutput",
        "KillShell",
        "Glob",
        "Grep",
        "NotebookEdit",
        "TodoWrite",
        "WebFetch",
        "WebSearch",
        "AskUserQuestion",
        "ExitPlanMode",
    ]
}

/// All built-in tools, sharing one session state.
pub fn builtin_tools(state: ToolState) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadTool::new(state.clone())),
        Arc::new(WriteTool::new(state.clone())),
        Arc::new(EditTool::new(state.clone())),
        Arc::new(MultiEditTool::new(state.clone())),
        Arc::new(BashTool::new(state.clone())),
        Arc::new(BashOutputTool::new(state.clone())),
        Arc::new(KillShellTool::new(state.clone())),
        Arc::new(GlobTool::new()),
        Arc::new(GrepTool::new()),
        Arc::new(NotebookEditTool::new(state.clone())),
        Arc::new(TodoWriteTool::new(state.clone())),
        Arc::new(WebFetchTool::new(state.clone())),
        Arc::new(WebSearchTool::new(state.clone())),
        Arc::new(AskUserQuestionTool::new(state.clone())),
        Arc::new(ExitPlanModeTool::new(state)),
    ]
}
