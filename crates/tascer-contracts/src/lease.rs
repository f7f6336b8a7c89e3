//! The executor's lease on a contract (pid, host, heartbeat in the store),
//! so a contract is never run twice at once and one left `in_progress` by
//! a killed executor is noticed and retried once, then marked failed.

use std::path::Path;
use std::sync::Arc;

use tascer_store::{Acquired, HEARTBEAT_EVERY, Holder, LeaseStore, holder_alive};

use crate::error::ContractError;

/// How many times a contract is started before a dead executor's contract
/// is marked failed instead of retried (the first run and one retry).
pub const MAX_ATTEMPTS: u32 = 2;

/// This executor's identity and its lease table.
#[derive(Debug, Clone)]
pub(crate) struct Leases {
    store: Arc<LeaseStore>,
    holder: Holder,
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
            holder: Holder::this_process(),
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
