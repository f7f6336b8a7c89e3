//! The contract queue in PostgreSQL.
//!
//! One row per enqueued contract (`tascer_contract_jobs`) and one per
//! attempt (`tascer_contract_attempts`). A worker claims the oldest
//! claimable job with `SELECT … FOR UPDATE SKIP LOCKED` in a transaction
//! that sets its lease (holder, host, pid, expiry from the database's
//! clock); a heartbeat extends the lease; a job whose lease has expired is
//! claimable again (its attempt is recorded as `lost`), until it has been
//! started `max_attempts` times — then it is `failed`, saying why.
//!
//! Completion is one conditional `UPDATE … WHERE id = $1 AND status =
//! 'running' AND lease_holder = $me AND attempts = $my_attempt`: a claim
//! by another worker changes the holder and the attempt number, so of two
//! workers that both finish a job, exactly one update matches; the other
//! learns it lost the lease ([`Recorded::LeaseLost`]) and its result is
//! refused (its attempt is recorded as `discarded`).

use std::time::Duration;

use serde::Serialize;
use tascer_store::Holder;
use tascer_store::postgres::PgPool;
use tokio_postgres::Row;

use crate::db::{Failure, connect, retry};
use crate::error::Result;

pub use tascer_contracts::{DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE};

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum JobStatus {
    /// Waiting for a worker.
    Queued,
    /// A worker holds its lease.
    Running,
    /// Done: its branch is pushed and its result recorded.
    Completed,
    /// Not done; `why` says why.
    Failed,
}

impl JobStatus {
    /// The word stored in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
        }
    }

    fn parse(word: &str) -> JobStatus {
        match word {
            "running" => JobStatus::Running,
            "completed" => JobStatus::Completed,
            "failed" => JobStatus::Failed,
            _ => JobStatus::Queued,
        }
    }
}

impl std::fmt::Display for JobStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A contract to enqueue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewJob {
    /// Contract name (file name without `.md`).
    pub name: String,
    /// Its title.
    pub title: String,
    /// The file's path relative to the repository's top directory.
    pub contract_path: String,
    /// The file's text (pending).
    pub contract: String,
    /// Where workers clone the repository from (URL or path).
    pub repo: String,
    /// The commit each checkout starts from.
    pub base_commit: String,
    /// Starts before a worker's death fails the job.
    pub max_attempts: u32,
}

/// What enqueueing one contract did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Enqueued {
    /// A new job.
    Added {
        /// Its id.
        id: i64,
    },
    /// The same text of the same contract is already in this queue.
    Exists {
        /// The existing job.
        id: i64,
        /// Its status.
        status: JobStatus,
    },
}

/// A claimed job: what to run, and which attempt this is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Job id.
    pub id: i64,
    /// Attempt number, from 1.
    pub attempt: u32,
    /// Contract name.
    pub name: String,
    /// Title.
    pub title: String,
    /// Path relative to the repository.
    pub contract_path: String,
    /// The contract's text.
    pub contract: String,
    /// Repository URL or path.
    pub repo: String,
    /// Commit to start from.
    pub base_commit: String,
    /// Why the previous attempt ended, when this is a retry.
    pub previous: Option<String>,
}

/// A job failed while claiming because its workers died too often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GaveUp {
    /// Job id.
    pub id: i64,
    /// Contract name.
    pub name: String,
    /// Why.
    pub why: String,
}

/// What a claim found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Claimed {
    /// The job this worker now holds, if any was claimable.
    pub job: Option<Job>,
    /// Jobs marked failed on the way (max attempts reached).
    pub gave_up: Vec<GaveUp>,
}

/// How an attempt ended, to record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Finish {
    /// Completed (else failed).
    pub completed: bool,
    /// Why, in one sentence.
    pub why: String,
    /// The session.
    pub session_id: Option<String>,
    /// Its ledger head hash.
    pub ledger_head: Option<String>,
    /// The pushed branch.
    pub branch: Option<String>,
    /// The branch's pushed commit.
    pub commit: Option<String>,
    /// Where the session was archived.
    pub archive_url: Option<String>,
    /// The session's outcome as JSON.
    pub result: Option<serde_json::Value>,
    /// The contract file with its Status and Result written back.
    pub contract_after: Option<String>,
}

/// Whether a worker's update was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// Recorded (for a requeue: the job's new status).
    Yes(JobStatus),
    /// Refused: this worker no longer holds the job's lease.
    LeaseLost(LeaseLost),
}

/// The job as it stands when a worker's update was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseLost {
    /// Its status now.
    pub status: JobStatus,
    /// Its attempt number now.
    pub attempts: u32,
    /// Who holds (or last held) it.
    pub holder: Option<String>,
    /// On which host.
    pub host: Option<String>,
    /// Which pid.
    pub pid: Option<i32>,
}

impl std::fmt::Display for LeaseLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the job is now {} at attempt {} (worker pid {} on {})",
            self.status,
            self.attempts,
            self.pid
                .map(|p| p.to_string())
                .unwrap_or_else(|| "-".into()),
            self.host.as_deref().unwrap_or("-")
        )
    }
}

/// One attempt of a job, for status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttemptView {
    /// Attempt number.
    pub attempt: u32,
    /// Worker id.
    pub holder: String,
    /// Host.
    pub host: String,
    /// Pid.
    pub pid: i32,
    /// When it started (UTC, RFC 3339).
    pub started_at: String,
    /// When it ended.
    pub ended_at: Option<String>,
    /// `completed`, `failed`, `lost`, `discarded`, `requeued`, or `None`
    /// while running.
    pub outcome: Option<String>,
    /// Why.
    pub why: Option<String>,
    /// Its session.
    pub session_id: Option<String>,
    /// Its branch.
    pub branch: Option<String>,
}

/// A running job's lease, for status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeaseView {
    /// Worker id.
    pub holder: String,
    /// Host.
    pub host: String,
    /// Pid.
    pub pid: i32,
    /// When it expires unless renewed.
    pub expires_at: String,
    /// Last heartbeat.
    pub heartbeat_at: Option<String>,
}

/// One job with its attempts, for `tascer contracts status --queue`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobView {
    /// Job id.
    pub id: i64,
    /// Queue name.
    pub queue: String,
    /// Contract name.
    pub name: String,
    /// Title.
    pub title: String,
    /// Path in the repository.
    pub contract_path: String,
    /// Status.
    pub status: JobStatus,
    /// Attempts started.
    pub attempts: u32,
    /// Most attempts.
    pub max_attempts: u32,
    /// Why it completed or failed.
    pub why: Option<String>,
    /// Repository.
    pub repo: String,
    /// Base commit.
    pub base_commit: String,
    /// The completing session.
    pub session_id: Option<String>,
    /// Its ledger head.
    pub ledger_head: Option<String>,
    /// The pushed branch.
    pub branch: Option<String>,
    /// Its commit.
    pub commit: Option<String>,
    /// The session's archive.
    pub archive_url: Option<String>,
    /// The lease, while running.
    pub lease: Option<LeaseView>,
    /// Enqueued (UTC).
    pub enqueued_at: String,
    /// First started.
    pub started_at: Option<String>,
    /// Finished.
    pub finished_at: Option<String>,
    /// The session's outcome as recorded.
    pub result: Option<serde_json::Value>,
    /// The contract with Status and Result written back.
    pub contract_result: Option<String>,
    /// Every attempt, in order.
    pub history: Vec<AttemptView>,
}

/// `col` as RFC 3339 text in UTC (millisecond precision).
fn ts(col: &str) -> String {
    format!("to_char({col} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')")
}

fn u32_of(v: i32) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

fn i32_of(v: u32) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// The holder's pid as the table stores it.
fn pid_i32(holder: &Holder) -> i32 {
    i32::try_from(holder.pid).unwrap_or(i32::MAX)
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// A named queue in a database.
#[derive(Debug, Clone)]
pub struct Queue {
    pool: PgPool,
    name: String,
}

impl Queue {
    /// Connects to the queue `name` in the database at `url`, with up to
    /// `max_connections` pooled connections; applies the schema.
    pub async fn open(url: &str, name: &str, max_connections: usize) -> Result<Queue> {
        Ok(Queue {
            pool: connect(url, max_connections).await?,
            name: name.to_string(),
        })
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The database server, without the password.
    pub fn server(&self) -> &str {
        self.pool.location()
    }

    /// Enqueues `jobs` in one transaction; a contract whose text is already
    /// in this queue is not added again.
    pub async fn enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>> {
        retry(&self.pool, "enqueue the contracts", || {
            self.try_enqueue(jobs)
        })
        .await
    }

    async fn try_enqueue(&self, jobs: &[NewJob]) -> Result<Vec<Enqueued>, Failure> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let mut out = Vec::new();
        for job in jobs {
            let sha = content_sha256(&job.contract);
            let added = tx
                .query_opt(
                    "INSERT INTO tascer_contract_jobs
                         (queue, name, title, contract_path, contract, content_sha256, repo,
                          base_commit, max_attempts)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                     ON CONFLICT (queue, contract_path, content_sha256) DO NOTHING
                     RETURNING id",
                    &[
                        &self.name,
                        &job.name,
                        &job.title,
                        &job.contract_path,
                        &job.contract,
                        &sha,
                        &job.repo,
                        &job.base_commit,
                        &i32_of(job.max_attempts.max(1)),
                    ],
                )
                .await?;
            out.push(match added {
                Some(row) => Enqueued::Added { id: row.get(0) },
                None => {
                    let row = tx
                        .query_one(
                            "SELECT id, status FROM tascer_contract_jobs
                             WHERE queue = $1 AND contract_path = $2 AND content_sha256 = $3",
                            &[&self.name, &job.contract_path, &sha],
                        )
                        .await?;
                    Enqueued::Exists {
                        id: row.get(0),
                        status: JobStatus::parse(row.get::<_, &str>(1)),
                    }
                }
            });
        }
        tx.commit().await?;
        Ok(out)
    }

    /// Claims the oldest claimable job (queued, or running with an
    /// expired lease) for `holder`, with a lease of `lease`. Jobs whose
    /// workers stopped during `max_attempts` attempts are marked failed on
    /// the way.
    pub async fn claim(&self, holder: &Holder, lease: Duration) -> Result<Claimed> {
        retry(&self.pool, "claim a job", || self.try_claim(holder, lease)).await
    }

    async fn try_claim(&self, holder: &Holder, lease: Duration) -> Result<Claimed, Failure> {
        let mut client = self.pool.get().await?;
        let mut claimed = Claimed::default();
        loop {
            let tx = client.transaction().await?;
            let select = format!(
                "SELECT id, name, status, attempts, max_attempts, lease_host, lease_pid, {}
                 FROM tascer_contract_jobs
                 WHERE queue = $1
                   AND (status = 'queued' OR (status = 'running' AND lease_expires_at < now()))
                 ORDER BY id
                 LIMIT 1
                 FOR UPDATE SKIP LOCKED",
                ts("heartbeat_at")
            );
            let Some(row) = tx.query_opt(&select, &[&self.name]).await? else {
                tx.commit().await?;
                return Ok(claimed);
            };
            let id: i64 = row.get(0);
            let name: String = row.get(1);
            let status: String = row.get(2);
            let attempts: i32 = row.get(3);
            let max_attempts: i32 = row.get(4);
            let mut previous = None;
            if status == "running" {
                let host: Option<String> = row.get(5);
                let pid: Option<i32> = row.get(6);
                let beat: Option<String> = row.get(7);
                let why = format!(
                    "its worker (pid {} on {}) stopped: no heartbeat since {}, its lease expired",
                    pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into()),
                    host.as_deref().unwrap_or("-"),
                    beat.as_deref().unwrap_or("-")
                );
                tx.execute(
                    "UPDATE tascer_contract_attempts SET ended_at = now(), outcome = 'lost', why = $3
                     WHERE job_id = $1 AND attempt = $2 AND outcome IS NULL",
                    &[&id, &attempts, &why],
                )
                .await?;
                if attempts >= max_attempts {
                    let why = format!(
                        "not retried: its worker stopped during {attempts} attempt(s) (at most \
                         {max_attempts}); last: {why}"
                    );
                    tx.execute(
                        "UPDATE tascer_contract_jobs
                         SET status = 'failed', why = $2, finished_at = now(), lease_expires_at = NULL
                         WHERE id = $1",
                        &[&id, &why],
                    )
                    .await?;
                    tx.commit().await?;
                    claimed.gave_up.push(GaveUp { id, name, why });
                    continue;
                }
                previous = Some(why);
            }
            let attempt = attempts + 1;
            let row = tx
                .query_one(
                    "UPDATE tascer_contract_jobs
                     SET status = 'running', attempts = $2, lease_holder = $3, lease_host = $4,
                         lease_pid = $5,
                         lease_expires_at = now() + $6::bigint * interval '1 millisecond',
                         heartbeat_at = now(), started_at = COALESCE(started_at, now())
                     WHERE id = $1
                     RETURNING title, contract_path, contract, repo, base_commit",
                    &[
                        &id,
                        &attempt,
                        &holder.owner,
                        &holder.host,
                        &pid_i32(holder),
                        &millis(lease),
                    ],
                )
                .await?;
            tx.execute(
                "INSERT INTO tascer_contract_attempts (job_id, attempt, holder, host, pid)
                 VALUES ($1, $2, $3, $4, $5)",
                &[&id, &attempt, &holder.owner, &holder.host, &pid_i32(holder)],
            )
            .await?;
            tx.commit().await?;
            claimed.job = Some(Job {
                id,
                attempt: u32_of(attempt),
                name,
                title: row.get(0),
                contract_path: row.get(1),
                contract: row.get(2),
                repo: row.get(3),
                base_commit: row.get(4),
                previous,
            });
            return Ok(claimed);
        }
    }

    /// Extends `job`'s lease by `lease` from now; `false` when this worker
    /// no longer holds it.
    pub async fn heartbeat(&self, job: &Job, holder: &Holder, lease: Duration) -> Result<bool> {
        retry(&self.pool, "renew a lease", || async {
            let client = self.pool.get().await?;
            let n = client
                .execute(
                    "UPDATE tascer_contract_jobs
                         SET lease_expires_at = now() + $4::bigint * interval '1 millisecond',
                             heartbeat_at = now()
                         WHERE id = $1 AND status = 'running' AND lease_holder = $2
                           AND attempts = $3",
                    &[&job.id, &holder.owner, &i32_of(job.attempt), &millis(lease)],
                )
                .await?;
            Ok(n == 1)
        })
        .await
    }

    /// Records how `job` ended — only if `holder` still holds it at this
    /// attempt. A refused update marks this attempt `discarded`.
    pub async fn finish(&self, job: &Job, holder: &Holder, finish: &Finish) -> Result<Recorded> {
        retry(&self.pool, "record a job's result", || {
            self.try_finish(job, holder, finish)
        })
        .await
    }

    async fn try_finish(
        &self,
        job: &Job,
        holder: &Holder,
        f: &Finish,
    ) -> Result<Recorded, Failure> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let status = if f.completed {
            JobStatus::Completed
        } else {
            JobStatus::Failed
        };
        let result = f.result.as_ref().map(|v| v.to_string());
        let attempt = i32_of(job.attempt);
        let n = tx
            .execute(
                "UPDATE tascer_contract_jobs
                 SET status = $4, why = $5, session_id = $6, ledger_head = $7, branch = $8,
                     commit_id = $9, archive_url = $10, result = $11::text::jsonb,
                     result_contract = $12, finished_at = now(), lease_expires_at = NULL
                 WHERE id = $1 AND status = 'running' AND lease_holder = $2 AND attempts = $3",
                &[
                    &job.id,
                    &holder.owner,
                    &attempt,
                    &status.as_str(),
                    &f.why,
                    &f.session_id,
                    &f.ledger_head,
                    &f.branch,
                    &f.commit,
                    &f.archive_url,
                    &result,
                    &f.contract_after,
                ],
            )
            .await?;
        if n == 1 {
            tx.execute(
                "UPDATE tascer_contract_attempts
                 SET ended_at = now(), outcome = $3, why = $4, session_id = $5, branch = $6
                 WHERE job_id = $1 AND attempt = $2",
                &[
                    &job.id,
                    &attempt,
                    &status.as_str(),
                    &f.why,
                    &f.session_id,
                    &f.branch,
                ],
            )
            .await?;
            tx.commit().await?;
            return Ok(Recorded::Yes(status));
        }
        let now = current(&tx, job.id).await?;
        // An earlier try of this very update committed (its reply was lost).
        if now.status == status
            && now.holder.as_deref() == Some(holder.owner.as_str())
            && now.attempts == job.attempt
        {
            tx.commit().await?;
            return Ok(Recorded::Yes(status));
        }
        let why = format!(
            "finished after losing its lease ({}); its result was refused: {}",
            now, f.why
        );
        tx.execute(
            "UPDATE tascer_contract_attempts
             SET ended_at = now(), outcome = 'discarded', why = $3, session_id = $4, branch = $5
             WHERE job_id = $1 AND attempt = $2 AND (outcome IS NULL OR outcome = 'lost')",
            &[&job.id, &attempt, &why, &f.session_id, &f.branch],
        )
        .await?;
        tx.commit().await?;
        Ok(Recorded::LeaseLost(now))
    }

    /// Gives `job` back because this attempt could not start (no checkout,
    /// say): queued again, or failed when it has had `max_attempts`.
    pub async fn requeue(&self, job: &Job, holder: &Holder, why: &str) -> Result<Recorded> {
        retry(&self.pool, "give a job back", || async {
                let mut client = self.pool.get().await?;
                let tx = client.transaction().await?;
                let attempt = i32_of(job.attempt);
                let row = tx
                    .query_opt(
                        "UPDATE tascer_contract_jobs
                         SET status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
                             why = $4,
                             finished_at = CASE WHEN attempts >= max_attempts THEN now() END,
                             lease_expires_at = NULL
                         WHERE id = $1 AND status = 'running' AND lease_holder = $2 AND attempts = $3
                         RETURNING status",
                        &[&job.id, &holder.owner, &attempt, &why],
                    )
                    .await?;
                let Some(row) = row else {
                    let now = current(&tx, job.id).await?;
                    tx.commit().await?;
                    return Ok(Recorded::LeaseLost(now));
                };
                tx.execute(
                    "UPDATE tascer_contract_attempts SET ended_at = now(), outcome = 'requeued', why = $3
                     WHERE job_id = $1 AND attempt = $2",
                    &[&job.id, &attempt, &why],
                )
                .await?;
                tx.commit().await?;
                Ok(Recorded::Yes(JobStatus::parse(row.get::<_, &str>(0))))
            })
            .await
    }

    /// How many jobs of this queue are queued or running.
    pub async fn remaining(&self) -> Result<u64> {
        retry(&self.pool, "count the remaining jobs", || async {
            let client = self.pool.get().await?;
            let row = client
                .query_one(
                    "SELECT count(*) FROM tascer_contract_jobs
                         WHERE queue = $1 AND status IN ('queued', 'running')",
                    &[&self.name],
                )
                .await?;
            Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
        })
        .await
    }

    /// Every job of this queue with its attempts, oldest first.
    pub async fn jobs(&self) -> Result<Vec<JobView>> {
        retry(&self.pool, "list the jobs", || self.try_jobs()).await
    }

    async fn try_jobs(&self) -> Result<Vec<JobView>, Failure> {
        let client = self.pool.get().await?;
        let jobs = client
            .query(
                &format!(
                    "SELECT id, queue, name, title, contract_path, status, attempts, max_attempts,
                            why, repo, base_commit, session_id, ledger_head, branch, commit_id,
                            archive_url, lease_holder, lease_host, lease_pid, {}, {}, {}, {}, {},
                            result::text, result_contract
                     FROM tascer_contract_jobs WHERE queue = $1 ORDER BY id",
                    ts("lease_expires_at"),
                    ts("heartbeat_at"),
                    ts("enqueued_at"),
                    ts("started_at"),
                    ts("finished_at"),
                ),
                &[&self.name],
            )
            .await?;
        let attempts = client
            .query(
                &format!(
                    "SELECT a.job_id, a.attempt, a.holder, a.host, a.pid, {}, {}, a.outcome, a.why,
                            a.session_id, a.branch
                     FROM tascer_contract_attempts a
                     JOIN tascer_contract_jobs j ON j.id = a.job_id
                     WHERE j.queue = $1
                     ORDER BY a.job_id, a.attempt",
                    ts("a.started_at"),
                    ts("a.ended_at"),
                ),
                &[&self.name],
            )
            .await?;
        let mut out: Vec<JobView> = jobs.iter().map(job_view).collect();
        for row in &attempts {
            let job_id: i64 = row.get(0);
            if let Some(job) = out.iter_mut().find(|j| j.id == job_id) {
                job.history.push(AttemptView {
                    attempt: u32_of(row.get(1)),
                    holder: row.get(2),
                    host: row.get(3),
                    pid: row.get(4),
                    started_at: row.get::<_, Option<String>>(5).unwrap_or_default(),
                    ended_at: row.get(6),
                    outcome: row.get(7),
                    why: row.get(8),
                    session_id: row.get(9),
                    branch: row.get(10),
                });
            }
        }
        Ok(out)
    }
}

fn job_view(row: &Row) -> JobView {
    let status = JobStatus::parse(row.get::<_, &str>(5));
    let lease = match (
        status,
        row.get::<_, Option<String>>(16),
        row.get::<_, Option<String>>(17),
        row.get::<_, Option<i32>>(18),
        row.get::<_, Option<String>>(19),
    ) {
        (JobStatus::Running, Some(holder), Some(host), Some(pid), Some(expires_at)) => {
            Some(LeaseView {
                holder,
                host,
                pid,
                expires_at,
                heartbeat_at: row.get(20),
            })
        }
        _ => None,
    };
    JobView {
        id: row.get(0),
        queue: row.get(1),
        name: row.get(2),
        title: row.get(3),
        contract_path: row.get(4),
        status,
        attempts: u32_of(row.get(6)),
        max_attempts: u32_of(row.get(7)),
        why: row.get(8),
        repo: row.get(9),
        base_commit: row.get(10),
        session_id: row.get(11),
        ledger_head: row.get(12),
        branch: row.get(13),
        commit: row.get(14),
        archive_url: row.get(15),
        lease,
        enqueued_at: row.get::<_, Option<String>>(21).unwrap_or_default(),
        started_at: row.get(22),
        finished_at: row.get(23),
        result: row
            .get::<_, Option<String>>(24)
            .and_then(|s| serde_json::from_str(&s).ok()),
        contract_result: row.get(25),
        history: Vec::new(),
    }
}

/// The job's status and holder now (inside `tx`).
async fn current(tx: &deadpool_postgres::Transaction<'_>, id: i64) -> Result<LeaseLost, Failure> {
    let row = tx
        .query_one(
            "SELECT status, attempts, lease_holder, lease_host, lease_pid
             FROM tascer_contract_jobs WHERE id = $1",
            &[&id],
        )
        .await?;
    Ok(LeaseLost {
        status: JobStatus::parse(row.get::<_, &str>(0)),
        attempts: u32_of(row.get(1)),
        holder: row.get(2),
        host: row.get(3),
        pid: row.get(4),
    })
}

/// SHA-256 of a contract's text, hex.
pub fn content_sha256(text: &str) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}
