//! Per-session state shared by the built-in tools.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::SystemTime;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::services::{SearchBackend, Summarizer, UserAnswerer};
use crate::todo_list::TodoItem;
use crate::util::{mtime, normalize};
use tascer_sandbox::CommandSandbox;

/// State shared by one session's tools: which files were read (and their
/// modification time then), the background shells, the todo list, the plan
/// mode exit flag, and the optional services some tools use (a
/// [`Summarizer`] for WebFetch, a [`SearchBackend`] for WebSearch, a
/// [`UserAnswerer`] for AskUserQuestion). Cheap to clone; all clones share
/// the same state, so the `with_*` options may be set at any time.
#[derive(Debug, Clone, Default)]
pub struct ToolState {
    inner: Arc<StateInner>,
}

#[derive(Debug, Default)]
struct StateInner {
    read_files: Mutex<HashMap<PathBuf, Option<SystemTime>>>,
    shells: BackgroundShells,
    /// `None` until the first TodoWrite (or load from disk).
    todos: Mutex<Option<Vec<TodoItem>>>,
    todo_dir: Mutex<Option<PathBuf>>,
    plan_exit: AtomicBool,
    plan: Mutex<Option<String>>,
    services: Mutex<Services>,
}

/// The optional services, as trait objects.
#[derive(Default, Clone)]
struct Services {
    summarizer: Option<Arc<dyn Summarizer>>,
    search: Option<Arc<dyn SearchBackend>>,
    provider_search: Option<Arc<dyn SearchBackend>>,
    answerer: Option<Arc<dyn UserAnswerer>>,
    tasks: Option<Arc<dyn TaskListener>>,
    sandbox: Option<CommandSandbox>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("summarizer", &self.summarizer.is_some())
            .field("search", &self.search.is_some())
            .field("provider_search", &self.provider_search.is_some())
            .field("answerer", &self.answerer.is_some())
            .field("tasks", &self.tasks.is_some())
            .field("sandbox", &self.sandbox)
            .finish()
    }
}

impl ToolState {
    /// Fresh, empty state: no todo directory (todos in memory only) and no
    /// services.
    pub fn new() -> Self {
        Self::default()
    }

    /// Persists the todo list to `<dir>/<session_id>.json` on every
    /// TodoWrite (and loads it from there before the first one).
    pub fn with_todo_dir(self, dir: impl Into<PathBuf>) -> Self {
        *self.inner.todo_dir.lock() = Some(dir.into());
        self
    }

    /// Lets WebFetch answer its prompt on the fetched content.
    pub fn with_summarizer(self, summarizer: Arc<dyn Summarizer>) -> Self {
        self.inner.services.lock().summarizer = Some(summarizer);
        self
    }

    /// The search backend WebSearch uses (instead of one configured by
    /// environment variables).
    pub fn with_search_backend(self, backend: Arc<dyn SearchBackend>) -> Self {
        self.inner.services.lock().search = Some(backend);
        self
    }

    /// The search WebSearch falls back to when neither a search backend
    /// nor a Brave Search API key is configured (the model provider's own
    /// web search).
    pub fn with_provider_search(self, backend: Arc<dyn SearchBackend>) -> Self {
        self.inner.services.lock().provider_search = Some(backend);
        self
    }

    /// Who is told when background shells start and end.
    pub fn with_task_listener(self, listener: Arc<dyn TaskListener>) -> Self {
        self.inner.services.lock().tasks = Some(listener);
        self
    }

    /// Who is told when background shells start and end, if anyone.
    pub fn task_listener(&self) -> Option<Arc<dyn TaskListener>> {
        self.inner.services.lock().tasks.clone()
    }

    /// Who answers AskUserQuestion.
    pub fn with_user_answerer(self, answerer: Arc<dyn UserAnswerer>) -> Self {
        self.inner.services.lock().answerer = Some(answerer);
        self
    }

    /// Runs the Bash tool's commands (foreground and background) under the
    /// OS sandbox.
    pub fn with_sandbox(self, sandbox: CommandSandbox) -> Self {
        self.inner.services.lock().sandbox = Some(sandbox);
        self
    }

    /// The sandbox Bash commands run under, if any.
    pub fn sandbox(&self) -> Option<CommandSandbox> {
        self.inner.services.lock().sandbox.clone()
    }

    /// The directory todo lists are persisted in, if any.
    pub fn todo_dir(&self) -> Option<PathBuf> {
        self.inner.todo_dir.lock().clone()
    }

    /// The configured summarizer, if any.
    pub fn summarizer(&self) -> Option<Arc<dyn Summarizer>> {
        self.inner.services.lock().summarizer.clone()
    }

    /// The configured search backend, if any.
    pub fn search_backend(&self) -> Option<Arc<dyn SearchBackend>> {
        self.inner.services.lock().search.clone()
    }

    /// The provider's search WebSearch falls back to, if any.
    pub fn provider_search(&self) -> Option<Arc<dyn SearchBackend>> {
        self.inner.services.lock().provider_search.clone()
    }

    /// The configured user answerer, if any.
    pub fn user_answerer(&self) -> Option<Arc<dyn UserAnswerer>> {
        self.inner.services.lock().answerer.clone()
    }

    /// The session's current todo list (empty before the first TodoWrite).
    pub fn todos(&self) -> Vec<TodoItem> {
        self.inner.todos.lock().clone().unwrap_or_default()
    }

    /// Replaces the todo list; returns the old one. `load` supplies the
    /// old list when none is in memory yet (e.g. from disk).
    pub(crate) fn replace_todos(
        &self,
        new: Vec<TodoItem>,
        load: impl FnOnce() -> Vec<TodoItem>,
    ) -> Vec<TodoItem> {
        let mut todos = self.inner.todos.lock();
        let old = todos.take().unwrap_or_else(load);
        *todos = Some(new);
        old
    }

    /// True once ExitPlanMode was called (until
    /// [`take_plan_exit_request`](Self::take_plan_exit_request)).
    pub fn plan_exit_requested(&self) -> bool {
        self.inner.plan_exit.load(Ordering::SeqCst)
    }

    /// The plan passed to the last ExitPlanMode call, if any.
    pub fn exit_plan(&self) -> Option<String> {
        self.inner.plan.lock().clone()
    }

    /// Clears the ExitPlanMode flag, returning the plan if it was set.
    pub fn take_plan_exit_request(&self) -> Option<String> {
        if self.inner.plan_exit.swap(false, Ordering::SeqCst) {
            self.inner.plan.lock().take()
        } else {
            None
        }
    }

    /// Sets the ExitPlanMode flag with the plan.
    pub(crate) fn request_plan_exit(&self, plan: String) {
        *self.inner.plan.lock() = Some(plan);
        self.inner.plan_exit.store(true, Ordering::SeqCst);
    }

    /// Records that the session has read `path` as it is on disk now.
    pub fn record_read(&self, path: &Path) {
        let path = normalize(path);
        let time = mtime(&path);
        self.inner.read_files.lock().insert(path, time);
    }

    /// Records that the session has read `path` when its modification time
    /// was `mtime`.
    pub fn record_read_at(&self, path: &Path, mtime: Option<SystemTime>) {
        self.inner.read_files.lock().insert(normalize(path), mtime);
    }

    /// True when the session has read `path`.
    pub fn has_read(&self, path: &Path) -> bool {
        self.inner.read_files.lock().contains_key(&normalize(path))
    }

    /// Checks that an existing file may be overwritten: it must have been
    /// read, and not changed on disk since. Returns the message for the model
    /// when it may not.
    pub(crate) fn check_fresh(&self, path: &Path) -> Result<(), String> {
        let path = normalize(path);
        let files = self.inner.read_files.lock();
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

/// Told when a background shell starts and when it ends (a host that
/// reports background tasks, as the SDKs' `task_started` and
/// `task_notification` messages do). Configure one with
/// [`ToolState::with_task_listener`](crate::ToolState::with_task_listener).
pub trait TaskListener: Send + Sync {
    /// `shell` was started by the call `tool_use_id`.
    fn started(&self, shell: &Arc<BackgroundShell>, tool_use_id: &str);
    /// `shell` ended (by itself or killed); its status and exit code are
    /// final.
    fn ended(&self, shell: &Arc<BackgroundShell>, tool_use_id: &str);
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
        self.shells.lock().insert(shell.id.clone(), shell);
    }

    /// The shell with this id.
    pub fn get(&self, id: &str) -> Option<Arc<BackgroundShell>> {
        self.shells.lock().get(id).cloned()
    }

    /// All shells, sorted by id.
    pub fn list(&self) -> Vec<Arc<BackgroundShell>> {
        let mut all: Vec<_> = self.shells.lock().values().cloned().collect();
        all.sort_by(|a, b| a.id.cmp(&b.id));
        all
    }

    /// Removes a shell from the registry (it is not killed).
    pub fn remove(&self, id: &str) -> Option<Arc<BackgroundShell>> {
        self.shells.lock().remove(id)
    }
}

impl Drop for BackgroundShells {
    fn drop(&mut self) {
        for shell in self.shells.lock().values() {
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
    /// Set when the shell ended because it was killed.
    pub(crate) killed: Arc<AtomicBool>,
    /// Bytes of stdout and stderr already returned by BashOutput.
    pub(crate) read_pos: Mutex<(usize, usize)>,
}

/// Where a background shell is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellStatus {
    /// Still running.
    Running,
    /// Exited by itself.
    Completed,
    /// Ended by [`BackgroundShell::kill`] (KillShell).
    Killed,
}

impl ShellStatus {
    /// `running`, `completed` or `killed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ShellStatus::Running => "running",
            ShellStatus::Completed => "completed",
            ShellStatus::Killed => "killed",
        }
    }
}

/// The text of `bytes[from..]` up to the last complete UTF-8 character, and
/// the new position.
fn new_text(bytes: &[u8], from: usize) -> (String, usize) {
    let from = from.min(bytes.len());
    let rest = &bytes[from..];
    let end = match std::str::from_utf8(rest) {
        Ok(_) => rest.len(),
        // An incomplete character at the end waits for the next read.
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => rest.len(),
    };
    (
        String::from_utf8_lossy(&rest[..end]).into_owned(),
        from + end,
    )
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
        String::from_utf8_lossy(&self.stdout.lock().bytes).into_owned()
    }

    /// Everything it wrote to stderr so far (capped).
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().bytes).into_owned()
    }

    /// Its exit code once it finished (128 + signal when killed).
    pub fn exit_code(&self) -> Option<i32> {
        *self.exit_code.lock()
    }

    /// True while it runs.
    pub fn is_running(&self) -> bool {
        self.exit_code().is_none()
    }

    /// Running, completed or killed.
    pub fn status(&self) -> ShellStatus {
        if self.is_running() {
            ShellStatus::Running
        } else if self.killed.load(Ordering::SeqCst) {
            ShellStatus::Killed
        } else {
            ShellStatus::Completed
        }
    }

    /// Stdout and stderr written since the last call (the first call
    /// returns everything so far).
    pub fn read_new(&self) -> (String, String) {
        let mut pos = self.read_pos.lock();
        let (out, out_pos) = new_text(&self.stdout.lock().bytes, pos.0);
        let (err, err_pos) = new_text(&self.stderr.lock().bytes, pos.1);
        *pos = (out_pos, err_pos);
        (out, err)
    }

    /// The end of its output, stdout then stderr, at most `max_bytes`
    /// (cut at a character boundary), with the whole output's size in
    /// bytes (what the caps dropped included) and whether it was cut.
    pub fn output_tail(&self, max_bytes: usize) -> (String, u64, bool) {
        let (out, err) = (self.stdout.lock(), self.stderr.lock());
        let mut all = out.bytes.clone();
        all.extend_from_slice(&err.bytes);
        let total = all.len() as u64 + out.dropped + err.dropped;
        let mut from = all.len().saturating_sub(max_bytes);
        while from < all.len() && (all[from] & 0xC0) == 0x80 {
            from += 1;
        }
        let cut = total > (all.len() - from) as u64;
        (
            String::from_utf8_lossy(&all[from..]).into_owned(),
            total,
            cut,
        )
    }

    /// Kills its whole process group (no-op once it has finished).
    pub fn kill(&self) {
        self.kill.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(stdout: &[u8], stderr: &[u8], dropped: u64) -> BackgroundShell {
        let capture = |bytes: &[u8], dropped| {
            Arc::new(Mutex::new(Capture {
                bytes: bytes.to_vec(),
                dropped,
            }))
        };
        BackgroundShell {
            id: "bash_1".into(),
            command: "x".into(),
            pid: None,
            stdout: capture(stdout, dropped),
            stderr: capture(stderr, 0),
            exit_code: Arc::new(Mutex::new(Some(0))),
            kill: CancellationToken::new(),
            killed: Arc::new(AtomicBool::new(false)),
            read_pos: Mutex::new((0, 0)),
        }
    }

    #[test]
    fn output_tail_keeps_the_end_at_a_character_boundary() {
        assert_eq!(
            shell(b"out\n", b"err\n", 0).output_tail(100),
            ("out\nerr\n".to_string(), 8, false)
        );
        // "é" is two bytes: a cut inside it starts after it.
        let (tail, total, cut) = shell("abé".as_bytes(), b"", 0).output_tail(1);
        assert_eq!((tail.as_str(), total, cut), ("", 4, true));
        let (tail, total, cut) = shell("abé".as_bytes(), b"", 0).output_tail(2);
        assert_eq!((tail.as_str(), total, cut), ("é", 4, true));
        // Bytes the cap dropped count in the total, and mean a cut.
        assert_eq!(
            shell(b"end", b"", 10).output_tail(100),
            ("end".to_string(), 13, true)
        );
    }
}
