//! `tests_pass`: after a code change, a configured command exits 0.
//!
//! The command runs with `sh -c` in the working directory, in its own
//! process group, under the session's OS sandbox when it has one (the
//! tests run code the model wrote); on timeout (or when the gate is
//! dropped) the whole group is killed.

use std::process::Stdio;
use std::time::Duration;

use futures::future::BoxFuture;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::io::AsyncReadExt;

use crate::gates::context::GateContext;
use crate::gates::gate::Gate;
use crate::gates::result::GateResult;

const NAME: &str = "tests_pass";
/// How much of the output's end goes into the message.
const TAIL_BYTES: usize = 2_000;

/// Options of `tests_pass`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TestsPassOptions {
    /// The command, run with `sh -c`; the gate fails when it is unset.
    pub command: Option<String>,
    /// Timeout of the command in milliseconds.
    pub timeout_ms: u64,
    /// Run even when the call changed no file.
    pub always: bool,
}

impl Default for TestsPassOptions {
    fn default() -> Self {
        TestsPassOptions {
            command: None,
            timeout_ms: 600_000,
            always: false,
        }
    }
}

pub(crate) struct TestsPass {
    options: TestsPassOptions,
}

impl TestsPass {
    pub(crate) fn new(options: TestsPassOptions) -> Self {
        TestsPass { options }
    }
}

/// Kills the process group when dropped unless disarmed.
struct GroupGuard(Option<Pid>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = killpg(pid, Signal::SIGKILL);
        }
    }
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let start = text.len().saturating_sub(TAIL_BYTES);
    let start = (start..text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len());
    text[start..].to_string()
}

async fn run(command: &str, ctx: &GateContext, timeout: Duration) -> GateResult {
    let mut cmd = match &ctx.sandbox {
        Some(sandbox) => tokio::process::Command::from(sandbox.shell("sh", command)),
        None => {
            let mut cmd = tokio::process::Command::new("sh");
            cmd.arg("-c").arg(command);
            cmd
        }
    };
    cmd.current_dir(&ctx.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return GateResult::fail(NAME, format!("cannot run `{command}`: {e}")),
    };
    let mut guard = GroupGuard(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
    );
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let work = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let read_out = async {
            if let Some(s) = stdout.as_mut() {
                let _ = s.read_to_end(&mut out).await;
            }
        };
        let read_err = async {
            if let Some(s) = stderr.as_mut() {
                let _ = s.read_to_end(&mut err).await;
            }
        };
        let ((), (), status) = tokio::join!(read_out, read_err, child.wait());
        out.extend_from_slice(&err);
        (status, out)
    };
    match tokio::time::timeout(timeout, work).await {
        Err(_) => GateResult::fail(
            NAME,
            format!(
                "`{command}` timed out after {} ms and was killed",
                timeout.as_millis()
            ),
        ),
        Ok((Err(e), _)) => GateResult::fail(NAME, format!("waiting for `{command}`: {e}")),
        Ok((Ok(status), output)) => {
            // The leader exited; kill leftovers in its group anyway.
            if let Some(pid) = guard.0.take() {
                let _ = killpg(pid, Signal::SIGKILL);
            }
            let code = status.code();
            let tail = tail(&output);
            let finding = json!({ "command": command, "exit_code": code });
            if status.success() {
                GateResult::pass(NAME, format!("`{command}` passed")).with_findings(vec![finding])
            } else {
                let how = code.map_or_else(|| "a signal".to_string(), |c| format!("code {c}"));
                let refusal = ctx
                    .sandbox
                    .as_ref()
                    .and_then(|sandbox| sandbox.explain(&String::from_utf8_lossy(&output)));
                let mut message = format!("`{command}` failed with {how}; output tail:\n{tail}");
                if let Some(note) = &refusal {
                    message.push_str("\n\n");
                    message.push_str(note);
                }
                let finding = match refusal {
                    Some(note) => {
                        json!({ "command": command, "exit_code": code, "sandbox_refusal": note })
                    }
                    None => finding,
                };
                GateResult::fail(NAME, message).with_findings(vec![finding])
            }
        }
    }
}

impl Gate for TestsPass {
    fn name(&self) -> &str {
        NAME
    }

    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        Box::pin(async move {
            let Some(command) = self.options.command.as_deref() else {
                return GateResult::fail(
                    NAME,
                    "no test command configured (validation.gates.tests_pass.command)",
                );
            };
            if ctx.changed_files.is_empty() && !self.options.always {
                return GateResult::pass(NAME, "no file changed; tests not run");
            }
            run(command, ctx, Duration::from_millis(self.options.timeout_ms)).await
        })
    }
}
