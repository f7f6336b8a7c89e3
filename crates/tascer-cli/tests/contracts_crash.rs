//! Crash safety of `tascer contracts run`: `kill -9` of the executor
//! mid-contract followed by a re-run completes the contract exactly once;
//! an executor dying on the retry too gets the contract marked failed; a
//! second executor started while the first runs leaves the contract alone.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use tascer_testkit::{MockServer, Scenario, Turn};

const CRASHY: &str = "# Contract: Crashy work\n\n## Status\npending\n\n## Task\nLog a run, then finish.\n\n## Constraints\n- Files: runs.log\n\n## Result\n";

/// Turn 1 logs the run; turn 2 comes slowly, which is when the test kills.
fn scenario() -> Scenario {
    Scenario::new().conversation(
        "Contract: Crashy work",
        vec![
            Turn::tool("Bash", json!({"command": "echo run >> runs.log"})),
            Turn::text("Finished the crashy work.").with_latency_ms(2500),
        ],
    )
}

struct Setup {
    _root: tempfile::TempDir,
    home: std::path::PathBuf,
    ws: std::path::PathBuf,
    server: MockServer,
}

fn setup() -> Setup {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(ws.join("contracts")).unwrap();
    std::fs::write(ws.join("contracts/crashy.md"), CRASHY).unwrap();
    let server = MockServer::start_blocking(scenario()).unwrap();
    Setup {
        _root: root,
        home,
        ws,
        server,
    }
}

fn executor(s: &Setup) -> std::process::Command {
    let mut cmd = tascer(&s.home, &s.ws);
    cmd.env("ANTHROPIC_API_KEY", "test")
        .env("ANTHROPIC_BASE_URL", s.server.url())
        .args(["contracts", "run"])
        .stdin(Stdio::null());
    cmd
}

fn wait_until(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn runs(ws: &Path) -> usize {
    std::fs::read_to_string(ws.join("runs.log"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

/// Starts an executor, waits until it has logged run number `n` (so its
/// session is in the slow second turn), and SIGKILLs it.
fn start_and_kill(s: &Setup, n: usize) {
    let mut child: Child = executor(s)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(30), "the run to be logged", || {
        runs(&s.ws) >= n
    });
    let text = std::fs::read_to_string(s.ws.join("contracts/crashy.md")).unwrap();
    assert!(text.contains("## Status\nin_progress\n"), "{text}");
    child.kill().unwrap();
    child.wait().unwrap();
}

fn verify_all(s: &Setup) {
    let out = tascer(&s.home, &s.ws)
        .args(["verify", "--all"])
        .output()
        .unwrap();
    assert!(out.status.success(), "verify --all: {:?}", texts(&out));
}

#[test]
fn kill_9_mid_contract_then_rerun_completes_it_exactly_once() {
    let s = setup();
    start_and_kill(&s, 1);

    let out = executor(&s).output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 completed, 0 failed"), "{stdout}");
    assert!(!s.ws.join("contracts/crashy.md").exists());
    let done = std::fs::read_to_string(s.ws.join("contracts_completed/crashy.md")).unwrap();
    assert!(done.contains("## Status\ncompleted\n"), "{done}");
    assert!(done.contains("retried after its executor (pid "), "{done}");
    assert_eq!(done.matches("**Outcome:**").count(), 1, "{done}");
    assert!(!s.ws.join("contracts_completed/crashy-2.md").exists());
    // One logged run per attempt: the killed one and the retry.
    assert_eq!(runs(&s.ws), 2);

    // A third run has nothing to do.
    let requests = s.server.requests().len();
    let out = executor(&s).output().unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    assert_eq!(s.server.requests().len(), requests);
    assert_eq!(runs(&s.ws), 2);
    verify_all(&s);
}

#[test]
fn a_contract_whose_executor_dies_twice_is_marked_failed() {
    let s = setup();
    start_and_kill(&s, 1);
    start_and_kill(&s, 2);
    let requests = s.server.requests().len();
    let out = executor(&s).output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert_eq!(s.server.requests().len(), requests, "not run a third time");
    let text = std::fs::read_to_string(s.ws.join("contracts/crashy.md")).unwrap();
    assert!(text.contains("## Status\nfailed\n"), "{text}");
    assert!(
        text.contains("its executor stopped during 2 attempts"),
        "{text}"
    );
    verify_all(&s);
}

#[test]
fn a_second_executor_leaves_a_running_contract_alone() {
    let s = setup();
    let first = executor(&s)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(30), "the run to be logged", || {
        runs(&s.ws) >= 1
    });
    let out = executor(&s).output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("skipped"), "{stdout}");
    assert!(stdout.contains("being run by another executor"), "{stdout}");
    let out = first.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    assert!(s.ws.join("contracts_completed/crashy.md").is_file());
    assert_eq!(runs(&s.ws), 1);
}
