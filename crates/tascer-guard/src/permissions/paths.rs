//! Path canonicalization for permission checks.
//!
//! [`canonicalize`] resolves `~`, relative paths, `.`/`..` and every
//! symlink on the way — including a symlinked parent of a file that does not
//! exist yet and dangling symlinks whose target would be created — the way the
//! kernel would when the tool opens the path. `/proc/self/root/…` and similar
//! magic links are resolved by the kernel's own `readlink`. Comparison is
//! case-sensitive even on case-insensitive filesystems (where `canonicalize`
//! still returns the stored case for existing components).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::call::ToolCall;
use super::mode::{EDIT_TOOLS, READ_TOOLS};

const MAX_LINKS: usize = 40;

/// Expands a leading `~` or `~/` with `home`.
pub fn expand_home(path: &str, home: Option<&Path>) -> PathBuf {
    match (path, home) {
        ("~", Some(h)) => h.to_path_buf(),
        (p, Some(h)) if p.starts_with("~/") => h.join(&p[2..]),
        (p, _) => PathBuf::from(p),
    }
}

/// Canonicalizes `path` (relative to `cwd`) without requiring it to exist.
pub fn canonicalize(path: &Path, cwd: &Path, home: Option<&Path>) -> PathBuf {
    let path = match path.to_str() {
        Some(s) if s == "~" || s.starts_with("~/") => expand_home(s, home),
        _ => path.to_path_buf(),
    };
    let abs = if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    };
    let mut links = 0;
    resolve(&abs, &mut links)
}

fn resolve(abs: &Path, links: &mut usize) -> PathBuf {
    let mut out = PathBuf::from("/");
    let mut pending: Vec<OsString> = abs
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    while let Some(part) = pending.pop() {
        if part == ".." {
            out.pop();
            continue;
        }
        let candidate = out.join(&part);
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                *links += 1;
                if *links > MAX_LINKS {
                    // A loop: give up resolving, keep the lexical path.
                    out = candidate;
                    continue;
                }
                match std::fs::read_link(&candidate) {
                    Ok(target) => {
                        if target.is_absolute() {
                            out = PathBuf::from("/");
                        }
                        for c in target.components().rev() {
                            match c {
                                Component::Normal(s) => pending.push(s.to_os_string()),
                                Component::ParentDir => pending.push(OsString::from("..")),
                                _ => {}
                            }
                        }
                    }
                    Err(_) => out = candidate,
                }
            }
            _ => out = candidate,
        }
    }
    out
}

/// True when `path` is `root` or inside it (both canonical).
pub fn is_within(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

/// A path a file tool would touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetPath {
    /// The path as written, made absolute (not resolved).
    pub lexical: PathBuf,
    /// The canonical path.
    pub canonical: PathBuf,
    /// True when the input names a directory to search (Glob/Grep `path`).
    pub is_dir: bool,
    /// True when the tool writes to it.
    pub write: bool,
}

/// The paths a file tool call touches (`file_path`, `notebook_path`,
/// `path`; Glob/Grep default to the working directory). Empty for other
/// tools.
pub fn target_paths(call: &ToolCall, home: Option<&Path>) -> Vec<TargetPath> {
    let tool = call.tool_name.as_str();
    let write = EDIT_TOOLS.contains(&tool);
    if !write && !READ_TOOLS.contains(&tool) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut push = |raw: &str, is_dir: bool| {
        let expanded = expand_home(raw, home);
        let lexical = if expanded.is_absolute() {
            expanded
        } else {
            call.cwd.join(expanded)
        };
        let canonical = canonicalize(&lexical, &call.cwd, home);
        out.push(TargetPath {
            lexical,
            canonical,
            is_dir,
            write,
        });
    };
    let mut any = false;
    for key in ["file_path", "notebook_path"] {
        if let Some(p) = call.input.get(key).and_then(Value::as_str) {
            push(p, false);
            any = true;
        }
    }
    if let Some(p) = call.input.get("path").and_then(Value::as_str) {
        push(p, tool == "Glob" || tool == "Grep" || tool == "LS");
        any = true;
    }
    if !any && (tool == "Glob" || tool == "Grep") {
        let cwd = call.cwd.to_string_lossy().into_owned();
        push(&cwd, true);
    }
    // A Glob pattern may itself climb out (`../../etc/*`, `/etc/*`).
    if tool == "Glob"
        && let Some(pattern) = call.input.get("pattern").and_then(Value::as_str)
    {
        let base = literal_prefix_dir(pattern);
        if !base.is_empty()
            && (pattern.starts_with('/') || pattern.starts_with('~') || base.contains(".."))
        {
            let dir = call
                .input
                .get("path")
                .and_then(Value::as_str)
                .map(|p| expand_home(p, home))
                .unwrap_or_else(|| call.cwd.clone());
            let joined = dir.join(expand_home(&base, home));
            push(&joined.to_string_lossy(), true);
        }
    }
    out
}

/// The directories of a glob pattern before its first wildcard.
fn literal_prefix_dir(pattern: &str) -> String {
    let cut = pattern.find(['*', '?', '[', '{']).unwrap_or(pattern.len());
    let head = &pattern[..cut];
    match head.rfind('/') {
        Some(0) => "/".to_string(),
        Some(i) => head[..i].to_string(),
        None => String::new(),
    }
}
