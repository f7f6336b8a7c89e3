//! Running a directory of contracts: pending ones in file-name order,
//! each as a governed session, the outcome written back into the file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use tascer_store::Acquired;
use tokio_util::sync::CancellationToken;

use crate::archive::SessionArchiver;
use crate::error::ContractError;
use crate::lease::{Leases, MAX_ATTEMPTS, lease_key};
use crate::options::{
    CONTRACT_SYSTEM_PROMPT, CONTRACT_SYSTEM_PROMPT_COMMITTED, contract_options, contract_prompt,
};
use crate::parse::{Contract, Status, contract_files, parse};
use crate::progress::{Progress, ProgressFn};
use crate::report::{ContractReport, RunStatus, RunSummary, SessionOutcome, result_markdown};
use crate::session::run_session;
use crate::worktree::{self, Worktree, repo_root};
use crate::writeback::{move_into, write_back};
use tascer::{ContextCache, Options};

/// How to run contracts.
#[derive(Clone)]
pub struct RunOptions {
    /// The contracts directory (relative paths are relative to `cwd`).
    pub dir: PathBuf,
    /// Where completed contracts go; default `contracts_completed` next to `dir`.
    pub completed_dir: Option<PathBuf>,
    /// The repository's working directory, where sessions run; default the
    /// process's.
    pub cwd: Option<PathBuf>,
    /// Options every session starts from (provider, home, signing key,
    /// settings, hooks, gates…); the contract's constraints are applied on top.
    pub base: Options,
    /// How many contracts run at once (default 1: one after another in the
    /// working directory).
    pub parallel: usize,
    /// Text added to each session's system prompt; `None` (the default):
    /// the mode's, [`CONTRACT_SYSTEM_PROMPT`] in the working tree,
    /// [`CONTRACT_SYSTEM_PROMPT_COMMITTED`] in a checkout whose branch
    /// Tascer commits (`parallel` above 1, workers).
    pub system_prompt: Option<String>,
    /// Called with progress events.
    pub progress: Option<ProgressFn>,
    /// Archives each contract's session when it ends (before its worktree
    /// is removed); the URL goes into the Result. `None`: no archival.
    pub archiver: Option<Arc<dyn SessionArchiver>>,
    /// Cancelling this token interrupts the running sessions (their
    /// contracts end as failed, "stopped before it finished").
    pub cancel: Option<CancellationToken>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("dir", &self.dir)
            .field("completed_dir", &self.completed_dir)
            .field("cwd", &self.cwd)
            .field("base", &self.base)
            .field("parallel", &self.parallel)
            .field("archiver", &self.archiver.is_some())
            .finish_non_exhaustive()
    }
}

impl RunOptions {
    /// Runs the contracts in `dir` with default options.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        RunOptions {
            dir: dir.into(),
            completed_dir: None,
            cwd: None,
            base: Options::new(),
            parallel: 1,
            system_prompt: None,
            progress: None,
            archiver: None,
            cancel: None,
        }
    }

    /// Sets the archiver called after each contract's session.
    pub fn archiver(mut self, archiver: Arc<dyn SessionArchiver>) -> Self {
        self.archiver = Some(archiver);
        self
    }

    /// Sets the token that interrupts the running sessions when cancelled.
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Sets the options every session starts from.
    pub fn base(mut self, options: Options) -> Self {
        self.base = options;
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Sets how many contracts run at once.
    pub fn parallel(mut self, n: usize) -> Self {
        self.parallel = n.max(1);
        self
    }

    /// Sets the progress callback.
    pub fn progress(mut self, progress: ProgressFn) -> Self {
        self.progress = Some(progress);
        self
    }

    /// The working directory (absolute).
    pub fn working_dir(&self) -> Result<PathBuf, ContractError> {
        match &self.cwd {
            Some(cwd) => Ok(cwd.clone()),
            None => std::env::current_dir().map_err(|e| {
                ContractError::Other(format!("cannot read the working directory: {e}"))
            }),
        }
    }

    /// The contracts directory (absolute).
    pub fn contracts_dir(&self) -> Result<PathBuf, ContractError> {
        Ok(self.working_dir()?.join(&self.dir))
    }

    /// Where completed contracts go (absolute).
    pub fn completed_dir(&self) -> Result<PathBuf, ContractError> {
        let cwd = self.working_dir()?;
        Ok(match &self.completed_dir {
            Some(d) => cwd.join(d),
            None => {
                let dir = self.contracts_dir()?;
                dir.parent()
                    .map(|p| p.join("contracts_completed"))
                    .unwrap_or_else(|| cwd.join("contracts_completed"))
            }
        })
    }
}

/// Runs every pending contract of `opts.dir` and returns the summary.
///
/// Malformed contracts are reported and left untouched; completed ones are
/// written back and moved to the completed directory; failed ones stay,
/// with status `failed` and why. Each contract is leased in the store
/// first, so two executors never run it at once; one left `in_progress` by
/// an executor that died is retried once, then marked failed.
pub async fn run_all(opts: &RunOptions) -> Result<RunSummary, ContractError> {
    let opts = &with_context_cache(opts);
    let dir = opts.contracts_dir()?;
    let completed_dir = opts.completed_dir()?;
    let cwd = opts.working_dir()?;
    let home = opts.base.home.clone().unwrap_or_else(tascer::tascer_home);
    let leases = Leases::open(&home)?;
    let mut summary = RunSummary::default();
    let mut candidates = Vec::new();
    // No directory yet: no contracts (`tascer contracts init` creates it).
    let files = if dir.is_dir() {
        contract_files(&dir)?
    } else {
        Vec::new()
    };
    for path in files {
        match parse(&path) {
            Err(err) => {
                let report = ContractReport {
                    name: stem(&path),
                    title: String::new(),
                    path: path.clone(),
                    status: RunStatus::Malformed,
                    why: err.to_string(),
                    session: None,
                };
                notify(opts, &report);
                summary.contracts.push(report);
            }
            Ok(c) if c.status == Status::Completed => {
                // Completed earlier but not moved (a crash in between).
                move_into(&c.path, &completed_dir)?;
            }
            Ok(c) if matches!(c.status, Status::Pending | Status::InProgress) => candidates.push(c),
            Ok(_) => {}
        }
    }
    let repo = if opts.parallel > 1 && !candidates.is_empty() {
        Some(repo_root(&cwd).await?)
    } else {
        None
    };
    let git_lock = tokio::sync::Mutex::new(());
    let ctx = RunContext {
        opts,
        cwd: &cwd,
        dir: &dir,
        completed_dir: &completed_dir,
        repo: repo.as_deref(),
        checkout: None,
        git_lock: &git_lock,
    };
    let mut runs = futures::stream::iter(candidates)
        .map(|contract| run_leased(contract, &ctx, &leases))
        .buffer_unordered(opts.parallel.max(1));
    while let Some(done) = runs.next().await {
        if let Some(report) = done {
            notify(opts, &report);
            summary.contracts.push(report);
        }
    }
    summary.contracts.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(summary)
}

/// `opts` whose sessions share one context cache (the caller's, else a new
/// one): the contracts run one after another in the same directory, so
/// each session starts from the git state the previous one left.
fn with_context_cache(opts: &RunOptions) -> RunOptions {
    let mut opts = opts.clone();
    opts.base
        .context_cache
        .get_or_insert_with(ContextCache::new);
    opts
}

/// Where one contract runs and where its file goes.
#[derive(Clone, Copy)]
pub(crate) struct RunContext<'a> {
    pub opts: &'a RunOptions,
    /// The session's working directory.
    pub cwd: &'a Path,
    /// The contracts directory (protected from the agent).
    pub dir: &'a Path,
    /// The completed directory (protected too).
    pub completed_dir: &'a Path,
    /// With `--parallel`: the repository, each contract runs in its own
    /// worktree of it.
    pub repo: Option<&'a Path>,
    /// A worktree made by the caller (a queue worker's checkout): the
    /// session runs and commits there; the caller removes it.
    pub checkout: Option<&'a Worktree>,
    /// Serializes git commands that change the repository's refs.
    pub git_lock: &'a tokio::sync::Mutex<()>,
}

/// Leases `contract` and runs it; `None` when it turned out to be finished
/// by another executor meanwhile.
pub(crate) async fn run_leased(
    contract: Contract,
    ctx: &RunContext<'_>,
    leases: &Leases,
) -> Option<ContractReport> {
    let key = lease_key(&contract.path);
    let mut report = ContractReport {
        name: contract.name.clone(),
        title: contract.title.clone(),
        path: contract.path.clone(),
        status: RunStatus::Skipped,
        why: String::new(),
        session: None,
    };
    let acquired = {
        let leases = leases.clone();
        let path = contract.path.clone();
        tokio::task::spawn_blocking(move || leases.acquire(&path)).await
    };
    let (attempt, previous) = match acquired {
        Ok(Ok(Acquired::Taken { attempt, previous })) => (attempt, previous),
        Ok(Ok(Acquired::Held(lease))) => {
            report.why = format!(
                "being run by another executor (pid {} on {})",
                lease.holder.pid, lease.holder.host
            );
            return Some(report);
        }
        Ok(Err(err)) => {
            report.why = format!("not started: {err}");
            return Some(report);
        }
        Err(err) => {
            report.why = format!("not started: {err}");
            return Some(report);
        }
    };
    // Another executor may have finished it between listing and leasing.
    let current = match parse(&contract.path) {
        Ok(c) if c.text == contract.text => c,
        _ => {
            leases.release(&key);
            return None;
        }
    };
    let note = (current.status == Status::InProgress).then(|| match &previous {
        Some(lease) => format!(
            "retried after its executor (pid {} on {}) stopped",
            lease.holder.pid, lease.holder.host
        ),
        None => "retried: it was left in progress".to_string(),
    });
    let report = if current.status == Status::InProgress && attempt > MAX_ATTEMPTS {
        let outcome = SessionOutcome {
            why: format!(
                "its executor stopped during {} attempts (last: {}); not retried again",
                attempt - 1,
                previous
                    .map(|l| format!("pid {} on {}", l.holder.pid, l.holder.host))
                    .unwrap_or_else(|| "unknown".into())
            ),
            ..SessionOutcome::default()
        };
        finish(current, outcome, ctx.completed_dir, report)
    } else {
        let heartbeat = leases.keep_alive(&current.path);
        let report = run_contract(current, ctx, note).await;
        heartbeat.abort();
        report
    };
    leases.release(&key);
    Some(report)
}

fn notify(opts: &RunOptions, report: &ContractReport) {
    if let Some(progress) = &opts.progress {
        progress(Progress::Finished(Box::new(report.clone())));
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Runs one pending contract in `cwd`: marks it in progress, runs its
/// session, writes the result back and moves it when completed.
pub(crate) async fn run_contract(
    contract: Contract,
    ctx: &RunContext<'_>,
    note: Option<String>,
) -> ContractReport {
    let report = ContractReport {
        name: contract.name.clone(),
        title: contract.title.clone(),
        path: contract.path.clone(),
        status: RunStatus::Failed,
        why: String::new(),
        session: None,
    };
    let contract = match write_back(&contract, Status::InProgress, None) {
        Ok(c) => c,
        Err(err) => {
            return ContractReport {
                why: format!("not started: {err}"),
                ..report
            };
        }
    };
    if let Some(progress) = &ctx.opts.progress {
        progress(Progress::Started {
            name: contract.name.clone(),
            title: contract.title.clone(),
        });
    }
    let created = match create_worktree(&contract, ctx).await {
        Ok(created) => created,
        Err(why) => {
            let outcome = SessionOutcome {
                why,
                ..SessionOutcome::default()
            };
            return finish(contract, outcome, ctx.completed_dir, report);
        }
    };
    let worktree = ctx.checkout.or(created.as_ref());
    let session_cwd = worktree.map(|w| w.path.as_path()).unwrap_or(ctx.cwd);
    let mut outcome = run_constrained(&contract, ctx, session_cwd, created.as_ref()).await;
    // Archive while the working directory is still there.
    archive_session(ctx.opts, &mut outcome, session_cwd).await;
    if let Some(wt) = worktree {
        let _git = ctx.git_lock.lock().await;
        if outcome.completed {
            commit_changes(&contract, wt, ctx, &mut outcome).await;
        }
        if let Some(wt) = &created
            && let Err(err) = wt.remove().await
        {
            tracing::warn!("cannot remove the worktree {}: {err}", wt.path.display());
        }
    }
    if let Some(note) = note {
        outcome.why = format!("{}; {note}", outcome.why);
    }
    finish(contract, outcome, ctx.completed_dir, report)
}

/// With `--parallel` (a repository and no checkout of the caller's): a
/// fresh worktree for `contract`; else none. `Err` says why there is none.
async fn create_worktree(
    contract: &Contract,
    ctx: &RunContext<'_>,
) -> Result<Option<Worktree>, String> {
    match (ctx.checkout, ctx.repo) {
        (None, Some(repo)) => {
            let _git = ctx.git_lock.lock().await;
            worktree::create(repo, &contract.name)
                .await
                .map(Some)
                .map_err(|err| format!("no worktree: {err}"))
        }
        _ => Ok(None),
    }
}

/// Runs `contract`'s session in `session_cwd` under its constraints, the
/// contract directories protected (also their copies in `created`, a
/// worktree of the repository).
async fn run_constrained(
    contract: &Contract,
    ctx: &RunContext<'_>,
    session_cwd: &Path,
    created: Option<&Worktree>,
) -> SessionOutcome {
    let (opts, dir, completed_dir) = (ctx.opts, ctx.dir, ctx.completed_dir);
    // The worktree's own copy of the contract directories is protected too.
    let mirrored: Vec<PathBuf> = match (created, ctx.repo) {
        (Some(wt), Some(repo)) => [dir, completed_dir]
            .iter()
            .filter_map(|d| d.strip_prefix(repo).ok())
            .map(|rel| wt.path.join(rel))
            .collect(),
        _ => Vec::new(),
    };
    let mut protected: Vec<&Path> = vec![dir, completed_dir];
    protected.extend(mirrored.iter().map(PathBuf::as_path));
    let committed = created.is_some() || ctx.checkout.is_some();
    let system_prompt = match (&opts.system_prompt, committed) {
        (Some(text), _) => text.as_str(),
        (None, false) => CONTRACT_SYSTEM_PROMPT,
        (None, true) => CONTRACT_SYSTEM_PROMPT_COMMITTED,
    };
    match contract_options(contract, &opts.base, session_cwd, &protected, system_prompt) {
        Ok(options) => {
            run_session(
                contract,
                contract_prompt(contract),
                options,
                contract.constraints.time_limit,
                opts.progress.as_ref(),
                opts.cancel.as_ref(),
            )
            .await
        }
        Err(err) => SessionOutcome {
            why: err.to_string(),
            ..SessionOutcome::default()
        },
    }
}

/// Archives the session (when there is an archiver and a session), its
/// URL or error into `outcome`.
async fn archive_session(opts: &RunOptions, outcome: &mut SessionOutcome, workdir: &Path) {
    if let Some(archiver) = &opts.archiver
        && !outcome.session_id.is_empty()
    {
        match archiver.archive(&outcome.session_id, workdir).await {
            Ok(url) => outcome.archive = url,
            Err(err) => outcome.archive_error = Some(err),
        }
    }
}

/// Commits the agent's changes in `wt` with the session's trailers (the
/// contract file left out); a failed commit makes the contract failed.
async fn commit_changes(
    contract: &Contract,
    wt: &Worktree,
    ctx: &RunContext<'_>,
    outcome: &mut SessionOutcome,
) {
    // Relative to the repository when inside it: the trailer names the
    // file as the repository knows it.
    let file = [ctx.repo, Some(wt.path.as_path()), Some(ctx.cwd)]
        .into_iter()
        .flatten()
        .find_map(|root| contract.path.strip_prefix(root).ok())
        .unwrap_or(&contract.path)
        .display()
        .to_string();
    let message = worktree::commit_message(
        &contract.title,
        &outcome.why,
        &outcome.session_id,
        outcome.ledger_head.as_deref(),
        &file,
    );
    outcome.branch = Some(wt.branch.clone());
    // A contract file inside the worktree is the executor's, not the
    // agent's: it is written back after this commit.
    let own: Vec<&Path> = contract
        .path
        .strip_prefix(&wt.path)
        .ok()
        .into_iter()
        .collect();
    match wt.commit_excluding(&message, &own).await {
        Ok(commit) => outcome.commit = commit,
        Err(err) => {
            outcome.completed = false;
            outcome.why = format!(
                "{}, but its changes could not be committed: {err}",
                outcome.why
            );
        }
    }
}

/// Runs one contract in `checkout`, a worktree the caller made (a queue
/// worker's fresh checkout on the job's branch), with the same steps as
/// [`run_all`]: the contract (a file inside or outside the checkout) is
/// marked in progress, its session runs in the checkout under its
/// constraints, the session is archived when `opts.archiver` is set, the
/// agent's changes are committed on the checkout's branch with the
/// session trailers (the contract file itself is left out of that commit),
/// and Status and Result are written back — a completed contract moves to
/// `completed_dir`. No lease is taken: the caller holds one. The caller
/// removes the checkout. `note` (e.g. why an earlier attempt stopped) is
/// added to the outcome's why.
pub async fn run_in_checkout(
    contract: Contract,
    opts: &RunOptions,
    checkout: &Worktree,
    completed_dir: &Path,
    note: Option<String>,
) -> ContractReport {
    let dir = contract
        .path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| checkout.path.clone());
    let git_lock = tokio::sync::Mutex::new(());
    let ctx = RunContext {
        opts,
        cwd: &checkout.path,
        dir: &dir,
        completed_dir,
        repo: None,
        checkout: Some(checkout),
        git_lock: &git_lock,
    };
    run_contract(contract, &ctx, note).await
}

/// Writes the outcome into the contract and moves it when completed.
pub(crate) fn finish(
    contract: Contract,
    outcome: SessionOutcome,
    completed_dir: &Path,
    mut report: ContractReport,
) -> ContractReport {
    let status = if outcome.completed {
        Status::Completed
    } else {
        Status::Failed
    };
    report.why = outcome.why.clone();
    let result = result_markdown(status, &outcome);
    report.session = Some(outcome);
    match write_back(&contract, status, Some(&result)) {
        Ok(written) if status == Status::Completed => {
            match move_into(&written.path, completed_dir) {
                Ok(path) => {
                    report.path = path;
                    report.status = RunStatus::Completed;
                }
                Err(err) => report.why = format!("completed, but {err}"),
            }
        }
        Ok(_) => report.status = RunStatus::Failed,
        Err(err) => report.why = format!("{}; and the result was not written: {err}", report.why),
    }
    report
}
