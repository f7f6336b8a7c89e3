//! `Glob`: finds files by name pattern.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, SystemTime};

use futures::future::BoxFuture;
use globset::GlobBuilder;
use ignore::{WalkBuilder, WalkState};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{FileAccess, Tool, ToolContext, ToolOutput};
use tokio_util::sync::CancellationToken;

use crate::error::ToolError;
use crate::util::{blocking, finish, input_schema, parse_input, resolve_path};

const NAME: &str = "Glob";
/// Most paths listed.
const MAX_RESULTS: usize = 100;

/// Input of [`GlobTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GlobInput {
    /// The glob pattern to match files against, e.g. "**/*.rs" or "src/**/*.ts".
    pattern: String,
    /// The directory to search in. Defaults to the current working directory.
    #[serde(default)]
    path: Option<String>,
}

/// Fast file-name pattern matching.
#[derive(Debug, Clone, Default)]
pub struct GlobTool;

impl GlobTool {
    /// A `Glob` tool.
    pub fn new() -> Self {
        GlobTool
    }
}

impl Tool for GlobTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Fast file pattern matching. Supports glob patterns like \"**/*.js\" or \"src/**/*.ts\", \
         matched against paths relative to the search directory; files ignored by .gitignore are \
         skipped. Returns matching file paths sorted by modification time, newest first."
    }

    fn input_schema(&self) -> Value {
        input_schema::<GlobInput>()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            finish(
                async {
                    let input: GlobInput = parse_input(NAME, input)?;
                    let root = match &input.path {
                        Some(p) => resolve_path(ctx, p),
                        None => ctx.cwd(),
                    };
                    let cancel = ctx.cancel.clone();
                    let access = ctx.file_access.clone();
                    blocking(move || glob(&input.pattern, &root, &cancel, access.as_deref())).await
                }
                .await,
            )
        })
    }
}

/// A walker over `root` that respects ignore files (even outside a git
/// repository), includes hidden files and skips `.git`.
pub(crate) fn walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// Sorts paths by modification time, newest first (then by path).
pub(crate) fn sort_by_mtime(paths: &mut [(PathBuf, Option<SystemTime>)]) {
    paths.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
}

/// The note a search adds when the permission policy kept files from it.
pub(crate) fn withheld_note(n: usize) -> String {
    let files = if n == 1 { "file" } else { "files" };
    format!("\n\n[{n} {files} withheld: the permission policy does not allow reading them]")
}

fn glob(
    pattern: &str,
    root: &Path,
    cancel: &CancellationToken,
    access: Option<&dyn FileAccess>,
) -> Result<ToolOutput, ToolError> {
    let withheld = std::sync::atomic::AtomicUsize::new(0);
    let started = Instant::now();
    let shown_root = root.display();
    if !root.exists() {
        return Err(ToolError::msg(format!(
            "Directory does not exist: {shown_root}"
        )));
    }
    if !root.is_dir() {
        return Err(ToolError::msg(format!(
            "Path is not a directory: {shown_root}"
        )));
    }
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    let absolute = Path::new(pattern).is_absolute();
    let matcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::msg(format!("Invalid glob pattern: {e}")))?
        .compile_matcher();

    // The walk runs on several threads; the result is sorted afterwards,
    // so it does not depend on the order the threads saw the files in.
    let found: Mutex<Vec<(PathBuf, Option<SystemTime>)>> = Mutex::new(Vec::new());
    let interrupted = AtomicBool::new(false);
    walker(root).build_parallel().run(|| {
        let (found, interrupted, matcher, withheld) = (&found, &interrupted, &matcher, &withheld);
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                interrupted.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let path = entry.path();
            let matched = if absolute {
                matcher.is_match(path)
            } else {
                path.strip_prefix(root)
                    .is_ok_and(|rel| matcher.is_match(rel))
            };
            if matched && access.is_some_and(|a| a.may_read(path).is_err()) {
                withheld.fetch_add(1, Ordering::Relaxed);
            } else if matched {
                let mtime = entry.metadata().ok().and_then(|m| m.modified().ok());
                let item = (path.to_path_buf(), mtime);
                found.lock().push(item);
            }
            WalkState::Continue
        })
    });
    if interrupted.load(Ordering::Relaxed) {
        return Err(ToolError::msg("Glob was interrupted."));
    }
    let mut found = found.into_inner();
    sort_by_mtime(&mut found);
    let total = found.len();
    let truncated = total > MAX_RESULTS;
    found.truncate(MAX_RESULTS);
    let filenames: Vec<String> = found.iter().map(|(p, _)| p.display().to_string()).collect();

    let withheld = withheld.into_inner();
    let mut text = if filenames.is_empty() {
        "No files found".to_string()
    } else if truncated {
        format!(
            "{}\n(Results are truncated. Consider using a more specific path or pattern.)",
            filenames.join("\n")
        )
    } else {
        filenames.join("\n")
    };
    let mut raw = json!({
        "durationMs": started.elapsed().as_millis() as u64,
        "numFiles": filenames.len(),
        "filenames": filenames,
        "truncated": truncated,
        "totalMatches": total,
    });
    if withheld > 0 {
        text.push_str(&withheld_note(withheld));
        raw["withheldFiles"] = json!(withheld);
    }
    Ok(ToolOutput::text(text).with_raw(raw))
}
