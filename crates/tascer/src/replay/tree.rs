//! The scratch tree a replay runs in: a git worktree of the original
//! repository at the commit the session started from, or a copy of a
//! directory the user names (`--tree`). Removed when the replay ends,
//! unless kept.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;
use tascer_ledger::ContextSnapshot;

use super::error::ReplayError;

/// Where the scratch tree came from.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TreeSource {
    /// A git worktree of `repo` at `commit`.
    Commit {
        /// The original repository.
        repo: PathBuf,
        /// The commit the session started from.
        commit: String,
    },
    /// A copy of a directory (`--tree`).
    Copy {
        /// The directory copied.
        dir: PathBuf,
    },
}

/// The scratch tree of one replay.
pub(crate) struct Scratch {
    /// The temporary directory holding it.
    base: PathBuf,
    /// The tree's root (a worktree's top, or the copy).
    pub root: PathBuf,
    /// The directory the replayed session runs in.
    pub cwd: PathBuf,
    /// The directory of the record that `root` stands for.
    pub stands_for: PathBuf,
    /// Where it came from.
    pub source: TreeSource,
    /// Left in place when the replay ends.
    pub keep: bool,
}

impl Scratch {
    /// A copy of `dir`, standing for the recorded working directory.
    pub fn copy_of(dir: &Path, recorded_cwd: &Path, keep: bool) -> Result<Scratch, ReplayError> {
        let dir = dir
            .canonicalize()
            .map_err(|e| ReplayError::Tree(format!("--tree {}: {e}", dir.display())))?;
        if !dir.is_dir() {
            return Err(ReplayError::Tree(format!(
                "--tree {}: not a directory",
                dir.display()
            )));
        }
        let base = new_base()?;
        let root = base.join("tree");
        copy_dir(&dir, &root).map_err(|e| {
            ReplayError::Tree(format!(
                "copying {} to the scratch tree: {e}",
                dir.display()
            ))
        })?;
        Ok(Scratch {
            cwd: root.clone(),
            root,
            base,
            stands_for: recorded_cwd.to_path_buf(),
            source: TreeSource::Copy { dir },
            keep,
        })
    }

    /// A git worktree at the commit `context` (the first call's) names,
    /// when that tree can be rebuilt exactly: a repository, a commit, and
    /// nothing changed or untracked at the start.
    pub fn at_commit(
        session: &str,
        context: Option<&ContextSnapshot>,
        recorded_cwd: &Path,
        keep: bool,
    ) -> Result<Scratch, ReplayError> {
        let ask_tree = "pass --tree DIR with the tree it started from";
        let Some(context) = context else {
            return Err(ReplayError::Tree(format!(
                "session {session} recorded no tool call, so no starting tree; {ask_tree}"
            )));
        };
        let Some(git) = &context.git else {
            let why = context
                .git_error
                .as_deref()
                .unwrap_or("not a git repository, or git state not captured");
            return Err(ReplayError::Tree(format!(
                "the starting tree of session {session} cannot be rebuilt: {} has no recorded git state ({why}); {ask_tree}",
                context.cwd
            )));
        };
        let Some(commit) = &git.head else {
            return Err(ReplayError::Tree(format!(
                "the starting tree of session {session} cannot be rebuilt: {} had no commit yet; {ask_tree}",
                git.root
            )));
        };
        if !git.dirty.is_empty() || git.untracked_count > 0 {
            let mut changed = git.dirty.clone();
            changed.extend(git.untracked.iter().cloned());
            return Err(ReplayError::Tree(format!(
                "the starting tree of session {session} cannot be rebuilt exactly: {} had uncommitted changes at the start \
                 (commit {commit} plus {}), which are not recorded; {ask_tree}",
                git.root,
                changed.join(", ")
            )));
        }
        let repo = PathBuf::from(&git.root);
        let base = new_base()?;
        let root = base.join("tree");
        git_in(&repo, &["cat-file", "-e", &format!("{commit}^{{commit}}")]).map_err(|e| {
            ReplayError::Tree(format!(
                "the starting commit {commit} of session {session} is not in {}: {e}; {ask_tree}",
                repo.display()
            ))
        })?;
        let root_text = root.display().to_string();
        git_in(
            &repo,
            &["worktree", "add", "--detach", "--quiet", &root_text, commit],
        )
        .map_err(|e| ReplayError::Tree(format!("git worktree add at {commit}: {e}")))?;
        let inside = recorded_cwd.strip_prefix(&repo).unwrap_or(Path::new(""));
        Ok(Scratch {
            cwd: root.join(inside),
            root,
            base,
            stands_for: repo.clone(),
            source: TreeSource::Commit {
                repo,
                commit: commit.clone(),
            },
            keep,
        })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if let TreeSource::Commit { repo, .. } = &self.source {
            let root = self.root.display().to_string();
            if let Err(e) = git_in(repo, &["worktree", "remove", "--force", &root]) {
                tracing::warn!("could not remove the replay's worktree {root}: {e}");
            }
        }
        if let Err(e) = std::fs::remove_dir_all(&self.base) {
            tracing::warn!("could not remove {}: {e}", self.base.display());
        }
    }
}

/// A new, empty temporary directory for one replay.
fn new_base() -> Result<PathBuf, ReplayError> {
    let base = std::env::temp_dir().join(format!("tascer-replay-{}", tascer_core::new_id()));
    std::fs::create_dir_all(&base)
        .map_err(|e| ReplayError::Tree(format!("creating {}: {e}", base.display())))?;
    base.canonicalize()
        .map_err(|e| ReplayError::Tree(format!("{}: {e}", base.display())))
}

/// Runs `git -C repo args…`; its stderr on failure.
fn git_in(repo: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Copies `from` into `to` (created), files, directories and symlinks.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
