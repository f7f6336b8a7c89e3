//! The hook server: the first `tascer-hook` process of an environment
//! starts it and every event goes to it; whatever happens to it (killed,
//! idle, its database deleted, turned off) every event is answered as
//! `tascer hook` answers it in a process of its own, and recorded once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{report_json, run_with_stdin, tascer, tascer_hook};

const SESSION: &str = "7a1c2b3d-0000-4e5f-8a9b-server000001";

fn bash(cwd: &Path, id: &str, command: &str) -> String {
    json!({
        "hook_event_name": "PreToolUse",
        "session_id": SESSION,
        "transcript_path": "/tmp/none.jsonl",
        "cwd": cwd.display().to_string(),
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": id,
    })
    .to_string()
}

/// A home with a signing key and a project that denies `rm`.
fn project() -> (tempfile::TempDir, tempfile::TempDir) {
    let (home, work) =
        common::project_with_settings(&json!({"permissions": {"deny": ["Bash(rm:*)"]}}));
    let keys = tascer(home.path(), work.path())
        .args(["keys", "generate"])
        .output()
        .unwrap();
    assert!(keys.status.success(), "{keys:?}");
    (home, work)
}

/// `tascer-hook` with the server's log at debug level (every process of
/// one test gets the same environment, so they share one server).
fn hook_cmd(home: &Path, work: &Path) -> Command {
    let mut cmd = tascer_hook(home, work);
    cmd.env("TASCER_LOG", "tascer=debug");
    cmd
}

fn decision(out: &Output) -> Option<String> {
    let text = String::from_utf8_lossy(&out.stdout);
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    value["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .map(str::to_string)
}

fn run_dir_files(home: &Path, extension: &str) -> Vec<PathBuf> {
    std::fs::read_dir(home.join("run"))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == extension))
                .collect()
        })
        .unwrap_or_default()
}

/// Waits (up to 20 s) for `check`.
fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The one server's socket, once it listens.
fn server_socket(home: &Path) -> PathBuf {
    let listed = || {
        std::fs::read_dir(home.join("run"))
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.file_name())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    let start = Instant::now();
    while run_dir_files(home, "sock").len() != 1 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for the hook server's socket; {}/run holds {:?}; log: {}",
            home.display(),
            listed(),
            run_dir_files(home, "log")
                .iter()
                .map(|l| std::fs::read_to_string(l).unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    run_dir_files(home, "sock").remove(0)
}

fn server_pid(socket: &Path) -> i32 {
    let lock = socket.with_extension("lock");
    let mut pid = String::new();
    wait_for("the server's pid in its lock file", || {
        pid = std::fs::read_to_string(&lock).unwrap_or_default();
        !pid.is_empty()
    });
    pid.trim().parse().unwrap()
}

/// Runs tool call `t1` (`ls`), which starts the server; its socket and
/// pid.
fn server_started_by_t1(home: &Path, work: &Path) -> (PathBuf, i32) {
    run_with_stdin(hook_cmd(home, work), &bash(work, "t1", "ls"));
    let socket = server_socket(home);
    let pid = server_pid(&socket);
    (socket, pid)
}

fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

/// True once no process holds the server's lock: it has exited, all of
/// its threads and files closed.
fn lock_free(socket: &Path) -> bool {
    std::fs::OpenOptions::new()
        .write(true)
        .open(socket.with_extension("lock"))
        .is_ok_and(|f| f.try_lock().is_ok())
}

fn answered_by_server(socket: &Path) -> usize {
    std::fs::read_to_string(socket.with_extension("log"))
        .unwrap_or_default()
        .matches("hook server answered an event")
        .count()
}

fn tool_ids(home: &Path, work: &Path) -> Vec<String> {
    let report = report_json(home, work, SESSION);
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["record"]["tool_use_id"].as_str().unwrap().to_string())
        .collect()
}

fn verify(home: &Path, work: &Path) {
    let out = tascer(home, work)
        .args(["verify", SESSION])
        .output()
        .unwrap();
    assert!(out.status.success(), "verify: {out:?}");
}

#[test]
fn the_first_hook_starts_a_server_that_answers_every_event_as_the_hook_would() {
    let (home, work) = project();
    let (h, w) = (home.path(), work.path());
    let mut own = hook_cmd(h, w);
    own.env("TASCER_HOOK_SERVER", "off");
    let in_own_process = run_with_stdin(own, &bash(w, "t0", "rm -rf build"));
    assert!(run_dir_files(h, "sock").is_empty());

    let first = run_with_stdin(hook_cmd(h, w), &bash(w, "t1", "rm -rf build"));
    assert_eq!(decision(&first).as_deref(), Some("deny"), "{first:?}");
    assert_eq!(first.stdout, in_own_process.stdout, "the same refusal");
    let socket = server_socket(h);

    let denied = run_with_stdin(hook_cmd(h, w), &bash(w, "t2", "rm -rf build"));
    assert_eq!(
        String::from_utf8_lossy(&denied.stdout),
        String::from_utf8_lossy(&first.stdout),
        "the server's refusal is the hook's"
    );
    let allowed = run_with_stdin(hook_cmd(h, w), &bash(w, "t3", "ls -la"));
    assert_eq!(allowed.status.code(), Some(0), "{allowed:?}");
    assert_eq!(decision(&allowed), None, "left to Claude Code");
    assert_eq!(
        answered_by_server(&socket),
        3,
        "the first event waited for it"
    );

    assert_eq!(tool_ids(h, w), ["t0", "t1", "t2", "t3"]);
    verify(h, w);
}

#[test]
fn a_killed_server_is_replaced_and_every_event_is_recorded_once() {
    let (home, work) = project();
    let (h, w) = (home.path(), work.path());
    let (socket, pid) = server_started_by_t1(h, w);
    assert!(alive(pid));
    let killed = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_for("the server to die", || lock_free(&socket));
    assert!(socket.exists(), "a killed server leaves its socket file");

    // The dead socket is cleared and a new server answers.
    let denied = run_with_stdin(hook_cmd(h, w), &bash(w, "t2", "rm x"));
    assert_eq!(
        decision(&denied).as_deref(),
        Some("deny"),
        "{denied:?}\nserver log: {}",
        std::fs::read_to_string(socket.with_extension("log")).unwrap_or_default()
    );
    let new_pid = server_pid(&socket);
    assert!(new_pid != pid && alive(new_pid));
    let allowed = run_with_stdin(hook_cmd(h, w), &bash(w, "t3", "ls"));
    assert_eq!(allowed.status.code(), Some(0), "{allowed:?}");
    assert_eq!(answered_by_server(&socket), 2, "the new server's log");

    assert_eq!(tool_ids(h, w), ["t1", "t2", "t3"]);
    verify(h, w);
}

#[test]
fn a_database_deleted_under_the_server_is_created_again_with_the_event() {
    let (home, work) = project();
    let (h, w) = (home.path(), work.path());
    run_with_stdin(hook_cmd(h, w), &bash(w, "t1", "ls"));
    let socket = server_socket(h);
    run_with_stdin(hook_cmd(h, w), &bash(w, "t2", "ls"));
    assert_eq!(answered_by_server(&socket), 2);
    for file in ["tascer.db", "tascer.db-wal", "tascer.db-shm"] {
        let _ = std::fs::remove_file(h.join(file));
    }
    let out = run_with_stdin(hook_cmd(h, w), &bash(w, "t3", "ls"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(answered_by_server(&socket), 3);
    assert!(h.join("tascer.db").exists(), "the server opened a new file");
    assert_eq!(tool_ids(h, w), ["t3"], "the event is in the new database");
    verify(h, w);
}

#[test]
fn an_idle_server_exits_and_removes_its_socket() {
    let (home, work) = project();
    let (h, w) = (home.path(), work.path());
    let mut cmd = hook_cmd(h, w);
    cmd.env("TASCER_HOOK_SERVER_IDLE_SECS", "1");
    run_with_stdin(cmd, &bash(w, "t1", "ls"));
    let socket = server_socket(h);
    let pid = server_pid(&socket);
    wait_for("the idle server to exit", || {
        !alive(pid) && !socket.exists()
    });
}

#[test]
fn a_quiet_server_that_grew_hands_over_to_a_fresh_one_and_loses_nothing() {
    let (home, work) = project();
    let (h, w) = (home.path(), work.path());
    // Quiet for a second after answering, above 0 MiB: renew (the default
    // is a minute and 16 MiB; any build's server is above 0).
    let cmd = || {
        let mut c = hook_cmd(h, w);
        c.env("TASCER_HOOK_SERVER_RENEW_SECS", "1")
            .env("TASCER_HOOK_SERVER_RENEW_ABOVE_MIB", "0");
        c
    };
    run_with_stdin(cmd(), &bash(w, "t1", "ls"));
    let socket = server_socket(h);
    let first = server_pid(&socket);
    let denied = run_with_stdin(cmd(), &bash(w, "t2", "rm x"));
    assert_eq!(decision(&denied).as_deref(), Some("deny"), "{denied:?}");

    let lock_pid = || {
        std::fs::read_to_string(socket.with_extension("lock"))
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok())
    };
    wait_for("a fresh server on the same socket", || {
        !alive(first) && socket.exists() && lock_pid().is_some_and(|p| p != first && alive(p))
    });
    let second = server_pid(&socket);
    // The fresh server has answered nothing yet: it does not renew again.
    std::thread::sleep(Duration::from_secs(3));
    assert!(alive(second), "the fresh server stays up while quiet");
    assert_eq!(lock_pid(), Some(second));

    let denied = run_with_stdin(cmd(), &bash(w, "t3", "rm y"));
    assert_eq!(decision(&denied).as_deref(), Some("deny"), "{denied:?}");
    assert_eq!(answered_by_server(&socket), 1, "the fresh server's log");
    assert_eq!(tool_ids(h, w), ["t1", "t2", "t3"]);
    verify(h, w);
}

#[test]
fn turned_off_every_event_is_answered_in_its_own_process() {
    let (home, work) = project();
    let (h, w) = (home.path(), work.path());
    for id in ["t1", "t2"] {
        let mut cmd = hook_cmd(h, w);
        cmd.env("TASCER_HOOK_SERVER", "off");
        let out = run_with_stdin(cmd, &bash(w, id, "rm -rf /"));
        assert_eq!(decision(&out).as_deref(), Some("deny"), "{out:?}");
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(run_dir_files(h, "sock").is_empty(), "no server started");
    assert_eq!(tool_ids(h, w), ["t1", "t2"]);
}

#[test]
fn tascer_hook_answers_first_then_shares_the_server_with_tascer_hook() {
    let (home, work) = project();
    let (h, w) = (home.path(), work.path());
    let full = |id: &str| {
        let mut cmd = tascer(h, w);
        cmd.env("TASCER_LOG", "tascer=debug").arg("hook");
        run_with_stdin(cmd, &bash(w, id, "rm -rf build"))
    };
    assert_eq!(
        decision(&full("t1")).as_deref(),
        Some("deny"),
        "in its own process"
    );
    let socket = server_socket(h);
    assert_eq!(decision(&full("t2")).as_deref(), Some("deny"));
    let thin = run_with_stdin(hook_cmd(h, w), &bash(w, "t3", "rm -rf build"));
    assert_eq!(decision(&thin).as_deref(), Some("deny"));
    assert_eq!(answered_by_server(&socket), 2);
    assert_eq!(run_dir_files(h, "sock").len(), 1, "one server for both");
    assert_eq!(tool_ids(h, w), ["t1", "t2", "t3"]);
}

#[test]
fn other_events_use_a_running_server_but_do_not_start_one() {
    let (home, work) = project();
    let (h, w) = (home.path(), work.path());
    let prompt = |id: &str| {
        json!({
            "hook_event_name": "UserPromptSubmit",
            "session_id": SESSION,
            "transcript_path": "/tmp/none.jsonl",
            "cwd": w.display().to_string(),
            "prompt": id,
        })
        .to_string()
    };
    let out = run_with_stdin(hook_cmd(h, w), &prompt("first"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        run_dir_files(h, "sock").is_empty(),
        "no server for a prompt"
    );

    run_with_stdin(hook_cmd(h, w), &bash(w, "t1", "ls"));
    let socket = server_socket(h);
    let out = run_with_stdin(hook_cmd(h, w), &prompt("second"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        answered_by_server(&socket),
        2,
        "the tool call and the prompt"
    );
    verify(h, w);
}

#[test]
fn a_server_whose_socket_is_removed_exits() {
    let (home, work) = project();
    let (h, w) = (home.path(), work.path());
    let (socket, pid) = server_started_by_t1(h, w);
    std::fs::remove_file(&socket).unwrap();
    wait_for("the unreachable server to exit", || {
        lock_free(&socket) && !alive(pid)
    });
    // The next tool call starts a new one.
    let out = run_with_stdin(hook_cmd(h, w), &bash(w, "t2", "ls"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(alive(server_pid(&server_socket(h))));
    assert_eq!(tool_ids(h, w), ["t1", "t2"]);
}

#[test]
fn without_its_tascer_the_client_refuses_a_tool_call_and_says_why() {
    let (home, work) = project();
    let (h, w) = (home.path(), work.path());
    let alone = tempfile::tempdir().unwrap();
    let copy = alone.path().join("tascer-hook");
    std::fs::copy(env!("CARGO_BIN_EXE_tascer-hook"), &copy).unwrap();
    let mut cmd = Command::new(&copy);
    cmd.env("TASCER_HOME", h).current_dir(w);
    let out = run_with_stdin(cmd, &bash(w, "t1", "ls"));
    assert_eq!(out.status.code(), Some(2), "fail closed: {out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&alone.path().join("tascer").display().to_string()),
        "{stderr}"
    );
}
