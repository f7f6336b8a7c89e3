//! `MultiEdit`: several exact string replacements in one file, all or none.

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
use crate::util::{finish, input_schema, parse_input, resolve_path, truncate_chars};

const NAME: &str = "MultiEdit";
/// Characters of each old/new string quoted in the result text.
const QUOTE_CHARS: usize = 100;

/// One replacement of a [`MultiEditInput`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditOp {
    /// The text to replace.
    old_string: String,
    /// The text to replace it with.
    new_string: String,
    /// Replace all occurrences of old_string (default false).
    #[serde(default)]
    replace_all: Option<bool>,
}

/// Input of [`MultiEditTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MultiEditInput {
    /// The absolute path to the file to modify.
    file_path: String,
    /// Array of edit operations to perform sequentially on the file.
    #[schemars(length(min = 1))]
    edits: Vec<EditOp>,
}

/// Applies several replacements to one file in order, atomically.
#[derive(Debug, Clone)]
pub struct MultiEditTool {
    state: ToolState,
}

impl MultiEditTool {
    /// A `MultiEdit` tool checking reads against `state`.
    pub fn new(state: ToolState) -> Self {
        MultiEditTool { state }
    }
}

impl Tool for MultiEditTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Makes multiple exact string replacements in one file in a single operation. Edits are \
         applied in order, each to the result of the previous one, and either all succeed or \
         none is applied. Each edit follows the Edit tool's rules: the file must have been read \
         first, old_string must be found (and be unique unless replace_all is set), and \
         old_string and new_string must differ. An empty old_string in the first edit creates a \
         new file."
    }

    fn input_schema(&self) -> Value {
        input_schema::<MultiEditInput>()
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { finish(self.run(input, ctx).await) })
    }
}

/// Names the failing edit (1-based) in front of the Edit-style message.
fn at(i: usize, err: ToolError) -> ToolError {
    ToolError::msg(format!("Edit {} failed: {err}", i + 1))
}

fn quote(s: &str) -> String {
    let (kept, cut) = truncate_chars(s, QUOTE_CHARS);
    if cut {
        format!("\"{kept}…\"")
    } else {
        format!("\"{kept}\"")
    }
}

impl MultiEditTool {
    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: MultiEditInput = parse_input(NAME, input)?;
        if input.edits.is_empty() {
            return Err(ToolError::InvalidInput {
                tool: NAME,
                message: "edits must contain at least one edit".into(),
            });
        }
        let path = resolve_path(ctx, &input.file_path);
        let shown = path.display().to_string();
        for (i, e) in input.edits.iter().enumerate() {
            if e.old_string == e.new_string {
                return Err(at(
                    i,
                    ToolError::msg(
                        "No changes to make: old_string and new_string are exactly the same.",
                    ),
                ));
            }
        }

        let original = read_for_edit(&path, &shown).await?;
        let (original, exists) = match original {
            None if input.edits[0].old_string.is_empty() => (String::new(), false),
            None => return Err(ToolError::msg(format!("File does not exist: {shown}"))),
            Some(bytes) => (fresh_text(&self.state, &path, &shown, bytes)?, true),
        };

        let mut updated = original.clone();
        for (i, e) in input.edits.iter().enumerate() {
            updated = if i == 0 && !exists {
                e.new_string.clone()
            } else {
                replace(
                    &updated,
                    &e.old_string,
                    &e.new_string,
                    e.replace_all.unwrap_or(false),
                )
                .map_err(|err| at(i, err))?
            };
        }

        write_file(&self.state, &path, &shown, updated.as_bytes()).await?;

        let diff = TextDiff::from_lines(&original, &updated);
        let unified = unified_diff(&diff, &shown);
        let n = input.edits.len();
        let mut text = format!(
            "Applied {n} edit{} to {shown}:",
            if n == 1 { "" } else { "s" }
        );
        for (i, e) in input.edits.iter().enumerate() {
            text.push_str(&format!(
                "\n{}. Replaced {} with {}",
                i + 1,
                quote(&e.old_string),
                quote(&e.new_string)
            ));
        }
        let edits: Vec<Value> = input
            .edits
            .iter()
            .map(|e| {
                json!({
                    "old_string": e.old_string,
                    "new_string": e.new_string,
                    "replace_all": e.replace_all.unwrap_or(false),
                })
            })
            .collect();
        let raw = json!({
            "filePath": shown,
            "edits": edits,
            "originalFileContents": original,
            "structuredPatch": structured_patch(&diff),
            "userModified": false,
            "diff": unified,
        });
        Ok(ToolOutput::text(text).with_raw(raw))
    }
}
