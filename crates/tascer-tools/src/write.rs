//! `Write`: creates or overwrites a file.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::error::ToolError;
use crate::file_edit::write_file;
use crate::state::ToolState;
use crate::util::{finish, input_schema, parse_input, resolve_path};

const NAME: &str = "Write";

/// Input of [`WriteTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteInput {
    /// The absolute path to the file to write (must be absolute, not relative).
    file_path: String,
    /// The content to write to the file.
    content: String,
}

/// Writes a file, creating parent directories as needed.
#[derive(Debug, Clone)]
pub struct WriteTool {
    state: ToolState,
}

impl WriteTool {
    /// A `Write` tool checking reads against `state`.
    pub fn new(state: ToolState) -> Self {
        WriteTool { state }
    }
}

impl Tool for WriteTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Writes a file to the local filesystem, overwriting it if it exists and creating parent \
         directories as needed. An existing file must be read with the Read tool first. Prefer \
         the Edit tool for changing existing files."
    }

    fn input_schema(&self) -> Value {
        input_schema::<WriteInput>()
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            finish(
                async {
                    let input: WriteInput = parse_input(NAME, input)?;
                    let path = resolve_path(ctx, &input.file_path);
                    let shown = path.display().to_string();
                    let exists = match tokio::fs::metadata(&path).await {
                        Ok(meta) if meta.is_dir() => {
                            return Err(ToolError::msg(format!(
                                "{shown} is a directory; cannot write to it."
                            )));
                        }
                        Ok(_) => true,
                        Err(_) => false,
                    };
                    if exists {
                        self.state.check_fresh(&path).map_err(ToolError::Message)?;
                    }
                    write_file(&self.state, &path, &shown, input.content.as_bytes()).await?;
                    let (kind, text) = if exists {
                        ("update", format!("The file {shown} has been updated."))
                    } else {
                        ("create", format!("File created successfully at: {shown}"))
                    };
                    let raw = json!({
                        "type": kind,
                        "filePath": shown,
                        "content": input.content,
                        "bytes": input.content.len(),
                    });
                    Ok(ToolOutput::text(text).with_raw(raw))
                }
                .await,
            )
        })
    }
}
