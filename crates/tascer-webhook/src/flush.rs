//! `tascer webhook flush`: delivers a home's outbox until it is empty, one
//! flusher at a time; and how a short-lived process (`tascer hook`) starts
//! one without waiting for it.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use tascer_store::{Acquired, Db, Holder, LeaseStore, WebhookOutbox, now_ms};

use super::deliver::{Deliverer, Pass};
use tascer_store::{HEARTBEAT_EVERY, holder_alive, host_name};

/// The lease a flusher holds while it runs.
pub const FLUSHER_LEASE: &str = "webhook-flusher";

/// Longest sleep between two passes (rows queued meanwhile by other
/// processes are picked up at the latest then).
const POLL: Duration = Duration::from_secs(2);

/// A flusher whose next row is due later than this exits instead of
/// waiting: the row stays in the outbox for the next flusher (the next
/// hook event, run or `tascer webhook flush` starts one).
const MAX_WAIT: Duration = Duration::from_secs(60);

/// What a flush did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FlushReport {
    /// False when another live flusher held the lease (this one did
    /// nothing).
    pub ran: bool,
    /// Events delivered.
    pub delivered: u64,
    /// Failed attempts that were scheduled again.
    pub retried: u64,
    /// Events given up after their last attempt.
    pub dropped: u64,
    /// Events still waiting (another flusher's, or queued meanwhile).
    pub pending: u64,
}

fn open(home: &Path) -> Result<(WebhookOutbox, LeaseStore), String> {
    let db = Db::open_in_home(home)
        .map_err(|e| format!("cannot open the store in {}: {e}", home.display()))?;
    let outbox = WebhookOutbox::with_db(std::sync::Arc::new(db))
        .map_err(|e| format!("cannot open the webhook outbox: {e}"))?;
    let leases = LeaseStore::open_in_home(home).map_err(|e| format!("cannot open leases: {e}"))?;
    Ok((outbox, leases))
}

/// Delivers the outbox of `home` until no event waits, retrying failed
/// ones as their backoff comes due — unless the next retry is more than a
/// minute away: then it stops and leaves the rest for the next flusher.
/// Does nothing when another live flusher holds the lease.
pub async fn flush(home: &Path) -> Result<FlushReport, String> {
    let (outbox, leases) = open(home)?;
    let host = host_name();
    let holder = Holder {
        owner: tascer_core::new_id(),
        pid: std::process::id(),
        host: host.clone(),
    };
    let take = |leases: &LeaseStore| {
        leases
            .acquire(FLUSHER_LEASE, &holder, |l| holder_alive(l, &host))
            .map_err(|e| format!("cannot take the flusher lease: {e}"))
    };
    let mut report = FlushReport::default();
    if let Acquired::Held(_) = take(&leases)? {
        report.pending = outbox.pending().map_err(|e| e.to_string())?;
        return Ok(report);
    }
    report.ran = true;
    let deliverer = Deliverer::new(outbox.clone())?;
    let mut last_beat = std::time::Instant::now();
    loop {
        let pass: Pass = deliverer.deliver_due().await.map_err(|e| e.to_string())?;
        report.delivered += pass.delivered;
        report.retried += pass.retried;
        report.dropped += pass.dropped;
        if outbox.pending().map_err(|e| e.to_string())? == 0 {
            leases
                .release(FLUSHER_LEASE, &holder)
                .map_err(|e| e.to_string())?;
            // An event queued between the check and the release found the
            // lease held and started no flusher: look again.
            if outbox.pending().map_err(|e| e.to_string())? == 0 {
                return Ok(report);
            }
            if let Acquired::Held(_) = take(&leases)? {
                report.pending = outbox.pending().map_err(|e| e.to_string())?;
                return Ok(report);
            }
            continue;
        }
        if last_beat.elapsed() >= HEARTBEAT_EVERY {
            leases
                .heartbeat(FLUSHER_LEASE, &holder)
                .map_err(|e| e.to_string())?;
            last_beat = std::time::Instant::now();
        }
        let wait = match outbox.next_due_ms().map_err(|e| e.to_string())? {
            Some(due) => Duration::from_millis(u64::try_from(due - now_ms()).unwrap_or(0)),
            None => Duration::ZERO,
        };
        if wait > MAX_WAIT {
            leases
                .release(FLUSHER_LEASE, &holder)
                .map_err(|e| e.to_string())?;
            report.pending = outbox.pending().map_err(|e| e.to_string())?;
            return Ok(report);
        }
        tokio::time::sleep(wait.min(POLL)).await;
    }
}

/// What waits in a home's outbox, and what was dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OutboxStatus {
    /// Events waiting for delivery.
    pub pending: u64,
    /// When the next one is due, ms since the Unix epoch.
    pub next_due_ms: Option<i64>,
    /// True while a live flusher holds the lease.
    pub flusher_running: bool,
    /// Dropped events, by URL and reason.
    pub drops: Vec<tascer_store::DropRecord>,
}

/// The outbox of `home`.
pub fn status(home: &Path) -> Result<OutboxStatus, String> {
    let (outbox, leases) = open(home)?;
    let host = host_name();
    Ok(OutboxStatus {
        pending: outbox.pending().map_err(|e| e.to_string())?,
        next_due_ms: outbox.next_due_ms().map_err(|e| e.to_string())?,
        flusher_running: leases
            .get(FLUSHER_LEASE)
            .map_err(|e| e.to_string())?
            .is_some_and(|l| !l.released && holder_alive(&l, &host)),
        drops: outbox.drops().map_err(|e| e.to_string())?,
    })
}

/// Starts a flusher (see [`spawn_flusher`]) when events wait in `home`'s
/// outbox; returns whether one was started.
pub fn flush_in_background(home: &Path, exe: &Path) -> Result<bool, String> {
    let (outbox, _) = open(home)?;
    if outbox.pending().map_err(|e| e.to_string())? == 0 {
        return Ok(false);
    }
    spawn_flusher(home, exe)
}

/// Starts `exe webhook flush` (the `tascer` binary) for `home`, detached —
/// its own process group, no standard streams — unless a live flusher
/// holds the lease. Returns whether one was started. The caller does not
/// wait for it: a thread does, so a long-lived caller (the hook server)
/// leaves no zombie behind.
pub fn spawn_flusher(home: &Path, exe: &Path) -> Result<bool, String> {
    Ok(start_flusher(home, exe)?.is_some())
}

/// [`spawn_flusher`], returning the started flusher's process id.
fn start_flusher(home: &Path, exe: &Path) -> Result<Option<u32>, String> {
    let leases = LeaseStore::open_in_home(home).map_err(|e| format!("cannot open leases: {e}"))?;
    let host = host_name();
    let held = leases
        .get(FLUSHER_LEASE)
        .map_err(|e| format!("cannot read the flusher lease: {e}"))?
        .is_some_and(|l| !l.released && holder_alive(&l, &host));
    if held {
        return Ok(None);
    }
    let mut command = std::process::Command::new(exe);
    command
        .args(["webhook", "flush", "--quiet"])
        .env("TASCER_HOME", home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {} webhook flush: {e}", exe.display()))?;
    let pid = child.id();
    // Reaped when it exits; the thread ends with it (or with this process).
    let reaper = std::thread::Builder::new()
        .name("webhook-flusher-reaper".into())
        .spawn(move || child.wait());
    if let Err(err) = reaper {
        tracing::warn!("the webhook flusher (pid {pid}) will not be waited for: {err}");
    }
    Ok(Some(pid))
}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::unwrap_used)]
mod reap_tests {
    use super::*;

    /// The process's state letter in `/proc` (`Z` for a zombie), `None`
    /// once it is gone.
    fn state(pid: u32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?.1.trim_start().chars().next()
    }

    #[test]
    fn a_started_flusher_is_reaped_when_it_exits() {
        let home = tempfile::tempdir().unwrap();
        // `true webhook flush --quiet` exits at once, as a flusher with
        // nothing to send does.
        let pid = start_flusher(home.path(), Path::new("/bin/true"))
            .unwrap()
            .expect("started");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while state(pid).is_some() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(state(pid), None, "the flusher is left a zombie");
    }
}
