//! `tascer serve`.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;

use super::contracts::QueueArgs;

/// The port `tascer serve` binds unless told otherwise.
pub const DEFAULT_PORT: u16 = 8421;

/// Arguments of `tascer serve`.
#[derive(Debug, Args)]
pub struct ViewerArgs {
    /// The port (0: any free port; the URL printed names it).
    #[arg(long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// The address to bind: loopback unless --allow-remote.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Allow a --bind address that is not loopback (anyone who can reach it
    /// and has the token can read every session).
    #[arg(long)]
    pub allow_remote: bool,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
    /// The contracts directory the contracts view shows.
    #[arg(long, value_name = "DIR", default_value = "contracts")]
    pub contracts_dir: PathBuf,
    /// Its completed directory (default: `contracts_completed` next to it).
    #[arg(long, value_name = "DIR")]
    pub completed_dir: Option<PathBuf>,
    /// A contract queue to show with its workers.
    #[command(flatten)]
    pub queue: QueueArgs,
}
