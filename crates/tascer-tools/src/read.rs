//! `Read`: reads a text file (cat -n style) or an image.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use base64::Engine;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{ContentBlock, ImageSource, Tool, ToolContext, ToolOutput, ToolResultContent};

use crate::error::ToolError;
use crate::notebook::render_notebook;
use crate::state::ToolState;
use crate::util::{blocking, finish, input_schema, parse_input, resolve_path, truncate_chars};

const NAME: &str = "Read";
/// Lines shown when no limit is given.
const DEFAULT_LIMIT: u64 = 2000;
/// Longer lines are cut.
const MAX_LINE_CHARS: usize = 2000;
/// Larger files need an offset or limit.
const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Largest image sent to the model.
const MAX_IMAGE_BYTES: u64 = 3_750_000;
/// Largest notebook rendered.
const MAX_NOTEBOOK_BYTES: u64 = 16 * 1024 * 1024;
/// Bytes checked for NUL when deciding a file is binary.
const BINARY_SNIFF_BYTES: u64 = 8 * 1024;

const EMPTY_NOTE: &str =
    "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>";

/// Input of [`ReadTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadInput {
    /// The absolute path to the file to read (a path relative to the working directory also works).
    file_path: String,
    /// The line number to start reading from (1-based). Only provide if the file is too large to read at once.
    #[serde(default)]
    offset: Option<u64>,
    /// The number of lines to read. Only provide if the file is too large to read at once.
    #[serde(default)]
    limit: Option<u64>,
}

/// Reads a file from the local file system.
#[derive(Debug, Clone)]
pub struct ReadTool {
    state: ToolState,
}

impl ReadTool {
    /// A `Read` tool recording what it reads in `state`.
    pub fn new(state: ToolState) -> Self {
        ReadTool { state }
    }
}

impl Tool for ReadTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Reads a file from the local filesystem. Text is returned in cat -n format with line \
         numbers starting at 1, up to 2000 lines by default (use offset and limit for longer \
         files; lines over 2000 characters are truncated). Images (PNG, JPEG, GIF, WebP) are \
         returned as images. Jupyter notebooks (.ipynb) are returned as their cells with \
         outputs. A file must be read before it can be edited or overwritten."
    }

    fn input_schema(&self) -> Value {
        input_schema::<ReadInput>()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            finish(
                async {
                    let input: ReadInput = parse_input(NAME, input)?;
                    let path = resolve_path(ctx, &input.file_path);
                    let p = path.clone();
                    let (out, mtime) =
                        blocking(move || read(&p, input.offset, input.limit)).await?;
                    self.state.record_read_at(&path, mtime);
                    Ok(out)
                }
                .await,
            )
        })
    }
}

fn image_media_type(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

/// Reads the file; also returns its modification time as it was before reading.
fn read(
    path: &PathBuf,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<(ToolOutput, Option<SystemTime>), ToolError> {
    let shown = path.display().to_string();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::msg(format!("File does not exist: {shown}")));
        }
        Err(e) => return Err(ToolError::io(format!("Cannot read {shown}"), e)),
    };
    if meta.is_dir() {
        return Err(ToolError::msg(format!(
            "{shown} is a directory, not a file. Use Bash `ls` or the Glob tool to list its contents."
        )));
    }
    let size = meta.len();
    let modified = meta.modified().ok();
    let out = if path.extension().and_then(|e| e.to_str()) == Some("ipynb") {
        read_notebook(path, &shown, size)?
    } else if let Some(media_type) = image_media_type(path) {
        read_image(path, &shown, size, media_type)?
    } else {
        read_text(path, &shown, size, offset, limit)?
    };
    Ok((out, modified))
}

/// A notebook: its cells with their outputs.
fn read_notebook(path: &Path, shown: &str, size: u64) -> Result<ToolOutput, ToolError> {
    if size > MAX_NOTEBOOK_BYTES {
        return Err(ToolError::msg(format!(
            "Notebook {shown} is too large ({size} bytes; at most {MAX_NOTEBOOK_BYTES} bytes \
             can be read). Use Bash with jq to read parts of it."
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| ToolError::io(format!("Cannot read {shown}"), e))?;
    let (rendered, cells) = render_notebook(&text, path)?;
    let raw = json!({
        "type": "notebook",
        "file": {"filePath": shown, "cells": cells},
    });
    Ok(ToolOutput::text(rendered).with_raw(raw))
}

/// An image: one image block.
fn read_image(
    path: &Path,
    shown: &str,
    size: u64,
    media_type: &str,
) -> Result<ToolOutput, ToolError> {
    if size > MAX_IMAGE_BYTES {
        return Err(ToolError::msg(format!(
            "Image {shown} is too large ({size} bytes; at most {MAX_IMAGE_BYTES} bytes can be read)."
        )));
    }
    let bytes =
        std::fs::read(path).map_err(|e| ToolError::io(format!("Cannot read {shown}"), e))?;
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let raw = json!({
        "type": "image",
        "file": {"base64": data, "type": media_type, "originalSize": bytes.len()},
    });
    let block = ContentBlock::Image {
        source: ImageSource::Base64 {
            media_type: media_type.to_string(),
            data,
        },
    };
    Ok(ToolOutput {
        content: ToolResultContent::Blocks(vec![block]),
        is_error: false,
        raw: Some(raw),
        child_sessions: Vec::new(),
    })
}

/// A text file: the lines from `offset` (1-based), at most `limit` of them,
/// numbered like `cat -n`.
fn read_text(
    path: &Path,
    shown: &str,
    size: u64,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<ToolOutput, ToolError> {
    if size > MAX_FILE_BYTES && offset.is_none() && limit.is_none() {
        return Err(ToolError::msg(format!(
            "File content ({} KB) exceeds maximum allowed size ({} KB). Please use offset and \
             limit parameters to read specific portions of the file, or use the Grep tool to \
             search for specific content.",
            size.div_ceil(1024),
            MAX_FILE_BYTES / 1024
        )));
    }
    refuse_binary(path, shown)?;
    let start = offset.unwrap_or(1).max(1);
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    let lines = read_lines(path, shown, start, start.saturating_add(limit))?;
    let total = lines.total;
    let text = if total == 0 {
        EMPTY_NOTE.to_string()
    } else if lines.plain.is_empty() {
        format!(
            "<system-reminder>Warning: the file exists but is shorter than the provided offset \
             ({start}). The file has {total} lines.</system-reminder>"
        )
    } else {
        lines.numbered
    };
    let raw = json!({
        "type": "text",
        "file": {
            "filePath": shown,
            "content": lines.plain.join("\n"),
            "numLines": lines.plain.len(),
            "startLine": start,
            "totalLines": total,
        },
    });
    Ok(ToolOutput::text(text).with_raw(raw))
}

/// Refuses a file whose first bytes hold a NUL byte.
fn refuse_binary(path: &Path, shown: &str) -> Result<(), ToolError> {
    let file = File::open(path).map_err(|e| ToolError::io(format!("Cannot read {shown}"), e))?;
    let mut head = Vec::new();
    file.take(BINARY_SNIFF_BYTES)
        .read_to_end(&mut head)
        .map_err(|e| ToolError::io(format!("Cannot read {shown}"), e))?;
    if head.contains(&0) {
        return Err(ToolError::msg(format!(
            "Cannot read {shown}: this appears to be a binary file. Use Bash tools to inspect binary files."
        )));
    }
    Ok(())
}

/// The lines of a text file in a range, as read.
struct Lines {
    /// `cat -n` style: each line with its number.
    numbered: String,
    /// The same lines without numbers.
    plain: Vec<String>,
    /// Lines in the whole file.
    total: u64,
}

/// Reads lines `start..end` (1-based, end exclusive), each cut to
/// `MAX_LINE_CHARS`, and counts all lines.
fn read_lines(path: &Path, shown: &str, start: u64, end: u64) -> Result<Lines, ToolError> {
    let file = File::open(path).map_err(|e| ToolError::io(format!("Cannot read {shown}"), e))?;
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let mut lineno: u64 = 0;
    let mut numbered = String::new();
    let mut plain: Vec<String> = Vec::new();
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| ToolError::io(format!("Cannot read {shown}"), e))?;
        if n == 0 {
            break;
        }
        lineno += 1;
        if lineno < start || lineno >= end {
            continue;
        }
        let mut line = &buf[..];
        if let Some(rest) = line.strip_suffix(b"\n") {
            line = rest;
        }
        if let Some(rest) = line.strip_suffix(b"\r") {
            line = rest;
        }
        let text = String::from_utf8_lossy(line);
        let (kept, cut) = truncate_chars(&text, MAX_LINE_CHARS);
        let kept = if cut {
            format!("{kept}… [line truncated]")
        } else {
            kept.to_string()
        };
        if !numbered.is_empty() {
            numbered.push('\n');
        }
        numbered.push_str(&format!("{lineno:>6}\t{kept}"));
        plain.push(kept);
    }
    Ok(Lines {
        numbered,
        plain,
        total: lineno,
    })
}
