//! Driving the real Claude Code CLI (npm `@anthropic-ai/claude-code`,
//! installed into `.test-deps` by `scripts/install-test-deps`) in print
//! mode against the testkit mock model: where it is, how it is started
//! (nothing of this machine's environment but `PATH`, nothing that phones
//! home), and what it sent the model.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tascer_testkit::RecordedRequest;

use super::content_text;

/// Claude Code's native binary as `scripts/install-test-deps` installs it.
pub fn claude_code() -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../.test-deps/node_modules/@anthropic-ai/claude-code/bin/claude.exe");
    path.is_file().then_some(path)
}

/// The longest a Claude Code run may take before the test gives up on it.
pub const CLAUDE_TIMEOUT: Duration = Duration::from_secs(180);

/// One print-mode run of Claude Code.
pub struct ClaudeRun<'a> {
    /// The `claude` executable ([`claude_code`]).
    pub claude: &'a Path,
    /// Where Claude Code starts.
    pub cwd: &'a Path,
    /// The user's home (`HOME`; `CLAUDE_CONFIG_DIR` is its `.claude`).
    pub user_home: &'a Path,
    /// Tascer's home (`TASCER_HOME`).
    pub tascer_home: &'a Path,
    /// The mock model's URL (`ANTHROPIC_BASE_URL`).
    pub url: &'a str,
    /// The prompt (`-p`).
    pub prompt: &'a str,
    /// Claude Code's own flags after `--output-format stream-json
    /// --verbose`, as a user would pass them.
    pub flags: &'a [&'a str],
}

impl ClaudeRun<'_> {
    /// The command, not started.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(self.claude);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.user_home)
            .env("CLAUDE_CONFIG_DIR", self.user_home.join(".claude"))
            .env("TASCER_HOME", self.tascer_home)
            .env("ANTHROPIC_BASE_URL", self.url)
            .env("ANTHROPIC_API_KEY", "dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .current_dir(self.cwd);
        // Claude Code refuses bypassPermissions to root unless the machine
        // says it is a deliberate sandbox (CI machines run tests as root);
        // the variable means nothing else to it.
        let bypass = self
            .flags
            .iter()
            .any(|f| *f == "bypassPermissions" || *f == "--dangerously-skip-permissions");
        if bypass {
            cmd.env("IS_SANDBOX", "1");
        }
        cmd.args([
            "-p",
            self.prompt,
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .args(self.flags)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        cmd
    }

    /// Runs Claude Code to its end (killed, and the test failed, after
    /// [`CLAUDE_TIMEOUT`]).
    pub fn run(&self) -> Output {
        let child = self.command().spawn().unwrap();
        let pid = child.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        let started = Instant::now();
        match rx.recv_timeout(CLAUDE_TIMEOUT) {
            Ok(out) => out.unwrap(),
            Err(_) => {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
                panic!(
                    "Claude Code did not finish within {:?} (started {:?} ago)",
                    CLAUDE_TIMEOUT,
                    started.elapsed()
                );
            }
        }
    }
}

/// The `tool_result` blocks Claude Code sent the mock, by `tool_use_id`:
/// `(id, text, is_error)`, each id once.
pub fn results_sent(requests: &[RecordedRequest]) -> Vec<(String, String, bool)> {
    let mut out: Vec<(String, String, bool)> = Vec::new();
    for request in requests {
        for message in request.body["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] != "tool_result" {
                    continue;
                }
                let id = block["tool_use_id"].as_str().unwrap_or_default().to_owned();
                if out.iter().any(|(seen, _, _)| *seen == id) {
                    continue;
                }
                let is_error = block["is_error"].as_bool().unwrap_or(false);
                out.push((id, content_text(&block["content"]), is_error));
            }
        }
    }
    out
}

/// Claude Code's session id: `session_id` of its `system/init` frame.
pub fn session_id(frames: &[Value]) -> Option<String> {
    frames
        .iter()
        .find(|f| f["type"] == "system" && f["subtype"] == "init")
        .and_then(|f| f["session_id"].as_str())
        .map(str::to_owned)
}
