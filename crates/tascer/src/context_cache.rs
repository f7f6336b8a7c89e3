//! [`ContextCache`]: context capturers shared by the sessions that hold the
//! same cache.
//!
//! The first capture in a directory computes the git status (about 30 ms
//! for a 10 000-file repository); later captures reuse it while nothing
//! changes. Sessions working in the same directory with the same
//! environment allowlist and the same cache therefore share one capturer,
//! and a new session starts its first capture in the background
//! ([`prewarm`]), so that its first tool call does not wait for the status:
//! the model's first answer takes far longer than the status.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use tascer_ledger::ContextCapturer;

/// The most capturers kept; the least recently used one is dropped first.
const MAX_CAPTURERS: usize = 16;

/// A capturer several sessions may use.
pub(crate) type SharedCapturer = Arc<Mutex<ContextCapturer>>;

struct Slot {
    cwd: PathBuf,
    allowlist: Vec<String>,
    capturer: SharedCapturer,
    last_used: u64,
}

/// Git-state capturers that sessions share, by directory and environment
/// allowlist (at most 16; the least recently used is dropped first).
///
/// A session uses the cache of its options
/// ([`Options::context_cache`](crate::Options::context_cache)), else one of
/// its own. Code that starts several sessions in one directory (one after
/// another, or side by side) passes them the same cache, so each starts
/// from the git state the others already computed. Cheap to clone: clones
/// share the capturers.
#[derive(Clone, Default)]
pub struct ContextCache {
    registry: Arc<Mutex<Registry>>,
}

impl ContextCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The cache's capturer for `cwd` with this environment allowlist,
    /// created (not yet run) when there is none.
    pub(crate) fn capturer(&self, cwd: &Path, allowlist: &[String]) -> SharedCapturer {
        self.registry.lock().get(cwd, allowlist)
    }
}

impl std::fmt::Debug for ContextCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextCache")
            .field("capturers", &self.registry.lock().slots.len())
            .finish()
    }
}

/// Capturers by directory and allowlist, least recently used dropped first.
#[derive(Default)]
struct Registry {
    slots: Vec<Slot>,
    clock: u64,
}

impl Registry {
    fn get(&mut self, cwd: &Path, allowlist: &[String]) -> SharedCapturer {
        self.clock += 1;
        let now = self.clock;
        if let Some(slot) = self
            .slots
            .iter_mut()
            .find(|s| s.cwd == cwd && s.allowlist == allowlist)
        {
            slot.last_used = now;
            return Arc::clone(&slot.capturer);
        }
        if self.slots.len() >= MAX_CAPTURERS
            && let Some(oldest) = (0..self.slots.len()).min_by_key(|&i| self.slots[i].last_used)
        {
            self.slots.swap_remove(oldest);
        }
        let capturer = Arc::new(Mutex::new(
            ContextCapturer::new(cwd.to_path_buf(), allowlist.iter().cloned())
                .with_version(crate::VERSION),
        ));
        self.slots.push(Slot {
            cwd: cwd.to_path_buf(),
            allowlist: allowlist.to_vec(),
            capturer: Arc::clone(&capturer),
            last_used: now,
        });
        capturer
    }
}

/// Runs a first capture on a background thread, so the git status is
/// computed (and watched) before the first tool call needs it. A capture
/// that is already cached costs microseconds.
pub(crate) fn prewarm(capturer: &SharedCapturer) {
    let capturer = Arc::clone(capturer);
    let spawned = std::thread::Builder::new()
        .name("tascer-context".into())
        .spawn(move || {
            capturer.lock().capture();
        });
    if let Err(err) = spawned {
        tracing::debug!("cannot start the context prewarm thread: {err}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_share_a_capturer_per_directory_and_allowlist() {
        let cache = ContextCache::new();
        let dir = tempfile::tempdir().unwrap();
        let path = vec!["PATH".to_string()];
        let a = cache.capturer(dir.path(), &path);
        let b = cache.clone().capturer(dir.path(), &path);
        assert!(Arc::ptr_eq(&a, &b));
        let other_env = cache.capturer(dir.path(), &["HOME".to_string()]);
        assert!(!Arc::ptr_eq(&a, &other_env));
        let other_dir = tempfile::tempdir().unwrap();
        assert!(!Arc::ptr_eq(&a, &cache.capturer(other_dir.path(), &path)));
    }

    #[test]
    fn the_registry_is_bounded_and_keeps_the_recently_used() {
        let cache = ContextCache::new();
        let dirs: Vec<_> = (0..MAX_CAPTURERS + 4)
            .map(|_| tempfile::tempdir().unwrap())
            .collect();
        let first = cache.capturer(dirs[0].path(), &[]);
        for dir in &dirs[1..] {
            cache.capturer(dir.path(), &[]);
            // Keep the first one in use.
            cache.capturer(dirs[0].path(), &[]);
        }
        assert_eq!(cache.registry.lock().slots.len(), MAX_CAPTURERS);
        assert!(Arc::ptr_eq(&first, &cache.capturer(dirs[0].path(), &[])));
        let evicted = cache.capturer(dirs[1].path(), &[]);
        assert_eq!(
            Arc::strong_count(&evicted),
            2,
            "made anew: only the registry and us"
        );
    }
}
