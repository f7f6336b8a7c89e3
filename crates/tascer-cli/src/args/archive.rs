//! `tascer archive`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// Arguments of `tascer archive`.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ArchiveArgs {
    /// What to do; without a subcommand, archives SESSION.
    #[command(subcommand)]
    pub command: Option<ArchiveCommand>,
    /// Session id to archive.
    #[arg(required = true)]
    pub session: Option<String>,
    /// Destination: s3://BUCKET/PREFIX or a directory (default: the settings' archive.to).
    #[arg(long, value_name = "S3_URL_OR_DIR")]
    pub to: Option<String>,
    /// Working directory to archive (default: the one the session recorded).
    #[arg(long, value_name = "DIR", conflicts_with = "no_workdir")]
    pub workdir: Option<PathBuf>,
    /// Archive no working directory (ledger, evidence and attestation only).
    #[arg(long)]
    pub no_workdir: bool,
    /// Leave out working-directory files matching GLOB (gitignore syntax; repeatable).
    #[arg(long = "exclude", value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Leave out working-directory files larger than this (default 100 MiB).
    #[arg(long, value_name = "BYTES")]
    pub max_file_bytes: Option<u64>,
    /// Refuse when the working-directory files add up to more (default 2 GiB).
    #[arg(long, value_name = "BYTES")]
    pub max_total_bytes: Option<u64>,
}

/// `tascer archive` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum ArchiveCommand {
    /// List the archives under a location (only complete ones: those with a manifest).
    List {
        /// s3://BUCKET/PREFIX or a directory (default: the settings' archive.to).
        location: Option<String>,
    },
    /// Verify an archive from its objects alone: every file against the signed
    /// manifest, and the ledger inside (chain, evidence, head signature).
    Verify {
        /// The archive's URL (as `tascer archive` printed it) or directory.
        url: String,
        /// Trusted public key (SPKI PEM or 64 hex digits); default: the home's public key.
        #[arg(long, value_name = "PUBKEY_PEM")]
        key: Option<PathBuf>,
        /// Also restore the archive into DIR (working directory in DIR/workdir).
        #[arg(long, value_name = "DIR")]
        restore: Option<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Download and verify an archive into DIR (working directory in DIR/workdir).
    Fetch {
        /// The archive's URL or directory.
        url: String,
        /// Where to put it.
        dir: PathBuf,
        /// Trusted public key (SPKI PEM or 64 hex digits); default: the home's public key.
        #[arg(long, value_name = "PUBKEY_PEM")]
        key: Option<PathBuf>,
    },
    /// Delete local evidence files of sessions that ended more than N days ago,
    /// only where a recorded archive of the session's current head verifies now.
    Prune {
        /// Age in days (default: the settings' archive.retentionDays).
        #[arg(long, value_name = "DAYS")]
        older_than_days: Option<u64>,
        /// Say what would be deleted, delete nothing.
        #[arg(long)]
        dry_run: bool,
    },
}
