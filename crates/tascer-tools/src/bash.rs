//! `Bash`: runs a shell command in its own process group.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{Tool, ToolContext, ToolOutput, ToolResultContent, shell_quote};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::ToolError;
use crate::state::{BackgroundShell, Capture, ToolState};
use crate::util::{finish, input_schema, parse_input, truncate_chars};
use tascer_sandbox::CommandSandbox;

const NAME: &str = "Bash";
/// Default timeout in milliseconds.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Largest timeout in milliseconds.
const MAX_TIMEOUT_MS: u64 = 600_000;
/// Characters of stdout and of stderr shown to the model.
const MAX_OUTPUT_CHARS: usize = 30_000;
/// Bytes of each stream kept in memory.
const MAX_CAPTURE_BYTES: usize = 8 * 1024 * 1024;
/// How long to keep reading output after the shell exited (background
/// children may hold the pipes open).
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// Input of [`BashTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BashInput {
    /// The command to execute.
    command: String,
    /// Optional timeout in milliseconds (max 600000).
    #[serde(default)]
    timeout: Option<u64>,
    /// Clear, concise description of what this command does in 5-10 words.
    #[serde(default)]
    #[allow(dead_code)] // For the user's display; the tool itself ignores it.
    description: Option<String>,
    /// Set to true to run this command in the background.
    #[serde(default)]
    run_in_background: Option<bool>,
    /// Set to true to run this command outside the OS sandbox, only when it
    /// cannot work inside it: a person must approve (or the settings'
    /// sandbox.excludedCommands list it).
    #[serde(default, rename = "dangerouslyDisableSandbox")]
    dangerously_disable_sandbox: Option<bool>,
}

impl BashInput {
    /// The sandbox this command runs under: the session's, unless the call
    /// asked to run outside it (admission decided that it may: a person
    /// approved, or `sandbox.excludedCommands` lists it).
    fn sandbox(&self, state: &ToolState) -> Option<CommandSandbox> {
        if self.dangerously_disable_sandbox == Some(true) {
            None
        } else {
            state.sandbox()
        }
    }
}

/// Runs bash commands. `cd` persists between calls.
#[derive(Debug, Clone)]
pub struct BashTool {
    state: ToolState,
}

impl BashTool {
    /// A `Bash` tool registering background shells in `state`.
    pub fn new(state: ToolState) -> Self {
        BashTool { state }
    }
}

impl Tool for BashTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Executes a bash command and returns its output. The working directory persists between \
         commands (cd sticks); the environment does not. The default timeout is 2 minutes \
         (max 10 minutes); on timeout the whole process group is killed. Output over 30000 \
         characters is truncated. Use run_in_background for long-running commands."
    }

    fn input_schema(&self) -> Value {
        input_schema::<BashInput>()
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            finish(
                async {
                    let input: BashInput = parse_input(NAME, input)?;
                    let sandbox = input.sandbox(&self.state);
                    let escaped = sandbox.is_none() && self.state.sandbox().is_some();
                    let out = if input.run_in_background.unwrap_or(false) {
                        self.run_background(&input.command, ctx, sandbox.as_ref())
                    } else {
                        let timeout = input
                            .timeout
                            .unwrap_or(DEFAULT_TIMEOUT_MS)
                            .clamp(1, MAX_TIMEOUT_MS);
                        run_foreground(&input.command, timeout, ctx, sandbox.as_ref()).await
                    };
                    out.map(|out| {
                        if escaped {
                            marked_unsandboxed(out)
                        } else {
                            out
                        }
                    })
                }
                .await,
            )
        })
    }
}

/// A `bash -c` command (through the sandbox's helper when there is one)
/// in its own process group with piped output.
fn shell_command(
    script: &str,
    cwd: &PathBuf,
    ctx: &ToolContext,
    sandbox: Option<&CommandSandbox>,
) -> Command {
    let mut cmd = match sandbox {
        Some(sandbox) => Command::from(sandbox.shell("bash", script)),
        None => {
            let mut cmd = Command::new("bash");
            cmd.arg("-c").arg(script);
            cmd
        }
    };
    cmd.current_dir(cwd)
        .envs(ctx.env.iter())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    cmd
}

/// Kills the process group `pid` (the shell's pid, which is also its group
/// id) with SIGKILL.
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 1) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// Kills the process group when dropped while armed, so an abandoned call
/// leaves nothing running. Disarmed once the shell has exited by itself.
struct GroupGuard {
    pid: Option<u32>,
}

impl GroupGuard {
    fn kill(&mut self) {
        kill_group(self.pid.take());
    }

    fn disarm(&mut self) {
        self.pid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Reads a stream into a capped buffer until EOF.
fn spawn_reader<R>(mut reader: R, capture: Arc<Mutex<Capture>>) -> JoinHandle<()>
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
                    let room = MAX_CAPTURE_BYTES.saturating_sub(c.bytes.len());
                    let take = room.min(n);
                    c.bytes.extend_from_slice(&buf[..take]);
                    c.dropped += (n - take) as u64;
                }
            }
        }
    })
}

/// The exit code, or 128 + signal number when killed by a signal.
fn exit_code(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

enum End {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
}

/// The working directory of the call; an error when it no longer exists.
fn existing_cwd(ctx: &ToolContext) -> Result<PathBuf, ToolError> {
    let cwd = ctx.cwd();
    if !cwd.is_dir() {
        return Err(ToolError::msg(format!(
            "Working directory {} does not exist.",
            cwd.display()
        )));
    }
    Ok(cwd)
}

/// A child's stdout and stderr, read into capped buffers.
struct Captures {
    stdout: Arc<Mutex<Capture>>,
    stderr: Arc<Mutex<Capture>>,
    readers: Vec<JoinHandle<()>>,
}

/// Starts reading the child's stdout and stderr.
fn capture_output(child: &mut tokio::process::Child) -> Captures {
    let stdout = Arc::new(Mutex::new(Capture::default()));
    let stderr = Arc::new(Mutex::new(Capture::default()));
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(spawn_reader(out, stdout.clone()));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(spawn_reader(err, stderr.clone()));
    }
    Captures {
        stdout,
        stderr,
        readers,
    }
}

async fn run_foreground(
    command: &str,
    timeout_ms: u64,
    ctx: &ToolContext,
    sandbox: Option<&CommandSandbox>,
) -> Result<ToolOutput, ToolError> {
    let cwd = existing_cwd(ctx)?;
    // The final working directory is written here by an EXIT trap, so `cd`
    // sticks even when the command calls `exit` (in the private temporary
    // directory when sandboxed: the shell may write nowhere else there).
    let cwd_file = match sandbox {
        Some(sandbox) => tempfile::NamedTempFile::new_in(sandbox.temp_dir()),
        None => tempfile::NamedTempFile::new(),
    }
    .map_err(|e| ToolError::io("Cannot create a temporary file", e))?;
    let script = format!(
        "__tascer_cwd_file={}\ntrap 'pwd -P >| \"$__tascer_cwd_file\" 2>/dev/null' EXIT\n{}",
        shell_quote(&cwd_file.path().to_string_lossy()),
        command
    );
    let mut child = shell_command(&script, &cwd, ctx, sandbox)
        .spawn()
        .map_err(|e| ToolError::io("Cannot start bash", e))?;
    let mut guard = GroupGuard { pid: child.id() };
    let mut captures = capture_output(&mut child);
    let (end, status) = wait_for_end(&mut child, &mut guard, timeout_ms, ctx).await?;
    drain(&mut captures.readers).await;
    if matches!(end, End::Exited(_)) {
        follow_cd(cwd_file.path(), ctx);
    }
    let out = foreground_output(
        &end,
        exit_code(status),
        take_capture(&captures.stdout),
        take_capture(&captures.stderr),
        timeout_ms,
    );
    Ok(match sandbox {
        Some(sandbox) => with_sandbox_note(out, sandbox),
        None => out,
    })
}

/// Marks the answer of a command that ran outside the session's sandbox
/// at its own request (`raw.sandbox`, for the ledger).
fn marked_unsandboxed(mut out: ToolOutput) -> ToolOutput {
    if let Some(raw) = out.raw.as_mut() {
        raw["sandbox"] = json!({ "enabled": false, "disabled_by": "dangerouslyDisableSandbox" });
    }
    out
}

/// Marks a sandboxed command's answer as such; when it failed and its
/// output shows a refusal, appends what the sandbox refused and why (in
/// the text for the model and in `raw.sandbox.refusal` for the ledger).
fn with_sandbox_note(mut out: ToolOutput, sandbox: &CommandSandbox) -> ToolOutput {
    let mut note = None;
    if out.is_error {
        let raw = out.raw.as_ref();
        let text = |key: &str| {
            raw.and_then(|r| r.get(key))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        note = sandbox.explain(&format!("{}\n{}", text("stderr"), text("stdout")));
    }
    if let Some(note) = &note {
        append_text(&mut out, note);
    }
    if let Some(raw) = out.raw.as_mut() {
        raw["sandbox"] = json!({ "enabled": true, "refusal": note });
    }
    out
}

/// Waits until the shell exits, the call is cancelled or the timeout
/// passes; in the last two cases kills its process group and reaps it.
async fn wait_for_end(
    child: &mut tokio::process::Child,
    guard: &mut GroupGuard,
    timeout_ms: u64,
    ctx: &ToolContext,
) -> Result<(End, ExitStatus), ToolError> {
    let end = tokio::select! {
        biased;
        status = child.wait() => End::Exited(
            status.map_err(|e| ToolError::io("Cannot wait for bash", e))?,
        ),
        _ = ctx.cancel.cancelled() => End::Cancelled,
        _ = tokio::time::sleep(Duration::from_millis(timeout_ms)) => End::TimedOut,
    };
    let status = match end {
        End::Exited(status) => {
            guard.disarm();
            status
        }
        End::TimedOut | End::Cancelled => {
            guard.kill();
            child
                .wait()
                .await
                .map_err(|e| ToolError::io("Cannot wait for bash", e))?
        }
    };
    Ok((end, status))
}

/// Lets the readers finish for a short grace period, then stops them.
async fn drain(readers: &mut [JoinHandle<()>]) {
    let _ = tokio::time::timeout(DRAIN_GRACE, async {
        for reader in readers.iter_mut() {
            let _ = reader.await;
        }
    })
    .await;
    for reader in readers.iter() {
        reader.abort();
    }
}

/// Moves the call's working directory to where the shell ended, as the
/// EXIT trap wrote it in `cwd_file`.
fn follow_cd(cwd_file: &Path, ctx: &ToolContext) {
    if let Ok(dir) = std::fs::read_to_string(cwd_file) {
        let dir = PathBuf::from(dir.trim_end_matches('\n'));
        if dir.is_absolute() && dir.is_dir() {
            ctx.set_cwd(dir);
        }
    }
}

/// The tool's answer for a foreground command: exit code, output (cut to
/// size) and how it ended.
fn foreground_output(
    end: &End,
    code: i32,
    stdout: (String, u64),
    stderr: (String, u64),
    timeout_ms: u64,
) -> ToolOutput {
    let interrupted = !matches!(end, End::Exited(_));

    let mut parts: Vec<String> = Vec::new();
    if !interrupted && code != 0 {
        parts.push(format!("Exit code {code}"));
    }
    for (text, dropped) in [&stdout, &stderr] {
        let shown = text.trim_end_matches(['\n', '\r']);
        if shown.is_empty() {
            continue;
        }
        let (kept, cut) = truncate_chars(shown, MAX_OUTPUT_CHARS);
        if cut || *dropped > 0 {
            parts.push(format!("{kept}\n… [output truncated]"));
        } else {
            parts.push(kept.to_string());
        }
    }
    match end {
        End::TimedOut => parts.push(format!(
            "Command timed out after {timeout_ms} ms; its process group was killed."
        )),
        End::Cancelled => {
            parts.push("Command was interrupted; its process group was killed.".into())
        }
        End::Exited(_) => {}
    }
    let text = if parts.is_empty() {
        "Tool ran without output or errors".to_string()
    } else {
        parts.join("\n")
    };

    let mut raw = json!({
        "stdout": stdout.0,
        "stderr": stderr.0,
        "interrupted": interrupted,
        "isImage": false,
        "exitCode": code,
    });
    if matches!(end, End::TimedOut) {
        raw["timedOutAfterMs"] = json!(timeout_ms);
    }
    let mut out = ToolOutput::text(text).with_raw(raw);
    out.is_error = interrupted || code != 0;
    out
}

/// The captured text and how many bytes were dropped.
fn take_capture(capture: &Arc<Mutex<Capture>>) -> (String, u64) {
    let c = capture.lock();
    (String::from_utf8_lossy(&c.bytes).into_owned(), c.dropped)
}

impl BashTool {
    fn run_background(
        &self,
        command: &str,
        ctx: &ToolContext,
        sandbox: Option<&CommandSandbox>,
    ) -> Result<ToolOutput, ToolError> {
        let cwd = existing_cwd(ctx)?;
        let shells = self.state.background_shells();
        let mut child = shell_command(command, &cwd, ctx, sandbox)
            .spawn()
            .map_err(|e| ToolError::io("Cannot start bash", e))?;
        // The readers run until the shell's pipes close.
        let Captures { stdout, stderr, .. } = capture_output(&mut child);
        let shell = Arc::new(BackgroundShell {
            id: shells.next_id(),
            command: command.to_string(),
            pid: child.id(),
            stdout,
            stderr,
            exit_code: Arc::new(Mutex::new(None)),
            kill: CancellationToken::new(),
            killed: Arc::new(AtomicBool::new(false)),
            read_pos: Mutex::new((0, 0)),
        });
        let (exit, kill, pid) = (shell.exit_code.clone(), shell.kill.clone(), shell.pid);
        let killed = shell.killed.clone();
        let listener = self.state.task_listener();
        let (ended, tool_use_id) = (shell.clone(), ctx.tool_use_id.clone());
        shells.insert(shell.clone());
        if let Some(listener) = &listener {
            listener.started(&shell, &tool_use_id);
        }
        tokio::spawn(async move {
            let status = tokio::select! {
                biased;
                status = child.wait() => status,
                _ = kill.cancelled() => {
                    killed.store(true, Ordering::SeqCst);
                    kill_group(pid);
                    child.wait().await
                }
            };
            *exit.lock() = Some(status.map(exit_code).unwrap_or(-1));
            if let Some(listener) = listener {
                listener.ended(&ended, &tool_use_id);
            }
        });
        let raw = json!({
            "stdout": "",
            "stderr": "",
            "interrupted": false,
            "isImage": false,
            "backgroundTaskId": shell.id,
            "sandbox": { "enabled": sandbox.is_some() },
        });
        Ok(ToolOutput::text(format!(
            "Command running in background with ID: {}",
            shell.id
        ))
        .with_raw(raw))
    }
}

/// Appends a paragraph to a text answer.
fn append_text(out: &mut ToolOutput, note: &str) {
    if let ToolResultContent::Text(text) = &mut out.content {
        text.push_str("\n\n");
        text.push_str(note);
    }
}
