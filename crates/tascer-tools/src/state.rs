//! Per-session state shared by the built-in tools.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use tokio_util::sync::CancellationToken;

use crate::util::{mtime, normalize};

/// Locks a mutex, recovering the data if another thread panicked with it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// State shared by one session's tools: which files were read (and their
/// modification time then), and the background shells. Cheap to clone; all
/// clones share the same state.
#[derive(Debug, Clone, Default)]
pub struct ToolState {
    inner: Arc<StateInner>,
}

#[derive(Debug, Default)]
struct StateInner {
    read_files: Mutex<HashMap<PathBuf, Option<SystemTime>>>,
    shells: BackgroundShells,
}

impl ToolState {
    /// Fresh, empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that the session has read `path` as it is on disk now.
    pub fn record_read(&self, path: &Path) {
        let path = normalize(path);
        let time = mtime(&path);
        lock(&self.inner.read_files).insert(path, time);
    }

    /// Records that the session has read `path` when its modification time
    /// was `mtime`.
    pub fn record_read_at(&self, path: &Path, mtime: Option<SystemTime>) {
        lock(&self.inner.read_files).insert(normalize(path), mtime);
    }

    /// True when the session has read `path`.
    pub fn has_read(&self, path: &Path) -> bool {
        lock(&self.inner.read_files).contains_key(&normalize(path))
    }

    /// Checks that an existing file may be overwritten: it must have been
    /// read, and not changed on disk since. Returns the message for the model
    /// when it may not.
    pub(crate) fn check_fresh(&self, path: &Path) -> Result<(), String> {
        let path = normalize(path);
        let files = lock(&self.inner.read_files);
        match files.get(&path) {
            None => Err("File has not been read yet. Read it first before writing to it.".into()),
            Some(recorded) if *recorded != mtime(&path) => Err(
                "File has been modified since read, either by the user or by a linter. \
                 Read it again before attempting to write it."
                    .into(),
            ),
            Some(_) => Ok(()),
        }
    }

    /// The session's background shells.
    pub fn background_shells(&self) -> &BackgroundShells {
        &self.inner.shells
    }
}

/// Registry of shells started with `run_in_background`.
#[derive(Debug, Default)]
pub struct BackgroundShells {
    next_id: AtomicU64,
    shells: Mutex<HashMap<String, Arc<BackgroundShell>>>,
}

impl BackgroundShells {
    /// A fresh id such as `bash_1`.
    pub(crate) fn next_id(&self) -> String {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        format!("bash_{n}")
    }

    /// Adds a shell.
    pub(crate) fn insert(&self, shell: Arc<BackgroundShell>) {
        lock(&self.shells).insert(shell.id.clone(), shell);
    }

    /// The shell with this id.
    pub fn get(&self, id: &str) -> Option<Arc<BackgroundShell>> {
        lock(&self.shells).get(id).cloned()
    }

    /// All shells, sorted by id.
    pub fn list(&self) -> Vec<Arc<BackgroundShell>> {
        let mut all: Vec<_> = lock(&self.shells).values().cloned().collect();
        all.sort_by(|a, b| a.id.cmp(&b.id));
        all
    }

    /// Removes a shell from the registry (it is not killed).
    pub fn remove(&self, id: &str) -> Option<Arc<BackgroundShell>> {
        lock(&self.shells).remove(id)
    }
}

impl Drop for BackgroundShells {
    fn drop(&mut self) {
        for shell in lock(&self.shells).values() {
            shell.kill();
        }
    }
}

/// Output captured from a process, capped in size.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    /// The bytes kept.
    pub(crate) bytes: Vec<u8>,
    /// Bytes dropped past the cap.
    pub(crate) dropped: u64,
}

/// A shell running (or finished) in the background.
#[derive(Debug)]
pub struct BackgroundShell {
    pub(crate) id: String,
    pub(crate) command: String,
    pub(crate) pid: Option<u32>,
    pub(crate) stdout: Arc<Mutex<Capture>>,
    pub(crate) stderr: Arc<Mutex<Capture>>,
    pub(crate) exit_code: Arc<Mutex<Option<i32>>>,
    pub(crate) kill: CancellationToken,
}

impl BackgroundShell {
    /// Its id, e.g. `bash_1`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The command it runs.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Process id of the shell (also its process group id).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Everything it wrote to stdout so far (capped).
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&lock(&self.stdout).bytes).into_owned()
    }

    /// Everything it wrote to stderr so far (capped).
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&lock(&self.stderr).bytes).into_owned()
    }

    /// Its exit code once it finished (128 + signal when killed).
    pub fn exit_code(&self) -> Option<i32> {
        *lock(&self.exit_code)
    }

    /// True while it runs.
    pub fn is_running(&self) -> bool {
        self.exit_code().is_none()
    }

    /// Kills its whole process group (no-op once it has finished).
    pub fn kill(&self) {
        self.kill.cancel();
    }
}
