//! Command hooks: `sh -c <command>` with the input JSON on stdin, in its
//! own process group, killed (whole group) on timeout.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::task::JoinHandle;

/// Bytes of stdout and of stderr kept per run.
const MAX_CAPTURE_BYTES: usize = 1024 * 1024;
/// How long to keep reading after the shell exited (background children
/// may hold the pipes open) or after the group was killed.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// A shell command run as a hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandHook {
    /// The command line, run with `sh -c`.
    pub command: String,
    /// Working directory, exported as `CLAUDE_PROJECT_DIR` and
    /// `TASCER_PROJECT_DIR`.
    pub project_dir: PathBuf,
    /// The plugin directory of a plugin's hook, exported as
    /// `CLAUDE_PLUGIN_ROOT` (`None` for a settings hook).
    pub plugin_root: Option<PathBuf>,
}

/// What a command run produced.
#[derive(Debug, Clone, Default)]
pub(crate) struct CommandResult {
    pub stdout: String,
    pub stderr: String,
    /// Exit code; `None` when killed by a signal or never started.
    pub exit_code: Option<i32>,
    /// Signal that ended the process, if any.
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// Set when the process could not be started or waited for.
    pub spawn_error: Option<String>,
}

type Capture = Arc<Mutex<Vec<u8>>>;

fn take(capture: &Capture) -> String {
    let bytes = std::mem::take(&mut *capture.lock());
    String::from_utf8_lossy(&bytes).into_owned()
}

fn spawn_reader<R>(mut reader: R, capture: Capture) -> JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let mut c = capture.lock();
                    let room = MAX_CAPTURE_BYTES.saturating_sub(c.len());
                    c.extend_from_slice(&buf[..room.min(n)]);
                }
            }
        }
    })
}

/// Kills the process group when dropped while armed, so an abandoned run
/// (e.g. the runner's future was dropped) leaves nothing behind.
struct GroupGuard(Option<i32>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pid) = self.0.take().filter(|p| *p > 1) {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn drain(handle: JoinHandle<()>, grace: Duration) {
    let abort = handle.abort_handle();
    if tokio::time::timeout(grace, handle).await.is_err() {
        abort.abort();
    }
}

impl CommandHook {
    /// Runs the command with `stdin_json` on stdin.
    pub(crate) async fn execute(&self, stdin_json: String, timeout: Duration) -> CommandResult {
        let deadline = Instant::now() + timeout;
        let dir = self.project_dir.display().to_string();
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(&self.command)
            .env("CLAUDE_PROJECT_DIR", &dir)
            .env("TASCER_PROJECT_DIR", &dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(root) = &self.plugin_root {
            cmd.env("CLAUDE_PLUGIN_ROOT", root);
        }
        if self.project_dir.is_dir() {
            cmd.current_dir(&self.project_dir);
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                return CommandResult {
                    spawn_error: Some(e.to_string()),
                    ..CommandResult::default()
                };
            }
        };
        let mut guard = GroupGuard(child.id().and_then(|p| i32::try_from(p).ok()));

        let writer = child.stdin.take().map(|mut stdin| {
            tokio::spawn(async move {
                // A hook that never reads stdin makes this fail with EPIPE:
                // that is fine.
                let _ = stdin.write_all(stdin_json.as_bytes()).await;
                let _ = stdin.shutdown().await;
            })
        });
        let out_cap: Capture = Arc::default();
        let err_cap: Capture = Arc::default();
        let out_reader = child
            .stdout
            .take()
            .map(|s| spawn_reader(s, out_cap.clone()));
        let err_reader = child
            .stderr
            .take()
            .map(|s| spawn_reader(s, err_cap.clone()));

        let waited = tokio::time::timeout_at(deadline.into(), child.wait()).await;
        let mut result = CommandResult::default();
        match waited {
            Ok(Ok(status)) => set_status(&mut result, status),
            Ok(Err(e)) => result.spawn_error = Some(e.to_string()),
            Err(_) => {
                result.timed_out = true;
                guard.kill();
                if let Ok(Ok(status)) = tokio::time::timeout(DRAIN_GRACE, child.wait()).await {
                    set_status(&mut result, status);
                }
            }
        }
        // Output readers finish when every holder of the pipes is gone;
        // wait for them until the deadline (at least a short grace).
        let grace = deadline
            .saturating_duration_since(Instant::now())
            .max(DRAIN_GRACE);
        for reader in [out_reader, err_reader].into_iter().flatten() {
            drain(reader, grace).await;
        }
        if let Some(w) = writer {
            w.abort();
        }
        // The hook finished on its own: leave anything it deliberately
        // started in the background alone.
        guard.0 = None;
        result.stdout = take(&out_cap);
        result.stderr = take(&err_cap);
        result
    }
}

fn set_status(result: &mut CommandResult, status: ExitStatus) {
    result.exit_code = status.code();
    result.signal = status.signal();
}
