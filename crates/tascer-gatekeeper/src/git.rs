//! Git plumbing for the gatekeeper: the working-tree digest that ties
//! `check` → `confirm` → `commit` to one state, the diff a reviewer reads,
//! and `commit` / `push` through the `git` CLI.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::error::{GatekeeperError, Result};

/// Output of one git command.
#[derive(Debug)]
pub(crate) struct GitOutput {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
}

impl GitOutput {
    /// True when git exited 0.
    pub fn ok(&self) -> bool {
        self.code == 0
    }
}

/// Runs `git <args>` in `repo` (no prompts for credentials).
pub(crate) async fn git(repo: &Path, args: &[&str]) -> Result<GitOutput> {
    let out = tokio::process::Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|source| GatekeeperError::GitSpawn {
            args: args.join(" "),
            repo: repo.to_path_buf(),
            source,
        })?;
    Ok(GitOutput {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Like [`git`], failing with git's stderr when it exits non-zero.
async fn git_ok(repo: &Path, args: &[&str]) -> Result<String> {
    let out = git(repo, args).await?;
    if !out.ok() {
        return Err(GatekeeperError::GitFailed {
            args: args.join(" "),
            stderr: out.stderr.trim().to_owned(),
        });
    }
    Ok(out.stdout)
}

/// The top level of the work tree containing `path`.
pub(crate) async fn repo_root(path: &Path) -> Result<PathBuf> {
    let out = git(path, &["rev-parse", "--show-toplevel"]).await?;
    if !out.ok() {
        return Err(GatekeeperError::NotARepository {
            path: path.to_path_buf(),
            stderr: out.stderr.trim().to_owned(),
        });
    }
    Ok(PathBuf::from(out.stdout.trim()))
}

/// `HEAD`'s commit id, or `None` before the first commit.
async fn head(repo: &Path) -> Result<Option<String>> {
    let out = git(repo, &["rev-parse", "--verify", "--quiet", "HEAD"]).await?;
    Ok(out.ok().then(|| out.stdout.trim().to_owned()))
}

/// The tracked changes (staged and unstaged) against `HEAD` as a binary
/// patch; against the empty tree before the first commit.
pub(crate) async fn diff(repo: &Path) -> Result<String> {
    match head(repo).await? {
        Some(_) => {
            git_ok(
                repo,
                &["diff", "HEAD", "--binary", "--no-color", "--no-ext-diff"],
            )
            .await
        }
        None => {
            git_ok(
                repo,
                &[
                    "diff",
                    "--cached",
                    "--binary",
                    "--no-color",
                    "--no-ext-diff",
                ],
            )
            .await
        }
    }
}

/// Untracked, not ignored files (paths relative to the repo root).
pub(crate) async fn untracked(repo: &Path) -> Result<Vec<String>> {
    let out = git_ok(repo, &["ls-files", "--others", "--exclude-standard", "-z"]).await?;
    Ok(out
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect())
}

/// A digest of the working-tree state: `HEAD`, the diff against it and
/// every untracked file's path and content. Two states with the same
/// digest have the same files.
pub(crate) async fn tree_digest(repo: &Path) -> Result<String> {
    let mut material = Vec::new();
    material.extend_from_slice(b"head\0");
    material.extend_from_slice(head(repo).await?.unwrap_or_default().as_bytes());
    material.extend_from_slice(b"\0diff\0");
    material.extend_from_slice(diff(repo).await?.as_bytes());
    for file in untracked(repo).await? {
        material.extend_from_slice(b"\0untracked\0");
        material.extend_from_slice(file.as_bytes());
        material.push(0);
        let content = match tokio::fs::read(repo.join(&file)).await {
            Ok(bytes) => tascer_ledger::sha256_ref(&bytes),
            Err(e) => format!("unreadable: {}", e.kind()),
        };
        material.extend_from_slice(content.as_bytes());
    }
    Ok(tascer_ledger::sha256_ref(&material))
}

/// The diff a reviewer reads: tracked changes plus the content of
/// untracked text files, each cut at `max_bytes` in total.
pub(crate) async fn review_diff(repo: &Path, max_bytes: usize) -> Result<String> {
    let mut text = diff(repo).await?;
    for file in untracked(repo).await? {
        if text.len() >= max_bytes {
            break;
        }
        match tokio::fs::read(repo.join(&file)).await {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(content) => {
                    text.push_str(&format!("\nnew file {file}\n--- /dev/null\n+++ b/{file}\n"));
                    for line in content.lines() {
                        text.push('+');
                        text.push_str(line);
                        text.push('\n');
                    }
                }
                Err(e) => text.push_str(&format!(
                    "\nnew binary file {file} ({} bytes)\n",
                    e.as_bytes().len()
                )),
            },
            Err(e) => text.push_str(&format!("\nnew file {file} (unreadable: {e})\n")),
        }
    }
    if text.len() > max_bytes {
        let mut cut = max_bytes;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let total = text.len();
        text.truncate(cut);
        text.push_str(&format!("\n[diff cut at {max_bytes} of {total} bytes]\n"));
    }
    Ok(text)
}

/// One changed path from `git status --porcelain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// `added`, `modified`, `deleted`, `renamed`.
    pub kind: &'static str,
    /// The path (the new one for a rename).
    pub path: String,
}

/// The changes `git add -A` would stage.
pub(crate) async fn changes(repo: &Path) -> Result<Vec<Change>> {
    let out = git_ok(
        repo,
        &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
    )
    .await?;
    let mut changes = Vec::new();
    let mut fields = out.split('\0').filter(|f| !f.is_empty());
    while let Some(entry) = fields.next() {
        let (status, path) = entry.split_at(entry.len().min(3));
        let code = status.trim();
        let kind = if code.contains('R') {
            // A rename is followed by its source path.
            let _ = fields.next();
            "renamed"
        } else if code.contains('D') {
            "deleted"
        } else if code.contains('A') || code == "??" {
            "added"
        } else {
            "modified"
        };
        changes.push(Change {
            kind,
            path: path.to_owned(),
        });
    }
    Ok(changes)
}

/// A one-line commit message naming what changed, e.g.
/// `Update 3 files: add src/x.rs; modify README.md, Cargo.toml`.
pub(crate) fn fallback_message(changes: &[Change]) -> String {
    let mut parts = Vec::new();
    for (kind, verb) in [
        ("added", "add"),
        ("modified", "modify"),
        ("deleted", "delete"),
        ("renamed", "rename"),
    ] {
        let paths: Vec<&str> = changes
            .iter()
            .filter(|c| c.kind == kind)
            .map(|c| c.path.as_str())
            .collect();
        if paths.is_empty() {
            continue;
        }
        let shown = paths.iter().take(4).copied().collect::<Vec<_>>().join(", ");
        let more = if paths.len() > 4 {
            format!(" and {} more", paths.len() - 4)
        } else {
            String::new()
        };
        parts.push(format!("{verb} {shown}{more}"));
    }
    let n = changes.len();
    let noun = if n == 1 { "file" } else { "files" };
    format!("Update {n} {noun}: {}", parts.join("; "))
}

/// `git add -A` and `git commit -m message`; returns the new commit id.
pub(crate) async fn commit_all(repo: &Path, message: &str) -> Result<String> {
    git_ok(repo, &["add", "-A"]).await?;
    git_ok(repo, &["commit", "-q", "-m", message]).await?;
    Ok(git_ok(repo, &["rev-parse", "HEAD"])
        .await?
        .trim()
        .to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn fallback_messages() {
        let c = |kind, path: &str| Change {
            kind,
            path: path.into(),
        };
        assert_eq!(
            fallback_message(&[c("added", "a.rs"), c("modified", "b.rs")]),
            "Update 2 files: add a.rs; modify b.rs"
        );
        let many: Vec<Change> = (0..6).map(|i| c("deleted", &format!("f{i}"))).collect();
        assert_eq!(
            fallback_message(&many),
            "Update 6 files: delete f0, f1, f2, f3 and 2 more"
        );
        assert_eq!(
            fallback_message(&[c("modified", "x")]),
            "Update 1 file: modify x"
        );
    }
}
