//! Project memory: the `CLAUDE.md` / `AGENTS.md` instruction files Claude
//! Code users keep, loaded into the system prompt.
//!
//! Which files are read follows the session's setting sources, as in
//! Claude Code: `user` reads `~/.claude/CLAUDE.md`; `project` reads
//! `CLAUDE.md`, `.claude/CLAUDE.md` and `AGENTS.md` in the working
//! directory and each parent up to the repository root (or the filesystem
//! root outside a repository); `local` reads `CLAUDE.local.md` in the same
//! directories. A file can pull in others with `@path` imports.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tascer_guard::settings::SettingsSource;

/// How many `@path` hops are followed from a memory file (Claude Code's
/// limit).
pub const MAX_IMPORT_DEPTH: usize = 5;

/// Where a memory file comes from (Claude Code's `memory_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum MemoryKind {
    /// The user's own instructions for every project.
    User,
    /// Instructions checked into the project.
    Project,
    /// The user's private instructions for this project.
    Local,
}

impl MemoryKind {
    /// How the system prompt introduces a file of this kind.
    fn label(self) -> &'static str {
        match self {
            MemoryKind::User => "user's private global instructions for all projects",
            MemoryKind::Project => "project instructions, checked into the codebase",
            MemoryKind::Local => "user's private project instructions, not checked in",
        }
    }
}

/// One loaded memory file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryFile {
    /// Its path.
    pub path: PathBuf,
    /// Where it comes from.
    #[serde(rename = "type")]
    pub kind: MemoryKind,
    /// `sha256:<hex>` of its bytes, as read.
    pub sha256: String,
    /// The file whose `@path` import loaded it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported_from: Option<PathBuf>,
    /// Its text.
    #[serde(skip)]
    pub content: String,
}

/// Where memory files are looked for.
#[derive(Debug, Clone)]
pub struct MemoryLocations<'a> {
    /// The working directory.
    pub cwd: &'a Path,
    /// The user's Claude directory (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub user_dir: Option<&'a Path>,
    /// The user's home directory, for `@~/…` imports.
    pub home: Option<&'a Path>,
}

/// The user's Claude directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn default_user_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(dir.into());
    }
    std::env::home_dir().map(|h| h.join(".claude"))
}

/// Loads the memory files `sources` select, in prompt order: user first,
/// then each directory from the farthest parent down to `cwd`, each file
/// followed by what it imports. A file is loaded once, however often it is
/// named. An unreadable file is skipped with a warning.
pub fn load(locations: &MemoryLocations<'_>, sources: &[SettingsSource]) -> Vec<MemoryFile> {
    let mut loader = Loader {
        home: locations.home,
        seen: HashSet::new(),
        files: Vec::new(),
    };
    if sources.contains(&SettingsSource::User)
        && let Some(dir) = locations.user_dir
    {
        loader.add(&dir.join("CLAUDE.md"), MemoryKind::User, None, 0);
    }
    let project = sources.contains(&SettingsSource::Project);
    let local = sources.contains(&SettingsSource::Local);
    if project || local {
        for dir in project_dirs(locations.cwd) {
            if project {
                loader.add(&dir.join("CLAUDE.md"), MemoryKind::Project, None, 0);
                loader.add(
                    &dir.join(".claude").join("CLAUDE.md"),
                    MemoryKind::Project,
                    None,
                    0,
                );
                loader.add(&dir.join("AGENTS.md"), MemoryKind::Project, None, 0);
            }
            if local {
                loader.add(&dir.join("CLAUDE.local.md"), MemoryKind::Local, None, 0);
            }
        }
    }
    loader.files
}

/// The directories whose memory files apply, farthest first: from the
/// repository root (the nearest parent with `.git`), or the filesystem root
/// outside a repository, down to `cwd`.
fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            break;
        }
    }
    dirs.reverse();
    dirs
}

/// The system prompt section holding the memory files, or `None` when
/// there are none.
pub fn prompt_section(files: &[MemoryFile]) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let mut out = String::from(
        "# Memory\n\
         Codebase and user instructions are shown below. Be sure to adhere to these \
         instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you \
         MUST follow them exactly as written.\n",
    );
    for file in files {
        out.push_str(&format!(
            "\nContents of {} ({}):\n\n{}\n",
            file.path.display(),
            file.kind.label(),
            file.content.trim_end()
        ));
    }
    Some(out)
}

struct Loader<'a> {
    home: Option<&'a Path>,
    seen: HashSet<PathBuf>,
    files: Vec<MemoryFile>,
}

impl Loader<'_> {
    /// Loads `path` (when it is a file not loaded before), then its imports.
    fn add(&mut self, path: &Path, kind: MemoryKind, from: Option<&Path>, depth: usize) {
        if !path.is_file() {
            return;
        }
        let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if !self.seen.insert(key) {
            return;
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(err) => {
                tracing::warn!("memory file {} not loaded: {err}", path.display());
                return;
            }
        };
        let content = String::from_utf8_lossy(&bytes).into_owned();
        let imports = imports_of(&content);
        self.files.push(MemoryFile {
            path: path.to_path_buf(),
            kind,
            sha256: format!("sha256:{}", tascer_ledger::sha256_hex(&bytes)),
            imported_from: from.map(Path::to_path_buf),
            content,
        });
        if depth >= MAX_IMPORT_DEPTH {
            if !imports.is_empty() {
                tracing::warn!(
                    "imports of {} not followed: more than {MAX_IMPORT_DEPTH} hops of @imports",
                    path.display()
                );
            }
            return;
        }
        let base = path.parent().unwrap_or(Path::new("."));
        for import in imports {
            if let Some(target) = self.resolve(&import, base) {
                self.add(&target, kind, Some(path), depth + 1);
            }
        }
    }

    /// The file an `@path` names: `~/…` under home, absolute as is, else
    /// relative to the importing file's directory.
    fn resolve(&self, import: &str, base: &Path) -> Option<PathBuf> {
        if let Some(rest) = import.strip_prefix("~/") {
            return self.home.map(|h| h.join(rest));
        }
        let path = Path::new(import);
        Some(if path.is_absolute() {
            path.to_path_buf()
        } else {
            base.join(path)
        })
    }
}

/// The `@path` imports of a memory file's text: an `@` at the start of a
/// line or after whitespace, up to the next whitespace. Nothing inside
/// fenced code blocks or inline code spans counts. Names that are not
/// files (an `@mention`) are dropped when resolved.
pub fn imports_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => {
                fence = Some(m);
                continue;
            }
            (Some(open), Some(m)) if open == m => {
                fence = None;
                continue;
            }
            (Some(_), _) => continue,
            (None, None) => {}
        }
        let mut in_code = false;
        let mut prev_space = true;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '`' {
                in_code = !in_code;
            } else if c == '@' && prev_space && !in_code {
                let rest = &line[i + 1..];
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                let name = &rest[..end];
                if !name.is_empty() {
                    out.push(name.to_string());
                }
                // Skip the path itself.
                while chars.peek().is_some_and(|(j, _)| *j <= i + end) {
                    chars.next();
                }
                prev_space = false;
                continue;
            }
            prev_space = c.is_whitespace();
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn home_imports_resolve_under_the_home_directory() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(home.join("notes")).unwrap();
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(home.join("notes/style.md"), "HOME-STYLE").unwrap();
        std::fs::write(ws.join("CLAUDE.md"), "@~/notes/style.md @~/absent.md").unwrap();
        let files = load(
            &MemoryLocations {
                cwd: &ws,
                user_dir: None,
                home: Some(&home),
            },
            &[SettingsSource::Project],
        );
        let texts: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert!(texts.contains(&"HOME-STYLE"), "{texts:?}");
        assert_eq!(files.len(), 2);
    }

    #[test]
    fn imports_skip_code_spans_blocks_and_mid_word_ats() {
        let text = "See @docs/a.md and @~/b.md.\n\
                    mail me at me@example.com\n\
                    `@not/this.md` but @this.md\n\
                    ```\n@in/block.md\n```\n\
                    ~~~sh\n@also/block.md\n~~~\n\
                    @last.md";
        assert_eq!(
            imports_of(text),
            vec!["docs/a.md", "~/b.md.", "this.md", "last.md"]
        );
    }
}
