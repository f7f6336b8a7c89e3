//! The hook server: Claude Code's hook events answered by a warm process.
//!
//! Claude Code starts a command hook as a new process for every event, and
//! most of what such a process costs is starting up and opening the ledger
//! again (BENCHMARKS.md). So `tascer-hook` (and `tascer hook`) only forward
//! the event ([`tascer_hook_client`]) to a server, `tascer hook --serve
//! SOCKET`, which answers with the same [`answer_with`] a hook process
//! would use, keeping the home's ledger open between events. The first
//! hook of an environment starts it; the socket's name says which
//! environment it serves ([`tascer_hook_client::socket_path`]).
//!
//! - The database file replaced or deleted under a running server: it
//!   notices (the file's identity is checked per event) and opens the new
//!   one, so nothing is written to a file that is gone.
//! - A server exits after [`IDLE_ENV`] seconds without events (default
//!   600), or within a second of its socket being removed (its home
//!   deleted).
//! - A server that answered events and then stays quiet for [`RENEW_ENV`]
//!   seconds (default 60) while holding more than [`RENEW_ABOVE_ENV`] MiB
//!   (default 16)
//!   hands over to a fresh server of itself, so an idle server holds what
//!   a fresh one does, not what its busiest moment touched. Its files are under `<home>/run/` (a directory only its
//!   owner can enter): `hook-<digest>.sock`, `.lock` (holding the server's
//!   pid) and `.log` (its standard error).

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tascer_hook_client::make_private_dir;
use tascer_ledger::{GitHeads, Ledger};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::answer::answer_leaving_open;
use crate::session::{HookSession, Warm, open_ledger};
use crate::settings_cache::SettingsCache;

/// Environment variable: seconds a hook server waits for an event before
/// it exits (default 600).
pub const IDLE_ENV: &str = "TASCER_HOOK_SERVER_IDLE_SECS";
/// Default idle time before a server exits.
const DEFAULT_IDLE: Duration = Duration::from_secs(600);
/// The idle time from [`IDLE_ENV`], else the default.
pub fn idle_from_env() -> Duration {
    std::env::var(IDLE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(DEFAULT_IDLE, Duration::from_secs_f64)
}

/// Environment variable: seconds without events after which a server that
/// has answered events and grown past [`RENEW_ABOVE_KIB`] hands over to a
/// fresh server of itself (default 60; `0` never).
pub const RENEW_ENV: &str = "TASCER_HOOK_SERVER_RENEW_SECS";
/// Default quiet time before a grown server renews itself.
const DEFAULT_RENEW: Duration = Duration::from_secs(60);
/// Environment variable: the resident size in MiB above which a quiet
/// server renews itself (default 16).
pub const RENEW_ABOVE_ENV: &str = "TASCER_HOOK_SERVER_RENEW_ABOVE_MIB";
/// The default resident size (KiB) above which a quiet server renews
/// itself. What a server holds after events is mostly pages of the
/// `tascer` binary that the events touched (BENCHMARKS.md), which no
/// allocator gives back; a fresh process holds only what starting touches.
pub const RENEW_ABOVE_KIB: u64 = 16 * 1024;

/// The renewal threshold in KiB from [`RENEW_ABOVE_ENV`], else
/// [`RENEW_ABOVE_KIB`].
fn renew_above_kib() -> u64 {
    std::env::var(RENEW_ABOVE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(RENEW_ABOVE_KIB, |mib| mib.saturating_mul(1024))
}

/// The renewal time from [`RENEW_ENV`], else the default; `None` when
/// renewal is off.
pub fn renew_from_env() -> Option<Duration> {
    std::env::var(RENEW_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(Some(DEFAULT_RENEW), |secs| {
            (secs > 0.0).then(|| Duration::from_secs_f64(secs))
        })
}

/// This process's resident size in KiB (`VmRSS`), when `/proc` says.
fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Why a server stopped serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ended {
    /// Idle past its time, its socket gone, or another server holds the
    /// lock: nothing more to do.
    Done,
    /// It answered events, then stayed quiet for the renewal time while
    /// holding more than the renewal threshold: its caller starts a fresh
    /// server on the same socket (the socket is free and the lock
    /// released by then).
    Renew,
}

/// The home's ledger as the server keeps it: reopened when the database
/// file it was opened on is no longer the one at its path. With it, the
/// repositories whose `HEAD` each call's record names, and the settings
/// read for earlier events.
struct LedgerCache {
    home: PathBuf,
    open: Mutex<Option<Arc<Ledger>>>,
    heads: Arc<GitHeads>,
    settings: Arc<SettingsCache>,
}

impl LedgerCache {
    /// The open ledger, reopened if its database file was replaced;
    /// `None` when it cannot be opened (the event then opens it itself and
    /// reports the error as a hook process would).
    fn get(&self) -> Option<Arc<Ledger>> {
        let mut open = self.open.lock();
        if let Some(ledger) = open.as_ref() {
            if !ledger.store().backend().replaced() {
                return Some(Arc::clone(ledger));
            }
            tracing::info!("the database file changed: reopening the ledger");
        }
        let ledger = Arc::new(open_ledger(&self.home).ok()?);
        *open = Some(Arc::clone(&ledger));
        Some(ledger)
    }
}

/// The device and inode of a file ("-" when absent): what changes when a
/// file is replaced or deleted, not when it is written.
fn same_file_identity(path: &Path) -> String {
    std::fs::metadata(path).map_or_else(|_| "-".into(), |m| format!("{}:{}", m.dev(), m.ino()))
}

/// What the server does with a queued webhook event: starts the flusher
/// (`tascer webhook flush`), as the hook process would.
pub type FlusherStart = Arc<dyn Fn(&Path) -> Result<(), String> + Send + Sync>;

/// Runs the server on `socket` for `home` until it has been idle for
/// `idle` (or its socket is removed), or — after answering events — quiet
/// for `renew` while grown past the renewal threshold ([`Ended::Renew`]).
/// Returns at once when another server holds the socket's lock.
pub async fn serve(
    home: PathBuf,
    socket: PathBuf,
    idle: Duration,
    renew: Option<Duration>,
    start_flusher: FlusherStart,
) -> Result<Ended, String> {
    let dir = socket.parent().ok_or("the socket has no directory")?;
    make_private_dir(dir)?;
    let lock_path = socket.with_extension("lock");
    let mut lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    if lock.try_lock().is_err() {
        return Ok(Ended::Done); // Another server serves this socket.
    }
    // The lock file names the server's process (kept after it exits: a
    // lock file removed while another server opens it would let two
    // servers hold "the" lock).
    let _ = lock
        .set_len(0)
        .and_then(|()| write!(lock, "{}", std::process::id()));
    // Holding the lock, any socket file left is a dead server's.
    let _ = std::fs::remove_file(&socket);
    let listener = tokio::net::UnixListener::bind(&socket)
        .map_err(|e| format!("cannot listen on {}: {e}", socket.display()))?;
    // The socket file as bound: when the path no longer names it (removed
    // with the home, or by a hook that found it dead a moment before this
    // server bound it), no hook can reach this server any more.
    let ours = same_file_identity(&socket);
    let reachable = |now: &str| ours != "-" && now == ours;
    let cache = Arc::new(LedgerCache {
        home: home.clone(),
        open: Mutex::new(None),
        heads: Arc::new(GitHeads::new()),
        settings: Arc::new(SettingsCache::default()),
    });
    let mut events = tokio::task::JoinSet::new();
    let answer = |events: &mut tokio::task::JoinSet<()>, stream| {
        events.spawn(handle(
            stream,
            home.clone(),
            Arc::clone(&cache),
            Arc::clone(&start_flusher),
        ));
    };
    let renew_above = renew_above_kib();
    let mut last = Instant::now();
    let mut answered = 0u64;
    let mut ended = Ended::Done;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                last = Instant::now();
                match accepted {
                    Ok((stream, _)) => {
                        answered += 1;
                        answer(&mut events, stream);
                    }
                    Err(err) => tracing::warn!("hook server: cannot accept a connection: {err}"),
                }
            }
            _ = tick.tick() => {
                while events.try_join_next().is_some() {}
                if !events.is_empty() {
                    last = Instant::now();
                }
                if last.elapsed() >= idle || !reachable(&same_file_identity(&socket)) {
                    break;
                }
                if answered > 0
                    && renew.is_some_and(|r| last.elapsed() >= r)
                    && resident_kib().is_some_and(|kib| kib > renew_above)
                {
                    tracing::info!(
                        "hook server: quiet with {} KiB resident after {answered} events; handing over to a fresh server",
                        resident_kib().unwrap_or(0)
                    );
                    ended = Ended::Renew;
                    break;
                }
            }
        }
    }
    // New hooks stop finding the socket; the ones already connected are
    // still answered.
    if reachable(&same_file_identity(&socket)) {
        let _ = std::fs::remove_file(&socket);
    }
    while let Ok(Ok((stream, _))) =
        tokio::time::timeout(Duration::from_millis(50), listener.accept()).await
    {
        answer(&mut events, stream);
    }
    while events.join_next().await.is_some() {}
    // The next process to open the store recovers what the WAL holds:
    // leave it bounded.
    if let Some(ledger) = cache.open.lock().take() {
        ledger.store().backend().bound_wal();
    }
    drop(lock);
    Ok(ended)
}

/// One connection: the event in, the answer out.
async fn handle(
    mut stream: tokio::net::UnixStream,
    home: PathBuf,
    cache: Arc<LedgerCache>,
    start_flusher: FlusherStart,
) {
    let mut event = String::new();
    if let Err(err) = stream.read_to_string(&mut event).await {
        tracing::warn!("hook server: cannot read an event: {err}");
        return;
    }
    if let Err(err) = stream.write_all(&[tascer_hook_client::TAKEN]).await {
        tracing::warn!("hook server: the hook went away before its event was taken: {err}");
        return;
    }
    // Opened once; then a lock and a look at the file's identity, quicker
    // than handing the call to another thread.
    let ledger = cache.get();
    let warm = Warm {
        ledger,
        heads: Some(Arc::clone(&cache.heads)),
        settings: Some(Arc::clone(&cache.settings)),
    };
    let (mut reply, session) = answer_leaving_open(&event, &home, warm).await;
    tracing::debug!(
        exit_code = reply.exit_code,
        "hook server answered an event ({} bytes)",
        event.len()
    );
    if reply.webhooks_queued {
        reply.webhooks_queued = false;
        if let Err(err) = start_flusher(&home) {
            let note = format!(
                "tascer hook: webhook events wait in the outbox ({err}); `tascer webhook flush` delivers them"
            );
            reply.stderr = if reply.stderr.is_empty() {
                note
            } else {
                format!("{}\n{note}", reply.stderr)
            };
        }
    }
    let text = serde_json::to_string(&reply).unwrap_or_default();
    if let Err(err) = stream.write_all(text.as_bytes()).await {
        tracing::warn!("hook server: cannot send an answer: {err}");
    }
    let _ = stream.shutdown().await;
    // The hook has its answer: what is left is the store's upkeep, now and
    // then (a thread is woken for it only then).
    if let Some(session) = session.filter(HookSession::wal_checkpoint_due) {
        let _ = tokio::task::spawn_blocking(move || session.close_kept_open()).await;
    }
}
