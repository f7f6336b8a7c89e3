//! What the `check` tool runs and how: the lint and test commands of a repository
//! (configured in its settings, or detected from its build files), each in
//! its own process group with a timeout.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use tascer_settings::FileError;
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use crate::error::{GatekeeperError, Result};

/// Default per-command timeout.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// How much of a command's output a summary keeps.
const TAIL_LINES: usize = 30;
const TAIL_BYTES: usize = 4000;
/// Output kept in memory per command (the rest is dropped from the front).
const KEEP_BYTES: usize = 256 * 1024;

/// The commands of one check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct CheckPlan {
    /// Lint commands (shell command lines), run first.
    pub lint: Vec<String>,
    /// Test commands, run after the lint commands.
    pub test: Vec<String>,
    /// Per-command timeout.
    #[serde(rename = "timeout_secs", serialize_with = "secs")]
    pub timeout: Duration,
    /// Where the commands come from (a settings file, or "detected: …").
    pub source: String,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_secs())
}

/// The files GNU make reads without `-f`, in its order.
const MAKEFILES: [&str; 3] = ["GNUmakefile", "makefile", "Makefile"];

/// True when `makefile` (read as text, never run) has a rule for the
/// target `check`: a line starting at column 0 whose targets before the
/// `:` (or `::`) name `check`, not a variable assignment (`check := …`).
fn has_check_target(makefile: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(makefile) else {
        return false;
    };
    text.lines().any(|line| {
        if line.starts_with(['\t', ' ', '#']) {
            return false;
        }
        let Some((targets, rest)) = line.split_once(':') else {
            return false;
        };
        if rest.starts_with('=') || targets.ends_with(['?', '+', '!']) || targets.contains('=') {
            return false;
        }
        targets.split_whitespace().any(|t| t == "check")
    })
}

/// Commands for a project with no configuration, from its build files (a
/// Makefile's `check` target first: it is the project's own name for its
/// checks).
fn detect(repo: &Path) -> Option<CheckPlan> {
    let has = |f: &str| repo.join(f).is_file();
    let plan = |lint: &[&str], test: &[&str], what: &str| CheckPlan {
        lint: lint.iter().map(|s| (*s).to_owned()).collect(),
        test: test.iter().map(|s| (*s).to_owned()).collect(),
        timeout: DEFAULT_TIMEOUT,
        source: format!("detected: {what}"),
    };
    if let Some(makefile) = MAKEFILES.iter().find(|f| has_check_target(&repo.join(f))) {
        return Some(plan(
            &[],
            &["make check"],
            &format!("{makefile} check target"),
        ));
    }
    if has("Cargo.toml") {
        return Some(plan(
            &["cargo clippy --all-targets --quiet"],
            &["cargo test --quiet"],
            "Cargo.toml",
        ));
    }
    if has("package.json") {
        let scripts = std::fs::read_to_string(repo.join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v.get("scripts").cloned())
            .unwrap_or(Value::Null);
        let lint: &[&str] = if scripts.get("lint").is_some() {
            &["npm run lint"]
        } else {
            &[]
        };
        return Some(plan(lint, &["npm test"], "package.json"));
    }
    if has("go.mod") {
        return Some(plan(&["go vet ./..."], &["go test ./..."], "go.mod"));
    }
    if has("pyproject.toml") || has("setup.py") {
        return Some(plan(&[], &["python3 -m pytest -q"], "Python project"));
    }
    None
}

/// The check commands of `repo`: the `check` section of
/// `.tascer/settings.local.json`, else of `.tascer/settings.json` (read by
/// [`tascer_settings::check_settings`]), else detected from `Cargo.toml`,
/// `package.json`, `go.mod`, `pyproject.toml`/`setup.py`.
pub(crate) fn plan(repo: &Path) -> Result<CheckPlan> {
    let configured = tascer_settings::check_settings(repo).map_err(|e| match e {
        FileError::Read { path, source } => GatekeeperError::ReadSettings { path, source },
        FileError::NotJson { path, source } => GatekeeperError::SettingsNotJson { path, source },
        FileError::Invalid { path, message } => GatekeeperError::BadCheckSection {
            path,
            problem: message,
        },
        other => GatekeeperError::BadCheckSection {
            path: repo.to_path_buf(),
            problem: other.to_string(),
        },
    })?;
    if let Some((file, check)) = configured {
        return Ok(CheckPlan {
            lint: check.lint,
            test: check.test,
            timeout: check
                .timeout_secs
                .map_or(DEFAULT_TIMEOUT, Duration::from_secs),
            source: file.display().to_string(),
        });
    }
    detect(repo).ok_or_else(|| GatekeeperError::NoCheckCommands {
        repo: repo.to_path_buf(),
    })
}

/// One command's run.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CommandRun {
    /// `lint` or `test`.
    pub phase: &'static str,
    /// The command line.
    pub command: String,
    /// Exit code; `None` when it timed out, was cancelled or was killed by
    /// a signal.
    pub exit_code: Option<i32>,
    /// True when it ran out of time.
    pub timed_out: bool,
    /// Wall time.
    pub duration_ms: u64,
    /// The last lines of its output (stdout and stderr interleaved).
    pub tail: String,
}

impl CommandRun {
    /// True when the command exited 0.
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// The last `TAIL_LINES` lines / `TAIL_BYTES` bytes of `output`.
fn tail(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(output);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n");
    if out.len() > TAIL_BYTES {
        let mut cut = out.len() - TAIL_BYTES;
        while !out.is_char_boundary(cut) {
            cut += 1;
        }
        out = format!("…{}", &out[cut..]);
    }
    out
}

/// Kills the process group `pgid`.
fn kill_group(pgid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Runs `command` with `sh -c` in `repo`, stderr merged into stdout.
async fn run_one(
    repo: &Path,
    phase: &'static str,
    command: &str,
    timeout: Duration,
    cancel: &CancellationToken,
) -> CommandRun {
    let started = Instant::now();
    let mut run = CommandRun {
        phase,
        command: command.to_owned(),
        exit_code: None,
        timed_out: false,
        duration_ms: 0,
        tail: String::new(),
    };
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(repo)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            run.tail = format!("cannot start sh: {e}");
            return run;
        }
    };
    let pgid = child.id();
    let mut output = Vec::new();
    let mut stdout = child.stdout.take();
    let read = async {
        let mut buf = [0u8; 8192];
        if let Some(out) = stdout.as_mut() {
            loop {
                match out.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        output.extend_from_slice(&buf[..n]);
                        if output.len() > KEEP_BYTES {
                            output.drain(..output.len() - KEEP_BYTES);
                        }
                    }
                }
            }
        }
        child.wait().await
    };
    let outcome = tokio::select! {
        status = read => Some(status),
        () = tokio::time::sleep(timeout) => { run.timed_out = true; None }
        () = cancel.cancelled() => None,
    };
    if let Some(pgid) = pgid {
        // Also ends background processes the command left behind.
        kill_group(pgid);
    }
    match outcome {
        Some(Ok(status)) => run.exit_code = status.code(),
        Some(Err(e)) => output.extend_from_slice(format!("\nwait failed: {e}").as_bytes()),
        None if run.timed_out => output.extend_from_slice(
            format!("\n[killed after {}s timeout]", timeout.as_secs()).as_bytes(),
        ),
        None => output.extend_from_slice(b"\n[cancelled]"),
    }
    run.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    run.tail = tail(&output);
    run
}

/// Runs every lint command, then every test command (all of them, so the
/// summary shows each failure; a cancelled check stops early).
pub(crate) async fn run_plan(
    repo: &Path,
    plan: &CheckPlan,
    cancel: &CancellationToken,
) -> Vec<CommandRun> {
    let mut runs = Vec::new();
    let all = plan
        .lint
        .iter()
        .map(|c| ("lint", c))
        .chain(plan.test.iter().map(|c| ("test", c)));
    for (phase, command) in all {
        if cancel.is_cancelled() {
            break;
        }
        runs.push(run_one(repo, phase, command, plan.timeout, cancel).await);
    }
    runs
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn plans_from_settings_and_detection() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            plan(dir.path())
                .unwrap_err()
                .to_string()
                .contains("no check commands")
        );
        std::fs::write(dir.path().join("Cargo.toml"), "[package]").unwrap();
        let p = plan(dir.path()).unwrap();
        assert_eq!(p.test, ["cargo test --quiet"]);
        assert_eq!(p.source, "detected: Cargo.toml");
        std::fs::create_dir(dir.path().join(".tascer")).unwrap();
        std::fs::write(
            dir.path().join(".tascer/settings.json"),
            r#"{"mcpServe":{"check":{"lint":"true","test":["true","false"],"timeoutSecs":5}}}"#,
        )
        .unwrap();
        let p = plan(dir.path()).unwrap();
        assert_eq!((p.lint.len(), p.test.len()), (1, 2));
        assert_eq!(p.timeout, Duration::from_secs(5));
        std::fs::write(
            dir.path().join(".tascer/settings.local.json"),
            r#"{"check":{"test":42}}"#,
        )
        .unwrap();
        assert!(
            plan(dir.path())
                .unwrap_err()
                .to_string()
                .contains("check.test")
        );
    }

    #[test]
    fn a_makefile_check_target_comes_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]").unwrap();
        let makefile = dir.path().join("Makefile");
        for text in [
            "check = x\nall:\n\techo check:\n",
            "check := 1\n# check: no\n.PHONY: check\n",
            "checks: all\n",
        ] {
            std::fs::write(&makefile, text).unwrap();
            assert_eq!(
                plan(dir.path()).unwrap().source,
                "detected: Cargo.toml",
                "{text}"
            );
        }
        for text in [
            "check:\n\ttrue\n",
            "all: x\ntest check: all\n",
            "check:: x\n",
        ] {
            std::fs::write(&makefile, text).unwrap();
            let p = plan(dir.path()).unwrap();
            assert_eq!(p.test, ["make check"], "{text}");
            assert_eq!(p.source, "detected: Makefile check target");
        }
    }

    #[test]
    fn tails() {
        let many: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let t = tail(many.as_bytes());
        assert!(t.starts_with("line 70") && t.ends_with("line 99"), "{t}");
    }

    #[tokio::test]
    async fn runs_commands_with_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let plan = CheckPlan {
            lint: vec!["echo to-stderr >&2; true".into()],
            test: vec!["exit 3".into(), "sleep 30".into()],
            timeout: Duration::from_millis(500),
            source: "test".into(),
        };
        let runs = run_plan(dir.path(), &plan, &CancellationToken::new()).await;
        assert_eq!(runs.len(), 3);
        assert!(runs[0].passed() && runs[0].tail.contains("to-stderr"));
        assert_eq!(runs[1].exit_code, Some(3));
        assert!(runs[2].timed_out && runs[2].tail.contains("timeout"));
        assert!(runs[2].duration_ms < 10_000);
    }
}
