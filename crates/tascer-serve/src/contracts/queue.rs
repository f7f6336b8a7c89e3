//! The contract queue's part of the view (PostgreSQL, the cargo feature
//! `postgres`): its jobs and the workers holding them.

use serde::Serialize;
use tascer_fleet::{JobView, Queue};
use tokio::sync::OnceCell;

use crate::error::ApiError;

/// A queue's jobs and workers.
#[derive(Debug, Serialize)]
pub struct QueueView {
    /// The queue's name.
    pub name: String,
    /// The server (URL without its password).
    pub server: String,
    /// Its jobs, each with its attempts and, while running, its lease.
    pub jobs: Vec<JobView>,
    /// The workers holding a job now.
    pub workers: Vec<Worker>,
}

/// A worker running a job now (from the job's lease).
#[derive(Debug, Serialize)]
pub struct Worker {
    /// Worker id.
    pub holder: String,
    /// Host.
    pub host: String,
    /// Pid.
    pub pid: i32,
    /// The job it holds.
    pub job: i64,
    /// The job's contract.
    pub contract: String,
    /// When its lease expires unless renewed.
    pub expires_at: String,
    /// Its last heartbeat.
    pub heartbeat_at: Option<String>,
}

/// The queue, opened on first use and kept.
#[derive(Debug, Default)]
pub(super) struct OpenQueue(OnceCell<Queue>);

impl OpenQueue {
    /// The queue `name` at `url` (opened on first use), its jobs and workers.
    pub(super) async fn view(&self, url: &str, name: &str) -> Result<QueueView, ApiError> {
        let queue = self
            .0
            .get_or_try_init(|| Queue::open(url, name, 1))
            .await
            .map_err(|e| ApiError::internal(&e))?;
        let jobs = queue.jobs().await.map_err(|e| ApiError::internal(&e))?;
        let workers = jobs
            .iter()
            .filter_map(|job| {
                let lease = job.lease.as_ref()?;
                Some(Worker {
                    holder: lease.holder.clone(),
                    host: lease.host.clone(),
                    pid: lease.pid,
                    job: job.id,
                    contract: job.contract_path.clone(),
                    expires_at: lease.expires_at.clone(),
                    heartbeat_at: lease.heartbeat_at.clone(),
                })
            })
            .collect();
        Ok(QueueView {
            name: queue.name().to_string(),
            server: queue.server().to_string(),
            jobs,
            workers,
        })
    }
}
