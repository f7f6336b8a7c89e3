//! The contracts view: a directory's contracts with their status (what
//! `tascer contracts status` lists) and, when a queue is configured, the
//! queue's jobs with the workers holding them (`tascer contracts status
//! --queue`).

use std::path::PathBuf;

use serde::Serialize;
use tascer_contracts::{ContractStatus, read_statuses};
use tascer_fleet::{JobView, Queue};
use tokio::sync::OnceCell;

use crate::error::ApiError;

/// Where the contracts are.
#[derive(Debug, Clone)]
pub struct ContractSources {
    /// The contracts directory.
    pub dir: PathBuf,
    /// The completed directory.
    pub completed_dir: PathBuf,
    /// The PostgreSQL queue (URL and queue name), if any.
    pub queue: Option<(String, String)>,
}

/// The contracts view.
#[derive(Debug, Serialize)]
pub struct ContractsView {
    /// The contracts directory.
    pub dir: PathBuf,
    /// The completed directory.
    pub completed_dir: PathBuf,
    /// Every contract of both, with its status.
    pub contracts: Vec<ContractStatus>,
    /// The queue, when one is configured.
    pub queue: Option<QueueView>,
}

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

/// The contracts and, opened once, the queue.
#[derive(Debug)]
pub struct Contracts {
    sources: ContractSources,
    queue: OnceCell<Queue>,
}

impl Contracts {
    /// Contracts read from `sources`.
    pub fn new(sources: ContractSources) -> Self {
        Self {
            sources,
            queue: OnceCell::new(),
        }
    }

    /// The view, read now.
    pub async fn view(&self) -> Result<ContractsView, ApiError> {
        let dir = self.sources.dir.clone();
        let completed_dir = self.sources.completed_dir.clone();
        let contracts =
            read_statuses(&[&dir, &completed_dir]).map_err(|e| ApiError::internal(&e))?;
        let queue = match &self.sources.queue {
            Some((url, name)) => Some(self.queue_view(url, name).await?),
            None => None,
        };
        Ok(ContractsView {
            dir,
            completed_dir,
            contracts,
            queue,
        })
    }

    async fn queue_view(&self, url: &str, name: &str) -> Result<QueueView, ApiError> {
        let queue = self
            .queue
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
