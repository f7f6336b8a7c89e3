//! Enqueueing a directory of contracts: every contract is parsed first
//! (one malformed contract and nothing is enqueued), pending ones become
//! jobs naming the repository and the commit their checkouts start from.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tascer_contracts::{Status, contract_files, git, parse, repo_root};

use crate::error::{FleetError, Result};
use crate::queue::{DEFAULT_MAX_ATTEMPTS, Enqueued, NewJob, Queue};

/// What to enqueue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnqueueOptions {
    /// The contracts directory.
    pub dir: PathBuf,
    /// Where workers clone from; default: the `origin` remote of the
    /// repository holding `dir`, else that repository's path.
    pub repo: Option<String>,
    /// The revision checkouts start from; default `HEAD`.
    pub base: Option<String>,
    /// Starts before a worker's death fails a job.
    pub max_attempts: u32,
}

impl EnqueueOptions {
    /// Enqueue `dir` with the defaults.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        EnqueueOptions {
            dir: dir.into(),
            repo: None,
            base: None,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
        }
    }
}

/// One contract file and what happened to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnqueuedFile {
    /// Path relative to the repository.
    pub contract_path: String,
    /// Added, or already there.
    #[serde(flatten)]
    pub result: Enqueued,
}

/// What [`enqueue_dir`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnqueueReport {
    /// The queue.
    pub queue: String,
    /// Repository the jobs name.
    pub repo: String,
    /// Their base commit.
    pub base_commit: String,
    /// The pending contracts, in file-name order.
    pub jobs: Vec<EnqueuedFile>,
    /// Contracts not enqueued because they are not pending: (path, status).
    pub skipped: Vec<(String, String)>,
    /// Things to look at (e.g. a base commit that is not pushed).
    pub warnings: Vec<String>,
}

/// Enqueues the pending contracts of `opts.dir` into `queue`.
pub async fn enqueue_dir(queue: &Queue, opts: &EnqueueOptions) -> Result<EnqueueReport> {
    if !opts.dir.is_dir() {
        return Err(FleetError::Other(format!(
            "no contracts directory {}: create it and add contract files (see docs/contracts.md)",
            opts.dir.display()
        )));
    }
    let dir = opts
        .dir
        .canonicalize()
        .map_err(|e| FleetError::Other(format!("cannot resolve {}: {e}", opts.dir.display())))?;
    let mut malformed = Vec::new();
    let mut pending = Vec::new();
    let mut skipped = Vec::new();
    for path in contract_files(&dir)? {
        match parse(&path) {
            Err(err) => malformed.push(err.to_string()),
            Ok(c) if c.status == Status::Pending => pending.push(c),
            Ok(c) => skipped.push((path.display().to_string(), c.status.to_string())),
        }
    }
    if !malformed.is_empty() {
        return Err(FleetError::Malformed(malformed));
    }
    let (root, base_commit, repo, warnings) = locate(&dir, opts).await?;
    let jobs: Vec<NewJob> = pending
        .iter()
        .map(|c| NewJob {
            name: c.name.clone(),
            title: c.title.clone(),
            contract_path: relative(&c.path, root.as_deref()),
            contract: std::fs::read_to_string(&c.path).unwrap_or_default(),
            repo: repo.clone(),
            base_commit: base_commit.clone(),
            max_attempts: opts.max_attempts.max(1),
        })
        .collect();
    // The text parsed is the text enqueued.
    for (job, contract) in jobs.iter().zip(&pending) {
        if tascer_contracts::parse_str(&job.contract, &contract.path).is_err() {
            return Err(FleetError::Other(format!(
                "{} changed while it was being enqueued; nothing was enqueued, try again",
                contract.path.display()
            )));
        }
    }
    let results = queue.enqueue(&jobs).await?;
    Ok(EnqueueReport {
        queue: queue.name().to_string(),
        repo,
        base_commit,
        jobs: jobs
            .into_iter()
            .zip(results)
            .map(|(j, result)| EnqueuedFile {
                contract_path: j.contract_path,
                result,
            })
            .collect(),
        skipped,
        warnings,
    })
}

/// `path` relative to the repository root, `/`-separated; outside one,
/// `contracts/<file name>`.
fn relative(path: &Path, root: Option<&Path>) -> String {
    match root.and_then(|r| path.strip_prefix(r).ok()) {
        Some(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
        None => format!(
            "contracts/{}",
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
    }
}

/// The repository root (when `dir` is in one), the base commit id, the
/// repository URL for workers, and warnings.
async fn locate(
    dir: &Path,
    opts: &EnqueueOptions,
) -> Result<(Option<PathBuf>, String, String, Vec<String>)> {
    let mut warnings = Vec::new();
    let root = match repo_root(dir).await {
        Ok(root) => Some(root.canonicalize().unwrap_or(root)),
        Err(err) => {
            if opts.repo.is_none() || opts.base.is_none() {
                return Err(FleetError::Other(format!(
                    "workers check out a git repository, and {} is not in one with a commit \
                     ({err}); enqueue from inside the repository, or pass --repo URL and --base COMMIT",
                    dir.display()
                )));
            }
            None
        }
    };
    let rev = opts.base.clone().unwrap_or_else(|| "HEAD".to_string());
    let base_commit = match &root {
        Some(root) => git(
            root,
            &["rev-parse", "--verify", &format!("{rev}^{{commit}}")],
        )
        .await
        .map_err(|e| FleetError::Other(format!("the base revision {rev}: {e}")))?,
        None => rev.clone(),
    };
    let repo = match (&opts.repo, &root) {
        (Some(repo), _) => repo.clone(),
        (None, Some(root)) => match git(root, &["remote", "get-url", "origin"]).await {
            Ok(url) if !url.is_empty() => {
                let on_remote = git(root, &["branch", "--remotes", "--contains", &base_commit])
                    .await
                    .unwrap_or_default();
                if !on_remote.lines().any(|l| l.trim().starts_with("origin/")) {
                    warnings.push(format!(
                        "the base commit {base_commit} is on no branch of origin known here: \
                         push it before the workers start (they clone {url})"
                    ));
                }
                resolve_local(root, &url)
            }
            _ => root.display().to_string(),
        },
        (None, None) => String::new(),
    };
    Ok((root, base_commit, repo, warnings))
}

/// A remote given as a relative path is made absolute (workers run
/// elsewhere); URLs stay as they are.
fn resolve_local(root: &Path, url: &str) -> String {
    if url.contains("://") || url.contains('@') || Path::new(url).is_absolute() {
        return url.to_string();
    }
    let path = root.join(url);
    path.canonicalize().unwrap_or(path).display().to_string()
}
