//! `TodoWrite`: the session's structured todo list.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::error::ToolError;
use crate::state::ToolState;
use crate::todo_list::TodoItem;
use crate::util::{blocking, finish, input_schema, parse_input};

const NAME: &str = "TodoWrite";

/// The text Claude Code answers a successful TodoWrite with.
pub(crate) const TODO_RESULT: &str = "Todos have been modified successfully. Ensure that you \
     continue to use the todo list to track your progress. Please proceed with the current \
     tasks if applicable";

/// Input of [`TodoWriteTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TodoWriteInput {
    /// The updated todo list.
    todos: Vec<TodoItem>,
}

/// Replaces the session's todo list.
#[derive(Debug, Clone)]
pub struct TodoWriteTool {
    state: ToolState,
}

impl TodoWriteTool {
    /// A `TodoWrite` tool keeping the list in `state`.
    pub fn new(state: ToolState) -> Self {
        TodoWriteTool { state }
    }
}

impl Tool for TodoWriteTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Creates and manages a structured task list for the current session, to track progress \
         on multi-step work. Send the whole updated list each time. Each item has content \
         (imperative, e.g. \"Run tests\"), activeForm (present continuous, e.g. \"Running \
         tests\") and status pending, in_progress or completed. Keep exactly one task \
         in_progress while working, and mark tasks completed as soon as they are done."
    }

    fn input_schema(&self) -> Value {
        input_schema::<TodoWriteInput>()
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { finish(self.run(input, ctx).await) })
    }
}

/// The file a session's todos are persisted in.
pub(crate) fn todo_file(dir: &Path, session_id: &str) -> PathBuf {
    let safe: String = session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{safe}.json"))
}

fn load(file: &Path) -> Vec<TodoItem> {
    std::fs::read(file)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

impl TodoWriteTool {
    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: TodoWriteInput = parse_input(NAME, input)?;
        for (i, t) in input.todos.iter().enumerate() {
            if t.content.trim().is_empty() {
                return Err(ToolError::InvalidInput {
                    tool: NAME,
                    message: format!("todos[{i}].content must not be empty"),
                });
            }
            if t.active_form.trim().is_empty() {
                return Err(ToolError::InvalidInput {
                    tool: NAME,
                    message: format!("todos[{i}].activeForm must not be empty"),
                });
            }
        }
        let file = self
            .state
            .todo_dir()
            .map(|dir| todo_file(&dir, &ctx.session_id));
        let mut on_disk = Vec::new();
        if let Some(file) = &file {
            let (file, todos) = (file.clone(), input.todos.clone());
            on_disk = blocking(move || {
                let previous = load(&file);
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        ToolError::io(format!("Cannot create directory {}", parent.display()), e)
                    })?;
                }
                let text = serde_json::to_vec_pretty(&todos)
                    .map_err(|e| ToolError::msg(format!("Cannot encode todos: {e}")))?;
                // Write then rename, so a reader never sees half a file.
                let tmp = file.with_extension("json.tmp");
                std::fs::write(&tmp, text)
                    .map_err(|e| ToolError::io(format!("Cannot write {}", tmp.display()), e))?;
                std::fs::rename(&tmp, &file)
                    .map_err(|e| ToolError::io(format!("Cannot write {}", file.display()), e))?;
                Ok(previous)
            })
            .await?;
        }
        let old = self.state.replace_todos(input.todos.clone(), || on_disk);
        let raw = json!({"oldTodos": old, "newTodos": input.todos});
        Ok(ToolOutput::text(TODO_RESULT).with_raw(raw))
    }
}
