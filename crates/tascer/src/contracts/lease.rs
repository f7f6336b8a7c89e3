//! The executor's lease on a contract (pid, host, heartbeat in the store),
//! so a contract is never run twice at once and one left `in_progress` by
//! a killed executor is noticed and retried once, then marked failed.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tascer_store::{Acquired, Holder, Lease, LeaseStore, now_ms};

use super::error::ContractError;

/// How often a running contract's heartbeat is refreshed.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);

/// A lease whose heartbeat is older than this is dead, whatever its pid.
pub const STALE_AFTER: Duration = Duration::from_secs(120);

/// How many times a contract is started before a dead executor's contract
/// is marked failed instead of retried (the first run and one retry).
pub const MAX_ATTEMPTS: u32 = 2;

/// This executor's identity and its lease table.
#[derive(Debug, Clone)]
pub(crate) struct Leases {
    store: Arc<LeaseStore>,
    holder: Holder,
}

/// The host name (`/proc/sys/kernel/hostname`, `/etc/hostname`,
/// `$HOSTNAME`), or `unknown`.
pub fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "unknown".to_string())
}

/// True when process `pid` exists on this host.
fn pid_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        use nix::sys::signal::kill;
        use nix::unistd::Pid;
        let Ok(raw) = i32::try_from(pid) else {
            return false;
        };
        !matches!(kill(Pid::from_raw(raw), None), Err(Errno::ESRCH))
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Whether a lease's holder is alive: its heartbeat is recent and, on this
/// host, its process still exists.
pub(crate) fn holder_alive(lease: &Lease, host: &str) -> bool {
    let age = now_ms().saturating_sub(lease.heartbeat_ms);
    if age > STALE_AFTER.as_millis() as i64 {
        return false;
    }
    lease.holder.host != host || pid_alive(lease.holder.pid)
}

/// A lease key: the contract file's absolute path.
pub(crate) fn lease_key(path: &Path) -> String {
    let abs = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .map(|d| d.join(name))
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    };
    format!("contract:{}", abs.display())
}

impl Leases {
    /// Opens the lease table in `home`'s store for this process.
    pub fn open(home: &Path) -> Result<Self, ContractError> {
        Ok(Leases {
            store: Arc::new(LeaseStore::open_in_home(home)?),
            holder: Holder {
                owner: crate::new_id(),
                pid: std::process::id(),
                host: host_name(),
            },
        })
    }

    /// Takes the lease of the contract at `path`.
    pub fn acquire(&self, path: &Path) -> Result<Acquired, ContractError> {
        let host = self.holder.host.clone();
        Ok(self
            .store
            .acquire(&lease_key(path), &self.holder, |l| holder_alive(l, &host))?)
    }

    /// Refreshes the heartbeat of `path`'s lease every
    /// [`HEARTBEAT_EVERY`] until the returned task is aborted.
    pub fn keep_alive(&self, path: &Path) -> tokio::task::JoinHandle<()> {
        let key = lease_key(path);
        let leases = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(HEARTBEAT_EVERY).await;
                let (leases, key) = (leases.clone(), key.clone());
                let beat = tokio::task::spawn_blocking(move || {
                    leases.store.heartbeat(&key, &leases.holder)
                })
                .await;
                if let Ok(Err(err)) = beat {
                    tracing::warn!("contract lease heartbeat failed: {err}");
                }
            }
        })
    }

    /// Releases the lease of the contract at `key`.
    pub fn release(&self, key: &str) {
        if let Err(err) = self.store.release(key, &self.holder) {
            tracing::warn!("cannot release contract lease {key}: {err}");
        }
    }
}
