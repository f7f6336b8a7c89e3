//! `Edit`: exact string replacement in a file.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use similar::TextDiff;
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::error::ToolError;
use crate::file_edit::{
    fresh_text, read_for_edit, replace, structured_patch, unified_diff, write_file,
};
use crate::state::ToolState;
use crate::util::{finish, input_schema, parse_input, resolve_path};

const NAME: &str = "Edit";

/// Input of [`EditTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditInput {
    /// The absolute path to the file to modify.
    file_path: String,
    /// The text to replace.
    old_string: String,
    /// The text to replace it with (must be different from old_string).
    new_string: String,
    /// Replace all occurrences of old_string (default false).
    #[serde(default)]
    replace_all: Option<bool>,
}

/// Replaces exact text in a file.
#[derive(Debug, Clone)]
pub struct EditTool {
    state: ToolState,
}

impl EditTool {
    /// An `Edit` tool checking reads against `state`.
    pub fn new(state: ToolState) -> Self {
        EditTool { state }
    }
}

impl Tool for EditTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Performs exact string replacements in a file. The file must have been read with the \
         Read tool first. The edit fails if old_string is not found, or is found more than once \
         and replace_all is not set: give more surrounding context to make it unique. An empty \
         old_string creates a new file."
    }

    fn input_schema(&self) -> Value {
        input_schema::<EditInput>()
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { finish(self.run(input, ctx).await) })
    }
}

impl EditTool {
    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: EditInput = parse_input(NAME, input)?;
        let replace_all = input.replace_all.unwrap_or(false);
        let path = resolve_path(ctx, &input.file_path);
        let shown = path.display().to_string();
        if input.old_string == input.new_string {
            return Err(ToolError::msg(
                "No changes to make: old_string and new_string are exactly the same.",
            ));
        }

        let original = read_for_edit(&path, &shown).await?;

        let (original, updated) = match original {
            // Creating a new file with an empty old_string.
            None if input.old_string.is_empty() => (String::new(), input.new_string.clone()),
            None => return Err(ToolError::msg(format!("File does not exist: {shown}"))),
            Some(bytes) => {
                let original = fresh_text(&self.state, &path, &shown, bytes)?;
                let updated =
                    replace(&original, &input.old_string, &input.new_string, replace_all)?;
                (original, updated)
            }
        };

        write_file(&self.state, &path, &shown, updated.as_bytes()).await?;

        let diff = TextDiff::from_lines(&original, &updated);
        let unified = unified_diff(&diff, &shown);
        let raw = json!({
            "filePath": shown,
            "oldString": input.old_string,
            "newString": input.new_string,
            "originalFile": original,
            "structuredPatch": structured_patch(&diff),
            "userModified": false,
            "replaceAll": replace_all,
            "diff": unified,
        });
        Ok(ToolOutput::text(format!("The file {shown} has been updated.")).with_raw(raw))
    }
}
