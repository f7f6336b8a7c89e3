//! Git worktrees for contracts run in parallel: each contract gets its own
//! worktree on branch `contracts/<name>`; Tascer (not the agent) commits
//! the changes there with trailers naming the session and its ledger head,
//! and [`merge_branches`] brings completed branches back — a conflict is
//! reported and the merge aborted, never forced.

use std::path::{Path, PathBuf};

use tokio::process::Command;

use crate::error::ContractError;

/// Prefix of contract branches.
pub const BRANCH_PREFIX: &str = "contracts/";

/// A contract's worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// The repository's top-level directory.
    pub repo: PathBuf,
    /// The worktree directory.
    pub path: PathBuf,
    /// Its branch (`contracts/<name>`).
    pub branch: String,
}

/// Runs git in `dir` (no terminal prompts, no standard input); its
/// standard output, trimmed, on success, else git's error output.
pub async fn git(dir: &Path, args: &[&str]) -> Result<String, ContractError> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| ContractError::Git {
            command: args.join(" "),
            message: format!("cannot run git: {e}"),
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        let mut message = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if message.is_empty() {
            message = String::from_utf8_lossy(&out.stdout).trim().to_string();
        }
        Err(ContractError::Git {
            command: args.join(" "),
            message,
        })
    }
}

/// The top-level directory of the repository containing `cwd`.
pub async fn repo_root(cwd: &Path) -> Result<PathBuf, ContractError> {
    let top = git(cwd, &["rev-parse", "--show-toplevel"])
        .await
        .map_err(|e| {
            ContractError::Other(format!(
                "--parallel runs each contract in a git worktree, but {} is not in a git repository \
                 with a commit ({e})",
                cwd.display()
            ))
        })?;
    git(cwd, &["rev-parse", "--verify", "HEAD"])
        .await
        .map_err(|_| {
            ContractError::Other(format!(
                "--parallel needs a commit to branch from; {top} has none yet"
            ))
        })?;
    Ok(PathBuf::from(top))
}

/// A branch-safe form of a contract name.
pub fn branch_name(contract: &str) -> String {
    let safe: String = contract
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{BRANCH_PREFIX}{}", safe.trim_matches('.'))
}

/// Creates (or re-creates, after a crash) the worktree of `contract` on
/// branch `contracts/<name>`, starting from the repository's `HEAD`.
pub async fn create(repo: &Path, contract: &str) -> Result<Worktree, ContractError> {
    let branch = branch_name(contract);
    let common = git(repo, &["rev-parse", "--git-common-dir"]).await?;
    let common = repo.join(common);
    let path = common
        .join("tascer-contracts")
        .join(branch.trim_start_matches(BRANCH_PREFIX));
    add(repo, &branch, &path, "HEAD").await
}

/// Adds a worktree of `repo` (a working repository or a bare one) at
/// `path` on `branch`, created (or reset) at `start`; a leftover worktree
/// at `path` (after a crash) is removed first.
pub async fn add(
    repo: &Path,
    branch: &str,
    path: &Path,
    start: &str,
) -> Result<Worktree, ContractError> {
    let p = path.to_string_lossy().into_owned();
    if path.exists() {
        let _ = git(repo, &["worktree", "remove", "--force", &p]).await;
        let _ = std::fs::remove_dir_all(path);
    }
    let _ = git(repo, &["worktree", "prune"]).await;
    git(
        repo,
        &["worktree", "add", "--quiet", "-B", branch, &p, start],
    )
    .await?;
    Ok(Worktree {
        repo: repo.to_path_buf(),
        path: path.to_path_buf(),
        branch: branch.to_string(),
    })
}

impl Worktree {
    /// Commits everything changed in the worktree with `message` (trailers
    /// included); the new commit's id, or `None` when nothing changed.
    pub async fn commit(&self, message: &str) -> Result<Option<String>, ContractError> {
        self.commit_excluding(message, &[]).await
    }

    /// Like [`Worktree::commit`], but leaves the paths `exclude` (relative
    /// to the worktree) out of the commit.
    pub async fn commit_excluding(
        &self,
        message: &str,
        exclude: &[&Path],
    ) -> Result<Option<String>, ContractError> {
        let excluded: Vec<String> = exclude
            .iter()
            .map(|p| format!(":(exclude,literal){}", p.display()))
            .collect();
        let mut add = vec!["add", "--all", "--", "."];
        add.extend(excluded.iter().map(String::as_str));
        git(&self.path, &add).await?;
        let staged = git(&self.path, &["diff", "--cached", "--name-only"]).await?;
        if staged.is_empty() {
            return Ok(None);
        }
        let mut args = Vec::new();
        if git(&self.path, &["config", "user.email"]).await.is_err() {
            args.extend([
                "-c",
                "user.name=Tascer",
                "-c",
                "user.email=tascer@localhost",
            ]);
        }
        args.extend(["commit", "--quiet", "--no-verify", "-m", message]);
        git(&self.path, &args).await?;
        Ok(Some(git(&self.path, &["rev-parse", "HEAD"]).await?))
    }

    /// Removes the worktree directory (the branch stays).
    pub async fn remove(&self) -> Result<(), ContractError> {
        let p = self.path.to_string_lossy().into_owned();
        git(&self.repo, &["worktree", "remove", "--force", &p]).await?;
        Ok(())
    }
}

/// The commit message of a contract's commit: a subject, the outcome and
/// trailers naming the session and its ledger head.
pub fn commit_message(
    title: &str,
    why: &str,
    session_id: &str,
    ledger_head: Option<&str>,
    contract_file: &str,
) -> String {
    format!(
        "Contract: {title}\n\n{why}\n\nTascer-Contract: {contract_file}\nTascer-Session: {session_id}\nTascer-Ledger-Head: {}\n",
        ledger_head.unwrap_or("none")
    )
}

/// What merging one branch did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
#[non_exhaustive]
pub enum MergeOutcome {
    /// Merged (the merge commit, or the fast-forwarded head).
    Merged {
        /// The new `HEAD`.
        head: String,
    },
    /// Already part of `HEAD`.
    UpToDate,
    /// Conflicts: the merge was aborted; nothing changed.
    Conflict {
        /// The conflicting files.
        files: Vec<String>,
    },
    /// Git refused (e.g. local changes in the way); nothing changed.
    Refused {
        /// Git's message.
        message: String,
    },
}

/// Merges each branch into the repository's current branch, in order,
/// with `--no-ff`. Conflicts abort that branch's merge and are reported;
/// nothing is ever forced.
pub async fn merge_branches(
    repo: &Path,
    branches: &[String],
) -> Result<Vec<(String, MergeOutcome)>, ContractError> {
    let mut out = Vec::new();
    for branch in branches {
        if git(repo, &["merge-base", "--is-ancestor", branch, "HEAD"])
            .await
            .is_ok()
        {
            out.push((branch.clone(), MergeOutcome::UpToDate));
            continue;
        }
        let mut args = Vec::new();
        if git(repo, &["config", "user.email"]).await.is_err() {
            args.extend([
                "-c",
                "user.name=Tascer",
                "-c",
                "user.email=tascer@localhost",
            ]);
        }
        args.extend(["merge", "--no-ff", "--no-edit", "--quiet", branch.as_str()]);
        let outcome = match git(repo, &args).await {
            Ok(_) => MergeOutcome::Merged {
                head: git(repo, &["rev-parse", "HEAD"]).await?,
            },
            Err(err) => {
                let conflicted = git(repo, &["diff", "--name-only", "--diff-filter=U"])
                    .await
                    .unwrap_or_default();
                let in_merge = git(repo, &["rev-parse", "-q", "--verify", "MERGE_HEAD"])
                    .await
                    .is_ok();
                if in_merge {
                    git(repo, &["merge", "--abort"]).await?;
                }
                if conflicted.is_empty() {
                    MergeOutcome::Refused {
                        message: err.to_string(),
                    }
                } else {
                    MergeOutcome::Conflict {
                        files: conflicted.lines().map(str::to_string).collect(),
                    }
                }
            }
        };
        out.push((branch.clone(), outcome));
    }
    Ok(out)
}

/// The branches of the completed contracts in `completed_dir` (from each
/// Result's `- Branch:` line), in file-name order.
pub fn completed_branches(completed_dir: &Path) -> Result<Vec<String>, ContractError> {
    if !completed_dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut branches = Vec::new();
    for path in crate::parse::contract_files(completed_dir)? {
        let Ok(contract) = crate::parse::parse(&path) else {
            continue;
        };
        if contract.status != crate::parse::Status::Completed {
            continue;
        }
        let branch = contract.result.as_deref().and_then(|r| {
            r.lines().find_map(|l| {
                let rest = l.trim().strip_prefix("- Branch:")?;
                let name = rest.trim().strip_prefix('`')?.split('`').next()?;
                name.starts_with(BRANCH_PREFIX).then(|| name.to_string())
            })
        });
        // A contract without a commit ("no changes to commit") has nothing to merge.
        if let Some(branch) = branch
            && contract
                .result
                .as_deref()
                .is_some_and(|r| r.contains(&format!("`{branch}` at `")))
        {
            branches.push(branch);
        }
    }
    Ok(branches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_are_safe() {
        assert_eq!(branch_name("01-add greeting"), "contracts/01-add-greeting");
        assert_eq!(branch_name("a.b"), "contracts/a.b");
    }
}
