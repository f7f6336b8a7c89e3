//! Leases: which process runs a piece of work (a contract), so that it is
//! never run twice at once and a holder that died is noticed.
//!
//! A lease row names its holder (an owner id, pid and host) and a
//! heartbeat the holder refreshes while it works. Taking a lease is one
//! `BEGIN IMMEDIATE` transaction, so two processes cannot both take it.
//! Whether an unreleased lease's holder is still alive is the caller's
//! call ([`LeaseStore::acquire`] takes a predicate), since only the caller
//! knows how to probe a process.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::db::Db;
use crate::error::StoreError;

/// Who holds (or asks for) a lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Holder {
    /// A unique id of the holding executor (one per run).
    pub owner: String,
    /// Its process id.
    pub pid: u32,
    /// Its host name.
    pub host: String,
}

impl Holder {
    /// This process as a holder: a fresh owner id (one per call, so one
    /// per executor or worker), its pid and its host name
    /// ([`host_name`]).
    pub fn this_process() -> Holder {
        Holder {
            owner: tascer_core::new_id(),
            pid: std::process::id(),
            host: host_name(),
        }
    }
}

/// A lease as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lease {
    /// What is leased (e.g. a contract file's path).
    pub key: String,
    /// The holder.
    pub holder: Holder,
    /// When it was taken, ms since the Unix epoch.
    pub acquired_ms: i64,
    /// The holder's last heartbeat, ms since the Unix epoch.
    pub heartbeat_ms: i64,
    /// How many times in a row it was taken without being released (a
    /// holder that died leaves it unreleased).
    pub attempts: u32,
    /// True once the holder released it.
    pub released: bool,
}

/// What [`LeaseStore::acquire`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// The lease is now ours; `previous` is the unreleased lease of a dead
    /// holder it replaced (so the caller knows this is a retry).
    Taken {
        /// This attempt's number (1 for a fresh start).
        attempt: u32,
        /// The dead holder's lease, when there was one.
        previous: Option<Lease>,
    },
    /// A live holder has it.
    Held(Lease),
}

/// The lease table in the store's database file.
///
/// It has its own [`Db`] handle (a lease must be taken even while the
/// process's session store is busy), and so the same open path and write
/// path as the store: WAL switched on with retries, every write a
/// `BEGIN IMMEDIATE` transaction retried on contention.
#[derive(Debug)]
pub struct LeaseStore {
    db: Db,
}

/// The lease table's schema (idempotent).
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS leases (
    key          TEXT PRIMARY KEY,
    owner        TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    host         TEXT NOT NULL,
    acquired_ms  INTEGER NOT NULL,
    heartbeat_ms INTEGER NOT NULL,
    attempts     INTEGER NOT NULL,
    released     INTEGER NOT NULL DEFAULT 0
);";

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// How often a holder refreshes its lease's heartbeat.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);

/// A lease whose heartbeat is older than this is dead, whatever its pid.
pub const STALE_AFTER: Duration = Duration::from_secs(120);

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
/// host (`host`, see [`host_name`]), its process still exists. The usual
/// predicate for [`LeaseStore::acquire`].
pub fn holder_alive(lease: &Lease, host: &str) -> bool {
    let age = now_ms().saturating_sub(lease.heartbeat_ms);
    if age > STALE_AFTER.as_millis() as i64 {
        return false;
    }
    lease.holder.host != host || pid_alive(lease.holder.pid)
}

impl LeaseStore {
    /// Opens (creating if needed) the lease table in the database at
    /// `path`. Many processes may open the same file at once: opening
    /// waits out their locks like any write does.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let db = Db::open(path)?;
        db.ensure_schema(&["leases"], SCHEMA)?;
        Ok(LeaseStore { db })
    }

    /// Opens the lease table of `<home>/tascer.db`.
    pub fn open_in_home(home: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open(home.as_ref().join(crate::db::HOME_DB_FILE))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        self.db.path()
    }

    /// The lease of `key`, if there is a row.
    pub fn get(&self, key: &str) -> Result<Option<Lease>, StoreError> {
        Ok(self.db.read(|conn| get(conn, key))?)
    }

    /// Takes the lease of `key` for `holder`, unless an unreleased lease's
    /// holder is alive according to `alive`. An unreleased lease of a dead
    /// holder is taken over with `attempts + 1`; a released or missing one
    /// starts at attempt 1.
    pub fn acquire(
        &self,
        key: &str,
        holder: &Holder,
        alive: impl Fn(&Lease) -> bool,
    ) -> Result<Acquired, StoreError> {
        self.db.write(|tx| -> Result<Acquired, StoreError> {
            let (attempt, previous) = match get(tx, key)? {
                Some(lease) if !lease.released && lease.holder.owner != holder.owner => {
                    if alive(&lease) {
                        return Ok(Acquired::Held(lease));
                    }
                    (lease.attempts + 1, Some(lease))
                }
                Some(lease) if !lease.released => (lease.attempts + 1, None),
                _ => (1, None),
            };
            tx.execute(
                "INSERT INTO leases (key, owner, pid, host, acquired_ms, heartbeat_ms, attempts, released)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, 0)
                 ON CONFLICT (key) DO UPDATE SET owner = ?2, pid = ?3, host = ?4,
                   acquired_ms = ?5, heartbeat_ms = ?5, attempts = ?6, released = 0",
                params![key, holder.owner, holder.pid, holder.host, now_ms(), attempt],
            )?;
            Ok(Acquired::Taken { attempt, previous })
        })
    }

    /// Refreshes the heartbeat; false when `holder` no longer holds it.
    pub fn heartbeat(&self, key: &str, holder: &Holder) -> Result<bool, StoreError> {
        self.update_own(
            "UPDATE leases SET heartbeat_ms = ?3 WHERE key = ?1 AND owner = ?2 AND released = 0",
            key,
            holder,
        )
    }

    /// Releases the lease (the work is finished, whatever its outcome);
    /// false when `holder` did not hold it.
    pub fn release(&self, key: &str, holder: &Holder) -> Result<bool, StoreError> {
        self.update_own(
            "UPDATE leases SET released = 1, heartbeat_ms = ?3 WHERE key = ?1 AND owner = ?2",
            key,
            holder,
        )
    }

    /// Runs `sql` (parameters: key, owner, now) on `holder`'s row of
    /// `key`; true when it changed that row.
    fn update_own(&self, sql: &str, key: &str, holder: &Holder) -> Result<bool, StoreError> {
        self.db.write(|tx| -> Result<bool, StoreError> {
            Ok(tx.execute(sql, params![key, holder.owner, now_ms()])? == 1)
        })
    }
}

fn get(conn: &Connection, key: &str) -> rusqlite::Result<Option<Lease>> {
    conn.query_row(
        "SELECT key, owner, pid, host, acquired_ms, heartbeat_ms, attempts, released
         FROM leases WHERE key = ?1",
        [key],
        |r| {
            Ok(Lease {
                key: r.get(0)?,
                holder: Holder {
                    owner: r.get(1)?,
                    pid: r.get(2)?,
                    host: r.get(3)?,
                },
                acquired_ms: r.get(4)?,
                heartbeat_ms: r.get(5)?,
                attempts: r.get(6)?,
                released: r.get::<_, i64>(7)? != 0,
            })
        },
    )
    .optional()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn holder(owner: &str) -> Holder {
        Holder {
            owner: owner.into(),
            pid: 1,
            host: "h".into(),
        }
    }

    #[test]
    fn a_live_holder_keeps_it_a_dead_one_loses_it_with_the_attempt_counted() {
        let dir = tempfile::tempdir().unwrap();
        let leases = LeaseStore::open(dir.path().join("db")).unwrap();
        let (a, b) = (holder("a"), holder("b"));
        assert_eq!(
            leases.acquire("k", &a, |_| true).unwrap(),
            Acquired::Taken {
                attempt: 1,
                previous: None
            }
        );
        assert!(matches!(
            leases.acquire("k", &b, |_| true).unwrap(),
            Acquired::Held(l) if l.holder == a
        ));
        assert!(leases.heartbeat("k", &a).unwrap());
        match leases.acquire("k", &b, |_| false).unwrap() {
            Acquired::Taken { attempt, previous } => {
                assert_eq!(attempt, 2);
                assert_eq!(previous.unwrap().holder, a);
            }
            other => panic!("{other:?}"),
        }
        assert!(!leases.heartbeat("k", &a).unwrap(), "a lost it");
        assert!(leases.release("k", &b).unwrap());
        assert!(leases.get("k").unwrap().unwrap().released);
        assert_eq!(
            leases.acquire("k", &a, |_| true).unwrap(),
            Acquired::Taken {
                attempt: 1,
                previous: None
            }
        );
    }

    #[test]
    fn two_stores_on_one_file_never_both_take_a_lease() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let leases = LeaseStore::open(&path).unwrap();
                    matches!(
                        leases
                            .acquire("k", &holder(&format!("o{i}")), |_| true)
                            .unwrap(),
                        Acquired::Taken { .. }
                    )
                })
            })
            .collect();
        let taken = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|t| *t)
            .count();
        assert_eq!(taken, 1);
    }
}
