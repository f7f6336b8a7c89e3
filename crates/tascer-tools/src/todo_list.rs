//! The session's todo list: the items TodoWrite writes and [`ToolState`]
//! keeps.
//!
//! [`ToolState`]: crate::ToolState

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a todo item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One item of the todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoItem {
    /// What to do, imperative ("Run tests").
    pub content: String,
    /// pending, in_progress or completed.
    pub status: TodoStatus,
    /// Present continuous form shown while in progress ("Running tests").
    #[serde(rename = "activeForm")]
    pub active_form: String,
}
