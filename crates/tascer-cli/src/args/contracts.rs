//! `tascer contracts`: run, status and merge of a directory's contracts, and
//! the queue commands (enqueue, worker, status --queue).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use tascer_contracts::{DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE};

/// Arguments of `tascer contracts`.
#[derive(Debug, Args)]
pub struct ContractsArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ContractsCommand,
}

/// `tascer contracts …`
#[derive(Debug, Subcommand)]
pub enum ContractsCommand {
    /// Run the pending contracts of DIR (default `contracts/`), in file-name order.
    Run(ContractsRunArgs),
    /// Show every contract of DIR and of the completed directory with its status.
    Status(ContractsStatusArgs),
    /// Create DIR (default `contracts/`) and the completed directory, each
    /// with a `.gitkeep`, and a template contract to copy.
    Init(ContractsInitArgs),
    /// Merge the branches of completed contracts (run with --parallel) into the current branch.
    Merge(ContractsMergeArgs),
    /// Put the pending contracts of DIR into a queue in PostgreSQL, for workers on any host.
    Enqueue(EnqueueArgs),
    /// Run contracts from a queue: each in a fresh checkout on its own branch, pushed and archived.
    Worker(WorkerArgs),
}

/// Arguments of `tascer contracts run`.
#[derive(Debug, Args)]
pub struct ContractsRunArgs {
    /// The contracts directory.
    #[arg(default_value = "contracts")]
    pub dir: PathBuf,
    /// Where completed contracts are moved (default: `contracts_completed` next to DIR).
    #[arg(long, value_name = "DIR")]
    pub completed_dir: Option<PathBuf>,
    /// Model for contracts that name none (aliases sonnet, opus, haiku;
    /// default: env TASCER_CONTRACTOR_MODEL, else the provider's).
    #[arg(long, visible_alias = "contractor-model")]
    pub model: Option<String>,
    /// The contractors' provider: anthropic, anthropic-oauth, openrouter or
    /// openai (default: chosen from the environment, see --dry-run).
    #[arg(long, value_name = "NAME", env = "TASCER_CONTRACTOR_PROVIDER")]
    pub contractor_provider: Option<String>,
    /// Print which provider, model and credential each role would use, and
    /// the pending contracts, without running anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Run up to N contracts at once, each in its own git worktree on branch
    /// `contracts/<name>` (merge them with `tascer contracts merge`).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub parallel: usize,
    /// Print the run's summary as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tascer contracts status`.
#[derive(Debug, Args)]
pub struct ContractsStatusArgs {
    /// The contracts directory.
    #[arg(default_value = "contracts")]
    pub dir: PathBuf,
    /// The completed directory (default: `contracts_completed` next to DIR).
    #[arg(long, value_name = "DIR")]
    pub completed_dir: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// With --queue: the contracts of a queue and their attempts instead of a directory's.
    #[command(flatten)]
    pub queue: QueueArgs,
}

/// Arguments of `tascer contracts init`.
#[derive(Debug, Args)]
pub struct ContractsInitArgs {
    /// The contracts directory.
    #[arg(default_value = "contracts")]
    pub dir: PathBuf,
    /// The completed directory (default: `contracts_completed` next to DIR).
    #[arg(long, value_name = "DIR")]
    pub completed_dir: Option<PathBuf>,
}

/// Arguments of `tascer contracts merge`.
#[derive(Debug, Args)]
pub struct ContractsMergeArgs {
    /// The contracts directory.
    #[arg(default_value = "contracts")]
    pub dir: PathBuf,
    /// The completed directory (default: `contracts_completed` next to DIR).
    #[arg(long, value_name = "DIR")]
    pub completed_dir: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The queue's database and name, shared by the queue commands.
#[derive(Debug, Clone, Args)]
pub struct QueueArgs {
    /// The queue's PostgreSQL database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.
    #[arg(
        long,
        value_name = "POSTGRES_URL",
        env = "TASCER_QUEUE",
        hide_env_values = true
    )]
    pub queue: Option<String>,
    /// Which queue in that database.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_QUEUE)]
    pub queue_name: String,
}

/// Arguments of `tascer contracts enqueue`.
#[derive(Debug, Args)]
pub struct EnqueueArgs {
    /// The contracts directory (inside the repository the workers check out).
    #[arg(default_value = "contracts")]
    pub dir: PathBuf,
    /// The queue.
    #[command(flatten)]
    pub queue: QueueArgs,
    /// Where workers clone the repository from (default: its `origin` remote, else its path).
    #[arg(long, value_name = "URL")]
    pub repo: Option<String>,
    /// The revision each checkout starts from (default: HEAD).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Starts of a contract before a worker's death fails it.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ATTEMPTS)]
    pub max_attempts: u32,
    /// Print what was enqueued as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tascer contracts worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The queue.
    #[command(flatten)]
    pub queue: QueueArgs,
    /// Contracts run at once in this process.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub concurrency: usize,
    /// Exit when no contract of the queue is queued or running.
    #[arg(long)]
    pub until_empty: bool,
    /// Where to push each contract's branch (URL or path; default: the repository it was cloned from).
    #[arg(long, value_name = "REMOTE")]
    pub push: Option<String>,
    /// Where each session is archived: s3://BUCKET/PREFIX or a directory (default: the settings' archive.to).
    #[arg(long, value_name = "S3_URL_OR_DIR")]
    pub archive_to: Option<String>,
    /// Clones and worktrees go here (default: a temporary directory removed at exit).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Seconds a lease lasts without a heartbeat (heartbeats come every third of it).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub lease_secs: f64,
    /// How often to look for work when there is none, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub poll_ms: u64,
    /// Model for contracts that name none (aliases sonnet, opus, haiku;
    /// default: env TASCER_CONTRACTOR_MODEL, else the provider's).
    #[arg(long, visible_alias = "contractor-model")]
    pub model: Option<String>,
    /// The contractors' provider: anthropic, anthropic-oauth, openrouter or
    /// openai (default: chosen from the environment).
    #[arg(long, value_name = "NAME", env = "TASCER_CONTRACTOR_PROVIDER")]
    pub contractor_provider: Option<String>,
    /// At exit, print what this worker did as JSON (instead of one line per contract).
    #[arg(long)]
    pub json: bool,
}
