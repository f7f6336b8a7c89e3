//! `tascer contracts enqueue|worker` and `tascer contracts status --queue`
//! in a build without the `postgres` cargo feature: the contract queue is
//! in PostgreSQL, so each says that this build cannot reach it.

use std::process::ExitCode;

use crate::args::{EnqueueArgs, QueueArgs, WorkerArgs};

/// Why a queue command cannot run in this build, and what to do.
pub const NO_POSTGRES: &str = "contract queues are in PostgreSQL, and this build of Tascer has \
     no PostgreSQL support (it was built without the `postgres` cargo feature); rebuild with the \
     default features: cargo build --release -p tascer-cli";

/// `tascer contracts enqueue`: not in this build.
pub async fn enqueue(_args: EnqueueArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!(NO_POSTGRES)
}

/// `tascer contracts worker`: not in this build.
pub async fn worker(_args: WorkerArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!(NO_POSTGRES)
}

/// `tascer contracts status --queue`: not in this build.
pub async fn status(_queue: &QueueArgs, _json: bool) -> anyhow::Result<ExitCode> {
    anyhow::bail!(NO_POSTGRES)
}
