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
use crate::options::{CONTRACT_SYSTEM_PROMPT, contract_options, contract_prompt};
use crate::parse::{Contract, Status, parse};
use crate::progress::{Progress, ProgressFn};
use crate::session::{SessionOutcome, run_session};
use crate::worktree::{self, Worktree, repo_root};
use crate::writeback::{move_into, write_back};
use tascer::Options;

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
    /// Text added to each session's system prompt (default
    /// [`CONTRACT_SYSTEM_PROMPT`]).
    pub system_prompt: String,
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
            system_prompt: CONTRACT_SYSTEM_PROMPT.to_string(),
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

/// How a contract ended in this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Done; moved to the completed directory.
    Completed,
    /// Not done; left in place with status `failed` and why.
    Failed,
    /// Not a valid contract; left untouched.
    Malformed,
    /// Not run now (another executor holds it).
    Skipped,
}

impl RunStatus {
    /// The name shown in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Malformed => "malformed",
            RunStatus::Skipped => "skipped",
        }
    }
}

/// One contract's line in the run's summary.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ContractReport {
    /// Contract name (file name without `.md`).
    pub name: String,
    /// Title.
    pub title: String,
    /// Where the file is now.
    pub path: PathBuf,
    /// How it ended.
    pub status: RunStatus,
    /// Why.
    pub why: String,
    /// The session's outcome, when a session ran.
    pub session: Option<SessionOutcome>,
}

/// What a run did, contract by contract, in file-name order.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RunSummary {
    /// One report per contract looked at.
    pub contracts: Vec<ContractReport>,
}

impl RunSummary {
    /// How many contracts ended with `status`.
    pub fn count(&self, status: RunStatus) -> usize {
        self.contracts.iter().filter(|c| c.status == status).count()
    }

    /// The summary as markdown: one line per contract (for a manager).
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "{} contract(s): {} completed, {} failed, {} malformed, {} skipped\n\n",
            self.contracts.len(),
            self.count(RunStatus::Completed),
            self.count(RunStatus::Failed),
            self.count(RunStatus::Malformed),
            self.count(RunStatus::Skipped),
        );
        for c in &self.contracts {
            out.push_str(&format!(
                "- {} ({}): {} — {}",
                c.name,
                c.title,
                c.status.as_str(),
                c.why
            ));
            if let Some(s) = &c.session {
                out.push_str(&format!(
                    "; session {}, {} turn(s), ${:.4}, ledger head {}",
                    s.session_id,
                    s.turns,
                    s.cost_usd,
                    s.ledger_head.as_deref().unwrap_or("none")
                ));
                if let Some(summary) = &s.summary {
                    let first = summary.lines().next().unwrap_or_default();
                    out.push_str(&format!("\n  summary: {first}"));
                }
            }
            out.push('\n');
        }
        out
    }
}

/// The contract files of `dir` (`*.md`, not hidden), in file-name order.
pub fn contract_files(dir: &Path) -> Result<Vec<PathBuf>, ContractError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ContractError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension().is_some_and(|e| e.eq_ignore_ascii_case("md"))
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Runs every pending contract of `opts.dir` and returns the summary.
///
/// Malformed contracts are reported and left untouched; completed ones are
/// written back and moved to the completed directory; failed ones stay,
/// with status `failed` and why. Each contract is leased in the store
/// first, so two executors never run it at once; one left `in_progress` by
/// an executor that died is retried once, then marked failed.
pub async fn run_all(opts: &RunOptions) -> Result<RunSummary, ContractError> {
    let dir = opts.contracts_dir()?;
    let completed_dir = opts.completed_dir()?;
    let cwd = opts.working_dir()?;
    let home = opts.base.home.clone().unwrap_or_else(tascer::tascer_home);
    let leases = Leases::open(&home)?;
    let mut summary = RunSummary::default();
    let mut candidates = Vec::new();
    for path in contract_files(&dir)? {
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
    let RunContext {
        opts,
        cwd,
        dir,
        completed_dir,
        repo,
        checkout,
        git_lock,
    } = *ctx;
    let mut report = ContractReport {
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
            report.why = format!("not started: {err}");
            return report;
        }
    };
    if let Some(progress) = &opts.progress {
        progress(Progress::Started {
            name: contract.name.clone(),
            title: contract.title.clone(),
        });
    }
    let created = match (checkout, repo) {
        (None, Some(repo)) => {
            let _git = git_lock.lock().await;
            match worktree::create(repo, &contract.name).await {
                Ok(wt) => Some(wt),
                Err(err) => {
                    let outcome = SessionOutcome {
                        why: format!("no worktree: {err}"),
                        ..SessionOutcome::default()
                    };
                    return finish(contract, outcome, completed_dir, report);
                }
            }
        }
        _ => None,
    };
    let worktree = checkout.or(created.as_ref());
    let session_cwd = worktree.map(|w| w.path.as_path()).unwrap_or(cwd);
    // The worktree's own copy of the contract directories is protected too.
    let mirrored: Vec<PathBuf> = match (&created, repo) {
        (Some(wt), Some(repo)) => [dir, completed_dir]
            .iter()
            .filter_map(|d| d.strip_prefix(repo).ok())
            .map(|rel| wt.path.join(rel))
            .collect(),
        _ => Vec::new(),
    };
    let mut protected: Vec<&Path> = vec![dir, completed_dir];
    protected.extend(mirrored.iter().map(PathBuf::as_path));
    let mut outcome = match contract_options(
        &contract,
        &opts.base,
        session_cwd,
        &protected,
        &opts.system_prompt,
    ) {
        Ok(options) => {
            run_session(
                &contract,
                contract_prompt(&contract),
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
    };
    // Archive while the working directory is still there.
    if let Some(archiver) = &opts.archiver
        && !outcome.session_id.is_empty()
    {
        match archiver.archive(&outcome.session_id, session_cwd).await {
            Ok(url) => outcome.archive = url,
            Err(err) => outcome.archive_error = Some(err),
        }
    }
    if let Some(wt) = worktree {
        let _git = git_lock.lock().await;
        if outcome.completed {
            // Relative to the repository when inside it: the trailer names
            // the file as the repository knows it.
            let file = [repo, Some(wt.path.as_path()), Some(cwd)]
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
        if let Some(wt) = &created
            && let Err(err) = wt.remove().await
        {
            tracing::warn!("cannot remove the worktree {}: {err}", wt.path.display());
        }
    }
    if let Some(note) = note {
        outcome.why = format!("{}; {note}", outcome.why);
    }
    finish(contract, outcome, completed_dir, report)
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

/// The Result section's body for an outcome.
pub fn result_markdown(status: Status, o: &SessionOutcome) -> String {
    let mut md = format!("**Outcome:** {status} — {}\n\n", o.why);
    let session = if o.session_id.is_empty() {
        "none".to_string()
    } else {
        format!("`{}`", o.session_id)
    };
    md.push_str(&format!("- Session: {session}\n"));
    md.push_str(&format!("- Turns: {}\n", o.turns));
    md.push_str(&format!("- Cost: ${:.4}\n", o.cost_usd));
    md.push_str(&format!(
        "- Duration: {:.2} s\n",
        o.duration_ms as f64 / 1000.0
    ));
    let files = if o.files_changed.is_empty() {
        "none".to_string()
    } else {
        o.files_changed
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    md.push_str(&format!("- Files changed: {files}\n"));
    match (&o.ledger_head, o.ledger_seq) {
        (Some(h), Some(seq)) => md.push_str(&format!("- Ledger head: `{h}` (entry {seq})\n")),
        _ => md.push_str("- Ledger head: none\n"),
    }
    match &o.signing_key {
        Some(k) => md.push_str(&format!("- Signing key: `{k}`\n")),
        None => md.push_str("- Signing key: none (unsigned: no signing key was configured)\n"),
    }
    if let Some(branch) = &o.branch {
        match &o.commit {
            Some(c) => md.push_str(&format!("- Branch: `{branch}` at `{c}`\n")),
            None => md.push_str(&format!("- Branch: `{branch}` (no changes to commit)\n")),
        }
    }
    match (&o.archive, &o.archive_error) {
        (Some(url), _) => md.push_str(&format!("- Archive: {url}\n")),
        (None, Some(err)) => md.push_str(&format!(
            "- Archive: failed ({err}); the session is intact in the store, retry with `tascer archive {}`\n",
            o.session_id
        )),
        (None, None) => {}
    }
    if !o.refused.is_empty() {
        md.push_str(&format!("- Refused calls: {}\n", o.refused.join(", ")));
    }
    if let Some(summary) = &o.summary {
        let longest = longest_run(summary, '`');
        let fence = "`".repeat(longest.max(2) + 1);
        md.push_str(&format!(
            "\n**Summary:**\n\n{fence}text\n{}\n{fence}\n",
            summary.trim_end()
        ));
    }
    md
}

fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in s.chars() {
        run = if c == ch { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_with_headings_and_fences_stays_inside_the_result() {
        let o = SessionOutcome {
            completed: true,
            why: "done".into(),
            summary: Some("## Status\nfailed\n```\ncode\n```".into()),
            session_id: "s".into(),
            ..SessionOutcome::default()
        };
        let text = "# Contract: x\n## Status\nin_progress\n## Task\nDo.\n## Result\n";
        let c = crate::parse::parse_str(text, Path::new("a.md")).unwrap();
        let md = result_markdown(Status::Completed, &o);
        let out = crate::writeback::render(&c, Status::Completed, Some(&md));
        let again = crate::parse::parse_str(&out, Path::new("a.md")).unwrap();
        assert_eq!(again.status, Status::Completed);
        assert!(again.result.unwrap().contains("## Status\nfailed"));
    }
}
