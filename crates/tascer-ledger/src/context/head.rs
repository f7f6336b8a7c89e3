//! Where `HEAD` points, without the worktree status: [`git_head`] for a
//! process that asks once, [`GitHeads`] for one that asks at every event
//! (the hook server), which keeps each repository open between events.

use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use super::{ContextError, RepoSlot, discover_with, head_info};

/// How many working directories a [`GitHeads`] keeps a repository open
/// for (the most recently asked).
const KEPT: usize = 16;

/// Where `HEAD` of a repository points, read without the worktree status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitHead {
    /// The worktree root (or the git dir for a bare repository), lossy UTF-8.
    pub root: String,
    /// The commit `HEAD` resolves to (hex); `None` before the first commit.
    pub head: Option<String>,
    /// The short branch name `HEAD` points to; `None` when detached.
    pub branch: Option<String>,
    /// `HEAD` points directly at a commit.
    pub detached: bool,
}

/// `HEAD` of the repository enclosing `cwd` (`Ok(None)` outside one),
/// without the worktree status: what a process that captures context only
/// once can afford (`tascer hook` runs once per Claude Code event, and a
/// full status walks the whole worktree).
///
/// The repository is opened isolated: its own `.git/config` is read, but
/// not the system or user git configuration nor the `GIT_*` environment,
/// which say nothing about where `HEAD` points and would cost every hook
/// process a few more files.
pub fn git_head(cwd: &Path) -> Result<Option<GitHead>, ContextError> {
    match open_isolated(cwd)? {
        Some(repo) => read_head(&repo).map(Some),
        None => Ok(None),
    }
}

/// [`git_head`] for a process that answers many events: the repository
/// enclosing a working directory is opened once and kept (for the last 16
/// directories asked), and each call reads where `HEAD` points at that
/// moment.
///
/// A kept repository answers only while it still encloses the directory:
/// its git directory still has a `HEAD`, the worktree's `.git` is still
/// there, and no `.git` has appeared between the directory and the
/// worktree root (a repository created inside it since). Otherwise it is
/// opened again. Outside a repository nothing is kept.
#[derive(Default)]
pub struct GitHeads {
    /// Least recently asked first.
    kept: Mutex<Vec<Kept>>,
}

/// A repository kept open for the working directory `cwd`.
struct Kept {
    cwd: PathBuf,
    repo: gix::ThreadSafeRepository,
    /// Paths that exist while the repository is still `cwd`'s.
    must_exist: Vec<PathBuf>,
    /// Paths whose appearance would make a nearer repository `cwd`'s.
    must_not_exist: Vec<PathBuf>,
}

impl Kept {
    fn new(cwd: &Path, repo: &gix::Repository) -> Kept {
        let mut must_exist = vec![repo.git_dir().join("HEAD")];
        let mut must_not_exist = Vec::new();
        if let Some(root) = repo.workdir() {
            must_exist.push(root.join(".git"));
            for dir in cwd.ancestors().take_while(|dir| *dir != root) {
                must_not_exist.push(dir.join(".git"));
            }
        }
        Kept {
            cwd: cwd.to_path_buf(),
            repo: repo.clone().into_sync(),
            must_exist,
            must_not_exist,
        }
    }

    fn still_encloses(&self) -> bool {
        let exists = |path: &PathBuf| std::fs::symlink_metadata(path).is_ok();
        self.must_exist.iter().all(exists) && !self.must_not_exist.iter().any(exists)
    }
}

impl GitHeads {
    /// An empty set: the first call for a directory opens its repository.
    pub fn new() -> Self {
        Self::default()
    }

    /// Where `HEAD` of the repository enclosing `cwd` points now
    /// (`Ok(None)` outside one), as [`git_head`] reads it.
    pub fn head(&self, cwd: &Path) -> Result<Option<GitHead>, ContextError> {
        if let Some(repo) = self.kept(cwd) {
            return read_head(&repo).map(Some);
        }
        let Some(repo) = open_isolated(cwd)? else {
            return Ok(None);
        };
        let head = read_head(&repo)?;
        self.keep(Kept::new(cwd, &repo));
        Ok(Some(head))
    }

    /// The repository kept for `cwd`, if it still encloses it.
    fn kept(&self, cwd: &Path) -> Option<gix::Repository> {
        let mut kept = self.kept.lock();
        let at = kept.iter().position(|k| k.cwd == cwd)?;
        let entry = kept.remove(at);
        if !entry.still_encloses() {
            return None;
        }
        let repo = entry.repo.to_thread_local();
        kept.push(entry);
        Some(repo)
    }

    fn keep(&self, entry: Kept) {
        let mut kept = self.kept.lock();
        kept.retain(|k| k.cwd != entry.cwd);
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push(entry);
    }
}

/// The repository enclosing `cwd`, opened isolated (see [`git_head`]).
fn open_isolated(cwd: &Path) -> Result<Option<gix::Repository>, ContextError> {
    let isolated = gix::open::Options::isolated();
    let trust = gix::sec::trust::Mapping {
        full: isolated.clone(),
        reduced: isolated,
    };
    match discover_with(cwd, trust)? {
        RepoSlot::Open(repo) => Ok(Some(*repo)),
        RepoSlot::NotARepo | RepoSlot::Unknown => Ok(None),
    }
}

fn read_head(repo: &gix::Repository) -> Result<GitHead, ContextError> {
    let head = head_info(repo)?;
    let root = repo.workdir().unwrap_or_else(|| repo.git_dir());
    Ok(GitHead {
        root: root.to_string_lossy().into_owned(),
        head: head.head,
        branch: head.branch,
        detached: head.detached,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn committed_repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        std::fs::create_dir_all(dir.path().join("sub/deeper")).unwrap();
        std::fs::write(dir.path().join("sub/deeper/f"), "x").unwrap();
        git(dir.path(), &["add", "."]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        dir
    }

    #[test]
    fn a_kept_repository_is_reused_and_reads_head_each_time() {
        let dir = committed_repo();
        let cwd = dir.path().join("sub/deeper");
        let heads = GitHeads::new();
        let first = heads.head(&cwd).unwrap().unwrap();
        assert_eq!(first, git_head(&cwd).unwrap().unwrap());
        assert_eq!(heads.kept.lock().len(), 1);
        assert!(heads.kept.lock()[0].still_encloses());
        // HEAD moves: a new branch, then a new commit on it.
        git(dir.path(), &["checkout", "-q", "-b", "other"]);
        git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "two"]);
        let moved = heads.head(&cwd).unwrap().unwrap();
        assert_eq!(moved.branch.as_deref(), Some("other"));
        assert_eq!(moved.head, Some(git(dir.path(), &["rev-parse", "HEAD"])));
        assert_ne!(moved.head, first.head);
        let kept = heads.kept.lock();
        assert_eq!(kept.len(), 1);
        assert!(kept[0].still_encloses(), "the kept repository answers");
    }

    #[test]
    fn a_repository_created_inside_the_kept_one_takes_over() {
        let dir = committed_repo();
        let cwd = dir.path().join("sub/deeper");
        let heads = GitHeads::new();
        let outer = heads.head(&cwd).unwrap().unwrap();
        git(&dir.path().join("sub"), &["init", "-q"]);
        let inner = heads.head(&cwd).unwrap().unwrap();
        assert_ne!(inner.root, outer.root);
        assert_eq!(inner.head, None, "the new repository has no commit");
        assert_eq!(inner, git_head(&cwd).unwrap().unwrap());
    }

    #[test]
    fn a_removed_repository_is_not_answered_from_the_cache() {
        let dir = committed_repo();
        let cwd = dir.path().join("sub");
        let heads = GitHeads::new();
        assert!(heads.head(&cwd).unwrap().is_some());
        std::fs::remove_dir_all(dir.path().join(".git")).unwrap();
        assert_eq!(heads.head(&cwd).unwrap(), None);
        assert!(heads.kept.lock().is_empty());
    }

    #[test]
    fn only_the_last_directories_are_kept() {
        let dir = committed_repo();
        let heads = GitHeads::new();
        for i in 0..KEPT + 3 {
            let cwd = dir.path().join(format!("d{i}"));
            std::fs::create_dir(&cwd).unwrap();
            assert!(heads.head(&cwd).unwrap().is_some());
        }
        let kept = heads.kept.lock();
        assert_eq!(kept.len(), KEPT);
        assert_eq!(kept[0].cwd, dir.path().join("d3"));
    }
}
