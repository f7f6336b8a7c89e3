//! Contract workers on many hosts.
//!
//! `tascer contracts enqueue` puts the pending contracts of a directory
//! into a [`Queue`] in PostgreSQL; `tascer contracts worker` processes on
//! any number of hosts run them with [`run_worker`]: each job is claimed
//! with a lease (`FOR UPDATE SKIP LOCKED`, a heartbeat renews it), run in a
//! fresh checkout of the repository on its own branch by the contracts
//! runner of `tascer-contracts`, its branch pushed, its session archived,
//! and its result recorded exactly once — a worker that dies loses its
//! lease and the job is claimed again; a worker that lost its lease cannot
//! record its result. The database is reached through the shared store's
//! PostgreSQL pool and helpers (`tascer_store::postgres`), and a worker is
//! the store's lease [`Holder`]. See `docs/fleet.md`.

mod checkout;
mod db;
mod enqueue;
mod error;
mod queue;
mod worker;

pub use checkout::Checkouts;
pub use enqueue::{EnqueueOptions, EnqueueReport, enqueue_dir};
pub use error::{FleetError, Result};
pub use queue::{
    AttemptView, Claimed, DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE, Enqueued, Finish, GaveUp, Job,
    JobStatus, JobView, LeaseLost, LeaseView, NewJob, Queue, Recorded, content_sha256,
};
/// A worker's identity (a fresh owner id per process, its pid and host):
/// the store's lease holder.
pub use tascer_store::Holder;
pub use worker::{
    DEFAULT_LEASE, EventFn, JobOutcome, JobReport, WorkerEvent, WorkerOptions, WorkerSummary,
    job_branch, run_worker,
};
