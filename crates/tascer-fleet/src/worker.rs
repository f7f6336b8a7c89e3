//! A contract worker: claims jobs from the queue (up to `concurrency` at
//! once), runs each in a fresh checkout on its own branch with the
//! contracts runner, pushes the branch, and records the result — exactly
//! once, and only while it still holds the job's lease.
//!
//! Per job:
//!
//! 1. claim (lease + heartbeat every third of the lease; a heartbeat that
//!    finds the lease taken cancels the session);
//! 2. a worktree of the repository at the job's base commit on branch
//!    `contracts/<name>-job<id>-try<attempt>` — one branch per attempt, so
//!    the push of a stale attempt can never overwrite another attempt's;
//! 3. the contract written into the checkout and run there
//!    ([`tascer_contracts::run_in_checkout`]: constraints, session,
//!    archive, a commit of the agent's changes with session trailers,
//!    Status and Result written back);
//! 4. when completed: a second commit with the written-back contract, and
//!    the branch pushed (never forced);
//! 5. the result recorded with the conditional update of
//!    [`Queue::finish`]; if that is refused (another worker holds the job
//!    now), the result is discarded, the branch this attempt pushed is
//!    deleted again, and the worker says so.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tascer_contracts::{
    RunOptions, RunStatus, Status, Worktree, branch_name, commit_message, parse, run_in_checkout,
};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::checkout::{Checkouts, delete_remote_branch, push};
use crate::error::Result;
use crate::queue::{Finish, GaveUp, Job, JobStatus, Queue, Recorded};
use tascer_store::Holder;

/// How a worker runs.
#[derive(Clone)]
pub struct WorkerOptions {
    /// Jobs run at once in this process.
    pub concurrency: usize,
    /// Exit when no job of the queue is queued or running (others'
    /// running jobs are waited for: their worker may die and leave them).
    pub until_empty: bool,
    /// Where branches are pushed (URL or path); default: the job's repository.
    pub push: Option<String>,
    /// Clones and worktrees go here.
    pub work_dir: PathBuf,
    /// How long a lease lasts without a heartbeat.
    pub lease: Duration,
    /// How often to look for jobs when there is nothing to claim.
    pub poll: Duration,
    /// Each contract's run: base session options (provider, home, model),
    /// the archiver, the system prompt.
    pub run: RunOptions,
    /// Called with what happens.
    pub events: Option<EventFn>,
}

impl std::fmt::Debug for WorkerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerOptions")
            .field("concurrency", &self.concurrency)
            .field("until_empty", &self.until_empty)
            .field("push", &self.push)
            .field("work_dir", &self.work_dir)
            .field("lease", &self.lease)
            .field("poll", &self.poll)
            .finish_non_exhaustive()
    }
}

/// Lease length when none is given.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);

impl WorkerOptions {
    /// Defaults: one job at a time, lease 60 s, poll every second, push to
    /// the job's repository, run forever.
    pub fn new(work_dir: impl Into<PathBuf>, run: RunOptions) -> Self {
        WorkerOptions {
            concurrency: 1,
            until_empty: false,
            push: None,
            work_dir: work_dir.into(),
            lease: DEFAULT_LEASE,
            poll: Duration::from_secs(1),
            run,
            events: None,
        }
    }
}

/// How one attempt of a job ended in this worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum JobOutcome {
    /// Completed; branch pushed; result recorded.
    Completed,
    /// Failed; recorded.
    Failed,
    /// Could not start; given back to the queue (or failed at max attempts).
    Requeued,
    /// This worker lost the lease; its result was refused and discarded.
    Discarded,
    /// The result could not be recorded (the queue stayed unreachable);
    /// the job runs again when its lease expires.
    Unrecorded,
}

impl JobOutcome {
    /// The word shown.
    pub fn as_str(self) -> &'static str {
        match self {
            JobOutcome::Completed => "completed",
            JobOutcome::Failed => "failed",
            JobOutcome::Requeued => "requeued",
            JobOutcome::Discarded => "discarded",
            JobOutcome::Unrecorded => "unrecorded",
        }
    }
}

/// One attempt run by this worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobReport {
    /// Job id.
    pub id: i64,
    /// Contract name.
    pub name: String,
    /// Attempt number.
    pub attempt: u32,
    /// How it ended.
    pub outcome: JobOutcome,
    /// Why.
    pub why: String,
    /// The session, when one ran.
    pub session_id: Option<String>,
    /// The pushed branch.
    pub branch: Option<String>,
    /// Its commit.
    pub commit: Option<String>,
    /// The session's archive.
    pub archive_url: Option<String>,
}

/// Something a worker did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum WorkerEvent {
    /// A job was claimed.
    Claimed {
        /// Job id.
        id: i64,
        /// Contract name.
        name: String,
        /// Attempt number.
        attempt: u32,
        /// Why the previous attempt ended, for a retry.
        previous: Option<String>,
    },
    /// An attempt ended.
    Finished(JobReport),
    /// A job was failed while claiming (its workers died too often).
    GaveUp(GaveUp),
    /// Something went wrong that the worker survives (the queue is
    /// unreachable for a while, a worktree could not be removed…).
    Problem(String),
}

/// An event callback.
pub type EventFn = Arc<dyn Fn(WorkerEvent) + Send + Sync>;

/// What a worker did before it stopped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WorkerSummary {
    /// Every attempt it ran, in the order they ended.
    pub jobs: Vec<JobReport>,
    /// Jobs it marked failed while claiming (their workers died too often).
    pub gave_up: Vec<GaveUp>,
}

impl WorkerSummary {
    /// Attempts that ended with `outcome`.
    pub fn count(&self, outcome: JobOutcome) -> usize {
        self.jobs.iter().filter(|j| j.outcome == outcome).count()
    }
}

/// The branch of a job's attempt: `contracts/<name>-job<id>-try<attempt>`.
pub fn job_branch(job: &Job) -> String {
    format!(
        "{}-job{}-try{}",
        branch_name(&job.name),
        job.id,
        job.attempt
    )
}

fn emit(opts: &WorkerOptions, event: WorkerEvent) {
    if let Some(events) = &opts.events {
        events(event);
    }
}

/// Runs a worker on `queue` until `shutdown` is cancelled (then it claims
/// nothing more and waits for its running jobs) or, with `until_empty`,
/// until nothing is left to do. Errors reaching the queue are reported as
/// [`WorkerEvent::Problem`] and retried at the next poll.
pub async fn run_worker(
    queue: &Queue,
    opts: &WorkerOptions,
    shutdown: CancellationToken,
) -> Result<WorkerSummary> {
    let holder = Arc::new(Holder::this_process());
    let checkouts = Arc::new(Checkouts::new(&opts.work_dir));
    let mut running: JoinSet<JobReport> = JoinSet::new();
    let mut summary = WorkerSummary::default();
    let mut last_problem = String::new();
    loop {
        let mut claimed_any = false;
        while !shutdown.is_cancelled() && running.len() < opts.concurrency.max(1) {
            match queue.claim(&holder, opts.lease).await {
                Ok(claimed) => {
                    for gave_up in claimed.gave_up {
                        emit(opts, WorkerEvent::GaveUp(gave_up.clone()));
                        summary.gave_up.push(gave_up);
                    }
                    let Some(job) = claimed.job else { break };
                    claimed_any = true;
                    emit(
                        opts,
                        WorkerEvent::Claimed {
                            id: job.id,
                            name: job.name.clone(),
                            attempt: job.attempt,
                            previous: job.previous.clone(),
                        },
                    );
                    let (queue, holder, checkouts, opts) = (
                        queue.clone(),
                        Arc::clone(&holder),
                        Arc::clone(&checkouts),
                        opts.clone(),
                    );
                    running.spawn(
                        async move { run_job(&queue, &holder, &checkouts, &opts, job).await },
                    );
                }
                Err(err) => {
                    let problem = format!("cannot claim a job: {err}");
                    if problem != last_problem {
                        emit(opts, WorkerEvent::Problem(problem.clone()));
                        last_problem = problem;
                    }
                    break;
                }
            }
        }
        if running.is_empty() {
            if shutdown.is_cancelled() {
                break;
            }
            if opts.until_empty && !claimed_any {
                match queue.remaining().await {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(err) => {
                        let problem = format!("cannot count the remaining jobs: {err}");
                        if problem != last_problem {
                            emit(opts, WorkerEvent::Problem(problem.clone()));
                            last_problem = problem;
                        }
                    }
                }
            }
        }
        tokio::select! {
            Some(done) = running.join_next(), if !running.is_empty() => {
                match done {
                    Ok(report) => {
                        emit(opts, WorkerEvent::Finished(report.clone()));
                        summary.jobs.push(report);
                    }
                    Err(err) => emit(opts, WorkerEvent::Problem(format!("a job's task failed: {err}"))),
                }
            }
            () = tokio::time::sleep(opts.poll), if running.len() >= opts.concurrency.max(1) || !claimed_any => {}
            () = shutdown.cancelled(), if !shutdown.is_cancelled() => {}
            else => {}
        }
    }
    Ok(summary)
}

/// Renews `job`'s lease every third of the lease until aborted; cancels
/// `lost` when the lease turns out to be someone else's.
fn keep_alive(
    queue: &Queue,
    holder: &Arc<Holder>,
    opts: &WorkerOptions,
    job: &Job,
    lost: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let (queue, holder, job) = (queue.clone(), Arc::clone(holder), job.clone());
    let (lease, events) = (opts.lease, opts.events.clone());
    let every = (lease / 3).max(Duration::from_millis(100));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            match queue.heartbeat(&job, &holder, lease).await {
                Ok(true) => {}
                Ok(false) => {
                    lost.cancel();
                    return;
                }
                Err(err) => {
                    if let Some(events) = &events {
                        events(WorkerEvent::Problem(format!(
                            "job {}: heartbeat failed: {err}",
                            job.id
                        )));
                    }
                }
            }
        }
    })
}

async fn run_job(
    queue: &Queue,
    holder: &Arc<Holder>,
    checkouts: &Checkouts,
    opts: &WorkerOptions,
    job: Job,
) -> JobReport {
    let started = std::time::Instant::now();
    let lost = CancellationToken::new();
    let heartbeat = keep_alive(queue, holder, opts, &job, lost.clone());
    let branch = job_branch(&job);
    let path = opts
        .work_dir
        .join("jobs")
        .join(format!("{}-{}", job.id, job.attempt));
    let mut report = JobReport {
        id: job.id,
        name: job.name.clone(),
        attempt: job.attempt,
        outcome: JobOutcome::Requeued,
        why: String::new(),
        session_id: None,
        branch: None,
        commit: None,
        archive_url: None,
    };
    let wt = match checkouts
        .checkout(&job.repo, &job.base_commit, &branch, &path)
        .await
    {
        Ok(wt) => wt,
        Err(err) => {
            heartbeat.abort();
            let why = format!("not started: no checkout of {}: {err}", job.repo);
            report.why = why.clone();
            report.outcome = match queue.requeue(&job, holder, &why).await {
                Ok(Recorded::Yes(JobStatus::Failed)) => JobOutcome::Failed,
                Ok(Recorded::Yes(_)) => JobOutcome::Requeued,
                Ok(Recorded::LeaseLost(now)) => {
                    report.why = format!("{why}; and this worker lost the lease ({now})");
                    JobOutcome::Discarded
                }
                Err(err) => {
                    report.why = format!("{why}; and it could not be given back: {err}");
                    JobOutcome::Unrecorded
                }
            };
            return report;
        }
    };
    tracing::debug!(
        job = job.id,
        ms = started.elapsed().as_millis() as u64,
        "checked out"
    );
    let finish = execute(opts, &job, &wt, &lost).await;
    heartbeat.abort();
    tracing::debug!(
        job = job.id,
        ms = started.elapsed().as_millis() as u64,
        "ran and pushed"
    );
    report.session_id = finish.session_id.clone();
    report.archive_url = finish.archive_url.clone();
    report.why = finish.why.clone();
    let remote = opts.push.clone().unwrap_or_else(|| job.repo.clone());
    // After a lost lease this is refused (and the attempt marked
    // discarded), whatever this attempt produced.
    match queue.finish(&job, holder, &finish).await {
        Ok(Recorded::Yes(status)) => {
            report.outcome = if status == JobStatus::Completed {
                JobOutcome::Completed
            } else {
                JobOutcome::Failed
            };
            report.branch = finish.branch.clone();
            report.commit = finish.commit.clone();
        }
        Ok(Recorded::LeaseLost(now)) => {
            report.outcome = JobOutcome::Discarded;
            let mut why = format!(
                "this worker lost the job's lease ({now}); its result was discarded ({})",
                finish.why
            );
            if let Some(branch) = &finish.branch {
                match delete_remote_branch(&wt, &remote, branch).await {
                    Ok(()) => why.push_str(&format!("; its pushed branch {branch} was deleted")),
                    Err(err) => why.push_str(&format!(
                        "; its pushed branch {branch} could not be deleted ({err}) and is not the job's result"
                    )),
                }
            }
            report.why = why;
        }
        Err(err) => {
            report.outcome = JobOutcome::Unrecorded;
            report.why = format!(
                "{}; but the result could not be recorded ({err}): the job runs again when its lease expires",
                finish.why
            );
            report.branch = finish.branch.clone();
        }
    }
    tracing::debug!(
        job = job.id,
        ms = started.elapsed().as_millis() as u64,
        "recorded"
    );
    if let Err(err) = checkouts.remove(&job.repo, &wt).await {
        emit(
            opts,
            WorkerEvent::Problem(format!(
                "job {}: cannot remove its worktree {}: {err}",
                job.id,
                wt.path.display()
            )),
        );
    }
    report
}

/// Runs the job's contract in its checkout; when completed, commits the
/// written-back contract and pushes the branch. Returns what to record.
async fn execute(
    opts: &WorkerOptions,
    job: &Job,
    wt: &Worktree,
    lost: &CancellationToken,
) -> Finish {
    let failed = |why: String| Finish {
        why,
        ..Finish::default()
    };
    let file = wt.path.join(&job.contract_path);
    if let Some(parent) = file.parent()
        && let Err(err) = std::fs::create_dir_all(parent)
    {
        return failed(format!("cannot create {}: {err}", parent.display()));
    }
    if let Err(err) = std::fs::write(&file, &job.contract) {
        return failed(format!("cannot write {}: {err}", file.display()));
    }
    let contract = match parse(&file) {
        Ok(c) if matches!(c.status, Status::Pending | Status::InProgress) => c,
        Ok(c) => {
            return failed(format!(
                "the contract's status is {}, not pending",
                c.status
            ));
        }
        Err(err) => return failed(format!("malformed contract: {err}")),
    };
    let completed_dir = completed_dir_for(&file, &wt.path);
    let mut run = opts.run.clone();
    run.cancel = Some(lost.clone());
    let note = job
        .previous
        .as_ref()
        .map(|p| format!("attempt {}: {p}", job.attempt - 1));
    let report = run_in_checkout(contract, &run, wt, &completed_dir, note).await;
    tracing::debug!(
        job = job.id,
        ms = report.session.as_ref().map_or(0, |s| s.duration_ms),
        "session"
    );
    let session = report.session.clone().unwrap_or_default();
    let mut finish = Finish {
        completed: false,
        why: report.why.clone(),
        session_id: Some(session.session_id.clone()).filter(|s| !s.is_empty()),
        ledger_head: session.ledger_head.clone(),
        archive_url: session.archive.clone(),
        result: serde_json::to_value(&session).ok(),
        contract_after: std::fs::read_to_string(&report.path).ok(),
        ..Finish::default()
    };
    if report.status != RunStatus::Completed || lost.is_cancelled() {
        return finish;
    }
    let file_in_repo = report
        .path
        .strip_prefix(&wt.path)
        .unwrap_or(&report.path)
        .display()
        .to_string();
    let message = commit_message(
        &job.title,
        &format!(
            "The contract with its Status and Result (queue job {}, attempt {}).",
            job.id, job.attempt
        ),
        &session.session_id,
        session.ledger_head.as_deref(),
        &file_in_repo,
    );
    let tip = match wt.commit(&message).await {
        Ok(Some(commit)) => commit,
        Ok(None) => match tascer_contracts::git(&wt.path, &["rev-parse", "HEAD"]).await {
            Ok(head) => head,
            Err(err) => {
                finish.why = format!("{}, but its branch head is unreadable: {err}", finish.why);
                return finish;
            }
        },
        Err(err) => {
            finish.why = format!(
                "{}, but the written-back contract could not be committed: {err}",
                finish.why
            );
            return finish;
        }
    };
    let remote = opts.push.clone().unwrap_or_else(|| job.repo.clone());
    if let Err(err) = push_with_retries(wt, &remote).await {
        finish.why = format!(
            "{}, but its branch {} could not be pushed to {remote}: {err}",
            finish.why, wt.branch
        );
        return finish;
    }
    finish.completed = true;
    finish.branch = Some(wt.branch.clone());
    finish.commit = Some(tip);
    finish
}

/// `contracts_completed` next to the contract's directory (as
/// `tascer contracts run` does), inside the checkout.
fn completed_dir_for(file: &Path, checkout: &Path) -> PathBuf {
    file.parent()
        .and_then(Path::parent)
        .unwrap_or(checkout)
        .join("contracts_completed")
}

/// Pushes, trying three times (a remote can be briefly unreachable).
async fn push_with_retries(
    wt: &Worktree,
    remote: &str,
) -> Result<(), tascer_contracts::ContractError> {
    let mut delay = Duration::from_millis(250);
    let mut tries = 0;
    loop {
        tries += 1;
        match push(wt, remote).await {
            Ok(()) => return Ok(()),
            Err(err) if tries >= 3 => return Err(err),
            Err(_) => {
                tokio::time::sleep(delay).await;
                delay *= 4;
            }
        }
    }
}
