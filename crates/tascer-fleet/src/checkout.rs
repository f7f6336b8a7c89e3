//! A worker's checkouts: one bare clone per repository (fetched when a
//! job's base commit is missing), a fresh worktree per job on the job's
//! own branch, and the push of that branch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use tascer_contracts::{ContractError, Worktree, add_worktree, git};

use crate::error::{FleetError, Result};

/// The repositories and worktrees under a worker's directory.
#[derive(Debug)]
pub struct Checkouts {
    root: PathBuf,
    /// Serializes clone, fetch and worktree changes per repository.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Checkouts {
    /// Checkouts under `root` (created when needed).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Checkouts {
            root: root.into(),
            locks: Mutex::new(HashMap::new()),
        }
    }

    /// The bare clone of `repo`.
    fn cache_dir(&self, repo: &str) -> PathBuf {
        let digest = crate::queue::content_sha256(repo);
        self.root
            .join("repos")
            .join(format!("{}.git", &digest[..16]))
    }

    async fn lock(&self, repo: &str) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self.locks.lock();
            Arc::clone(locks.entry(repo.to_string()).or_default())
        };
        lock.lock_owned().await
    }

    /// A fresh worktree of `repo` at `path` on a new `branch` starting at
    /// `base` (a commit id): clones `repo` the first time, fetches it when
    /// `base` is not there yet.
    pub async fn checkout(
        &self,
        repo: &str,
        base: &str,
        branch: &str,
        path: &Path,
    ) -> Result<Worktree> {
        let _guard = self.lock(repo).await;
        let cache = self.cache_dir(repo);
        if !cache.join("HEAD").is_file() {
            if cache.exists() {
                // A clone cut short (the worker was killed).
                std::fs::remove_dir_all(&cache).map_err(|e| {
                    FleetError::Other(format!("cannot remove {}: {e}", cache.display()))
                })?;
            }
            let parent = cache.parent().unwrap_or(&self.root);
            std::fs::create_dir_all(parent).map_err(|e| {
                FleetError::Other(format!("cannot create {}: {e}", parent.display()))
            })?;
            let target = cache.to_string_lossy().into_owned();
            git(parent, &["clone", "--bare", "--quiet", repo, &target]).await?;
        }
        let wanted = format!("{base}^{{commit}}");
        if git(&cache, &["cat-file", "-e", &wanted]).await.is_err() {
            git(
                &cache,
                &[
                    "fetch",
                    "--quiet",
                    repo,
                    "+refs/heads/*:refs/remotes/origin/*",
                    "+refs/tags/*:refs/tags/*",
                ],
            )
            .await?;
            if git(&cache, &["cat-file", "-e", &wanted]).await.is_err() {
                // A commit no branch holds: some servers serve it by id.
                let _ = git(&cache, &["fetch", "--quiet", repo, base]).await;
            }
            if git(&cache, &["cat-file", "-e", &wanted]).await.is_err() {
                return Err(FleetError::Other(format!(
                    "the base commit {base} is not in {repo}: push it, then enqueue again"
                )));
            }
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                FleetError::Other(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        Ok(add_worktree(&cache, branch, path, base).await?)
    }

    /// Removes a job's worktree and its local branch (the pushed branch
    /// stays on the remote).
    pub async fn remove(&self, repo: &str, wt: &Worktree) -> Result<(), ContractError> {
        let _guard = self.lock(repo).await;
        let p = wt.path.to_string_lossy().into_owned();
        let removed = git(&wt.repo, &["worktree", "remove", "--force", &p]).await;
        if removed.is_err() {
            let _ = std::fs::remove_dir_all(&wt.path);
            let _ = git(&wt.repo, &["worktree", "prune"]).await;
        }
        git(&wt.repo, &["branch", "-D", &wt.branch]).await?;
        Ok(())
    }
}

/// Pushes the worktree's branch to `remote` (a URL or path) as a new branch
/// of the same name; never forced, so an existing branch is never
/// overwritten.
pub async fn push(wt: &Worktree, remote: &str) -> Result<(), ContractError> {
    let refspec = format!("refs/heads/{0}:refs/heads/{0}", wt.branch);
    git(
        &wt.path,
        &["push", "--quiet", "--no-verify", remote, &refspec],
    )
    .await?;
    Ok(())
}

/// Deletes `branch` from `remote` (a stale attempt's push).
pub async fn delete_remote_branch(
    wt: &Worktree,
    remote: &str,
    branch: &str,
) -> Result<(), ContractError> {
    let refspec = format!(":refs/heads/{branch}");
    git(
        &wt.path,
        &["push", "--quiet", "--no-verify", remote, &refspec],
    )
    .await?;
    Ok(())
}
