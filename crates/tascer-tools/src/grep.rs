//! `Grep`: searches file contents with ripgrep's engine.

use std::collections::BTreeMap;
use std::io;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::SystemTime;

use futures::future::BoxFuture;
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{FileAccess, Tool, ToolContext, ToolOutput};
use tokio_util::sync::CancellationToken;

use crate::error::ToolError;
use crate::glob::{sort_by_mtime, walker, withheld_note};
use crate::util::{
    blocking, finish, input_schema, parse_input, plural, resolve_path, truncate_chars,
};

const NAME: &str = "Grep";
/// Most output lines collected in content mode.
const MAX_CONTENT_LINES: usize = 20_000;
/// Characters of output shown to the model.
const MAX_OUTPUT_CHARS: usize = 30_000;

/// What Grep outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OutputMode {
    // Matching lines.
    Content,
    // Paths of matching files.
    #[default]
    FilesWithMatches,
    // Match counts per file.
    Count,
}

impl OutputMode {
    fn as_str(self) -> &'static str {
        match self {
            OutputMode::Content => "content",
            OutputMode::FilesWithMatches => "files_with_matches",
            OutputMode::Count => "count",
        }
    }
}

/// Input of [`GrepTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrepInput {
    /// The regular expression pattern to search for in file contents (Rust regex syntax, like ripgrep).
    pattern: String,
    /// File or directory to search in. Defaults to the current working directory.
    #[serde(default)]
    path: Option<String>,
    /// Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}").
    #[serde(default)]
    glob: Option<String>,
    /// File type to search (ripgrep --type), e.g. "js", "py", "rust". More efficient than glob for standard file types.
    #[serde(default, rename = "type")]
    file_type: Option<String>,
    /// Output mode: "content" shows matching lines, "files_with_matches" shows file paths (default), "count" shows match counts.
    #[serde(default)]
    output_mode: Option<OutputMode>,
    /// Case insensitive search.
    #[serde(default, rename = "-i")]
    case_insensitive: Option<bool>,
    /// Show line numbers in output (content mode only; default true).
    #[serde(default, rename = "-n")]
    line_numbers: Option<bool>,
    /// Number of lines to show after each match (content mode only).
    #[serde(default, rename = "-A")]
    after: Option<usize>,
    /// Number of lines to show before each match (content mode only).
    #[serde(default, rename = "-B")]
    before: Option<usize>,
    /// Number of lines to show before and after each match (content mode only).
    #[serde(default, rename = "-C")]
    context_c: Option<usize>,
    /// Alias for -C.
    #[serde(default)]
    context: Option<usize>,
    /// Print only the matched parts of matching lines, one per output line (content mode
    /// only; context options are ignored).
    #[serde(default, rename = "-o")]
    only_matching: Option<bool>,
    /// Enable multiline mode where . matches newlines and patterns can span lines.
    #[serde(default)]
    multiline: Option<bool>,
    /// Limit output to the first N lines/entries (after offset).
    #[serde(default)]
    head_limit: Option<usize>,
    /// Skip the first N lines/entries before applying head_limit.
    #[serde(default)]
    offset: Option<usize>,
}

/// Searches file contents with regular expressions.
#[derive(Debug, Clone, Default)]
pub struct GrepTool;

impl GrepTool {
    /// A `Grep` tool.
    pub fn new() -> Self {
        GrepTool
    }
}

impl Tool for GrepTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "A powerful search tool built on ripgrep. Supports full regex syntax; filter files with \
         glob or type. output_mode \"content\" shows matching lines (with -A/-B/-C context and \
         -n line numbers), \"files_with_matches\" (default) shows file paths, \"count\" shows \
         match counts. Use multiline for patterns spanning lines; head_limit and offset page \
         through results."
    }

    fn input_schema(&self) -> Value {
        input_schema::<GrepInput>()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            finish(
                async {
                    let input: GrepInput = parse_input(NAME, input)?;
                    let root = match &input.path {
                        Some(p) => resolve_path(ctx, p),
                        None => ctx.cwd(),
                    };
                    let cancel = ctx.cancel.clone();
                    let access = ctx.file_access.clone();
                    blocking(move || grep(&input, &root, &cancel, access.as_deref())).await
                }
                .await,
            )
        })
    }
}

/// Collects one file's results.
struct FileSink<'a> {
    path: &'a str,
    /// Set for `-o`: prints each match of this matcher instead of lines.
    only_matching: Option<&'a RegexMatcher>,
    mode: OutputMode,
    line_numbers: bool,
    lines: &'a mut Vec<String>,
    max_lines: usize,
    matches: u64,
    full: bool,
}

impl FileSink<'_> {
    fn push(&mut self, sep: char, line_number: Option<u64>, bytes: &[u8]) -> bool {
        if self.lines.len() >= self.max_lines {
            self.full = true;
            return false;
        }
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        let line = match line_number.filter(|_| self.line_numbers) {
            Some(n) => format!("{}{sep}{n}{sep}{text}", self.path),
            None => format!("{}{sep}{text}", self.path),
        };
        self.lines.push(line);
        true
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.matches += 1;
        match self.mode {
            OutputMode::FilesWithMatches => Ok(false),
            OutputMode::Count => Ok(true),
            OutputMode::Content if self.only_matching.is_some() => {
                let bytes = mat.bytes();
                let mut ranges = Vec::new();
                if let Some(m) = self.only_matching {
                    let _ = m.find_iter(bytes, |found| {
                        ranges.push((found.start(), found.end()));
                        true
                    });
                }
                for (start, end) in ranges {
                    let line = mat
                        .line_number()
                        .map(|n| n + bytes[..start].iter().filter(|b| **b == b'\n').count() as u64);
                    if !self.push(':', line, &bytes[start..end]) {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            OutputMode::Content => {
                let first = mat.line_number();
                for (i, line) in mat.lines().enumerate() {
                    if !self.push(':', first.map(|n| n + i as u64), line) {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        Ok(self.push('-', ctx.line_number(), ctx.bytes()))
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        if self.lines.len() >= self.max_lines {
            self.full = true;
            return Ok(false);
        }
        self.lines.push("--".into());
        Ok(true)
    }
}

/// Splits a glob filter on whitespace, and on commas outside braces.
fn split_globs(globs: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in globs.chars() {
        match c {
            '{' => {
                depth += 1;
                current.push(c);
            }
            '}' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut current)),
            c if c.is_whitespace() => out.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    out.push(current);
    out.retain(|g| !g.is_empty());
    out
}

fn build_matcher(input: &GrepInput) -> Result<RegexMatcher, ToolError> {
    let multiline = input.multiline.unwrap_or(false);
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(input.case_insensitive.unwrap_or(false))
        .multi_line(true);
    if multiline {
        builder.dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder
        .build(&input.pattern)
        .map_err(|e| ToolError::msg(format!("Invalid regex pattern: {e}")))
}

/// Applies offset and head_limit; returns the page and whether it cut.
fn paginate<T>(items: Vec<T>, offset: Option<usize>, limit: Option<usize>) -> (Vec<T>, bool) {
    let total = items.len();
    let page: Vec<T> = items
        .into_iter()
        .skip(offset.unwrap_or(0))
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    let cut = page.len() < total;
    (page, cut)
}

/// How to search each file, shared by the search workers.
struct SearchPlan {
    matcher: RegexMatcher,
    searcher: SearcherBuilder,
    mode: OutputMode,
    only_matching: bool,
    line_numbers: bool,
    /// Content mode with context: a `--` line separates files.
    separate_files: bool,
    /// Most content lines collected.
    max_lines: usize,
}

/// One searched file with at least one match.
struct FileHit {
    path: PathBuf,
    shown: String,
    lines: Vec<String>,
    matches: u64,
    /// The file had more lines than its cap.
    full: bool,
    mtime: Option<SystemTime>,
}

/// What the search found, in walk order (paths sorted by name).
#[derive(Default)]
struct Collected {
    lines: Vec<String>,
    files: Vec<(PathBuf, Option<SystemTime>)>,
    counts: Vec<(String, u64)>,
    total_matches: u64,
    content_full: bool,
    /// Files the permission policy did not let the search open.
    withheld: usize,
}

/// Searches one file, collecting at most `cap` content lines; `None` when
/// it has no match or cannot be searched.
fn search_one(
    plan: &SearchPlan,
    searcher: &mut Searcher,
    entry: &ignore::DirEntry,
    cap: usize,
) -> Option<FileHit> {
    let path = entry.path();
    let shown = path.display().to_string();
    let mut lines = Vec::new();
    let mut sink = FileSink {
        path: &shown,
        only_matching: plan.only_matching.then_some(&plan.matcher),
        mode: plan.mode,
        line_numbers: plan.line_numbers,
        lines: &mut lines,
        max_lines: cap,
        matches: 0,
        full: false,
    };
    let searched = searcher.search_path(&plan.matcher, path, &mut sink);
    let (matches, full) = (sink.matches, sink.full);
    if searched.is_err() || matches == 0 {
        return None;
    }
    // Only files_with_matches sorts by modification time.
    let mtime = (plan.mode == OutputMode::FilesWithMatches)
        .then(|| entry.metadata().ok().and_then(|m| m.modified().ok()))
        .flatten();
    Some(FileHit {
        path: path.to_path_buf(),
        shown,
        lines,
        matches,
        full,
        mtime,
    })
}

/// Puts per-file results back in walk order and applies the line cap
/// exactly as a sequential search would.
struct Merger<'a> {
    plan: &'a SearchPlan,
    next: usize,
    pending: BTreeMap<usize, Option<FileHit>>,
    out: Collected,
    /// The line cap was reached: later files are ignored.
    done: bool,
}

impl Merger<'_> {
    fn accept(&mut self, index: usize, hit: Option<FileHit>) {
        self.pending.insert(index, hit);
        while let Some(hit) = self.pending.remove(&self.next) {
            self.next += 1;
            if let Some(hit) = hit
                && !self.done
            {
                self.merge(hit);
            }
        }
    }

    fn merge(&mut self, hit: FileHit) {
        let out = &mut self.out;
        if self.plan.separate_files && !out.lines.is_empty() {
            out.lines.push("--".into());
        }
        let mut full = hit.full;
        for line in hit.lines {
            if out.lines.len() >= self.plan.max_lines {
                full = true;
                break;
            }
            out.lines.push(line);
        }
        out.total_matches += hit.matches;
        out.files.push((hit.path, hit.mtime));
        out.counts.push((hit.shown, hit.matches));
        if full {
            out.content_full = true;
            self.done = true;
        }
    }

    /// Content lines already merged.
    fn merged_lines(&self) -> usize {
        self.out.lines.len()
    }
}

/// Files queued ahead of the search workers.
const QUEUE: usize = 256;

/// Searches the walked files on worker threads (the walk stays on this
/// thread, in sorted order), then merges the results in walk order, so the
/// output is the same as a sequential search's. Stops walking once the
/// content line cap is reached.
fn search_files(
    plan: &SearchPlan,
    walk: ignore::Walk,
    cancel: &CancellationToken,
    access: Option<&dyn FileAccess>,
) -> Result<Collected, ToolError> {
    let mut withheld = 0;
    let workers = std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .clamp(1, 8);
    let stop = AtomicBool::new(false);
    let mut merger = Merger {
        plan,
        next: 0,
        pending: BTreeMap::new(),
        out: Collected::default(),
        done: false,
    };
    let mut interrupted = false;
    let (job_tx, job_rx) = mpsc::sync_channel::<(usize, ignore::DirEntry, usize)>(QUEUE);
    let job_rx = Mutex::new(job_rx);
    let (result_tx, result_rx) = mpsc::channel::<(usize, Option<FileHit>)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let result_tx = result_tx.clone();
            let (job_rx, stop) = (&job_rx, &stop);
            scope.spawn(move || {
                let mut searcher = plan.searcher.build();
                loop {
                    let job = job_rx.lock().recv();
                    let Ok((index, entry, cap)) = job else { break };
                    let hit = if stop.load(Ordering::Relaxed) {
                        None
                    } else {
                        search_one(plan, &mut searcher, &entry, cap)
                    };
                    if result_tx.send((index, hit)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(result_tx);
        let mut index = 0;
        for entry in walk {
            if cancel.is_cancelled() {
                interrupted = true;
                break;
            }
            while let Ok((i, hit)) = result_rx.try_recv() {
                merger.accept(i, hit);
            }
            if merger.done {
                break;
            }
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            if access.is_some_and(|a| a.may_read(entry.path()).is_err()) {
                withheld += 1;
                continue;
            }
            // Files before this one already hold `merged_lines`, so this
            // file never contributes more than the rest.
            let cap = plan.max_lines.saturating_sub(merger.merged_lines());
            if job_tx.send((index, entry, cap)).is_err() {
                break;
            }
            index += 1;
        }
        if interrupted || merger.done {
            stop.store(true, Ordering::Relaxed);
        }
        drop(job_tx);
        for (i, hit) in result_rx {
            merger.accept(i, hit);
        }
    });
    if interrupted {
        return Err(ToolError::msg("Grep was interrupted."));
    }
    let mut out = merger.out;
    out.withheld = withheld;
    Ok(out)
}

fn grep(
    input: &GrepInput,
    root: &Path,
    cancel: &CancellationToken,
    access: Option<&dyn FileAccess>,
) -> Result<ToolOutput, ToolError> {
    if !root.exists() {
        return Err(ToolError::msg(format!(
            "Path does not exist: {}",
            root.display()
        )));
    }
    let plan = search_plan(input)?;
    let walk = file_walk(input, root)?;
    let found = search_files(&plan, walk.build(), cancel, access)?;
    Ok(grep_output(input, plan.mode, found))
}

/// How to search each file: the matcher, the searcher's settings and what
/// to collect.
fn search_plan(input: &GrepInput) -> Result<SearchPlan, ToolError> {
    let mode = input.output_mode.unwrap_or_default();
    let matcher = build_matcher(input)?;
    let multiline = input.multiline.unwrap_or(false);
    let only_matching = input.only_matching.unwrap_or(false) && mode == OutputMode::Content;
    let (before, after) = if mode == OutputMode::Content && !only_matching {
        let c = input.context_c.or(input.context);
        (
            input.before.or(c).unwrap_or(0),
            input.after.or(c).unwrap_or(0),
        )
    } else {
        (0, 0)
    };
    let mut searcher = SearcherBuilder::new();
    searcher
        .line_number(true)
        .multi_line(multiline)
        .before_context(before)
        .after_context(after)
        .binary_detection(BinaryDetection::quit(b'\x00'));
    let max_lines = match input.head_limit {
        Some(limit) => limit
            .saturating_add(input.offset.unwrap_or(0))
            .min(MAX_CONTENT_LINES),
        None => MAX_CONTENT_LINES,
    };
    Ok(SearchPlan {
        matcher,
        searcher,
        mode,
        only_matching,
        line_numbers: input.line_numbers.unwrap_or(true),
        separate_files: mode == OutputMode::Content && (before > 0 || after > 0),
        max_lines,
    })
}

/// The files to search under `root`, sorted by name and filtered by the
/// glob and type options.
fn file_walk(input: &GrepInput, root: &Path) -> Result<ignore::WalkBuilder, ToolError> {
    let mut walk = walker(root);
    walk.sort_by_file_name(|a, b| a.cmp(b));
    if root.is_dir()
        && let Some(globs) = input.glob.as_deref()
    {
        let mut overrides = OverrideBuilder::new(root);
        for g in split_globs(globs) {
            overrides
                .add(&g)
                .map_err(|e| ToolError::msg(format!("Invalid glob {g:?}: {e}")))?;
        }
        let overrides = overrides
            .build()
            .map_err(|e| ToolError::msg(format!("Invalid glob: {e}")))?;
        walk.overrides(overrides);
    }
    if let Some(t) = input.file_type.as_deref() {
        let types = TypesBuilder::new()
            .add_defaults()
            .select(t)
            .build()
            .map_err(|e| ToolError::msg(format!("Invalid file type {t:?}: {e}")))?;
        walk.types(types);
    }
    Ok(walk)
}

/// The pagination note, when results were cut or an offset was given.
fn page_note(input: &GrepInput, cut: bool) -> String {
    if cut || input.offset.is_some_and(|o| o > 0) {
        format!(
            "\n\n[Showing results with pagination = limit: {}, offset: {}]",
            input
                .head_limit
                .map_or_else(|| "none".to_string(), |l| l.to_string()),
            input.offset.unwrap_or(0)
        )
    } else {
        String::new()
    }
}

/// The tool's answer: the text and raw output of the mode, then the notes
/// on withheld files and the limits applied.
fn grep_output(input: &GrepInput, mode: OutputMode, found: Collected) -> ToolOutput {
    let withheld = found.withheld;
    let (mut text, mut raw) = match mode {
        OutputMode::FilesWithMatches => files_output(input, found.files),
        OutputMode::Count => count_output(input, &found),
        OutputMode::Content => content_output(input, found),
    };
    if withheld > 0 {
        text.push_str(&withheld_note(withheld));
        raw["withheldFiles"] = json!(withheld);
    }
    if let Some(l) = input.head_limit {
        raw["appliedLimit"] = json!(l);
    }
    if let Some(o) = input.offset {
        raw["appliedOffset"] = json!(o);
    }
    ToolOutput::text(text).with_raw(raw)
}

/// `files_with_matches`: the matching files, newest first.
fn files_output(
    input: &GrepInput,
    mut files: Vec<(PathBuf, Option<SystemTime>)>,
) -> (String, Value) {
    sort_by_mtime(&mut files);
    let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
    let (page, cut) = paginate(names, input.offset, input.head_limit);
    let text = if page.is_empty() {
        "No files found".to_string()
    } else {
        format!(
            "Found {}\n{}{}",
            plural(page.len(), "file"),
            page.join("\n"),
            page_note(input, cut)
        )
    };
    let raw = json!({
        "mode": OutputMode::FilesWithMatches.as_str(),
        "numFiles": page.len(),
        "filenames": page,
    });
    (text, raw)
}

/// `count`: the number of matches per file and in all.
fn count_output(input: &GrepInput, found: &Collected) -> (String, Value) {
    let (counts, total_matches) = (&found.counts, found.total_matches);
    let num_files = found.files.len();
    let entries: Vec<String> = counts.iter().map(|(p, n)| format!("{p}:{n}")).collect();
    let (page, cut) = paginate(entries, input.offset, input.head_limit);
    let text = if counts.is_empty() {
        "No matches found".to_string()
    } else {
        format!(
            "{}\n\nFound {} total {} across {}.{}",
            page.join("\n"),
            total_matches,
            if total_matches == 1 {
                "occurrence"
            } else {
                "occurrences"
            },
            plural(num_files, "file"),
            page_note(input, cut)
        )
    };
    let names: Vec<String> = counts.iter().map(|(p, _)| p.clone()).collect();
    let raw = json!({
        "mode": OutputMode::Count.as_str(),
        "numFiles": num_files,
        "filenames": names,
        "content": page.join("\n"),
        "numMatches": total_matches,
    });
    (text, raw)
}

/// `content`: the matching lines (with context), cut to size.
fn content_output(input: &GrepInput, found: Collected) -> (String, Value) {
    let num_files = found.files.len();
    let content_full = found.content_full;
    let (page, cut) = paginate(found.lines, input.offset, input.head_limit);
    let cut = cut || content_full;
    let joined = page.join("\n");
    let text = if page.is_empty() {
        "No matches found".to_string()
    } else {
        let (kept, chars_cut) = truncate_chars(&joined, MAX_OUTPUT_CHARS);
        let mut text = kept.to_string();
        if chars_cut || (content_full && input.head_limit.is_none()) {
            text.push_str("\n… [output truncated]");
        }
        text.push_str(&page_note(input, cut && input.head_limit.is_some()));
        text
    };
    let names: Vec<String> = found.counts.iter().map(|(p, _)| p.clone()).collect();
    let raw = json!({
        "mode": OutputMode::Content.as_str(),
        "numFiles": num_files,
        "filenames": names,
        "content": joined,
        "numLines": page.len(),
    });
    (text, raw)
}
