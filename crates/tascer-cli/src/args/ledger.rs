//! `tascer keys`, `tascer verify`, `tascer report` and `tascer export`: the
//! signing keys and the ledger.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// `tascer keys …`
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Generate the signing key pair under the Tascer home (`keys/`).
    Generate {
        /// Replace an existing key pair (the old private key is lost).
        #[arg(long)]
        force: bool,
    },
}

/// Arguments of `tascer verify`.
#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// Session id to verify.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub session: Option<String>,
    /// Verify every session that has ledger entries.
    #[arg(long)]
    pub all: bool,
    /// Trusted public key (SPKI PEM or 64 hex digits); default: the home's public key.
    #[arg(long, value_name = "PUBKEY_PEM")]
    pub key: Option<PathBuf>,
    /// Print the verification reports as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Output formats of `tascer report`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// A summary for people.
    #[default]
    Text,
    /// The report data as JSON.
    Json,
}

/// Arguments of `tascer report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Session id; with `--ci`, default: the latest session of the
    /// working directory.
    #[arg(required_unless_present = "ci")]
    pub session: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// For CI: write the proof report (`success`, `records`, the
    /// verification) to `.ci/proof-report.json`; exit 1 when the session
    /// does not verify.
    #[arg(long)]
    pub ci: bool,
}

/// Arguments of `tascer export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// Session id.
    pub session: String,
    /// Export an in-toto attestation (Statement v1 in a DSSE envelope); the only format so far.
    #[arg(long, required = true)]
    pub attestation: bool,
    /// Output file (`-` for standard output); default `<session>.intoto.jsonl`.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}
