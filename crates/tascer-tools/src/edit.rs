//! `Edit`: exact string replacement in a file.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::error::ToolError;
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

        let original = match tokio::fs::read(&path).await {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                return Err(ToolError::msg(format!(
                    "{shown} is a directory, not a file."
                )));
            }
            Err(e) => return Err(ToolError::io(format!("Cannot read {shown}"), e)),
        };

        let (original, updated) = match original {
            // Creating a new file with an empty old_string.
            None if input.old_string.is_empty() => (String::new(), input.new_string.clone()),
            None => return Err(ToolError::msg(format!("File does not exist: {shown}"))),
            Some(bytes) => {
                self.state.check_fresh(&path).map_err(ToolError::Message)?;
                let original = String::from_utf8(bytes).map_err(|_| {
                    ToolError::msg(format!(
                        "{shown} is not valid UTF-8 text; it cannot be edited with this tool."
                    ))
                })?;
                let updated =
                    replace(&original, &input.old_string, &input.new_string, replace_all)?;
                (original, updated)
            }
        };

        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| {
                ToolError::io(format!("Cannot create directory {}", parent.display()), e)
            })?;
        }
        tokio::fs::write(&path, updated.as_bytes())
            .await
            .map_err(|e| ToolError::io(format!("Cannot write {shown}"), e))?;
        self.state.record_read(&path);

        let diff = TextDiff::from_lines(&original, &updated);
        let unified = diff
            .unified_diff()
            .context_radius(3)
            .header(&shown, &shown)
            .to_string();
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

/// Applies the replacement, keeping the file's CRLF line endings.
pub(crate) fn replace(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<String, ToolError> {
    let (old, new) = if content.contains("\r\n") {
        (to_crlf(old), to_crlf(new))
    } else {
        (old.to_string(), new.to_string())
    };
    if old.is_empty() {
        if content.is_empty() {
            return Ok(new);
        }
        return Err(ToolError::msg(
            "Cannot create new file - file already exists. Use a non-empty old_string to edit it.",
        ));
    }
    let count = content.matches(old.as_str()).count();
    if count == 0 {
        return Err(ToolError::msg(format!(
            "String to replace not found in file.\nString: {old}"
        )));
    }
    if count > 1 && !replace_all {
        return Err(ToolError::msg(format!(
            "Found {count} matches of the string to replace, but replace_all is false. To replace \
             all occurrences, set replace_all to true. To replace only one occurrence, please \
             provide more context to uniquely identify the instance."
        )));
    }
    Ok(if replace_all {
        content.replace(old.as_str(), &new)
    } else {
        content.replacen(old.as_str(), &new, 1)
    })
}

fn to_crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Claude Code's `structuredPatch`: hunks with 1-based starts and lines
/// prefixed by ` `, `-` or `+`.
pub(crate) fn structured_patch(diff: &TextDiff<'_, '_, '_, str>) -> Vec<Value> {
    diff.grouped_ops(3)
        .iter()
        .filter_map(|group| {
            let first = group.first()?;
            let last = group.last()?;
            let old = first.old_range().start..last.old_range().end;
            let new = first.new_range().start..last.new_range().end;
            let lines: Vec<String> = group
                .iter()
                .flat_map(|op| diff.iter_changes(op))
                .map(|change| {
                    let sign = match change.tag() {
                        ChangeTag::Equal => ' ',
                        ChangeTag::Delete => '-',
                        ChangeTag::Insert => '+',
                    };
                    let text = change.value();
                    let text = text.strip_suffix('\n').unwrap_or(text);
                    let text = text.strip_suffix('\r').unwrap_or(text);
                    format!("{sign}{text}")
                })
                .collect();
            Some(json!({
                "oldStart": old.start + 1,
                "oldLines": old.len(),
                "newStart": new.start + 1,
                "newLines": new.len(),
                "lines": lines,
            }))
        })
        .collect()
}
