//! The contracts view: a directory's contracts with their status (what
//! `tascer contracts status` lists) and, when a queue is configured, the
//! queue's jobs with the workers holding them (`tascer contracts status
//! --queue`).

use std::path::PathBuf;

use serde::Serialize;
use tascer_contracts::{ContractStatus, read_statuses};

use crate::error::ApiError;

#[cfg(feature = "postgres")]
mod queue;
#[cfg(feature = "postgres")]
pub use queue::{QueueView, Worker};

/// A queue's jobs and workers: none in a build without PostgreSQL
/// support (the cargo feature `postgres`), where the view's `queue` is
/// always null.
#[cfg(not(feature = "postgres"))]
#[derive(Debug, Serialize)]
pub enum QueueView {}

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

/// The contracts and, opened once, the queue.
#[derive(Debug)]
pub struct Contracts {
    sources: ContractSources,
    #[cfg(feature = "postgres")]
    queue: queue::OpenQueue,
}

impl Contracts {
    /// Contracts read from `sources`.
    pub fn new(sources: ContractSources) -> Self {
        Self {
            sources,
            #[cfg(feature = "postgres")]
            queue: queue::OpenQueue::default(),
        }
    }

    /// The view, read now.
    pub async fn view(&self) -> Result<ContractsView, ApiError> {
        let dir = self.sources.dir.clone();
        let completed_dir = self.sources.completed_dir.clone();
        let contracts =
            read_statuses(&[&dir, &completed_dir]).map_err(|e| ApiError::internal(&e))?;
        let queue = match &self.sources.queue {
            #[cfg(feature = "postgres")]
            Some((url, name)) => Some(self.queue.view(url, name).await?),
            #[cfg(not(feature = "postgres"))]
            Some(_) => {
                return Err(ApiError::new(
                    axum::http::StatusCode::NOT_IMPLEMENTED,
                    "a contract queue is configured, but this build of Tascer has no \
                     PostgreSQL support (the `postgres` cargo feature)",
                ));
            }
            None => None,
        };
        Ok(ContractsView {
            dir,
            completed_dir,
            contracts,
            queue,
        })
    }
}
