//! `tascer sandbox`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser};

/// Arguments of `tascer sandbox [OPTIONS] -- CMD ARGS…`.
#[derive(Debug, Clone, Args)]
pub struct SandboxArgs {
    /// The whole policy as JSON, inline (`{…}`) or in a file; without it,
    /// the default policy for the working directory (see docs/sandbox.md).
    #[arg(long, visible_alias = "policy-json", value_name = "JSON_OR_FILE")]
    pub policy: Option<String>,
    /// The workspace: the one writable directory of the default policy
    /// (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Allow network sockets (off by default).
    #[arg(long)]
    pub network: bool,
    /// Another writable directory (repeatable).
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,
    /// Another path no command may read (repeatable).
    #[arg(long = "deny-read", value_name = "PATH")]
    pub deny_read: Vec<PathBuf>,
    /// Refuse to run when the kernel cannot enforce the whole policy
    /// (default: a warning on stderr).
    #[arg(long)]
    pub fail_if_unavailable: bool,
    /// Print the policy as JSON and exit, without running anything.
    #[arg(long)]
    pub print_policy: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// `tascer sandbox` parsed on its own, before the rest of the command
/// line's types: the Bash tool starts it for every command.
#[derive(Debug, Parser)]
#[command(
    name = "tascer sandbox",
    bin_name = "tascer sandbox",
    about = "Run a command under Tascer's OS sandbox."
)]
pub struct SandboxCli {
    /// The arguments.
    #[command(flatten)]
    pub args: SandboxArgs,
}
