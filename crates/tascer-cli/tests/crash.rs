//! `kill -9` of a running `tascer run` mid-session: `tascer verify` passes
//! on what was committed, and `tascer run --resume` continues the same
//! hash chain, which verifies again.
//!
//! The scripted session writes a file, then runs a Bash command that
//! records its pid and sleeps; the test waits until the ledger holds the
//! opened Bash call and the command runs, then SIGKILLs the process.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn, check_tool_pairing};

const SLEEP_COMMAND: &str = "echo $$ > sleep.pid; exec sleep 30";

fn scenario() -> Scenario {
    Scenario::new()
        .turn(
            Turn::new()
                .with_text("Writing the first file.")
                .with_tool_id(
                    "toolu_write",
                    "Write",
                    json!({"file_path": "before.txt", "content": "committed before the crash\n"}),
                ),
        )
        .turn(Turn::new().with_text("Now the long command.").with_tool_id(
            "toolu_sleep",
            "Bash",
            json!({"command": SLEEP_COMMAND}),
        ))
        .turn(Turn::text("Resumed and finished."))
}

/// The `tascer run` being killed. Dropping it (also when an assertion
/// fails) kills it and the `sleep` its Bash call started: the command runs
/// in its own process group, so it outlives a SIGKILLed tascer.
struct Running {
    child: Child,
    pid_file: PathBuf,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Ok(pid) = std::fs::read_to_string(&self.pid_file)
            && !pid.trim().is_empty()
        {
            let _ = Command::new("kill").args(["-9", pid.trim()]).status();
        }
    }
}

/// Polls `check` every 20 ms until it returns true; panics after `limit`.
fn wait_until(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `tascer verify SESSION --json`, with its exit code.
fn verify_json(home: &Path, ws: &Path, session: &str) -> (Option<i32>, Value) {
    let out = tascer(home, ws)
        .args(["verify", session, "--json"])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("verify --json printed no JSON ({e}): {stdout}\n{stderr}"));
    (out.status.code(), report)
}

/// `tascer verify SESSION` (text), with its exit code.
fn verify_text(home: &Path, ws: &Path, session: &str) -> (Option<i32>, String) {
    let out = tascer(home, ws).args(["verify", session]).output().unwrap();
    let (stdout, stderr) = texts(&out);
    (out.status.code(), format!("{stdout}{stderr}"))
}

/// Runs the session, SIGKILLs it while the Bash call runs, checks verify,
/// resumes it and checks the continued chain. Returns the verify text
/// outputs after the kill and after the resume.
fn kill_verify_resume(signed: bool) -> (String, String) {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    // Signed by default (the key is created on first use); the unsigned
    // case turns signing off.
    let signing = if signed { "on" } else { "off" };
    let server = MockServer::start_blocking(scenario()).unwrap();
    let session = tascer::new_id();

    let log = |name: &str| std::fs::File::create(root.path().join(name)).unwrap();
    let pid_file = ws.join("sleep.pid");
    let mut run = Running {
        child: run_cmd(&home, &ws, &server.url(), "go", &["--session-id", &session])
            .env("TASCER_SIGNING", signing)
            .stdin(Stdio::null())
            .stdout(log("run.stdout"))
            .stderr(log("run.stderr"))
            .spawn()
            .unwrap(),
        pid_file: pid_file.clone(),
    };
    let bash_opened = |rows: &[LedgerRow]| {
        rows.iter()
            .any(|r| r.kind == "tool_call_opened" && r.payload["tool_use_id"] == "toolu_sleep")
    };
    wait_until(
        Duration::from_secs(30),
        "the Bash call to be opened in the ledger and running",
        || {
            if let Ok(Some(status)) = run.child.try_wait() {
                let out = std::fs::read_to_string(root.path().join("run.stdout")).unwrap();
                let err = std::fs::read_to_string(root.path().join("run.stderr")).unwrap();
                panic!("tascer run exited early ({status}):\n{out}\n{err}");
            }
            std::fs::read_to_string(&pid_file).is_ok_and(|p| p.trim().parse::<u32>().is_ok())
                && bash_opened(&ledger_rows(&home, &session))
        },
    );
    run.child.kill().unwrap(); // SIGKILL
    let status = run.child.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "{status}");
    drop(run);

    // What was committed: the Write call closed, the Bash call opened but
    // never closed, no session_end.
    let before = ledger_rows(&home, &session);
    assert_eq!(before[0].kind, "session_start");
    assert!(bash_opened(&before));
    assert!(
        !before.iter().any(|r| r.kind == "session_end"),
        "{before:?}"
    );
    assert!(
        before
            .iter()
            .any(|r| r.kind == "tool_record" && r.payload["tool_use_id"] == "toolu_write")
    );
    assert!(
        !before
            .iter()
            .any(|r| r.kind == "tool_record" && r.payload["tool_use_id"] == "toolu_sleep")
    );
    let key_id = before[0].payload["signing_key_id"].clone();
    assert_eq!(key_id.is_string(), signed, "{key_id}");
    assert_eq!(
        std::fs::read_to_string(ws.join("before.txt")).unwrap(),
        "committed before the crash\n"
    );

    // verify passes on the committed entries. With a key, the head was
    // re-signed in the same transaction as every append, so it matches
    // the last committed entry and the signature checks out.
    let (code, report) = verify_json(&home, &ws, &session);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["first_broken"], Value::Null, "{report}");
    assert_eq!(report["entries_checked"], before.len(), "{report}");
    assert_eq!(report["signed"], signed, "{report}");
    let (code, after_kill) = verify_text(&home, &ws, &session);
    assert_eq!(code, Some(0), "{after_kill}");

    // The report shows the cut-off call as pending: its effect is unknown.
    let data = report_json(&home, &ws, &session);
    let bash = data["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["record"]["tool_use_id"] == "toolu_sleep")
        .unwrap();
    assert_eq!(bash["closed_seq"], Value::Null, "{bash}");
    assert_eq!(bash["record"]["status"], "pending", "{bash}");

    // Resume: the history closes the dangling tool_use, the model answers,
    // and the chain goes on from the last committed entry.
    let requests_before = server.requests().len();
    let out = run_cmd(
        &home,
        &ws,
        &server.url(),
        "continue",
        &["--resume", &session],
    )
    .env("TASCER_SIGNING", signing)
    .output()
    .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    let frames = json_lines(&out.stdout);
    let result = frames.last().unwrap();
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["session_id"], session.as_str());
    assert_eq!(result["result"], "Resumed and finished.");

    let requests = server.requests();
    assert_eq!(requests.len(), requests_before + 1);
    for request in &requests {
        check_tool_pairing(&request.body).unwrap();
    }
    // Roles alternate: the interrupted call's result and the new prompt
    // are one user message (strict chat templates refuse two in a row).
    let messages = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert!(
        roles.windows(2).all(|w| w[0] != w[1]),
        "consecutive messages of one role: {roles:?}"
    );
    let resumed = requests.last().unwrap().body["messages"].to_string();
    assert!(
        resumed.contains("The session was interrupted while this tool call ran")
            && resumed.contains("committed before the crash")
            && resumed.contains("continue"),
        "{resumed}"
    );

    let after = ledger_rows(&home, &session);
    assert!(
        after.len() > before.len(),
        "{} → {}",
        before.len(),
        after.len()
    );
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "committed entries are unchanged"
    );
    assert_eq!(
        after[before.len()].prev_hash,
        before.last().unwrap().hash,
        "the resumed entries link to the last committed one"
    );
    assert_eq!(
        after.iter().filter(|r| r.kind == "session_start").count(),
        1,
        "a resumed session continues its chain instead of starting a new one"
    );
    assert_eq!(after.last().unwrap().kind, "session_end");

    let (code, report) = verify_json(&home, &ws, &session);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["entries_checked"], after.len(), "{report}");
    assert_eq!(report["signed"], signed, "{report}");
    let (code, after_resume) = verify_text(&home, &ws, &session);
    assert_eq!(code, Some(0), "{after_resume}");
    (after_kill, after_resume)
}

#[test]
fn kill_9_of_a_signed_session_verifies_and_resume_continues_the_chain() {
    let (after_kill, after_resume) = kill_verify_resume(true);
    for text in [&after_kill, &after_resume] {
        assert!(
            text.starts_with('✓') && text.contains("signed by") && !text.contains("NOT checked"),
            "{text}"
        );
    }
}

#[test]
fn kill_9_of_an_unsigned_session_verifies_with_the_cut_off_warning() {
    let (after_kill, after_resume) = kill_verify_resume(false);
    for text in [&after_kill, &after_resume] {
        assert!(
            text.starts_with('✓')
                && text.contains("UNSIGNED")
                && text.contains("a cut-off tail cannot be detected"),
            "{text}"
        );
    }
}

/// `kill -9` after a model response is stored and before its tool call is
/// admitted (here: by the PreToolUse hook, which kills `tascer run`):
/// the stored assistant message and the ledger's model response were
/// written in one transaction, so verify finds the store and the ledger
/// agreeing (turns, assistant messages), and so does the resumed session.
#[test]
fn kill_9_between_a_stored_response_and_its_admission_leaves_store_and_ledger_agreeing() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(ws.join(".tascer")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    // The hook's shell is a child of `tascer run`: `$PPID` is tascer.
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "kill -9 $PPID; sleep 5"}]}]}});
    std::fs::write(ws.join(".tascer/settings.json"), settings.to_string()).unwrap();
    let server = MockServer::start_blocking(
        Scenario::new()
            .turn(Turn::new().with_text("Running it.").with_tool_id(
                "toolu_killed",
                "Bash",
                json!({"command": "echo never"}),
            ))
            .turn(Turn::text("Resumed.")),
    )
    .unwrap();
    let session = tascer::new_id();
    let out = run_cmd(&home, &ws, &server.url(), "go", &["--session-id", &session])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.signal(), Some(9), "{:?}", texts(&out));

    let rows = ledger_rows(&home, &session);
    let kinds: Vec<&str> = rows.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, ["session_start", "user_prompt", "model_response"]);
    let (code, report) = verify_json(&home, &ws, &session);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["ok"], true, "{report}");

    // Resumed without the hook: the cut-off call is closed in the history,
    // and the chain and the store still agree at the end.
    std::fs::remove_file(ws.join(".tascer/settings.json")).unwrap();
    let out = run_cmd(&home, &ws, &server.url(), "on", &["--resume", &session])
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    let (code, report) = verify_json(&home, &ws, &session);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["ok"], true, "{report}");
}
