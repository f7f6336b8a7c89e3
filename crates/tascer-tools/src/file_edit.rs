//! The steps Edit, MultiEdit and Write share: reading the file to change,
//! checking it was read and has not changed since, applying a replacement,
//! writing it back, and the diff shapes of the answer.

use std::path::Path;

use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};

use crate::error::ToolError;
use crate::state::ToolState;

/// The bytes of the file to edit; `None` when it does not exist.
pub(crate) async fn read_for_edit(path: &Path, shown: &str) -> Result<Option<Vec<u8>>, ToolError> {
    match tokio::fs::read(path).await {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Err(ToolError::msg(format!(
            "{shown} is a directory, not a file."
        ))),
        Err(e) => Err(ToolError::io(format!("Cannot read {shown}"), e)),
    }
}

/// The text of an existing file, once the session is known to have read it
/// as it is now.
pub(crate) fn fresh_text(
    state: &ToolState,
    path: &Path,
    shown: &str,
    bytes: Vec<u8>,
) -> Result<String, ToolError> {
    state.check_fresh(path).map_err(ToolError::Message)?;
    String::from_utf8(bytes).map_err(|_| {
        ToolError::msg(format!(
            "{shown} is not valid UTF-8 text; it cannot be edited with this tool."
        ))
    })
}

/// Writes the file (creating its parent directories) and records it as read
/// by the session as it is now.
pub(crate) async fn write_file(
    state: &ToolState,
    path: &Path,
    shown: &str,
    contents: &[u8],
) -> Result<(), ToolError> {
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent).await.map_err(|e| {
            ToolError::io(format!("Cannot create directory {}", parent.display()), e)
        })?;
    }
    tokio::fs::write(path, contents)
        .await
        .map_err(|e| ToolError::io(format!("Cannot write {shown}"), e))?;
    state.record_read(path);
    Ok(())
}

/// The unified diff of a change, with three lines of context.
pub(crate) fn unified_diff<'a>(diff: &'a TextDiff<'a, 'a, 'a, str>, shown: &str) -> String {
    diff.unified_diff()
        .context_radius(3)
        .header(shown, shown)
        .to_string()
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
